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
from .palette import INK, ROLE_COLORS
from .style import new_figure, styled

GROUP_COLORS = (ROLE_COLORS["q"], ROLE_COLORS["k"], ROLE_COLORS["e"], ROLE_COLORS["v"])
GROUP_MARKERS = ("o", "s", "D", "^")
# label offsets in points, tried in this order: right, left, above, below, then the diagonals
OFFSETS = ((7, 0), (-7, 0), (0, 7), (0, -7), (6, 6), (-6, 6), (6, -6), (-6, -6), (12, 0), (-12, 0),
           (0, 13), (0, -13))
ALIGN = {1: "left", -1: "right", 0: "center"}
VALIGN = {1: "bottom", -1: "top", 0: "center"}


def _overlap(a: Bbox, b: Bbox) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w * h if w > 0 and h > 0 else 0.0


def _place_labels(ax: Axes, xy: np.ndarray, labels: list[str], marker_px: float) -> list[Text]:
    """Put each label beside its point where it collides least with the others and the points.

    Greedy, in order of how crowded a point is: try each offset in turn, keep the first one
    that overlaps nothing inside the axes, else the one with the least overlap.
    """
    fig = ax.figure
    renderer = FigureCanvasAgg(fig).get_renderer()  # a figure outside pyplot has no renderer of its own
    fig.draw(renderer)  # settle the layout so that pixel positions are final
    frame = ax.get_window_extent(renderer)
    centres = ax.transData.transform(xy)  # (n, 2) pixels
    half = marker_px / 2 + 1
    occupied = [Bbox.from_extents(cx - half, cy - half, cx + half, cy + half) for cx, cy in centres]
    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=-1) + np.eye(len(xy)) * 1e9
    texts: list[Text] = []
    for i in np.argsort(gaps.min(axis=1)):
        best = None
        for dx, dy in OFFSETS:
            text = ax.annotate(plain(labels[i]), xy[i], xytext=(dx, dy), textcoords="offset points",
                               ha=ALIGN[int(np.sign(dx))], va=VALIGN[int(np.sign(dy))],
                               color=INK, fontsize=10.5, fontweight="bold", annotation_clip=False)
            text.set_in_layout(False)
            box = text.get_window_extent(renderer).padded(1)
            outside = 0.0 if frame.contains(box.x0, box.y0) and frame.contains(box.x1, box.y1) else 1e6
            cost = outside + sum(_overlap(box, other) for j, other in enumerate(occupied) if j != i)
            if best is None or cost < best[0]:
                if best is not None:
                    best[1].remove()
                best = (cost, text, box)
            else:
                text.remove()
            if cost == 0:
                break
        texts.append(best[1])
        occupied.append(best[2])
    return texts


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
    _place_labels(ax, xy, labs, marker_px=marker_size * fig.dpi / 72)
    rows = [[lab, kind, float(x), float(y)] for lab, kind, (x, y) in zip(labs, kinds, xy)]
    return attach_table(fig, ["label", "group", plain(xlabel), plain(ylabel)], rows)


__all__ = ["labelled_points"]
