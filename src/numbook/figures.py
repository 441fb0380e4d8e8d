"""Figures: save a matplotlib figure as deterministic SVG, and make its dark variant.

Determinism: a fixed ``svg.hashsalt`` (clip-path ids), ``svg.fonttype: none`` (text
stays text, no glyph ids), no ``Date`` metadata, and nothing else from the machine.
The background is transparent so one light SVG reads on a white page and, after the
colour map, its dark twin reads on Material's slate page.
"""

from __future__ import annotations

import html
import io
import json
import math
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
    """The figure as SVG text cropped to what it draws, byte-identical for identical figures.

    The crop is matplotlib's ``bbox_inches="tight"`` (same box, same padding), done in one
    drawing instead of two: savefig's tight mode first lays the whole figure out to
    measure it, then draws it. Here the figure is drawn once at full size, measured with
    the renderer that drew it (its text metrics are then cached), and the SVG's viewport
    is cut to that box, its content shifted by one ``translate``. A third less work per
    figure; the picture is the same.
    """
    import matplotlib
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    buf = io.StringIO()
    box: list[Any] = []
    draw = fig.draw

    def draw_and_measure(renderer: Any) -> None:
        draw(renderer)
        box[:] = [fig.get_tightbbox(renderer)]

    # With any layout engine set, savefig lays the figure out in a first drawing pass. An
    # engine that only holds a finished layout (`tight_layout()`, `set_layout_engine("none")`
    # leave one) has nothing to do there, so it is taken off while saving.
    engine = fig.get_layout_engine()
    idle = isinstance(engine, PlaceHolderLayoutEngine)
    fig.draw = draw_and_measure  # savefig calls figure.draw(renderer); the last call is the real one
    try:
        with matplotlib.rc_context(
            {"svg.hashsalt": HASH_SALT, "svg.fonttype": "none", "savefig.bbox": "standard",
             "figure.autolayout": False, "figure.constrained_layout.use": False}
        ):
            if idle:
                fig.set_layout_engine(None)
            pad = matplotlib.rcParams["savefig.pad_inches"]
            fig.savefig(buf, format="svg", metadata={"Date": None}, transparent=True)
    finally:
        del fig.draw
        if idle:
            fig.set_layout_engine(engine)
    return _crop(buf.getvalue(), box[0].padded(pad), fig.get_size_inches()[1])


def _pt(inches: float) -> str:
    """A length in points, written as matplotlib writes SVG lengths."""
    return f"{inches * 72:f}".rstrip("0").rstrip(".")


def _crop(svg: str, bbox: Any, height: float) -> str:
    """Cut a full-size matplotlib SVG to ``bbox`` (inches, origin bottom left)."""
    start = svg.index("<svg")
    end = svg.index(">", start) + 1
    close = svg.rindex("</svg>")
    w, h = _pt(bbox.width), _pt(bbox.height)
    head = re.sub(r'\bwidth="[^"]*"', f'width="{w}pt"', svg[start:end], count=1)
    head = re.sub(r'\bheight="[^"]*"', f'height="{h}pt"', head, count=1)
    head = re.sub(r'\bviewBox="[^"]*"', f'viewBox="0 0 {w} {h}"', head, count=1)
    shift = f"translate({_pt(-bbox.x0)} {_pt(bbox.y1 - height)})"
    return f'{svg[:start]}{head}\n<g transform="{shift}">{svg[end:close]}</g>\n{svg[close:]}'


def _data_of(fig: Any, data: tuple[list[str], list[list[Any]]] | None, what: str) -> dict[str, Any]:
    """The figure's data for display (formatted rows) and download (full-precision CSV).

    The rows show the book's decimals unless the figure says otherwise (``fig.data_decimals``,
    set by a figure function whose text uses more); the CSV keeps every digit.
    """
    decimals = getattr(fig, "data_decimals", None)
    if data is None:
        data = getattr(fig, "data_table", None)
    if data is None:
        raise ValueError(
            f"{what} has no data: call numbook.api.figure_data(header, rows) "
            "in the block, or set fig.data_table = (header, rows)"
        )
    header, rows = data
    header = [str(h) for h in header]
    rows = [r.tolist() if hasattr(r, "tolist") else list(r) for r in rows]
    return {
        "header": header,
        "rows": [[format_value(x, decimals) if x is not None else "" for x in r] for r in rows],
        "csv": to_csv(header, rows),
    }


def figure_output(
    fig: Any,
    options: BlockOptions,
    data: tuple[list[str], list[list[Any]]] | None,
    variants: list[dict] | None = None,
    narrow_svg: str | None = None,
) -> FigureOutput:
    """Save a block's figure with the data behind it (no data is an error), and its variants."""
    variants = list(variants or [])
    if variants and (narrow_svg is None) != all(v.get("narrow_svg") is None for v in variants):
        raise ValueError(f"figure {options.figure!r}: give a narrow layout to the figure and to every "
                         "variant (variant(..., narrow=...)), or to none of them")
    return FigureOutput(
        fig_id=str(options.figure),
        caption=str(options.caption),
        alt=str(options.alt),
        svg=svg_of(fig),
        variants=variants,
        narrow_svg=narrow_svg,
        **_data_of(fig, data, f"figure {options.figure!r}"),
    )


def variant_output(key: str, fig: Any, alt: str, caption: str | None, narrow: Any = None) -> dict[str, Any]:
    """One other version of a block's figure, for a widget to switch to (see `numbook.api.variant`)."""
    return {"key": key, "svg": svg_of(fig), "alt": alt, "caption": caption,
            "narrow_svg": None if narrow is None else svg_of(narrow), **_data_of(fig, None, f"figure variant {key!r}")}


def dark_variant(svg: str, colors: Mapping[str, str]) -> str:
    """The dark twin of a light SVG: each ``#rrggbb`` found in ``colors`` is replaced."""
    table = {k.lower(): v for k, v in colors.items()}
    return _HEX.sub(lambda m: table.get(m.group(0).lower(), m.group(0)), svg)


def variant_stem(fig: FigureOutput, variant: Mapping[str, Any]) -> str:
    """The stem of a variant's files: the figure's own for a variant identical to it."""
    if variant["svg"] == fig.svg and variant["csv"] == fig.csv and variant.get("narrow_svg") == fig.narrow_svg:
        return fig.fig_id
    return f"{fig.fig_id}.{variant['key']}"


def variant_files(fig: FigureOutput, colors: Mapping[str, str], min_text_px: float = 0.0) -> dict[str, str]:
    """The files of a figure's variants, by name inside the page's figures directory.

    Each variant gets ``<id>.<key>.light.svg``, ``.dark.svg`` and ``.csv`` (a variant
    identical to the figure itself reuses the figure's files), and ``<id>.variants.json``
    indexes them: for each key the three file names, the alt text, the caption, the data
    table as plain text, and the image's size (`display_size`), for the widget script to
    swap in.
    """
    files: dict[str, str] = {}
    index: dict[str, dict[str, Any]] = {}
    for v in fig.variants:
        stem = variant_stem(fig, v)
        if stem != fig.fig_id:
            files[f"{stem}.light.svg"] = v["svg"]
            files[f"{stem}.dark.svg"] = dark_variant(v["svg"], colors)
            files[f"{stem}.csv"] = v["csv"]
            if v.get("narrow_svg"):
                files[f"{stem}.narrow.light.svg"] = v["narrow_svg"]
                files[f"{stem}.narrow.dark.svg"] = dark_variant(v["narrow_svg"], colors)
        index[v["key"]] = {
            "light": f"{stem}.light.svg", "dark": f"{stem}.dark.svg", "csv": f"{stem}.csv",
            "alt": v["alt"], "caption": fig.caption if v["caption"] is None else v["caption"],
            "header": v["header"], "rows": [[html.unescape(c) for c in r] for r in v["rows"]],
            **(display_size(v["svg"], min_text_px) or {}),  # the image's box changes with it
        }
        if v.get("narrow_svg"):
            size = display_size(v["narrow_svg"], min_text_px) or {}
            index[v["key"]]["narrow"] = {"light": f"{stem}.narrow.light.svg", "dark": f"{stem}.narrow.dark.svg",
                                         "width": size.get("width"), "height": size.get("height")}
    files[f"{fig.fig_id}.variants.json"] = json.dumps(index, sort_keys=True, ensure_ascii=False,
                                                      separators=(",", ":")) + "\n"
    return files


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
    if min_text_px <= 0:
        return None
    size, font = svg_size(svg), smallest_font(svg)
    if size is None or font is None:
        return None
    return min_text_px * size[2] / font


def display_size(svg: str, min_text_px: float = 0.0) -> dict[str, int | None] | None:
    """What an ``<img>`` of the SVG is given: ``width`` and ``height`` in CSS pixels (so the
    page does not shift while it loads) and ``min_width``, the narrowest it may be shown
    before its smallest text falls below ``min_text_px`` (None without a floor). None when
    the SVG's size is unknown."""
    size = svg_size(svg)
    if size is None:
        return None
    floor = legible_width(svg, min_text_px)
    return {"width": round(size[0]), "height": round(size[1]),
            "min_width": math.ceil(floor) if floor is not None else None}
