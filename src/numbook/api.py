"""What a book page's blocks import: ``from numbook.api import table, figure_data, export, markdown, fmt``
(and ``fmt_vector``, ``fmt_shape``, ``fmt_quoted``, ``fmt_list`` for rows, shapes, literal text
and lists written in prose).

Widgets (see `numbook.widgets`): ``switch``, ``compute`` and ``table_spec`` declare them;
``variant`` gives a figure the other versions a switch can show.

Each function works inside a build (its output goes into the page) and outside one
(in a notebook or a test it just returns its value), so page code can be tried anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import record
from .data import export_json
from .format import format_value
from .tables import table_layouts
from .widgets import NAME, compute, switch, table_spec

__all__ = ["table", "figure_data", "export", "markdown", "fmt", "fmt_vector", "fmt_shape", "fmt_quoted",
           "fmt_list", "variant", "switch", "compute", "table_spec"]

_NAME = NAME


def fmt(x: Any, decimals: int | None = None) -> str:
    """Format a value by the book's one number rule (for f-strings in inline values)."""
    return format_value(x, decimals)


def fmt_vector(values: Any, decimals: int | None = None) -> str:
    """A row of numbers as the book writes it in prose and tables: ``[0.12, −0.30, 1.00]``."""
    return "[" + ", ".join(format_value(x, decimals) for x in list(_flat(values))) + "]"


def fmt_shape(array_or_shape: Any) -> str:
    """A shape as rows × columns, ``4 × 3``; a single row (1-D) is ``1 × 3``, as the book reads it."""
    shape = tuple(getattr(array_or_shape, "shape", array_or_shape))
    if len(shape) == 1:
        shape = (1, *shape)
    return " × ".join(str(int(n)) for n in shape)


def fmt_quoted(text: Any) -> str:
    """A literal piece of text in prose, in quotation marks: “..a”.

    Why: a window of characters such as ``..a`` or a lone ``.`` would otherwise melt into
    the sentence's own punctuation.
    """
    return f"\u201c{text}\u201d"


def fmt_list(items: Any, conjunction: str = "and") -> str:
    """Items as prose lists them: ``a``, ``a and b``, ``a, b and c``."""
    words = [str(x) for x in items]
    if not words:
        raise ValueError("fmt_list needs at least one item")
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {conjunction} {words[-1]}"


def _flat(values: Any) -> Any:
    return values.ravel().tolist() if hasattr(values, "ravel") else values


def table(
    data: Any,
    header: Sequence[Any] | None = None,
    index: Sequence[Any] | None = None,
    decimals: int | None = None,
    caption: str | None = None,
) -> str:
    """Show a table after the block: ``data`` is a 2-D array, a list of rows or a dict of columns.

    ``header`` names the columns (a dict's keys by default), ``index`` labels the rows,
    ``decimals`` overrides the book default for this table. Returns the Markdown.
    """
    text, narrow = table_layouts(data, header=header, index=index, decimals=decimals, caption=caption)
    if record.current is not None:
        item = {"type": "table", "markdown": text}
        if narrow is not None:
            item["narrow"] = narrow  # what a phone shows instead (numbook.tables)
        record.current.items.append(item)
    return text


def figure_data(header: Sequence[Any], rows: Sequence[Sequence[Any]]) -> None:
    """Give the numbers behind this block's figure (shown as a table and a CSV download).

    Alternatively set ``fig.data_table = (header, rows)`` on the figure.
    """
    if record.current is not None:
        record.current.figure_data = ([str(h) for h in header], [list(r) for r in rows])


def export(name: str, **values: Any) -> str:
    """Write ``data/<name>.json`` beside the page for the page's widgets; returns its JSON text.

    Arrays become lists, keys are sorted; NaN and infinities are refused. In the page,
    ``<div data-numbook-export="<name>" data-src="...">`` gives scripts the file's URL.
    """
    if not _NAME.match(name):
        raise ValueError(f"export name {name!r}: use letters, digits, '-', '_' and '.'")
    text = export_json(values)
    rec = record.current
    if rec is not None:
        if name in rec.exports:
            raise ValueError(f"export {name!r} written twice on this page")
        rec.exports.add(name)
        rec.items.append({"type": "export", "name": name, "json": text})
    return text


def markdown(text: str) -> None:
    """Put ``text`` into the page as Markdown, unescaped (the author answers for it)."""
    if record.current is not None:
        record.current.items.append({"type": "markdown", "text": str(text)})


def narrow(fig: Any) -> Any:
    """This block's figure laid out for a narrow screen: a phone shows it instead.

    Draw it from the same data (a heatmap turned on its side, fewer columns): a figure too
    wide for a phone's column would otherwise scroll sideways or shrink its text. The caption,
    alt text and data stay the block's. Returns ``fig``.
    """
    rec = record.current
    if rec is not None:
        from .figures import svg_of

        if rec.narrow_svg is not None:
            raise ValueError("narrow() called twice for this figure")
        rec.narrow_svg = svg_of(fig)
        rec.variant_figures.append(fig)  # left open in pyplot, it is still not "the" figure
        rec.other_figures.append(("narrow", fig))
    return fig


def variant(key: str, fig: Any, *, alt: str, caption: str | None = None, narrow: Any = None) -> Any:
    """Another version of this block's figure, which a `switch` naming the figure can show.

    Call it in a ``figure=`` block once per switch option (the block's own figure, the
    one it ends with, is what the page shows first and without JavaScript). ``alt`` is
    this version's text alternative; ``caption`` replaces the block's caption when given;
    ``narrow`` is this version laid out for a phone (see `narrow`). Returns ``fig``.
    """
    if not _NAME.match(str(key)):
        raise ValueError(f"variant key {key!r}: use letters, digits, '-', '_' and '.'")
    rec = record.current
    if rec is not None:
        from .figures import variant_output

        if any(v["key"] == key for v in rec.variants):
            raise ValueError(f"variant {key!r} given twice for this figure")
        text = None if caption is None else str(caption)
        rec.variant_figures.append(fig)  # left open in pyplot, it is still not "the" figure
        if narrow is not None:
            rec.variant_figures.append(narrow)
        rec.variants.append(variant_output(str(key), fig, str(alt), text, narrow))
        rec.other_figures.append((str(key), fig))
        if narrow is not None:
            rec.other_figures.append((f"{key}.narrow", narrow))
    return fig
