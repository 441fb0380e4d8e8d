"""Diagrams: matrices drawn to scale as blocks, so "4 x 3 times 3 x 3" is seen, not read; and a
window sliding over a sequence, so "the six pairs of aabid" are seen one under the other.

A model's dataflow is drawn by `bookfigures.dataflow` from the engine's own graph."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from matplotlib.patches import Patch

from ._common import PHONE_WIDTH_IN, attach_table, fixed, plain, text_width_in
from .palette import HIGHLIGHT, INK, INK_GRID, INK_MUTED, ROLE_COLORS, cell_text_color, tint
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


WINDOW_FACE = tint(ROLE_COLORS["e"], 0.45)  # the characters the model reads: input rows' colour


def _symbol_cell(ax, x: float, y: float, symbol: str, face: str | None, *, bold: bool) -> None:
    """One character in a unit square; an empty face leaves the page showing through."""
    ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=fixed(face) if face else "none",
                           edgecolor=INK_GRID, linewidth=0.8))
    color = cell_text_color(fixed(face)) if face else INK_MUTED
    ax.text(x, y, plain(symbol), ha="center", va="center", fontsize=10.5, color=color,
            fontweight="bold" if bold else "normal", family="monospace", in_layout=False)


@styled
def sliding_window(text: str, window: int, *, boundary: str = ".", title: str | None = None) -> Figure:
    """The (window, next symbol) pairs of one sequence, drawn as the window sliding along it.

    Row k shows the boundary-padded text once more, with the `window` symbols the model reads
    framed and tinted, and the symbol it must predict filled in the highlight colour and bold:
    frame, fill and weight differ, so the roles never rest on colour alone.
    """
    if window < 1:
        raise ValueError("the window must hold at least one symbol")
    padded = boundary * window + text + boundary
    n_pairs = len(text) + 1
    pair_w = text_width_in(f"{boundary * window} \u2192 {boundary}", 10)
    # cells as large as a phone's text column allows, and never below a 10 pt letter's needs
    cell = max(0.24, min(0.4, (PHONE_WIDTH_IN - pair_w - 0.45) / len(padded)))
    fig = new_figure(len(padded) * cell + pair_w + 0.45, n_pairs * cell + 0.95 + (0.3 if title else 0.0))
    ax = fig.add_subplot()
    rows = []
    for k in range(n_pairs):
        for j, symbol in enumerate(padded):
            reads, target = k <= j < k + window, j == k + window
            face = WINDOW_FACE if reads else HIGHLIGHT if target else None
            _symbol_cell(ax, j, k, symbol, face, bold=target)
        ax.add_patch(Rectangle((k - 0.5, k - 0.5), window, 1, facecolor="none", edgecolor=INK,
                               linewidth=2.2))
        seen, nxt = padded[k : k + window], padded[k + window]
        ax.text(len(padded) - 0.2, k, f"{seen} \u2192 {nxt}", ha="left", va="center", fontsize=10,
                color=INK, family="monospace")
        rows.append([k + 1, seen, nxt])
    ax.set_xlim(-0.55, len(padded) - 0.45)
    ax.set_ylim(n_pairs - 0.45, -0.55)
    ax.set_aspect("equal")
    ax.set_yticks(range(n_pairs), [str(k + 1) for k in range(n_pairs)])
    ax.set_xticks([])
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    handles = [Patch(facecolor=WINDOW_FACE, edgecolor=INK, linewidth=2.2, label="window: the characters read"),
               Patch(facecolor=HIGHLIGHT, edgecolor=INK_GRID, label="next: the character to predict")]
    fig.legend(handles=handles, loc="outside lower left", ncols=1, fontsize=10)
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left")
    return attach_table(fig, ["pair", "window", "next"], rows)
