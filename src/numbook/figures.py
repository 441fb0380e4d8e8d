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
