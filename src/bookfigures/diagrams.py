"""Diagrams: matrices drawn to scale as blocks (so "4 x 3 times 3 x 3" is seen, not read) and the
dataflow of a forward pass (arrays as boxes, operations as arrows)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Patch, Rectangle

from ._common import attach_table, plain
from .palette import INK, INK_MUTED, ROLE_COLORS, ROLE_NAMES, tint
from .style import new_figure, styled

Term = tuple[str, int, int, str] | str  # (name, rows, cols, role) or an operator such as "@"


def _block(ax, x: float, name: str, rows: int, cols: int, role: str, unit: float,
           top: float) -> float:
    """Draw one matrix block with its left edge at x; return the x where the next item starts."""
    w, h = cols * unit, rows * unit
    color = ROLE_COLORS[role]
    ax.add_patch(Rectangle((x, top - h), w, h, facecolor=tint(color, 0.3), edgecolor=color,
                           linewidth=1.6))
    ax.text(x + w / 2, top + 0.12, name, ha="center", va="bottom", color=INK, fontsize=11)
    ax.text(x + w / 2, top - h - 0.12, f"{rows} \u00d7 {cols}", ha="center", va="top",
            color=INK_MUTED, fontsize=10)
    return x + w


@styled
def shape_diagram(terms: Sequence[Term], *, title: str | None = None,
                  unit: float = 0.32) -> Figure:
    """A product/sum of matrices as blocks to scale with their names and shapes.

    Example: [("X", 4, 3, "e"), "@", ("$W_Q$", 3, 3, "q"), "=", ("Q", 4, 3, "q")].
    Names may use mathtext ($...$); operators are plain strings.
    """
    blocks = [t for t in terms if not isinstance(t, str)]
    for name, _r, _c, role in blocks:
        if role not in ROLE_COLORS:
            raise ValueError(f"unknown role {role!r} for {name!r}")
    gap = 0.55
    tallest = max(r for _n, r, _c, _role in blocks) * unit
    width = sum(c * unit for _n, _r, c, _role in blocks) + gap * (len(terms) - len(blocks)) \
        + 0.2 * len(blocks)
    fig = new_figure(min(6.4, width + 0.6), tallest + 1.0 + (0.3 if title else 0.0))
    ax = fig.add_subplot()
    x, top = 0.0, tallest
    for term in terms:
        if isinstance(term, str):
            ax.text(x + gap / 2, tallest / 2, plain(term), ha="center", va="center", color=INK,
                    fontsize=14)
            x += gap
        else:
            x = _block(ax, x + 0.1, *term, unit=unit, top=top) + 0.1
    ax.set_xlim(-0.05, x + 0.05)
    ax.set_ylim(-0.45, tallest + 0.45)
    ax.set_aspect("equal")
    ax.set_axis_off()
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left")
    rows = [[name, int(r), int(c), role] for name, r, c, role in blocks]
    return attach_table(fig, ["matrix", "rows", "columns", "role"], rows)


# --- dataflow of a forward pass ----------------------------------------------------------------


@dataclass(frozen=True)
class FlowNode:
    """One array of a forward pass: a box at (row, col) of the drawing, in its legend colour.

    `shape` is read off the engine's array by the caller; `role` is a legend role or None
    (logits, the loss: arrays outside the legend).
    """

    id: str
    label: str
    shape: tuple[int, ...]
    role: str | None
    row: int
    col: float


@dataclass(frozen=True)
class FlowEdge:
    """An arrow from one array to another, labelled with the operation (mathtext allowed, e.g.
    r"$\\times W_Q$"); `side` routes it along the right margin (a skip connection such as the
    residual path)."""

    source: str
    target: str
    label: str = ""
    side: bool = False


_COL, _ROW = 1.0, 0.9  # inches between box centres: three columns fit a phone
_BOX_W, _BOX_H = 0.9, 0.5


def _shape_text(shape: tuple[int, ...]) -> str:
    return " \u00d7 ".join(str(n) for n in shape) if shape else "scalar"


@styled
def flow_diagram(nodes: Sequence[FlowNode], edges: Sequence[FlowEdge], *,
                 title: str | None = None) -> Figure:
    """A forward pass as boxes (arrays, with shapes, outlined in their legend colour) and arrows
    (operations). Where several arrows leave one box the computation branches; where several
    enter one, branches join, and in the backward pass their gradients add there.

    The caller places each box (row, col) and takes the shapes from the engine's own arrays,
    so the picture shows the model's wiring as the engine computes it.
    """
    by_id = {n.id: n for n in nodes}
    if len(by_id) != len(nodes):
        raise ValueError("flow_diagram: node ids must be unique")
    for e in edges:
        for end in (e.source, e.target):
            if end not in by_id:
                raise ValueError(f"flow_diagram: edge {e.source}->{e.target} names unknown node {end!r}")
    for n in nodes:
        if n.role is not None and n.role not in ROLE_COLORS:
            raise ValueError(f"unknown role {n.role!r} for {n.id!r}")
    n_cols = max(n.col for n in nodes) + 1
    n_rows = max(n.row for n in nodes) + 1
    side_room = 0.45 if any(e.side for e in edges) else 0.0
    width = n_cols * _COL + side_room + 0.2
    fig = new_figure(width, n_rows * _ROW + 0.35 + (0.3 if title else 0.0))
    ax = fig.add_subplot()
    centre = {n.id: (0.1 + (n.col + 0.5) * _COL, -(n.row + 0.5) * _ROW) for n in nodes}
    for n in nodes:
        x, y = centre[n.id]
        color = ROLE_COLORS[n.role] if n.role else INK_MUTED
        ax.add_patch(FancyBboxPatch((x - _BOX_W / 2, y - _BOX_H / 2), _BOX_W, _BOX_H,
                                    boxstyle="round,pad=0,rounding_size=0.06",
                                    facecolor="none", edgecolor=color, linewidth=1.8))
        ax.text(x, y + 0.07, plain(n.label), ha="center", va="center", color=INK, fontsize=10)
        ax.text(x, y - 0.13, _shape_text(n.shape), ha="center", va="center", color=INK_MUTED,
                fontsize=9)
    incoming: dict[str, list[FlowEdge]] = {}
    for e in edges:
        if not e.side:
            incoming.setdefault(e.target, []).append(e)
    right = 0.1 + n_cols * _COL
    for e in edges:
        (x0, y0), (x1, y1) = centre[e.source], centre[e.target]
        if e.side:
            xs = right + side_room * 0.55
            verts = [(x0 + _BOX_W / 2, y0), (xs, y0), (xs, y1), (x1 + _BOX_W / 2, y1)]
            _poly_arrow(ax, verts)
            if e.label:
                ax.text(xs + 0.06, (y0 + y1) / 2, e.label, rotation=90, ha="left",
                        va="center", color=INK_MUTED, fontsize=9)
            continue
        siblings = incoming[e.target]
        k = siblings.index(e)
        end_x = x1 + (k - (len(siblings) - 1) / 2) * (_BOX_W / max(2, len(siblings) + 1))
        start, end = (x0, y0 - _BOX_H / 2), (end_x, y1 + _BOX_H / 2)
        _poly_arrow(ax, [start, end])
        if e.label:  # near the target, on the outer side of a slanted arrow
            mx, my = start[0] + 0.62 * (end[0] - start[0]), start[1] + 0.62 * (end[1] - start[1])
            leftward = end[0] < start[0] - 1e-9
            ax.text(mx + (-0.07 if leftward else 0.07), my, e.label, ha="right" if leftward else "left",
                    va="center", color=INK_MUTED, fontsize=9)
    ax.set_xlim(0, width)
    ax.set_ylim(-n_rows * _ROW, 0)
    ax.set_aspect("equal")
    ax.set_axis_off()
    roles = list(dict.fromkeys(n.role for n in nodes if n.role))
    handles = [Patch(facecolor="none", edgecolor=ROLE_COLORS[r], linewidth=1.8,
                     label=ROLE_NAMES[r]) for r in roles]
    if handles:
        fig.legend(handles=handles, loc="outside lower left", ncols=2)
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left")
    rows = [[n.id, n.label, _shape_text(n.shape), n.role or "",
             "; ".join(f"{e.source} ({e.label})" if e.label else e.source
                       for e in edges if e.target == n.id)] for n in nodes]
    return attach_table(fig, ["array", "label", "shape", "role", "made from"], rows)


def _poly_arrow(ax, verts: Sequence[tuple[float, float]]) -> None:
    """A line through `verts` with an arrow head at the last point, in muted ink."""
    xs, ys = zip(*verts)
    ax.plot(xs[:-1] + (xs[-1],), ys[:-1] + (ys[-1],), color=INK_MUTED, linewidth=1.1,
            solid_capstyle="butt")
    ax.annotate("", xy=verts[-1], xytext=verts[-2],
                arrowprops={"arrowstyle": "-|>", "color": INK_MUTED, "lw": 1.1,
                            "shrinkA": 0, "shrinkB": 0, "mutation_scale": 11})
