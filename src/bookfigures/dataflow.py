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
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch
from matplotlib.path import Path

from ._common import PHONE_WIDTH_IN, attach_table, plain
from .palette import INK, INK_GRID, INK_MUTED, ROLE_COLORS, ROLE_NAMES
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


def _text_width(text: str, size: float) -> float:
    """Width in inches of `text` set in the house font (mathtext included), measured, not guessed."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    prop = FontProperties(size=size)  # the house style's sans-serif (figures are built inside it)
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


def _label_width(text: str, size: float) -> float:
    """Width in inches of a label as `_label` draws it."""
    space = _text_width("x x", size) - _text_width("xx", size)
    return sum(_text_width(plain(piece.strip()), size) + space * (len(piece) - len(piece.strip()))
               for piece, _ in _runs(text))


def _label(ax, x: float, y: float, text: str, *, size: float, ha: str = "center", va: str = "center",
           color: str = INK, rotation: float = 0, **style) -> None:
    """Draw a label at (x, y) in the diagram's inches (y pointing down), subscripts lowered.

    `rotation` is 0 or 90 (reading upwards); `ha`, `va` place the whole label as they would
    one text.
    """
    runs = _runs(text)
    if len(runs) <= 1 and not (runs and runs[0][1]):
        ax.text(x, y, plain(text), ha=ha, va=va, color=color, fontsize=size, rotation=rotation,
                rotation_mode="anchor", **style)
        return
    # An SVG viewer drops a text's leading and trailing spaces, so each piece is drawn without
    # them and its spaces become advances of the pen.
    space = _text_width("x x", size) - _text_width("xx", size)
    widths = [_text_width(plain(piece.strip()), size) + space * (len(piece) - len(piece.strip()))
              for piece, _ in runs]
    pos = {"left": 0.0, "center": -sum(widths) / 2, "right": -sum(widths)}[ha]
    drop = SUB_DROP * size / 72.0
    along, down = ((0.0, -1.0), (1.0, 0.0)) if rotation == 90 else ((1.0, 0.0), (0.0, 1.0))
    for (piece, sub), width in zip(runs, widths):
        shift = drop if sub else 0.0
        at = pos + space * (len(piece) - len(piece.lstrip()))
        ax.text(x + along[0] * at + down[0] * shift, y + along[1] * at + down[1] * shift, plain(piece.strip()),
                ha="left", va=va, color=color, fontsize=size, rotation=rotation, rotation_mode="anchor",
                **style)
        pos += width


@styled
def dataflow_diagram(graph, *, title: str | None = None, legend: bool = True,
                     labels: Mapping[str, str] | None = None,
                     op_labels: Mapping[str, str] | None = None, lanes: bool = True) -> Figure:
    """Draw a dataflow graph: arrays as boxes in their legend colours, operations on the arrows.

    `labels` renames boxes and `op_labels` the operation making a box (both keyed by node
    id), for this picture only: a phone-width picture may say "Q" where the graph says
    "queries Q". Groups get a frame, lanes a column (``lanes=False``: one column, narrower
    when a lane holds few boxes). The data table has one row per arrow with the shapes it
    joins, so the numbers in the picture can be read as text.
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

    # lanes side by side; skip channels on each lane's sides
    long_edges = [e for e in edges if layer[e.target] - layer[e.source] > 1]
    channels = _channels(long_edges, boxes, layer)
    shift = 0.0
    for lane in lane_names:
        members = [b for b in boxes.values() if b.lane == lane]
        left_n = max((c + 1 for (ln, side), c in channels.values() if ln == lane and side < 0), default=0)
        right_n = max((c + 1 for (ln, side), c in channels.values() if ln == lane and side > 0), default=0)
        lo = min(b.left for b in members) - left_n * CHANNEL - (PAD if left_n else 0)
        for b in members:
            b.x += shift - lo
        hi = max(b.right for b in members) + right_n * CHANNEL + (PAD if right_n else 0)
        shift = hi + LANE_GAP
    width = shift - LANE_GAP
    n_layers = max(layer.values()) + 1
    groups = [g for g in dict.fromkeys(n.group for n in graph.nodes) if g]
    # a layer where a group's frame ends gets room under it for the frame's name
    framed = [g for g in groups if sum(n.group == g for n in graph.nodes) > 1]
    ends = {max(layer[n.id] for n in graph.nodes if n.group == g) for g in framed}
    tops = np.cumsum([0.0] + [BOX_H + LAYER_GAP + (FRAME_FOOT if k in ends else 0.0)
                              for k in range(n_layers - 1)])
    legend_rows = 0
    used = [r for r in ROLE_COLORS if any(n.role == r for n in graph.nodes)]
    if legend:
        legend_rows = -(-len(used) // 2)
    top = 0.35 if title else 0.05
    height = top + tops[-1] + BOX_H + (FRAME_FOOT if n_layers - 1 in ends else 0.0) + 0.1 + 0.22 * legend_rows + (0.15 if legend_rows else 0)
    fig = new_figure(width + 0.1, height)
    fig.set_layout_engine("none")
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-0.05, width + 0.05)
    ax.set_ylim(height, 0)
    ax.set_axis_off()

    def y_top(b: _Box) -> float:
        return top + tops[b.layer]

    for g in groups:
        if sum(b.group == g for b in boxes.values()) < 2:
            continue  # a group collapsed into one box needs no frame
        _frame(ax, g, [b for b in boxes.values() if b.group == g], y_top, channels, long_edges)
    for b in boxes.values():
        _draw_box(ax, b, y_top(b))
    _draw_edges(ax, graph, boxes, layer, y_top, channels, ends)
    if title:
        ax.text(0.0, 0.05, plain(title), ha="left", va="top", color=INK, fontsize=11, fontweight="bold")
    if legend and used:
        handles = [Patch(facecolor="none", edgecolor=ROLE_COLORS[r], linewidth=1.8, label=ROLE_NAMES[r])
                   for r in used]
        fig.legend(handles=handles, loc="lower left", ncols=2, fontsize=SHAPE_SIZE, handlelength=1.2,
                   bbox_to_anchor=(0.0, 0.0), borderaxespad=0.1, columnspacing=1.0)
    _fit_width(fig, ax)
    rows = [[names[e.source], graph.node(e.source).shape_text, e.op.label,
             ", ".join(f"{p.name} ({' × '.join(map(str, p.shape))})" for p in e.op.params),
             names[e.target], graph.node(e.target).shape_text] for e in edges]
    return attach_table(fig, ["from", "shape in", "operation", "parameters", "to", "shape out"], rows)


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


def _spread(n: int, i: int, left: float, right: float) -> float:
    """Where the i-th of n arrows meets a box edge: spread over its middle half."""
    if n == 1:
        return (left + right) / 2
    span = (right - left) * 0.5
    return (left + right) / 2 - span / 2 + span * i / (n - 1)


def _row_end(boxes: Mapping[str, _Box], b: _Box, side: int) -> bool:
    """True when no box of b's row lies between b and its lane's side channel."""
    row = [o for o in boxes.values() if o.lane == b.lane and o.layer == b.layer and o is not b]
    return all(o.x < b.x for o in row) if side > 0 else all(o.x > b.x for o in row)


def _free_room(boxes: Mapping[str, _Box], b: _Box, side: int, channel_xs: Mapping[float, tuple]) -> float:
    """Horizontal room beside box b (towards `side`) before another box of its row or a channel."""
    edge = b.right if side > 0 else b.left
    walls = [o.left if side > 0 else o.right for o in boxes.values()
             if o.layer == b.layer and o is not b and (o.x - b.x) * side > 0]
    walls += [x for x, (a, z) in channel_xs.items() if a <= b.layer <= z and (x - b.x) * side > 0]
    return min((abs(w - edge) for w in walls), default=np.inf)


def _draw_edges(ax, graph, boxes, layer, y_top, channels, frame_ends) -> None:
    outgoing: dict[str, list] = defaultdict(list)
    incoming: dict[str, list] = defaultdict(list)
    for e in graph.edges():
        if (e.source, e.target) not in channels:
            outgoing[e.source].append(e)
            incoming[e.target].append(e)
    for lst, key in ((outgoing, "target"), (incoming, "source")):
        for edges in lst.values():
            edges.sort(key=lambda e: boxes[getattr(e, key)].x)
    channel_xs = {}  # x of each side channel, with the layers it runs through
    for (src_id, dst_id), ((lane, side), k) in channels.items():
        x = _lane_edge(boxes, lane, side) + side * (PAD + CHANNEL * (k + 0.5))
        channel_xs[x] = (layer[src_id], layer[dst_id])
    placed: list[tuple[float, float, float]] = []  # arrow labels so far: x from, x to, y
    for op in graph.ops:
        dst = boxes[op.output]
        drawn = [i for i in op.inputs if (i, op.output) not in channels]
        # label the arrow from the nearest input (the one a reader's eye follows)
        first = max(op.inputs, key=lambda i: (layer[i], -op.inputs.index(i)))
        for src_id in op.inputs:
            src = boxes[src_id]
            if (src_id, op.output) in channels:
                (lane, side), k = channels[(src_id, op.output)]
                x_ch = _lane_edge(boxes, lane, side) + side * (PAD + CHANNEL * (k + 0.5))
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
                verts = [*start, (x_ch, start[-1][1]), (x_ch, end[0][1]), *end]
                _arrow(ax, verts)
                if src_id == first and op.label:
                    _label(ax, x_ch - side * 0.04, (start[-1][1] + end[0][1]) / 2, op.label,
                           rotation=90, va="bottom" if side < 0 else "top", color=INK_MUTED, size=SHAPE_SIZE)
                continue
            outs = [e.target for e in outgoing[src_id]]
            ins = [e.source for e in incoming[op.output]]
            x0 = _spread(len(outs), outs.index(op.output), src.left, src.right)
            x1 = _spread(len(ins), ins.index(src_id), dst.left, dst.right)
            y0, y1 = y_top(src) + BOX_H, y_top(dst)
            _arrow(ax, [(x0, y0), (x1, y1)])
            if src_id != first or not op.label:
                continue
            if len(drawn) > 1:  # a join: name it beside the box it makes, not on one of its arrows
                right = _free_room(boxes, dst, 1, channel_xs) >= _free_room(boxes, dst, -1, channel_xs)
                _label(ax, dst.right + 0.06 if right else dst.left - 0.06, y1 + BOX_H / 2, op.label,
                       ha="left" if right else "right", color=INK_MUTED, size=SHAPE_SIZE)
                continue
            y_start = y0 + (FRAME_FOOT if src.layer in frame_ends else 0.0)
            need = _label_width(op.label, SHAPE_SIZE) + 0.08
            ym = (y_start + y1) / 2
            xm = x0 + (x1 - x0) * (ym - y0) / (y1 - y0)
            right = x1 >= x0 - 1e-9
            if abs(x1 - x0) < 1e-9:  # a straight arrow: the side where the label meets no channel
                walls = [x for x, (a, z) in channel_xs.items() if a <= src.layer and dst.layer <= z]
                room_right = min((x - xm for x in walls if x > xm), default=np.inf)
                room_left = min((xm - x for x in walls if x < xm), default=np.inf)
                right = room_right >= need or room_right >= room_left
            spans = {side: (xm + 0.05, xm + 0.05 + need) if side else (xm - 0.05 - need, xm - 0.05)
                     for side in (True, False)}
            clash = {side: any(lo < b + LABEL_GAP and a - LABEL_GAP < hi and abs(y - ym) < 0.17
                               for a, b, y in placed)
                     for side, (lo, hi) in spans.items()}
            if clash[right] and not clash[not right]:
                right = not right  # another arrow's label is already there
            placed.append((*spans[right], ym))
            _label(ax, xm + (0.05 if right else -0.05), ym, op.label, ha="left" if right else "right",
                   color=INK_MUTED, size=SHAPE_SIZE)


def _frame(ax, name: str, members: list[_Box], y_top, channels, long_edges) -> None:
    left = min(b.left for b in members) - 0.08
    right = max(b.right for b in members) + 0.08
    top = min(y_top(b) for b in members) - 0.08
    bottom = max(y_top(b) for b in members) + BOX_H + FRAME_FOOT
    ax.add_patch(FancyBboxPatch((left, top), right - left, bottom - top,
                                boxstyle="round,pad=0,rounding_size=0.08", facecolor="none",
                                edgecolor=INK_GRID, linewidth=1.0, linestyle=(0, (4, 2))))
    ax.text(left + 0.06, bottom - 0.03, plain(name), ha="left", va="bottom", color=INK_MUTED,
            fontsize=SHAPE_SIZE, fontstyle="italic")


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
