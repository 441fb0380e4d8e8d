"""Figures: save a matplotlib figure as deterministic SVG, and make its dark variant.

Determinism: a fixed ``svg.hashsalt`` (clip-path ids), ``svg.fonttype: none`` (text
stays text, no glyph ids), no ``Date`` metadata, and nothing else from the machine.
The background is transparent so one light SVG reads on a white page and, after the
colour map, its dark twin reads on Material's slate page.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from typing import Any

from .cells import BlockOptions, FigureOutput
from .data import to_csv
from .format import format_value

HASH_SALT = "numbook"

#: Default dark-mode map: the near-black inks matplotlib uses for text, spines and ticks
#: become light inks. The book's palette can give its own map (``dark_colors`` option).
DEFAULT_DARK_COLORS: dict[str, str] = {
    "#000000": "#e6e6e6",
    "#1a1a1a": "#e0e0e0",
    "#222222": "#dddddd",
    "#262626": "#d9d9d9",
    "#333333": "#cccccc",
    "#444444": "#bbbbbb",
}

_HEX = re.compile(r"#[0-9a-fA-F]{6}\b")


def svg_of(fig: Any) -> str:
    """The figure as SVG text, byte-identical for identical figures."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": HASH_SALT, "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata={"Date": None}, transparent=True, bbox_inches="tight")
    return buf.getvalue()


def figure_output(fig: Any, options: BlockOptions, data: tuple[list[str], list[list[Any]]] | None) -> FigureOutput:
    """Save a block's figure with the data behind it; no data is an error."""
    if data is None:
        data = getattr(fig, "data_table", None)
    if data is None:
        raise ValueError(
            f"figure {options.figure!r} has no data: call numbook.api.figure_data(header, rows) "
            "in the block, or set fig.data_table = (header, rows)"
        )
    header, rows = data
    header = [str(h) for h in header]
    rows = [r.tolist() if hasattr(r, "tolist") else list(r) for r in rows]
    return FigureOutput(
        fig_id=str(options.figure),
        caption=str(options.caption),
        alt=str(options.alt),
        svg=svg_of(fig),
        header=header,
        rows=[[format_value(x) if x is not None else "" for x in r] for r in rows],
        csv=to_csv(header, rows),
    )


def dark_variant(svg: str, colors: Mapping[str, str]) -> str:
    """The dark twin of a light SVG: each ``#rrggbb`` found in ``colors`` is replaced."""
    table = {k.lower(): v for k, v in colors.items()}
    return _HEX.sub(lambda m: table.get(m.group(0).lower(), m.group(0)), svg)


# --- size of the text a reader sees ---------------------------------------------------------

_CSS_PX = {"px": 1.0, "": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4}
_LENGTH = re.compile(r"^\s*([0-9.]+)\s*(px|pt|pc|in|cm|mm)?\s*$")
_SVG_TAG = re.compile(r"<svg\b[^>]*>", re.S)
_FONT_SIZE = re.compile(r"font-size\s*[:=]\s*[\"']?\s*([0-9.]+)\s*(px)?", re.I)
_FONT_SHORTHAND = re.compile(r"\bfont\s*:\s*(?:[a-z-]+\s+)*?([0-9.]+)px", re.I)


def _attr(tag: str, name: str) -> str | None:
    m = re.search(rf"\s{name}\s*=\s*[\"']([^\"']*)[\"']", tag)
    return m.group(1) if m else None


def svg_size(svg: str) -> tuple[float, float, float] | None:
    """(width, height) in CSS pixels at natural size, and the viewBox width; None if unknown.

    Natural size is what a browser shows when nothing scales the image: the root
    ``width``/``height`` (``pt`` and other units converted), or the viewBox's own size.
    """
    tag = _SVG_TAG.search(svg)
    if tag is None:
        return None
    box = _attr(tag.group(0), "viewBox")
    box_size = [float(x) for x in re.split(r"[\s,]+", box.strip())][2:4] if box else None
    size = []
    for name, k in (("width", 0), ("height", 1)):
        m = _LENGTH.match(_attr(tag.group(0), name) or "")
        if m:
            size.append(float(m.group(1)) * _CSS_PX[m.group(2) or ""])
        elif box_size:
            size.append(box_size[k])
        else:
            return None
    return size[0], size[1], box_size[0] if box_size else size[0]


def smallest_font(svg: str) -> float | None:
    """The smallest font size used by the SVG's text, in its own (viewBox) units."""
    sizes = [float(m.group(1)) for m in _FONT_SIZE.finditer(svg)]
    sizes += [float(m.group(1)) for m in _FONT_SHORTHAND.finditer(svg)]
    sizes = [s for s in sizes if s > 0]
    return min(sizes) if sizes else None


def legible_width(svg: str, min_text_px: float) -> float | None:
    """The narrowest display width (CSS px) at which the SVG's smallest text is ``min_text_px``.

    None when the SVG has no text or no known size. A figure shown narrower than this
    (to fit a phone's column) would shrink its text below the floor.
    """
    size, font = svg_size(svg), smallest_font(svg)
    if size is None or font is None or min_text_px <= 0:
        return None
    return min_text_px * size[2] / font
