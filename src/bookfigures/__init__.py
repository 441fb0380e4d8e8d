"""bookfigures: the book's matplotlib figures in one house style.

Each function returns a matplotlib Figure (transparent background, ink colours that the
build plugin swaps for dark mode) with `fig.data_table = (header, rows)`: the numbers
behind it, as plain Python values, for the reader to download.

Layouts are settled and frozen before the figure is returned, so every save gives the
same bytes. An author who adds artists afterwards should call
`fig.set_layout_engine("constrained")` first (and freeze again with
`bookfigures.style.freeze_layout`).

`dataflow_diagram` draws a model's wiring from its engine graph; `score_notes` writes the
arithmetic behind attention scores for a widget to show.

Site wiring: the numbook plugin's `dark_colors: bookfigures.palette:DARK_INK_MAP`, the KaTeX
plugin's `macros: bookfigures.palette:TEX_MACROS`, and `palette.css_variables()` for CSS.
"""

from importlib import import_module

# Where each public function lives. Imported on first use, so that `bookfigures.palette`
# (read by the site build for the maths macros) loads without matplotlib.
_HOMES = {
    "attention_heatmap": "grids",
    "bar_sizes": "bars",
    "book_style": "style",
    "cost_curves": "curves",
    "dataflow_diagram": "dataflow",
    "labelled_points": "scatter",
    "line_chart": "curves",
    "loss_curve": "curves",
    "mask_panels": "grids",
    "matrix_view": "grids",
    "paired_bars": "bars",
    "position_labels": "labels",
    "probability_bars": "bars",
    "row_before_after": "bars",
    "score_notes": "notes",
    "shape_diagram": "diagrams",
    "sliding_window": "diagrams",
    "step_rows": "grids",
    "subscript": "labels",
    "work_steps": "dataflow",
}


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [  # noqa: F822 - resolved lazily by __getattr__
    "attention_heatmap",
    "bar_sizes",
    "book_style",
    "cost_curves",
    "dataflow_diagram",
    "labelled_points",
    "line_chart",
    "loss_curve",
    "mask_panels",
    "matrix_view",
    "paired_bars",
    "position_labels",
    "probability_bars",
    "row_before_after",
    "score_notes",
    "shape_diagram",
    "sliding_window",
    "step_rows",
    "subscript",
    "work_steps",
]
