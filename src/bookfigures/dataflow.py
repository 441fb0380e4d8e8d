"""Diagrams drawn from a model's dataflow graph (`tinyformer.graph.Dataflow`), never by hand.

Each array is a box outlined in its legend colour, with its name and shape; each
arrow is labelled with the operation that makes the next array ("× W_Q", "softmax").
The layout is computed, top to bottom so that it stays narrow on a phone:

* layers by longest path from the inputs; inside a layer, boxes ordered to follow
  their inputs (barycentres), then placed as close under them as spacing allows
  (isotonic regression, so the order is kept and boxes never overlap);
* lanes (e.g. English and French) are columns of their own, side by side;
* an arrow that skips layers (a residual path, values waiting for their weights) runs
  down a channel beside its lane and enters its box from the side, so it never
  crosses a box or a group;
* groups (a head, a block) get a labelled frame.

The picture's data table lists every arrow: from, to, the operation, and the shapes.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from itertools import combinations
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch
from matplotlib.path import Path

from ._common import PHONE_WIDTH_IN, attach_table, plain
from ._placement import MARGIN, Rect, Room, beside, segment_hits, text_height
from .collisions import one_label
from .palette import INK, INK_GRID, INK_MUTED, NO_ROLE, ROLE_COLORS, ROLE_NAMES
from .style import new_figure, styled

LABEL_SIZE = 10.0  # box name
SHAPE_SIZE = 10.0  # box shape, arrow and frame labels: the legible floor on a phone
BOX_H = 0.44  # inches
LAYER_GAP = 0.42  # vertical room for an arrow and its label
BOX_GAP = 0.12  # horizontal room between boxes of a layer
LANE_GAP = 0.3
CHANNEL = 0.13  # spacing of the side channels that skipping arrows run down
PAD = 0.1
FRAME_FOOT = 0.2  # room for a group's name under its last boxes
LABEL_GAP = 0.08  # the least room between two arrow labels side by side


@dataclass
class _Box:
    id: str
    label: str
    shape: str
    role: str | None
    group: str | None
    lane: str
    layer: int
    width: float
    x: float = 0.0  # centre, inches

    @property
    def left(self) -> float:
        return self.x - self.width / 2

    @property
    def right(self) -> float:
        return self.x + self.width / 2


def _text_width(text: str, size: float, weight: str = "normal") -> float:
    """Width in inches of `text` set in the house font (mathtext included), measured, not guessed."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    prop = FontProperties(size=size, weight=weight)  # the house style's sans-serif
    width, _, _ = TextToPath().get_text_width_height_descent(text, prop, ismath="$" in text)
    return width / 72.0


def _layers(graph) -> dict[str, int]:
    """Longest path from the graph's inputs; an input sits just above its first reader."""
    layer: dict[str, int] = {}
    for node in graph.nodes:  # nodes come in the order the pass made them
        op = graph.producer(node.id)
        layer[node.id] = 0 if op is None else 1 + max(layer[i] for i in op.inputs)
    for node in graph.sources:
        readers = [layer[op.output] for op in graph.consumers(node.id)]
        if readers:
            layer[node.id] = min(readers) - 1
    return layer


def _isotonic(desired: list[float], gaps: list[float]) -> list[float]:
    """Positions closest to `desired` (least squares) with x[i+1] - x[i] >= gaps[i] (pool adjacent violators)."""
    offsets = np.concatenate([[0.0], np.cumsum(gaps)])
    target = np.asarray(desired) - offsets
    blocks: list[list[float]] = []  # [mean, weight]
    for t in target:
        blocks.append([t, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2 = blocks.pop()
            m1, w1 = blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2])
    fitted = np.concatenate([[m] * int(w) for m, w in blocks])
    return list(fitted + offsets)


def _place(boxes: dict[str, _Box], preds: Mapping[str, list[str]], succs: Mapping[str, list[str]],
           skippers: set[str]) -> None:
    """Order each (lane, layer) row by barycentre and place it under its inputs."""
    rows: dict[tuple[str, int], list[_Box]] = defaultdict(list)
    lane_order = {lane: k for k, lane in enumerate(dict.fromkeys(b.lane for b in boxes.values()))}
    for b in boxes.values():
        rows[(b.lane, b.layer)].append(b)

    def settle(row: list[_Box], neighbours: Mapping[str, list[str]]) -> None:
        desired, side = [], []
        for b in row:
            near = [boxes[n].x for n in neighbours[b.id] if boxes[n].lane == b.lane]
            desired.append(float(np.mean(near)) if near else b.x)
            # a box fed only from another lane goes to the end of its row that faces that lane
            other = [lane_order[boxes[n].lane] - lane_order[b.lane] for n in neighbours[b.id]
                     if boxes[n].lane != b.lane]
            side.append(0 if near or not other else int(np.sign(np.mean(other))))
        # among boxes fed from another lane, one whose output skips layers goes outermost,
        # so its side channel is reached without crossing its neighbours
        outer = [side[i] * (row[i].id in skippers) for i in range(len(row))]
        order = sorted(range(len(row)), key=lambda i: (side[i], outer[i], desired[i], i))
        row[:] = [row[i] for i in order]
        desired = [desired[i] for i in order]
        gaps = [(a.width + b.width) / 2 + BOX_GAP for a, b in zip(row, row[1:])]
        for b, x in zip(row, _isotonic(desired, gaps)):
            b.x = x

    layers = sorted({layer for _, layer in rows})
    for row in rows.values():  # first guess: side by side, centred
        gaps = [(a.width + b.width) / 2 + BOX_GAP for a, b in zip(row, row[1:])]
        for b, x in zip(row, _isotonic([0.0] * len(row), gaps)):
            b.x = x
    for _ in range(4):
        for layer in layers:
            for (lane, lay), row in rows.items():
                if lay == layer:
                    settle(row, preds)
        for layer in reversed(layers):
            for (lane, lay), row in rows.items():
                if lay == layer:
                    settle(row, succs)
        for layer in layers:  # end on a downward pass: boxes sit under what feeds them
            for (lane, lay), row in rows.items():
                if lay == layer:
                    settle(row, preds)


def _arrow(ax, verts: Sequence[tuple[float, float]], *, curved: bool = False) -> None:
    codes = [Path.MOVETO] + [Path.LINETO] * (len(verts) - 1)
    ax.add_patch(FancyArrowPatch(path=Path(verts, codes), arrowstyle="-|>", mutation_scale=9,
                                 color=INK_MUTED, linewidth=1.0, shrinkA=0, shrinkB=0,
                                 joinstyle="round", capstyle="round"))


_SUBSCRIPTED = re.compile(r"\b([A-Za-z])_([A-Za-z0-9]+)\b")
SUB_DROP = 0.3  # how far a subscript sits below the baseline, in ems of the text
LINE_PITCH = 1.2  # lines of a label, in text heights (matplotlib's default line spacing)


def _runs(text: str) -> list[tuple[str, bool]]:
    """A label as (piece, is it a subscript): "× W_Q" is "× W" then a subscript "Q".

    Why not mathtext's ``$W_Q$``: it sets a subscript at 70 % of the text size, below what
    a phone shows legibly. Here a subscript keeps the full size and is only lowered.
    """
    runs: list[tuple[str, bool]] = []
    at = 0
    for m in _SUBSCRIPTED.finditer(text):
        runs.append((text[at:m.start(2) - 1], False))
        runs.append((m.group(2), True))
        at = m.end()
    runs.append((text[at:], False))
    return [(piece, sub) for piece, sub in runs if piece]


def _line_width(line: str, size: float, weight: str = "normal") -> float:
    space = _text_width("x x", size, weight) - _text_width("xx", size, weight)
    return sum(_text_width(plain(piece.strip()), size, weight) + space * (len(piece) - len(piece.strip()))
               for piece, _ in _runs(line))


def _label_width(text: str, size: float, weight: str = "normal") -> float:
    """Width in inches of a label as `_label` draws it (its widest line), in that font weight."""
    return max(_line_width(line, size, weight) for line in text.split("\n"))


def _label_extent(text: str, size: float) -> tuple[float, float, float]:
    """(width, above, below) in inches of a label drawn with va="center": how far its box
    reaches above and below the anchor (a lowered subscript on the last line reaches lower)."""
    lines = text.split("\n")
    line_h = text_height(size)
    above = line_h / 2 + (len(lines) - 1) * LINE_PITCH * line_h / 2
    below = above + (SUB_DROP * size / 72.0 if any(sub for _, sub in _runs(lines[-1])) else 0.0)
    return _label_width(text, size), above, below


def _label(ax, x: float, y: float, text: str, *, size: float, ha: str = "center", va: str = "center",
           color: str = INK, rotation: float = 0, **style) -> list:
    """Draw a label at (x, y) in the diagram's inches (y pointing down), subscripts lowered.

    `rotation` is 0 or 90 (reading upwards); `ha`, `va` place the whole label as they would
    one text. A label of several lines ("\\n") is drawn line under line, centred on y
    (upright labels only). Its texts are tied into one label for the figure check.
    """
    lines = text.split("\n")
    if len(lines) > 1:
        if rotation or va != "center":
            raise ValueError("a label of several lines is drawn upright and centred on y")
        pitch = LINE_PITCH * text_height(size)
        drawn = []
        for k, line in enumerate(lines):
            drawn += _label(ax, x, y + (k - (len(lines) - 1) / 2) * pitch, line, size=size, ha=ha, color=color,
                            **style)
        return list(one_label(*drawn))
    runs = _runs(text)
    if len(runs) <= 1 and not (runs and runs[0][1]):
        return [ax.text(x, y, plain(text), ha=ha, va=va, color=color, fontsize=size, rotation=rotation,
                        rotation_mode="anchor", **style)]
    # An SVG viewer drops a text's leading and trailing spaces, so each piece is drawn without
    # them and its spaces become advances of the pen.
    weight = style.get("fontweight", "normal")  # bold pieces are wider: measure them bold
    space = _text_width("x x", size, weight) - _text_width("xx", size, weight)
    widths = [_text_width(plain(piece.strip()), size, weight) + space * (len(piece) - len(piece.strip()))
              for piece, _ in runs]
    pos = {"left": 0.0, "center": -sum(widths) / 2, "right": -sum(widths)}[ha]
    drop = SUB_DROP * size / 72.0
    along, down = ((0.0, -1.0), (1.0, 0.0)) if rotation == 90 else ((1.0, 0.0), (0.0, 1.0))
    drawn = []
    for (piece, sub), width in zip(runs, widths):
        shift = drop if sub else 0.0
        at = pos + space * (len(piece) - len(piece.lstrip()))
        drawn.append(ax.text(x + along[0] * at + down[0] * shift, y + along[1] * at + down[1] * shift,
                             plain(piece.strip()), ha="left", va=va, color=color, fontsize=size,
                             rotation=rotation, rotation_mode="anchor", **style))
        pos += width
    return list(one_label(*drawn))


def _wrapped(text: str, size: float, lines: int = 2) -> str | None:
    """The label in `lines` lines, broken at spaces or before a parenthesis, never leaving a
    line of one or two characters: where fewest breaks fall inside parentheses, then where
    its longest line is shortest. None if it has no such breaks."""
    if "\n" in text:
        return None
    breaks = [(i, i + 1) for i, ch in enumerate(text) if ch == " "]
    breaks += [(i, i) for i, ch in enumerate(text) if ch == "(" and i > 0 and text[i - 1] != " "]
    options = []
    for cut in combinations(sorted(breaks), lines - 1):
        if any(b > a2 for (_, b), (a2, _) in zip(cut, cut[1:])):
            continue
        starts = [0] + [b for _, b in cut]
        ends = [a for a, _ in cut] + [len(text)]
        parts = [text[a:b].strip() for a, b in zip(starts, ends)]
        if min(len(p) for p in parts) > 2:
            inner = sum(text[:a].count("(") > text[:a].count(")") for a, _ in cut)  # breaks inside (…)
            options.append((inner, "\n".join(parts)))
    if not options:
        return None
    return min(options, key=lambda o: (o[0], _label_width(o[1], size), len(o[1].split("\n")[0])))[1]


@styled
def dataflow_diagram(graph, *, title: str | None = None, legend: bool = True,
                     labels: Mapping[str, str] | None = None,
                     op_labels: Mapping[str, str] | None = None, lanes: bool = True,
                     param_labels: Mapping[str, str] | None = None) -> Figure:
    """Draw a dataflow graph: arrays as boxes in their legend colours, operations on the arrows.

    `labels` renames boxes and `op_labels` the operation making a box (both keyed by node
    id), for this picture only: a phone-width picture may say "Q" where the graph says
    "queries Q"; `param_labels` renames parameters in the data table (keyed by the
    graph's parameter name), so a page can write E_pos where the engine's dict says P.
    Groups get a frame, lanes a column (``lanes=False``: one column, narrower when a lane
    holds few boxes). A group whose name extends another's ("block 1, head 1"
    in "block 1") is framed inside it. The data table has one row per arrow with the
    shapes it joins, so the numbers in the picture can be read as text.

    Every label is placed where it clears the boxes, arrows, frames and other labels
    (`bookfigures._placement`); a layer whose arrow labels find no such place gets a taller
    gap, and the diagram is drawn again.
    """
    if not lanes:
        graph = replace(graph, nodes=tuple(replace(n, lane=None) for n in graph.nodes))
    if op_labels:
        graph = replace(graph, ops=tuple(replace(op, label=op_labels.get(op.output, op.label))
                                         for op in graph.ops))
    names = {n.id: (labels or {}).get(n.id, n.label) for n in graph.nodes}
    layer = _layers(graph)
    lane_names = list(dict.fromkeys(n.lane or "" for n in graph.nodes))
    boxes = {}
    for n in graph.nodes:
        width = max(_label_width(names[n.id], LABEL_SIZE), _text_width(n.shape_text, SHAPE_SIZE)) + 2 * PAD
        boxes[n.id] = _Box(n.id, names[n.id], n.shape_text, n.role, n.group, n.lane or "", layer[n.id], width)
    preds: dict[str, list[str]] = defaultdict(list)
    succs: dict[str, list[str]] = defaultdict(list)
    edges = graph.edges()
    for e in edges:
        if layer[e.target] - layer[e.source] == 1:
            preds[e.target].append(e.source)
            succs[e.source].append(e.target)
    _place(boxes, preds, succs, {e.source for e in edges if layer[e.target] - layer[e.source] > 1})

    long_edges = [e for e in edges if layer[e.target] - layer[e.source] > 1]
    channels = _channels(long_edges, boxes, layer)
    placed = {b.id: b.x for b in boxes.values()}
    used: list[str | None] = [r for r in ROLE_COLORS if any(n.role == r for n in graph.nodes)] if legend else []
    if used and any(n.role is None for n in graph.nodes):
        used.append(None)  # ids, scores, messages, logits: the legend gives them no colour, and says so

    extra: dict[int, float] = defaultdict(float)  # more room under a layer whose labels are crowded
    pads: dict[tuple[str, int], float] = defaultdict(float)  # more room before a lane's side channels
    for _ in range(6):
        width = _lay_lanes(boxes, placed, lane_names, channels, pads)
        fig, ax, crowded, wants = _draw(graph, boxes, layer, channels, width, title, used, extra, pads)
        wider = {k: pads[k] + v for k, v in wants.items() if v > 1e-3}
        if wider:  # a label beside its arrow wants the channel next to it further out
            pads.update(wider)
            continue
        if not crowded:
            break
        for k in crowded:
            extra[k] += 0.16
    _fit_width(fig, ax)
    rows = [[names[e.source], graph.node(e.source).shape_text, e.op.label,
             ", ".join(f"{(param_labels or {}).get(p.name, p.name)} ({_shape(p.shape)})" for p in e.op.params),
             names[e.target], graph.node(e.target).shape_text] for e in edges]
    return attach_table(fig, ["from", "shape in", "operation", "parameters", "to", "shape out"], rows)


def _lay_lanes(boxes: Mapping[str, _Box], placed: Mapping[str, float], lane_names: Sequence[str], channels,
               pads: Mapping[tuple[str, int], float]) -> float:
    """Lanes side by side, each with room for its side channels; returns the drawing's width."""
    shift = 0.0
    for lane in lane_names:
        members = [b for b in boxes.values() if b.lane == lane]
        for b in members:
            b.x = placed[b.id]
        room = {}
        for side in (-1, 1):
            n = max((c + 1 for (ln, sd), c in channels.values() if ln == lane and sd == side), default=0)
            room[side] = n * CHANNEL + (PAD + pads.get((lane, side), 0.0) if n else 0.0)
        lo = min(b.left for b in members) - room[-1]
        for b in members:
            b.x += shift - lo
        shift = max(b.right for b in members) + room[1] + LANE_GAP
    return shift - LANE_GAP


def _shape(shape: Sequence[int]) -> str:
    """A parameter's shape as the book writes it: a single row (1-D) is "1 × 5"."""
    return " × ".join(map(str, (1, *shape) if len(shape) == 1 else shape))


def _in_group(group: str | None, outer: str) -> bool:
    """Is a node of `group` inside the frame of `outer` ("block 1, head 1" is in "block 1")?"""
    return group is not None and (group == outer or group.startswith(outer + ", "))


def _draw(graph, boxes: Mapping[str, _Box], layer: Mapping[str, int], channels, width: float,
          title: str | None, used: Sequence[str | None], extra: Mapping[int, float], pads):
    """One drawing of the laid-out graph; returns the figure, its axes, the layers whose
    arrow labels found no clear place, and how much further out side channels should run
    to leave room for the labels beside them."""
    n_layers = max(layer.values()) + 1
    groups = [g for g in dict.fromkeys(n.group for n in graph.nodes) if g]
    framed = [g for g in groups if sum(_in_group(b.group, g) for b in boxes.values()) > 1]
    last = {g: max(b.layer for b in boxes.values() if _in_group(b.group, g)) for g in framed}
    # a layer where frames end gets room under it for their names, one line per frame
    feet = Counter(last.values())
    tops = np.cumsum([0.0] + [BOX_H + LAYER_GAP + FRAME_FOOT * feet[k] + extra.get(k, 0.0)
                              for k in range(n_layers - 1)])
    legend_rows = -(-len(used) // 2)
    top = 0.35 if title else 0.05
    height = (top + tops[-1] + BOX_H + FRAME_FOOT * feet[n_layers - 1] + 0.1 + 0.22 * legend_rows
              + (0.15 if legend_rows else 0))
    fig = new_figure(width + 0.1, height)
    fig.set_layout_engine("none")
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-0.05, width + 0.05)
    ax.set_ylim(height, 0)
    ax.set_axis_off()

    def y_top(b: _Box) -> float:
        return top + tops[b.layer]

    room = Room()
    # the frames as their boxes alone would have them: what labels from outside must keep clear of
    for name, (rect, _) in _frames(framed, boxes, y_top, last, {}).items():
        room.add_outline(rect, ("frame", name))
    for b in boxes.values():
        _draw_box(ax, b, y_top(b))
        room.add_area(Rect(b.left, y_top(b), b.right, y_top(b) + BOX_H), b.id)
    routes = _routes(graph, boxes, layer, y_top, channels, pads)
    for (src, dst), verts in routes.items():
        _arrow(ax, verts)
        room.add_polyline(verts, ("edge", src, dst))
    xs = [b.left for b in boxes.values()] + [b.right for b in boxes.values()]
    xs += [x for verts in routes.values() for x, _ in verts]
    bounds = (min(xs), max(max(xs), min(xs) + PHONE_WIDTH_IN - 0.2))
    crowded, inside, wants = _op_labels(ax, graph, boxes, layer, y_top, channels, routes, room, bounds, framed)
    # each frame then takes in the labels of the operations inside it, and its name
    frames = _frames(framed, boxes, y_top, last, inside, room, bounds)
    room.lines = [line for line in room.lines if not (isinstance(line[2], tuple) and line[2][0] == "frame")]
    for name, (rect, (ha, x, y)) in frames.items():
        ax.add_patch(FancyBboxPatch((rect.x0, rect.y0), rect.width, rect.y1 - rect.y0,
                                    boxstyle="round,pad=0,rounding_size=0.08", facecolor="none",
                                    edgecolor=INK_GRID, linewidth=1.0, linestyle=(0, (4, 2))))
        ax.text(x, y, plain(name), ha=ha, va="bottom", color=INK_MUTED, fontsize=SHAPE_SIZE, fontstyle="italic")
        room.add_outline(rect, ("frame", name))
    if title:
        ax.text(0.0, 0.05, plain(title), ha="left", va="top", color=INK, fontsize=11, fontweight="bold")
    if used:
        handles = [Patch(facecolor="none", edgecolor=ROLE_COLORS[r], linewidth=1.8, label=ROLE_NAMES[r])
                   if r else Patch(facecolor="none", edgecolor=INK_MUTED, linewidth=1.1, label=NO_ROLE)
                   for r in used]
        fig.legend(handles=handles, loc="lower left", ncols=2, fontsize=SHAPE_SIZE, handlelength=1.2,
                   bbox_to_anchor=(0.0, 0.0), borderaxespad=0.1, columnspacing=1.0)
    return fig, ax, crowded, wants


def _frames(framed: Sequence[str], boxes: Mapping[str, _Box], y_top, last: Mapping[str, int],
            inside: Mapping[str, list[Rect]], room: Room | None = None, bounds=None) -> dict[str, tuple]:
    """Each group's frame: round its boxes, the labels of its operations (`inside`) and the
    frames of the groups within it; with a `room`, also where its name goes (the frame
    widens for it if the arrows leaving through its foot leave no room). Returns, by
    group, the frame and its name's (ha, x, y)."""
    frames: dict[str, tuple] = {}
    for g in sorted(framed, key=lambda g: -g.count(", ")):  # innermost first
        members = [Rect(b.left, y_top(b), b.right, y_top(b) + BOX_H) for b in boxes.values() if _in_group(b.group, g)]
        inner = [frames[h][0] for h in frames if h.startswith(g + ", ")]
        around = members + [r.grown(-0.02) for r in inside.get(g, [])] + inner
        left = min(r.x0 for r in around) - 0.08
        right = max(r.x1 for r in around) + 0.08
        top = min(r.y0 for r in around) - 0.08
        ending = sum(1 for h in frames if h.startswith(g + ", ") and last.get(h) == last[g])
        bottom = max([r.y1 + FRAME_FOOT * (1 + ending) for r in members] + [r.y1 + 0.04 for r in inner])
        rect = Rect(left, top, right, bottom)
        frames[g] = (rect, None) if room is None else _frame_name(g, rect, room, bounds)
    return frames


def _frame_name(name: str, rect: Rect, room: Room, bounds) -> tuple[Rect, tuple[str, float, float]]:
    """Where a frame's name goes in its foot: left or right, or beyond the arrows that leave
    through the foot (the frame then widens to hold it). Returns the frame and (ha, x, y)."""
    w, h = _text_width(plain(name), SHAPE_SIZE), text_height(SHAPE_SIZE)
    y1 = rect.y1 - 0.04
    band = Rect(rect.x0, y1 - h - MARGIN, rect.x1, rect.y1)
    crossing = [x for a, b, owner in room.lines if owner is not None and owner[:1] == ("edge",)
                and segment_hits(band, a, b) for x in (a[0], b[0]) if rect.x0 <= x <= rect.x1]
    spots = [("left", rect.x0 + 0.06, rect), ("right", rect.x1 - 0.06, rect)]
    if crossing:
        x = max(crossing) + MARGIN + 0.02
        spots.append(("left", x, Rect(rect.x0, rect.y0, max(rect.x1, x + w + 0.06), rect.y1)))
        x = min(crossing) - MARGIN - 0.02
        spots.append(("right", x, Rect(min(rect.x0, x - w - 0.06), rect.y0, rect.x1, rect.y1)))
    candidates = [(Rect(x, y1 - h, x + w, y1) if ha == "left" else Rect(x - w, y1 - h, x, y1), (ha, x, frame))
                  for ha, x, frame in spots]
    (_, (ha, x, frame)), _ = room.place(candidates, own=[("frame", name)], bounds=bounds)
    return frame, (ha, x, y1)


def _spread(n: int, i: int, left: float, right: float) -> float:
    """Where the i-th of n arrows meets a box edge: spread over its middle half (two arrows),
    or most of it (more: arrows that fan out leave room between them for their labels)."""
    if n == 1:
        return (left + right) / 2
    span = (right - left) * (0.5 if n == 2 else 0.75)
    return (left + right) / 2 - span / 2 + span * i / (n - 1)


def _row_end(boxes: Mapping[str, _Box], b: _Box, side: int) -> bool:
    """True when no box of b's row lies between b and its lane's side channel."""
    row = [o for o in boxes.values() if o.lane == b.lane and o.layer == b.layer and o is not b]
    return all(o.x < b.x for o in row) if side > 0 else all(o.x > b.x for o in row)


def _channel_x(boxes: Mapping[str, _Box], channel, pads) -> float:
    (lane, side), k = channel
    return _lane_edge(boxes, lane, side) + side * (PAD + pads.get((lane, side), 0.0) + CHANNEL * (k + 0.5))


def _routes(graph, boxes: Mapping[str, _Box], layer, y_top, channels, pads) -> dict[tuple[str, str], list]:
    """Every arrow's polyline: straight from box to box, or down a side channel."""
    outgoing: dict[str, list] = defaultdict(list)
    incoming: dict[str, list] = defaultdict(list)
    for e in graph.edges():
        if (e.source, e.target) not in channels:
            outgoing[e.source].append(e)
            incoming[e.target].append(e)
    for lst, key in ((outgoing, "target"), (incoming, "source")):
        for edges in lst.values():
            edges.sort(key=lambda e: boxes[getattr(e, key)].x)
    routes = {}
    for e in graph.edges():
        src, dst = boxes[e.source], boxes[e.target]
        if (e.source, e.target) in channels:
            (lane, side), k = channels[(e.source, e.target)]
            x_ch = _channel_x(boxes, channels[(e.source, e.target)], pads)
            if _row_end(boxes, src, side):  # leave from the side facing the channel
                start = [((src.left if side < 0 else src.right), y_top(src) + BOX_H / 2)]
            else:  # or from below, turning just under the box
                y = y_top(src) + BOX_H + 0.08
                start = [(src.x + side * src.width / 4, y_top(src) + BOX_H), (src.x + side * src.width / 4, y)]
            if _row_end(boxes, dst, side):
                end = [((dst.left if side < 0 else dst.right), y_top(dst) + BOX_H / 2)]
            else:
                y = y_top(dst) - 0.08
                end = [(dst.x + side * dst.width / 4, y), (dst.x + side * dst.width / 4, y_top(dst))]
            routes[(e.source, e.target)] = [*start, (x_ch, start[-1][1]), (x_ch, end[0][1]), *end]
            continue
        outs = [o.target for o in outgoing[e.source]]
        ins = [i.source for i in incoming[e.target]]
        x0 = _spread(len(outs), outs.index(e.target), src.left, src.right)
        x1 = _spread(len(ins), ins.index(e.source), dst.left, dst.right)
        routes[(e.source, e.target)] = [(x0, y_top(src) + BOX_H), (x1, y_top(dst))]
    return routes


def _variants(text: str) -> list[str]:
    """The label as it is, then in two lines, then (a last resort) in three."""
    wrapped = [_wrapped(text, SHAPE_SIZE, n) for n in (2, 3)]
    return [text] + [w for w in wrapped if w]


def _op_labels(ax, graph, boxes, layer, y_top, channels, routes, room: Room, bounds,
               framed: Sequence[str]) -> tuple[set[int], dict[str, list[Rect]], dict[tuple[str, int], float]]:
    """Name each operation on the arrow from its nearest input (the one a reader's eye
    follows), or beside the box it makes when it joins several arrows.

    Returns the layers under which a label found no clear place; for each frame the
    labels of the operations inside it (it will be drawn round them: an operation is
    inside a frame when the box it makes is, and so are its inputs or, for a join, the
    label stands beside that box anyway); and, for a lane's side channel that stops a
    label from standing beside its arrow on the side it leans to, how much further out the
    channel should run.
    """
    crowded: set[int] = set()
    inside: dict[str, list[Rect]] = defaultdict(list)
    wants: dict[tuple[str, int], float] = {}
    channel_of = {("edge", s, d): side for (s, d), (side, _k) in channels.items()}
    rects = {b.id: Rect(b.left, y_top(b), b.right, y_top(b) + BOX_H) for b in boxes.values()}

    def swallows(within: Sequence[str], rect: Rect) -> int:
        """How many frames would take in a box not their own, were they drawn round `rect` too."""
        n = 0
        for g in within:
            around = [r for i, r in rects.items() if _in_group(boxes[i].group, g)] + inside[g] + [rect]
            frame = Rect(min(r.x0 for r in around), min(r.y0 for r in around),
                         max(r.x1 for r in around), max(r.y1 for r in around)).grown(0.1)
            n += any(frame.overlaps(r) for i, r in rects.items() if not _in_group(boxes[i].group, g))
        return n

    for op in graph.ops:
        if not op.label:
            continue
        dst = boxes[op.output]
        first = max(op.inputs, key=lambda i: (layer[i], -op.inputs.index(i)))
        src = boxes[first]
        drawn = [i for i in op.inputs if (i, op.output) not in channels]
        joins = len(drawn) > 1 and (first, op.output) not in channels
        within = [g for g in framed if _in_group(dst.group, g)
                  and (joins or all(_in_group(boxes[i].group, g) for i in op.inputs))]
        own = [("edge", i, op.output) for i in op.inputs] + [first, op.output] + [("frame", g) for g in within]
        candidates = []
        if (first, op.output) in channels:  # along its channel, reading upwards
            verts = routes[(first, op.output)]
            (_, side), _k = channels[(first, op.output)]
            x_ch = verts[2][0]
            y_a, y_b = sorted((verts[1][1], verts[2][1]))
            w, above, below = _label_extent(op.label, SHAPE_SIZE)
            for t in (0.5, 0.3, 0.7):
                yc = y_a + (y_b - y_a) * t
                for s in (side, -side):
                    if s > 0:
                        rect = Rect(x_ch + 0.04, yc - w / 2, x_ch + 0.04 + above + below, yc + w / 2)
                        candidates.append((rect, (op.label, x_ch + 0.04, yc, "center", "top", 90)))
                    else:
                        rect = Rect(x_ch - 0.04 - above - below, yc - w / 2, x_ch - 0.04, yc + w / 2)
                        candidates.append((rect, (op.label, x_ch - 0.04, yc, "center", "bottom", 90)))
        elif joins:  # beside the box it makes
            y = y_top(dst) + BOX_H / 2
            right_first = dst.x >= (bounds[0] + bounds[1]) / 2
            for text in _variants(op.label):
                w, above, below = _label_extent(text, SHAPE_SIZE)
                sides = [(Rect(dst.right + 0.06, y - above, dst.right + 0.06 + w, y + below), (text, dst.right + 0.06, y, "left")),
                         (Rect(dst.left - 0.06 - w, y - above, dst.left - 0.06, y + below), (text, dst.left - 0.06, y, "right"))]
                candidates += sides if right_first else sides[::-1]
        else:  # beside the arrow, kept clear of it over the label's height
            (x0, y0), (x1, y1) = routes[(first, op.output)]
            prefer = 1 if x1 >= x0 - 1e-9 else -1
            for text in _variants(op.label):
                w, above, below = _label_extent(text, SHAPE_SIZE)
                h = above + below
                # the middle, a little above or below it, and just clear of the boxes' (and
                # frames') edges at either end, where arrows that fan out are furthest apart
                ends = [y1 - 0.16 - h / 2, y0 + 0.16 + h / 2]
                for yc in [y0 + (y1 - y0) * t for t in (0.5, 0.35, 0.65)] + ends:
                    t = (yc - y0) / (y1 - y0)
                    if yc - h / 2 < y0 + 0.03 or yc + h / 2 > y1 - 0.03:
                        continue
                    for side in (prefer, -prefer):
                        rect, x, _ = beside((x0, y0), (x1, y1), t, w, h, side, gap=0.05)
                        candidates.append((rect, (text, x, rect.y0 + above, "left" if side > 0 else "right")))
        if not candidates:
            crowded.add(src.layer)
            continue
        if not joins and (first, op.output) not in channels:
            _want_room(candidates[0][0], room, own, channel_of, bounds, wants)
        (rect, choice), clashes = room.place(candidates, own=own, bounds=bounds,
                                             veto=lambda r, within=within: swallows(within, r))
        if clashes and not joins and (first, op.output) not in channels:
            crowded.add(src.layer)
        for g in within:
            inside[g].append(rect)
        text, x, y, ha, *rest = choice
        va, rotation = rest if rest else ("center", 0)
        _label(ax, x, y, text, ha=ha, va=va, rotation=rotation, color=INK_MUTED, size=SHAPE_SIZE)
    return crowded, inside, wants


def _want_room(rect: Rect, room: Room, own, channel_of, bounds, wants: dict) -> None:
    """If only side channels keep a label from its first place, ask them to run further out
    (so far as the drawing stays within `bounds`)."""
    hits = room.clashing(rect, own)
    if not hits or not all(h in channel_of for h in hits):
        return
    sides = {channel_of[h] for h in hits}
    if len(sides) != 1:
        return
    (lane, side) = sides.pop()
    xs = [x for a, b, owner in room.lines if owner in hits for x in (a[0], b[0])]
    need = (rect.x1 + MARGIN + 0.02 - min(xs)) if side > 0 else (max(xs) - rect.x0 + MARGIN + 0.02)
    if side > 0 and max(xs) + need > bounds[1] + 0.05:
        return
    wants[(lane, side)] = max(wants.get((lane, side), 0.0), need)


def _fit_width(fig: Figure, ax) -> None:
    """Widen (or narrow) the figure to what was drawn, arrow labels included, keeping 1 unit = 1 inch."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    to_data = ax.transData.inverted()
    lo, hi = np.inf, -np.inf
    for artist in [*ax.texts, *ax.patches]:
        box = artist.get_window_extent(renderer).transformed(to_data)
        lo, hi = min(lo, box.x0), max(hi, box.x1)
    for leg in fig.legends:
        box = leg.get_window_extent(renderer).transformed(fig.dpi_scale_trans.inverted())
        hi = max(hi, lo + box.x1 + 0.05)
    width = hi - lo + 0.1
    fig.set_size_inches(width, fig.get_figheight())
    ax.set_xlim(lo - 0.05, hi + 0.05)


def _channels(long_edges, boxes: Mapping[str, _Box], layer: Mapping[str, int]) -> dict:
    """A side channel for each skipping arrow: (lane, side) and its index away from the lane."""
    by_lane: dict[str, list[_Box]] = defaultdict(list)
    for b in boxes.values():
        by_lane[b.lane].append(b)
    taken: dict[tuple[str, int], list[tuple[int, int, int]]] = defaultdict(list)
    out = {}
    for e in sorted(long_edges, key=lambda e: (layer[e.target] - layer[e.source], layer[e.source])):
        src, dst = boxes[e.source], boxes[e.target]
        lane_boxes = by_lane[src.lane]
        centre = (min(b.left for b in lane_boxes) + max(b.right for b in lane_boxes)) / 2
        side = 1 if src.x > centre + 1e-9 else -1
        span = (layer[e.source], layer[e.target])
        k = 0
        while any(not (span[1] < a or b < span[0]) for a, b, c in taken[(src.lane, side)] if c == k):
            k += 1
        taken[(src.lane, side)].append((*span, k))
        out[(e.source, e.target)] = ((src.lane, side), k)
    return out


def _lane_edge(boxes: Mapping[str, _Box], lane: str, side: int) -> float:
    members = [b for b in boxes.values() if b.lane == lane]
    return min(b.left for b in members) if side < 0 else max(b.right for b in members)


def _draw_box(ax, b: _Box, y: float) -> None:
    color = ROLE_COLORS[b.role] if b.role else INK_MUTED
    ax.add_patch(FancyBboxPatch((b.left, y), b.width, BOX_H, boxstyle="round,pad=0,rounding_size=0.06",
                                facecolor="none", edgecolor=color, linewidth=1.8 if b.role else 1.1))
    _label(ax, b.x, y + 0.15, b.label, size=LABEL_SIZE)
    ax.text(b.x, y + 0.33, b.shape, ha="center", va="center", color=INK_MUTED, fontsize=SHAPE_SIZE)


WORK_SQUARE = 0.15  # inches: one row of an array, at most
WORK_STEP = 0.19
WORK_GAP = 0.2  # between two arrays' columns


def _two_lines(text: str) -> str:
    """A heading broken at the space nearest its middle, to narrow its column."""
    spaces = [i for i, ch in enumerate(text) if ch == " "]
    if "\n" in text or not spaces:
        return text
    at = min(spaces, key=lambda i: abs(i - len(text) / 2))
    return text[:at] + "\n" + text[at + 1:]


@styled
def work_steps(step_labels: Sequence[str], work: Sequence[Mapping[str, tuple[int, int]]],
               columns: Mapping[str, tuple[str, str]], *, title: str | None = None) -> Figure:
    """Which rows each generation step computes and which it reuses from the cache.

    `work[s][name]` is (rows computed, rows reused) of array `name` at step `s` (as the
    engine records it, e.g. `encdec.generate(...)["steps"][s]["work"]`); `columns` maps
    each array name to (heading, legend role). A computed row is a filled square, a reused
    row an outlined one, so the difference does not rest on colour.

    Each step's label stands above its row of squares, so the squares get the whole width;
    to stay within a phone's column, long headings take two lines and, if that is not
    enough, the squares get smaller.
    """
    if len(step_labels) != len(work):
        raise ValueError(f"{len(step_labels)} step labels for {len(work)} steps")
    for name, (_, role) in columns.items():
        if role not in ROLE_COLORS:
            raise ValueError(f"unknown role {role!r} for column {name!r}")
    capacity = {name: max(1, *(sum(w[name]) for w in work)) for name in columns}
    heads = {name: plain(head) for name, (head, _) in columns.items()}
    room = PHONE_WIDTH_IN - 0.1

    def widths(step: float) -> dict[str, float]:
        return {name: max(capacity[name] * step,
                          *(_text_width(line, SHAPE_SIZE) for line in heads[name].split("\n"))) + WORK_GAP
                for name in columns}

    step = WORK_STEP
    if sum(widths(step).values()) > room:
        heads = {name: _two_lines(h) for name, h in heads.items()}
    squares = sum(capacity.values())
    if sum(widths(step).values()) > room:  # what the headings leave, shared by the squares
        fixed = sum(w - capacity[n] * step for n, w in widths(step).items())
        step = max(0.1, min(step, (room - fixed) / squares))
    square = min(WORK_SQUARE, step * WORK_SQUARE / WORK_STEP)
    col_w = widths(step)
    head_h = 0.2 + 0.17 * max(h.count("\n") + 1 for h in heads.values())
    label_h, row_h = 0.24, 0.3
    width = max(sum(col_w.values()), *(_text_width(plain(s), SHAPE_SIZE) for s in step_labels))
    top = 0.3 if title else 0.0
    height = top + head_h + (label_h + row_h) * len(work) + 0.6
    fig = new_figure(width, height)
    fig.set_layout_engine("none")
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_axis_off()
    if title:
        ax.text(0.0, 0.05, plain(title), ha="left", va="top", color=INK, fontsize=11, fontweight="bold")
    x = 0.0
    starts = {}
    for name in columns:
        starts[name] = x
        ax.text(x, top + head_h - 0.08, heads[name], ha="left", va="bottom", color=INK_MUTED,
                fontsize=SHAPE_SIZE, linespacing=1.1)
        x += col_w[name]
    rows = []
    for s, (label, w) in enumerate(zip(step_labels, work)):
        y_label = top + head_h + (label_h + row_h) * s
        ax.text(0.0, y_label + label_h / 2, plain(label), ha="left", va="center", color=INK,
                fontsize=SHAPE_SIZE, fontweight="bold")
        y = y_label + label_h + row_h / 2
        for name, (_, role) in columns.items():
            new, kept = w[name]
            color = ROLE_COLORS[role]
            for k in range(kept + new):
                fresh = k >= kept  # cached rows first, then the rows this step adds
                ax.add_patch(FancyBboxPatch((starts[name] + k * step, y - square / 2), square, square,
                                            boxstyle="square,pad=0", linewidth=1.3,
                                            edgecolor=color, facecolor=color if fresh else "none"))
            if new + kept == 0:
                ax.text(starts[name], y, "–", ha="left", va="center", color=INK_MUTED, fontsize=SHAPE_SIZE)
            rows.append([label, heads[name].replace("\n", " "), new, kept])
    handles = [Patch(facecolor=INK_MUTED, edgecolor=INK_MUTED, label="row computed at this step"),
               Patch(facecolor="none", edgecolor=INK_MUTED, linewidth=1.3, label="row reused from the cache")]
    fig.legend(handles=handles, loc="lower left", ncols=1, fontsize=SHAPE_SIZE, handlelength=1.0,
               bbox_to_anchor=(0.0, 0.0), borderaxespad=0.1, columnspacing=1.0)
    _fit_width(fig, ax)
    return attach_table(fig, ["step", "array", "rows computed", "rows reused"], rows)
