"""bookfigures: the book's matplotlib figures in one house style.

Each function returns a matplotlib Figure (transparent background, ink colours that the
build plugin swaps for dark mode) with `fig.data_table = (header, rows)`: the numbers
behind it, as plain Python values, for the reader to download.

Layouts are settled and frozen before the figure is returned, so every save gives the
same bytes. An author who adds artists afterwards should call
`fig.set_layout_engine("constrained")` first (and freeze again with
`bookfigures.style.freeze_layout`).

Site wiring: the numbook plugin's `dark_colors: bookfigures.palette:DARK_INK_MAP`, the KaTeX
plugin's `macros: bookfigures.palette:TEX_MACROS`, and `palette.css_variables()` for CSS.
"""

from .bars import bar_sizes, probability_bars, row_before_after
from .curves import cost_curves, loss_curve
from .diagrams import shape_diagram
from .grids import attention_heatmap, matrix_view, step_rows
from .style import book_style

__all__ = [
    "attention_heatmap",
    "bar_sizes",
    "book_style",
    "cost_curves",
    "loss_curve",
    "matrix_view",
    "probability_bars",
    "row_before_after",
    "shape_diagram",
    "step_rows",
]
