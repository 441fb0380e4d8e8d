"""Shape diagrams: matrices drawn to scale as blocks, so "4 x 3 times 3 x 3" is seen, not read."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ._common import attach_table, plain
from .palette import INK, INK_MUTED, ROLE_COLORS, tint
from .style import new_figure, styled

Term = tuple[str, int, int, str] | str  # (name, rows, cols, role) or an operator such as "@"


def _block(ax, x: float, name: str, rows: int, cols: int, role: str, unit: float,
           top: float) -> float:
    """Draw one matrix block with its left edge at x; return the x where the next item starts."""
    w, h = cols * unit, rows * unit
    color = ROLE_COLORS[role]
    ax.add_patch(Rectangle((x, top - h), w, h, facecolor=tint(color, 0.3), edgecolor=color,
                           linewidth=1.6))
    # large enough that a mathtext subscript ($W_Q$, 70% of it) still reads at 10 pt
    ax.text(x + w / 2, top + 0.12, name, ha="center", va="bottom", color=INK, fontsize=14.5)
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
