"""bookfigures: the book's matplotlib figures in one house style.

Each function returns a matplotlib Figure (transparent background, ink colours that the
build plugin swaps for dark mode) with `fig.data_table = (header, rows)`: the numbers
behind it, as plain Python values, for the reader to download.

Layouts are settled and frozen before the figure is returned, so every save gives the
same bytes. An author who adds artists afterwards should call
`fig.set_layout_engine("constrained")` first (and freeze again with
`bookfigures.style.freeze_layout`).

`dataflow_diagram` draws a model's wiring from its engine graph; `bookfigures.wiring` (a block's
heads, branches, LayerNorms, the generation loop, where queries, keys and values come from) and
`bookfigures.units` (score grids, scalar units, reach, masks, weights) draw the book's other
diagrams from the engine's passes, each with an `*_alt` helper for its text alternative;
`score_notes` writes the arithmetic behind attention scores for a widget to show.

`bookfigures.collisions` measures a figure's labels after a draw (no text over text, no line
through a text not its own, no legend without a background over data); the numbook plugin's
`figure_check: bookfigures.collisions:check_figure` runs it on every figure the book makes.

Site wiring: the numbook plugin's `dark_colors: bookfigures.palette:DARK_INK_MAP`, the KaTeX
plugin's `macros: bookfigures.palette:TEX_MACROS`, and `palette.css_variables()` for CSS.
"""

from importlib import import_module

# Where each public function lives. Imported on first use, so that `bookfigures.palette`
# (read by the site build for the maths macros) loads without matplotlib.
_HOMES = {
    "allowed_context": "units",
    "allowed_context_alt": "units",
    "attention_heatmap": "grids",
    "attention_sources": "wiring",
    "attention_sources_alt": "wiring",
    "bar_sizes": "bars",
    "book_style": "style",
    "cost_curves": "curves",
    "dataflow_diagram": "dataflow",
    "final_row": "units",
    "final_row_alt": "units",
    "fitted_cross_weights": "units",
    "fitted_cross_weights_alt": "units",
    "generation_loop": "wiring",
    "generation_loop_alt": "wiring",
    "labelled_points": "scatter",
    "line_chart": "curves",
    "loss_curve": "curves",
    "mask_panels": "grids",
    "matrix_view": "grids",
    "multihead_alt": "wiring",
    "multihead_diagram": "wiring",
    "norm_placement": "wiring",
    "norm_placement_alt": "wiring",
    "norm_variances": "wiring",
    "paired_bars": "bars",
    "past_and_memory": "units",
    "past_and_memory_alt": "units",
    "position_labels": "labels",
    "prefix_means": "units",
    "prefix_means_alt": "units",
    "prepost_rows": "wiring",
    "probability_bars": "bars",
    "query_against_keys": "units",
    "query_against_keys_alt": "units",
    "reach": "units",
    "reach_alt": "units",
    "residual_stream": "wiring",
    "residual_stream_alt": "wiring",
    "row_before_after": "bars",
    "rows_and_features": "wiring",
    "rows_and_features_alt": "wiring",
    "score_grids": "units",
    "score_grids_alt": "units",
    "score_notes": "notes",
    "shape_diagram": "diagrams",
    "sliding_window": "diagrams",
    "step_rows": "grids",
    "subscript": "labels",
    "two_sequences": "wiring",
    "two_sequences_alt": "wiring",
    "value_mixture": "units",
    "value_mixture_alt": "units",
    "window_inputs": "units",
    "window_inputs_alt": "units",
    "work_steps": "dataflow",
}


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [  # noqa: F822 - resolved lazily by __getattr__
    "allowed_context",
    "allowed_context_alt",
    "attention_heatmap",
    "attention_sources",
    "attention_sources_alt",
    "bar_sizes",
    "book_style",
    "cost_curves",
    "dataflow_diagram",
    "final_row",
    "final_row_alt",
    "fitted_cross_weights",
    "fitted_cross_weights_alt",
    "generation_loop",
    "generation_loop_alt",
    "labelled_points",
    "line_chart",
    "loss_curve",
    "mask_panels",
    "matrix_view",
    "multihead_alt",
    "multihead_diagram",
    "norm_placement",
    "norm_placement_alt",
    "norm_variances",
    "paired_bars",
    "past_and_memory",
    "past_and_memory_alt",
    "position_labels",
    "prefix_means",
    "prefix_means_alt",
    "prepost_rows",
    "probability_bars",
    "query_against_keys",
    "query_against_keys_alt",
    "reach",
    "reach_alt",
    "residual_stream",
    "residual_stream_alt",
    "row_before_after",
    "rows_and_features",
    "rows_and_features_alt",
    "score_grids",
    "score_grids_alt",
    "score_notes",
    "shape_diagram",
    "sliding_window",
    "step_rows",
    "subscript",
    "two_sequences",
    "two_sequences_alt",
    "value_mixture",
    "value_mixture_alt",
    "window_inputs",
    "window_inputs_alt",
    "work_steps",
]
