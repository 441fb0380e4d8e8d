"""Matplotlib colormaps built from the palette: attention weights and signed values."""

from __future__ import annotations

from matplotlib.colors import LinearSegmentedColormap, to_hex

from .palette import ROLE_COLORS

# Sequential map for attention weights: near-white to a deep shade of the `a` hue.
ATTENTION_CMAP = LinearSegmentedColormap.from_list(
    "book_attention", ["#fbf4f9", "#e9b9da", ROLE_COLORS["a"], "#8e3a78", "#4a1340"]
)
# Diverging map for signed values: blue (negative) - near white - orange-brown (positive).
DIVERGING_CMAP = LinearSegmentedColormap.from_list(
    "book_diverging", ["#1d5a96", "#6fa3d2", "#f5f5f3", "#e0a05a", "#9c4a05"]
)


def cmap_hex(cmap: LinearSegmentedColormap, x: float) -> str:
    """Hex colour of a colormap at x in [0, 1] (as matplotlib will write it into SVG)."""
    return to_hex(cmap(float(x)), keep_alpha=False)
