"""See a figure the way readers will: light page, dark page, phone width.

`apply_ink_map` is the same textual swap the build plugin performs on the SVG.
`render_png` imitates it without an SVG renderer: it recolours a copy of the figure's
artists through `DARK_INK_MAP` and draws it onto the page background, so the PNG shows
exactly which colours flip and which stay fixed.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path

from matplotlib.colors import to_hex, to_rgba
from matplotlib.figure import Figure

from .palette import DARK_BACKGROUND, DARK_INK_MAP, LIGHT_BACKGROUND

SVG_SAVE_KWARGS = {"format": "svg", "metadata": {"Date": None}}


def save_svg(fig: Figure) -> bytes:
    """SVG bytes as the plugin writes them (text kept as text, fixed hash salt, no date)."""
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "book"}):
        fig.savefig(buf, **SVG_SAVE_KWARGS)
    return buf.getvalue()


def apply_ink_map(svg: str, mapping: dict[str, str] = DARK_INK_MAP) -> str:
    """The plugin's dark variant: every ink hex replaced by its dark counterpart."""
    for light, dark in mapping.items():
        svg = svg.replace(light, dark)
    return svg


def _swap(color: object, mapping: dict[str, str]) -> object:
    """The mapped colour (alpha kept) when `color` is an ink key, else `color` unchanged."""
    try:
        rgba = to_rgba(color)
    except (ValueError, TypeError):
        return color
    key = to_hex(rgba, keep_alpha=False)
    if key not in mapping:
        return color
    return (*to_rgba(mapping[key])[:3], rgba[3])


def _recolour(fig: Figure, mapping: dict[str, str]) -> None:
    for artist in fig.findobj():
        for prop in ("color", "facecolor", "edgecolor", "markerfacecolor", "markeredgecolor",
                     "hatchcolor"):
            getter = getattr(artist, f"get_{prop}", None)
            setter = getattr(artist, f"set_{prop}", None)
            if getter is None or setter is None:
                continue
            try:
                value = getter()
            except (AttributeError, TypeError, ValueError):
                continue
            _set_swapped(setter, value, mapping)


def _set_swapped(setter, value: object, mapping: dict[str, str]) -> None:
    if hasattr(value, "ndim") and getattr(value, "ndim", 0) == 2:  # collections: one row per item
        swapped = [_swap(tuple(c), mapping) for c in value]
        if any(s != tuple(c) for s, c in zip(swapped, value)):
            setter(swapped)
        return
    swapped = _swap(value, mapping)
    if swapped is not value:
        setter(swapped)


def render_png(fig: Figure, path: str | Path, *, mode: str = "light", width_px: int | None = None,
               scale: float = 2.0) -> Path:
    """Write a preview PNG on the page background of `mode` ("light" or "dark").

    `width_px` is the CSS width the figure is shown at (e.g. 360 for a phone); the PNG is
    rendered at `scale` device pixels per CSS pixel, like a high-density screen.
    """
    copy: Figure = pickle.loads(pickle.dumps(fig))
    background = LIGHT_BACKGROUND
    if mode == "dark":
        _recolour(copy, DARK_INK_MAP)
        background = DARK_BACKGROUND
    # an SVG of W inches is shown at W * 96 CSS px (1pt = 4/3 px) unless the page shrinks it
    css_width = copy.get_figwidth() * 96
    shown = min(css_width, width_px) if width_px else css_width
    dpi = shown / copy.get_figwidth() * scale
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    copy.savefig(path, dpi=dpi, facecolor=background, transparent=False)
    return path
