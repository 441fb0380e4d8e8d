"""Labelled points in a plane: where a model put each symbol (for example learned embeddings).

The reader's question is "which symbols sit together", so every point carries its label,
placed where it overlaps no other label or point, and groups differ by colour *and* marker.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from ._common import PHONE_WIDTH_IN, attach_table, check_labels, plain
from .palette import INK, INK_MUTED, ROLE_COLORS
from .style import freeze_layout, new_figure, styled

GROUP_COLORS = (ROLE_COLORS["q"], ROLE_COLORS["k"], ROLE_COLORS["e"], ROLE_COLORS["v"])
GROUP_MARKERS = ("o", "s", "D", "^")
#: Label offsets in points: right, left, above, below; then a leader line from 14 pt away in 16
#: directions; then the diagonals; then leaders from farther out.
BESIDE, DIAGONAL = ((7, 0), (-7, 0), (0, 7), (0, -7)), ((6, 6), (-6, 6), (6, -6), (-6, -6))
LEADER_PT = (14.0, 20.0, 28.0, 38.0)
LEADER_DIRECTIONS = tuple((float(np.cos(a)), float(np.sin(a))) for a in np.arange(16) * np.pi / 8)
ALIGN = {1: "left", -1: "right", 0: "center"}
VALIGN = {1: "bottom", -1: "top", 0: "center"}


def _gap(box: Bbox, centre: np.ndarray) -> float:
    """Distance (pixels) from a point to a box; negative inside it, by the depth to the nearest side."""
    out = np.maximum([box.x0 - centre[0], centre[0] - box.x1, box.y0 - centre[1], centre[1] - box.y1], 0)
    outside = float(np.hypot(max(out[0], out[1]), max(out[2], out[3])))
    inside = min(centre[0] - box.x0, box.x1 - centre[0], centre[1] - box.y0, box.y1 - centre[1])
    return outside if outside > 0 else -inside


def _overlap(a: Bbox, b: Bbox, grow: float = 0.0) -> bool:
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > -grow) and (min(a.y1, b.y1) - max(a.y0, b.y0) > -grow)


def _segment_gap(box: Bbox, p: np.ndarray, q: np.ndarray) -> float:
    """Smallest distance (pixels) from the segment p-q to the box; negative when it enters it."""
    t = np.linspace(0.0, 1.0, 25)[:, None]
    return min(_gap(box, point) for point in p + t * (q - p))


def _faults(box: Bbox, i: int, centres: np.ndarray, radius: float, placed: list[Bbox],
            leaders: list[tuple[np.ndarray, np.ndarray]], frame: Bbox, px: float, leader: bool) -> int:
    """How many of the collision check's rules a label's box breaks (`bookfigures.collisions`):
    outside the axes, over another label or a leader line, within its clearance of a marker,
    (without a leader line) not clearly nearer its own marker than any other, or (with one) a
    leader that runs over another label or marker."""
    faults = int(not (frame.contains(box.x0, box.y0) and frame.contains(box.x1, box.y1)))
    faults += sum(_overlap(box, other, 1.5 * px) for other in placed)
    faults += sum(_segment_gap(box, p, q) < 1.5 * px for p, q in leaders)
    gaps = np.array([_gap(box, c) for c in centres]) - radius  # from each marker's edge, (n,)
    faults += int(np.sum(gaps < 2.5 * px))  # the check keeps 1.5 pt; a point more for rounding
    others = np.delete(gaps, i)
    if not leader:
        faults += int(others.size > 0 and others.min() < gaps[i] + max(3.0 * px, gaps[i]) + px)
    else:
        start = np.clip(centres[i], [box.x0, box.y0], [box.x1, box.y1])  # where the leader leaves the box
        faults += sum(_segment_gap(other, start, centres[i]) < 1.5 * px for other in placed)
        faults += sum(_crosses(start, centres[i], p, q) for p, q in leaders)
        apart = np.hypot(*(centres - centres[i]).T) > 2 * radius  # a marker on top of its own is no fault
        faults += sum(np.hypot(*(c - _nearest_on(start, centres[i], c))) < radius + px
                      for j, c in enumerate(centres) if j != i and apart[j])
    return faults


def _crosses(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> bool:
    """Do the segments a-b and c-d cross?"""
    def side(p, q, r):
        return np.sign((q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]))
    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def _nearest_on(p: np.ndarray, q: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The point of the segment p-q nearest to c."""
    d = q - p
    t = np.clip(np.dot(c - p, d) / max(np.dot(d, d), 1e-9), 0.0, 1.0)
    return p + t * d


def _place_labels(ax: Axes, xy: np.ndarray, labels: list[str], marker_px: float, rounds: int = 6) -> list[Text]:
    """Put each label beside its point where it breaks none of the collision check's rules.

    Greedy, in order of how crowded a point is: try the directions at the near distances,
    then, where no spot beside the point is clear, farther out with a thin leader line to the
    point (a label with a line names its point however near another marker it lies); keep the
    first spot that breaks nothing, else the one that breaks least. Labels left with no clear
    spot go first in the next round, up to `rounds` rounds; the round with the fewest faults wins.
    """
    fig = ax.figure
    renderer = FigureCanvasAgg(fig).get_renderer()  # a figure outside pyplot has no renderer of its own
    fig.draw(renderer)  # settle the layout so that pixel positions are final
    frame = ax.get_window_extent(renderer)
    px = fig.dpi / 72  # pixels per point
    centres = ax.transData.transform(xy)  # (n, 2) pixels
    radius = marker_px / 2 + px / 2  # the check's disc: the marker and its 1 pt edge, halved
    leads = [[(d * ux, d * uy, True) for ux, uy in LEADER_DIRECTIONS] for d in LEADER_PT]
    spots = [(dx, dy, False) for dx, dy in BESIDE] + leads[0] + [(dx, dy, False) for dx, dy in DIAGONAL]
    spots += [spot for farther in leads[1:] for spot in farther]

    def draw(i: int, spot: tuple[float, float, bool]) -> Text:
        dx, dy, leader = spot
        ux, uy = int(np.sign(round(dx, 6))), int(np.sign(round(dy, 6)))
        if leader:  # a leader leaves the label at the middle of a side, or at a corner on a diagonal
            ux = int(np.sign(dx)) if abs(dx) > abs(dy) / 2 else 0
            uy = int(np.sign(dy)) if abs(dy) > abs(dx) / 2 else 0
        arrow = dict(arrowstyle="-", color=INK_MUTED, linewidth=0.8, shrinkA=1, shrinkB=marker_px / 2 + 1)
        text = ax.annotate(plain(labels[i]), xy[i], xytext=(dx, dy), textcoords="offset points",
                           ha=ALIGN[ux], va=VALIGN[uy], color=INK, fontsize=10.5, fontweight="bold",
                           annotation_clip=False, arrowprops=arrow if leader else None)
        text.set_in_layout(False)
        text.update_positions(renderer)
        return text

    boxes: dict[tuple[int, int], Bbox] = {}

    def box_of(i: int, k: int) -> Bbox:  # the text alone, without its leader; measured once
        if (i, k) not in boxes:
            text = draw(i, spots[k])
            boxes[i, k] = Text.get_window_extent(text, renderer)
            text.remove()
        return boxes[i, k]

    def one_round(order: list[int]) -> tuple[int, dict[int, int], list[int]]:
        placed: list[Bbox] = []
        leaders: list[tuple[np.ndarray, np.ndarray]] = []
        chosen, failed, total = {}, [], 0
        for i in order:
            costs = []
            for k, spot in enumerate(spots):
                box = box_of(i, k)
                costs.append(_faults(box, i, centres, radius, placed, leaders, frame, px, spot[2]))
                if costs[-1] == 0:
                    break
            k = int(np.argmin(costs))
            chosen[i], total = k, total + costs[k]
            if costs[k]:
                failed.append(i)
            box = box_of(i, k)
            placed.append(box)
            if spots[k][2]:
                leaders.append((np.clip(centres[i], [box.x0, box.y0], [box.x1, box.y1]), centres[i]))
        return total, chosen, failed

    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=-1) + np.eye(len(xy)) * 1e9
    order = [int(i) for i in np.argsort(gaps.min(axis=1))]
    best = None
    for _ in range(rounds):
        total, chosen, failed = one_round(order)
        if best is None or total < best[0]:
            best = (total, chosen)
        if not failed:
            break
        order = failed + [i for i in order if i not in failed]
    return [draw(i, spots[k]) for i, k in best[1].items()]


@styled
def labelled_points(points: object, labels: Sequence[object], groups: Sequence[object], *,
                    title: str | None = None, xlabel: str = "x", ylabel: str = "y",
                    equal_aspect: bool = True) -> Figure:
    """Points in a plane, each with its label; `groups` (one name per point) sets colour and marker.

    Groups are styled in order of first appearance, with a legend. `equal_aspect` keeps one unit
    the same length on both axes, so distances on the page are distances in the data.
    """
    xy = np.asarray(points, dtype=float)
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ValueError(f"points must have shape (n, 2), got {xy.shape}")
    labs = check_labels(labels, len(xy), "labels")
    kinds = check_labels(groups, len(xy), "groups")
    order = list(dict.fromkeys(kinds))
    if len(order) > len(GROUP_COLORS):
        raise ValueError(f"at most {len(GROUP_COLORS)} groups, got {len(order)}")
    fig = new_figure(PHONE_WIDTH_IN, PHONE_WIDTH_IN + 0.35 + (0.3 if title else 0.0))  # a square plot, axis labels, legend
    ax = fig.add_subplot()
    marker_size = 6.0
    for g, name in enumerate(order):
        mine = [i for i, k in enumerate(kinds) if k == name]
        ax.plot(xy[mine, 0], xy[mine, 1], linestyle="none", marker=GROUP_MARKERS[g],
                color=GROUP_COLORS[g], markersize=marker_size, label=plain(name))
    centre = (xy.min(axis=0) + xy.max(axis=0)) / 2
    half = np.ptp(xy, axis=0) / 2 + 0.12 * (np.ptp(xy, axis=0).max() or 1.0)  # room for labels
    if equal_aspect:
        half[:] = half.max()  # a square window, drawn square: one unit is one length both ways
        ax.set_aspect("equal", adjustable="box")
    ax.set_xlim(centre[0] - half[0], centre[0] + half[0])
    ax.set_ylim(centre[1] - half[1], centre[1] + half[1])
    ax.grid(True)
    ax.set_xlabel(plain(xlabel))
    ax.set_ylabel(plain(ylabel))
    fig.legend(loc="outside lower center", ncols=len(order), markerscale=1.2, fontsize=10,
               handletextpad=0.3, columnspacing=1.0)
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left")
    freeze_layout(fig)  # the axes stop moving, so the labels are placed where they will be drawn
    _place_labels(ax, xy, labs, marker_px=marker_size * fig.dpi / 72)
    rows = [[lab, kind, float(x), float(y)] for lab, kind, (x, y) in zip(labs, kinds, xy)]
    return attach_table(fig, ["label", "group", plain(xlabel), plain(ylabel)], rows)


__all__ = ["labelled_points"]
