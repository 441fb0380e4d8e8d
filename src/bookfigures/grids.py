"""Grids of numbers: attention heatmaps, generation-step rows and tinted matrices.

Every cell shows its value as text, because the book's claims are about the numbers
("0.61 of the weight goes to river"), and colour only helps the eye find them. Cells are
drawn as opaque rectangles with fixed (mode-independent) colours, and the numbers inside
them pick black or white by contrast with their own cell, so they read the same on a
white and on a slate page. Masked cells are transparent and hatched in ink, so they
follow the page and can never be mistaken for a weight of 0.00.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from ._common import PHONE_WIDTH_IN, as_2d, attach_table, check_labels, fixed, fmt, plain, text_width_in, value_text
from .colormaps import ATTENTION_CMAP, DIVERGING_CMAP, cmap_hex
from .palette import (
    INK,
    INK_GRID,
    INK_MUTED,
    ROLE_COLORS,
    cell_text_color,
    tint,
)
from .style import new_figure, styled

MASK_HATCH = "///"
MASK_LABEL = "blocked by the mask"
MASKED = "masked"  # how a blocked cell appears in the data table
CELL_FONT = 10.0  # the numbers in the cells: as large as the axis labels, legible on a phone


@dataclass
class Grid:
    """What to draw: one face colour and one text per cell (None face = masked cell)."""

    faces: list[list[str | None]]
    texts: list[list[str]]
    row_labels: list[str]
    col_labels: list[str]

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.faces), len(self.col_labels)


def _label_width(grid: Grid, ylabel: str | None, cell: float) -> float:
    """Inches left of the cells: the row labels, and the row-axis title when it lies flat."""
    width = max(text_width_in(r) for r in grid.row_labels)
    if _flat_ylabel(ylabel, grid.shape[0], cell):
        width += text_width_in(ylabel) * 1.1 - 0.3
    return width


def _cell_size(grid: Grid, ylabel: str | None = None) -> float:
    """Cell edge in inches: the grid fits a phone's column when it can (`PHONE_WIDTH_IN`),
    a 10 x 10 grid stays compact, and every cell is wide enough for its longest number."""
    n_rows, n_cols = grid.shape
    cell = float(np.clip(4.2 / max(n_cols, n_rows), 0.42, 0.62))
    room = PHONE_WIDTH_IN - _label_width(grid, ylabel, cell) - 0.9
    cell = min(cell, max(room / n_cols, 0.4))
    if _rotate_cols(grid.col_labels, cell):  # the last slanted label reaches past the grid
        overhang = max(0.0, text_width_in(grid.col_labels[-1]) * 0.64 - cell / 2)
        cell = min(cell, max((room - overhang) / n_cols, 0.4))
    longest = max((text_width_in(t, CELL_FONT) for row in grid.texts for t in row), default=0.0)
    return max(cell, longest + 0.07)


def _rotate_cols(col_labels: list[str], cell: float) -> bool:
    """Rotate column labels when the longest one would not fit in its cell."""
    return max(text_width_in(c) for c in col_labels) > cell * 0.95


def _flat_ylabel(ylabel: str | None, n_rows: int, cell: float) -> bool:
    """Lay the row-axis title flat when the grid is too short for it to stand upright."""
    return bool(ylabel) and text_width_in(ylabel) * 1.1 > n_rows * cell


def _figure_for(grid: Grid, cell: float, rotate: bool, extra_h: float,
                ylabel: str | None = None) -> Figure:
    n_rows, n_cols = grid.shape
    label_w = _label_width(grid, ylabel, cell)
    head = max(text_width_in(c) for c in grid.col_labels) * 0.72 if rotate else 0.2
    width = min(6.4, n_cols * cell + label_w + 0.75)
    height = n_rows * cell + head + 0.45 + extra_h
    return new_figure(max(width, 3.0), height)


def _draw_cell(ax: Axes, i: int, j: int, face: str | None, text: str, fontsize: float) -> None:
    box = (j - 0.5, i - 0.5)
    if face is None:
        ax.add_patch(
            Rectangle(box, 1, 1, facecolor="none", edgecolor=INK_GRID, linewidth=0.8,
                      hatch=MASK_HATCH, hatchcolor=INK_MUTED)
        )
        return
    ax.add_patch(Rectangle(box, 1, 1, facecolor=fixed(face), edgecolor=INK_GRID, linewidth=0.8))
    # inside the axes by construction: keeping it out of the layout saves most of its cost
    ax.text(j, i, text, ha="center", va="center", fontsize=fontsize,
            color=cell_text_color(fixed(face)), in_layout=False)


def _draw_grid(ax: Axes, grid: Grid, *, cell: float, rotate: bool,
               xlabel: str | None, ylabel: str | None) -> None:
    n_rows, n_cols = grid.shape
    for i in range(n_rows):
        for j in range(n_cols):
            _draw_cell(ax, i, j, grid.faces[i][j], grid.texts[i][j], CELL_FONT)
    ax.set_xlim(-0.5, n_cols - 0.5)
    ax.set_ylim(n_rows - 0.5, -0.5)
    ax.set_aspect("equal")
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.tick_params(length=0, top=True, labeltop=True, bottom=False, labelbottom=False, pad=3)
    ax.set_yticks(range(n_rows), [plain(r) for r in grid.row_labels])
    ax.set_xticks(range(n_cols), [plain(c) for c in grid.col_labels],
                  rotation=50 if rotate else 0, ha="left" if rotate else "center",
                  rotation_mode="anchor")
    if xlabel:
        ax.xaxis.set_label_position("top")
        ax.set_xlabel(plain(xlabel), color=INK, fontweight="bold", labelpad=6)
    if ylabel and _flat_ylabel(ylabel, n_rows, cell):
        ax.set_ylabel(plain(ylabel), color=INK, fontweight="bold", labelpad=8, rotation=0,
                      ha="right", va="center")
    elif ylabel:
        ax.set_ylabel(plain(ylabel), color=INK, fontweight="bold", labelpad=6)


def _weights_grid(weights: np.ndarray, mask: np.ndarray | None, row_labels: list[str],
                  col_labels: list[str], decimals: int) -> Grid:
    faces: list[list[str | None]] = []
    texts: list[list[str]] = []
    for i, row in enumerate(weights):
        faces.append([])
        texts.append([])
        for j, w in enumerate(row):
            blocked = mask is not None and not mask[i, j]
            faces[i].append(None if blocked else cmap_hex(ATTENTION_CMAP, np.clip(w, 0.0, 1.0)))
            texts[i].append("" if blocked else value_text(w, decimals, upper=1.0))
    return Grid(faces, texts, row_labels, col_labels)


def _check_mask(mask: object, shape: tuple[int, int]) -> np.ndarray | None:
    """`mask` is True where the query may read the key (the engine's convention)."""
    if mask is None:
        return None
    arr = np.asarray(mask, dtype=bool)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.shape != shape:
        raise ValueError(f"mask shape {arr.shape} does not match weights {shape}")
    return arr


def _weights_table(grid_rows: list[str], col_labels: list[str], weights: np.ndarray,
                   mask: np.ndarray | None, corner: str) -> tuple[list[str], list[list]]:
    rows = []
    for i, label in enumerate(grid_rows):
        cells = [MASKED if (mask is not None and not mask[i, j]) else float(w)
                 for j, w in enumerate(weights[i])]
        rows.append([label, *cells])
    return [corner, *col_labels], rows


def _weights_figure(weights: object, row_labels: Sequence[object], col_labels: Sequence[object],
                    *, title: str | None, mask: object, decimals: int, xlabel: str,
                    ylabel: str, corner: str) -> Figure:
    w = as_2d(weights, "weights")
    rows = check_labels(row_labels, w.shape[0], "row_labels")
    cols = check_labels(col_labels, w.shape[1], "col_labels")
    m = _check_mask(mask, w.shape)
    grid = _weights_grid(w, m, rows, cols, decimals)
    cell = _cell_size(grid, ylabel)
    rotate = _rotate_cols(cols, cell)
    has_mask = m is not None and not m.all()
    fig = _figure_for(grid, cell, rotate, extra_h=(0.3 if title else 0.0) + (0.35 if has_mask else 0.0),
                      ylabel=ylabel)
    ax = fig.add_subplot()
    _draw_grid(ax, grid, cell=cell, rotate=rotate, xlabel=xlabel, ylabel=ylabel)
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left")
    if has_mask:
        handle = Patch(facecolor="none", edgecolor=INK_MUTED, hatch=MASK_HATCH, label=MASK_LABEL)
        fig.legend(handles=[handle], loc="outside lower left", handlelength=1.4, handleheight=1.1)
    return attach_table(fig, *_weights_table(rows, cols, w, m, corner))


@styled
def attention_heatmap(weights: object, row_labels: Sequence[object], col_labels: Sequence[object],
                      *, title: str | None = None, mask: object = None, decimals: int = 2,
                      xlabel: str = "keys (read from)", ylabel: str = "queries (reading)") -> Figure:
    """Attention weights, one row per query and one column per key, values written in the cells.

    `mask` (bool, True = allowed, as `tinyformer.nn.causal_mask`) hatches the blocked cells
    and leaves them without a number: a blocked key is not a weight of zero, it is not
    there at all. Works for square causal/encoder grids, rectangular cross-attention and
    a single row.
    """
    return _weights_figure(weights, row_labels, col_labels, title=title, mask=mask,
                           decimals=decimals, xlabel=xlabel, ylabel=ylabel, corner="query \\ key")


@styled
def step_rows(weight_rows: object, step_labels: Sequence[object], col_labels: Sequence[object],
              *, title: str | None = None, decimals: int = 2,
              xlabel: str = "source positions (keys)",
              ylabel: str = "step (query)") -> Figure:
    """The cross-attention row of each generation step, stacked so the reader sees it shift.

    One row per step over the same source keys; the step labels are passed in (for
    example "1: <bos> -> la").
    """
    return _weights_figure(weight_rows, step_labels, col_labels, title=title, mask=None,
                           decimals=decimals, xlabel=xlabel, ylabel=ylabel, corner="step \\ key")


def _tint_grid(values: np.ndarray, role: str, row_labels: list[str], col_labels: list[str],
               decimals: int) -> Grid:
    """Tint strength follows |value| so large entries stand out; the sign is in the text."""
    scale = float(np.max(np.abs(values))) or 1.0
    color = ROLE_COLORS[role]
    faces = [[tint(color, 0.10 + 0.55 * abs(v) / scale) for v in row] for row in values]
    texts = [[fmt(v, decimals) for v in row] for row in values]
    return Grid(faces, texts, row_labels, col_labels)


def _signed_grid(values: np.ndarray, row_labels: list[str], col_labels: list[str],
                 decimals: int) -> Grid:
    """Diverging colours centred on zero, symmetric, so equal magnitudes look equally strong."""
    scale = float(np.max(np.abs(values))) or 1.0
    faces = [[cmap_hex(DIVERGING_CMAP, 0.5 + 0.5 * v / scale) for v in row] for row in values]
    texts = [[fmt(v, decimals) for v in row] for row in values]
    return Grid(faces, texts, row_labels, col_labels)


@styled
def matrix_view(rows: object, row_labels: Sequence[object], col_labels: Sequence[object],
                *, role: str = "e", title: str | None = None, decimals: int = 2,
                xlabel: str | None = None, ylabel: str | None = None,
                signed: bool = False) -> Figure:
    """A matrix as a grid of numbers tinted with its role colour (input rows, Q, K, V, ...).

    The tint ties the matrix to the colour of its symbol in the maths; the numbers are
    the content. `signed=True` colours by sign instead (diverging blue/orange), for
    matrices whose sign pattern is the point, such as gradients.
    """
    if role not in ROLE_COLORS:
        raise ValueError(f"unknown role {role!r}; expected one of {sorted(ROLE_COLORS)}")
    values = as_2d(rows, "rows")
    rlab = check_labels(row_labels, values.shape[0], "row_labels")
    clab = check_labels(col_labels, values.shape[1], "col_labels")
    grid = (_signed_grid(values, rlab, clab, decimals) if signed
            else _tint_grid(values, role, rlab, clab, decimals))
    cell = _cell_size(grid, ylabel)
    rotate = _rotate_cols(clab, cell)
    fig = _figure_for(grid, cell, rotate, extra_h=0.3 if title else 0.0, ylabel=ylabel)
    ax = fig.add_subplot()
    _draw_grid(ax, grid, cell=cell, rotate=rotate, xlabel=xlabel, ylabel=ylabel)
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left", color=INK)
    table_rows = [[label, *map(float, values[i])] for i, label in enumerate(rlab)]
    return attach_table(fig, ["row", *clab], table_rows)


@styled
def mask_panels(masks: Mapping[str, object], *, row_labels: Mapping[str, Sequence[object]] | None = None,
                col_labels: Mapping[str, Sequence[object]] | None = None, columns: int = 2,
                title: str | None = None) -> Figure:
    """Which keys each query may read, one small grid per mask, with its count of allowed cells.

    `masks` maps a panel title to a boolean mask (True = may read, as `tinyformer.nn.masks`).
    Allowed cells are filled in the attention colour, blocked ones hatched as in
    `attention_heatmap`, so a reader meets one picture of "masked" everywhere. Labels
    default to positions 1, 2, ...; each panel states how many of its cells are allowed.
    """
    if not masks:
        raise ValueError("mask_panels needs at least one mask")
    panels = {name: np.asarray(m, dtype=bool) for name, m in masks.items()}
    for name, m in panels.items():
        if m.ndim != 2:
            raise ValueError(f"mask {name!r} must be 2-D, got shape {m.shape}")
    rows_of = {name: check_labels((row_labels or {}).get(name, range(1, m.shape[0] + 1)), m.shape[0],
                                  f"row_labels[{name!r}]") for name, m in panels.items()}
    cols_of = {name: check_labels((col_labels or {}).get(name, range(1, m.shape[1] + 1)), m.shape[1],
                                  f"col_labels[{name!r}]") for name, m in panels.items()}
    columns = max(1, min(columns, len(panels)))
    grid_rows = -(-len(panels) // columns)
    biggest = max(max(m.shape) for m in panels.values())
    label_w = max(text_width_in(r) for labels in rows_of.values() for r in labels)
    cell = min(0.3, (PHONE_WIDTH_IN / columns - label_w - 0.25) / biggest)
    tallest = max(m.shape[0] for m in panels.values())
    fig = new_figure(PHONE_WIDTH_IN, grid_rows * (tallest * cell + 1.0) + (0.3 if title else 0.0) + 0.35)
    allowed_face = fixed(cmap_hex(ATTENTION_CMAP, 0.55))
    for k, (name, m) in enumerate(panels.items()):
        ax = fig.add_subplot(grid_rows, columns, k + 1)
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                _draw_cell(ax, i, j, allowed_face if m[i, j] else None, "", 10.0)
        ax.set_xlim(-0.5, m.shape[1] - 0.5)
        ax.set_ylim(m.shape[0] - 0.5, -0.5)
        ax.set_aspect("equal")
        for spine in ax.spines.values():
            spine.set_visible(False)
        ax.tick_params(length=0, top=True, labeltop=True, bottom=False, labelbottom=False, pad=2)
        ax.set_xticks(range(m.shape[1]), [plain(c) for c in cols_of[name]])
        ax.set_yticks(range(m.shape[0]), [plain(r) for r in rows_of[name]])
        ax.set_xlabel(f"{plain(name)}\n{int(m.sum())} of {m.size} allowed", color=INK, labelpad=4)
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left", color=INK)
    if any(not m.all() for m in panels.values()):
        handles = [Patch(facecolor=allowed_face, edgecolor=INK_GRID, label="may read"),
                   Patch(facecolor="none", edgecolor=INK_MUTED, hatch=MASK_HATCH, label="masked")]
        fig.legend(handles=handles, loc="outside lower left", ncols=2, handlelength=1.4, handleheight=1.1)
    table_rows = [[name, rows_of[name][i], " ".join(cols_of[name][j] for j in np.flatnonzero(m[i]))]
                  for name, m in panels.items() for i in range(m.shape[0])]
    return attach_table(fig, ["mask", "query", "keys it may read"], table_rows)
