"""Turn arrays, lists of rows or dicts of columns into a Markdown table.

Every cell goes through `numbook.format.format_value`, so tables follow the book's one
number rule and strings cannot inject markup. Numeric columns are right-aligned.

A table too wide for a phone's column also gets a narrow layout (`table_layouts`), made
from the same cells: the table turned on its side when that fits, else its columns split
into two or three stacked tables that each repeat the row labels (the leading columns that
tell the rows apart, `key_columns`). The page shows one or the
other by the reader's width (the stylesheet); a table that fits neither way scrolls, with its
row labels held in view.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .format import escape_text, format_value, is_number

#: The header cell above a table's row labels, when the author gives it no name: screen
#: readers announce a column by its header, and an empty one is read as nothing at all.
CORNER = '<span class="numbook-sr-only">row</span>'


def to_rows(data: Any, header: Sequence[Any] | None = None) -> tuple[list[Any] | None, list[list[Any]]]:
    """Normalise table data to (header, rows). A mapping is a dict of columns."""
    if isinstance(data, Mapping):
        keys = list(data.keys())
        columns = [_as_list(data[k]) for k in keys]
        lengths = {len(c) for c in columns}
        if len(lengths) > 1:
            raise ValueError(f"table columns have different lengths: {sorted(lengths)}")
        rows = [list(r) for r in zip(*columns, strict=True)]
        return (list(header) if header is not None else keys), rows
    if hasattr(data, "ndim"):
        if data.ndim != 2:
            raise ValueError(f"table data must be 2-D, got an array of shape {data.shape}")
        rows = [list(r) for r in data.tolist()]
    else:
        rows = []
        for r in data:
            if isinstance(r, (str, bytes)) or not hasattr(r, "__iter__"):
                raise ValueError("table data must be a 2-D array, a list of rows or a dict of columns")
            rows.append(_as_list(r))
    return (list(header) if header is not None else None), rows


def _as_list(x: Any) -> list[Any]:
    return x.tolist() if hasattr(x, "tolist") else list(x)


def indexed_rows(
    data: Any, header: Sequence[Any] | None = None, index: Sequence[Any] | None = None
) -> tuple[list[Any] | None, list[list[Any]], list[bool]]:
    """(header, rows with the index labels first, which columns are numeric), checked for shape.

    What every form of table shares: the Markdown one here and a widget's (`numbook.widgets`).
    """
    head, rows = to_rows(data, header)
    if index is not None:
        index = _as_list(index)
        if len(index) != len(rows):
            raise ValueError(f"index has {len(index)} labels for {len(rows)} rows")
        rows = [[label, *row] for label, row in zip(index, rows, strict=True)]
        if head is not None and rows and len(head) == len(rows[0]) - 1:
            head = ["", *head]
    width = max([len(r) for r in rows] + [len(head) if head else 0]) or 1
    if any(len(r) != width for r in rows) or (head is not None and len(head) != width):
        raise ValueError("every table row (and the header) must have the same number of cells")
    numeric = [bool(rows) and all(is_number(_scalar(r[j])) or r[j] is None for r in rows) for j in range(width)]
    return head, rows, numeric


def formatted_cells(
    data: Any,
    header: Sequence[Any] | None = None,
    index: Sequence[Any] | None = None,
    decimals: int | None = None,
) -> tuple[list[str], list[list[str]], list[bool]]:
    """(header cells, body cells, which columns are numeric), every cell as the page shows it."""
    head, rows, numeric = indexed_rows(data, header, index)
    head_cells = [escape_text(h) if h is not None else "" for h in (head or [""] * len(numeric))]
    if index is not None and head and not head_cells[0]:
        head_cells[0] = CORNER
    cells = [["" if x is None else format_value(x, decimals) for x in r] for r in rows]
    return head_cells, cells, numeric


def table_layouts(
    data: Any,
    header: Sequence[Any] | None = None,
    index: Sequence[Any] | None = None,
    decimals: int | None = None,
    caption: str | None = None,
) -> tuple[str, str | None]:
    """The table as Markdown, and its phone layout (`narrow_layouts`) or None, from one formatting."""
    head, cells, numeric = formatted_cells(data, header, index, decimals)
    wide = _markdown(head, cells, numeric, caption)
    layouts = narrow_layouts(head, cells, numeric)
    if layouts is None:
        return wide, None
    narrow = "\n".join(_markdown(h, r, n, caption if k == 0 else None) for k, (h, r, n) in enumerate(layouts))
    return wide, narrow



def _markdown(head: list[str], rows: list[list[str]], numeric: list[bool], caption: str | None) -> str:
    lines = []
    if caption:
        lines += [f"*{escape_text(caption)}*", ""]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join("---:" if num else "---" for num in numeric) + "|")
    for r in rows:
        lines.append("| " + " | ".join(r) + " |")
    return "\n".join(lines) + "\n"


#: The width, in CSS pixels, a table may take on a 390 px phone (its text column is 358 px;
#: the estimate below is rough, so it keeps a margin).
PHONE_COLUMN_PX = 330.0
_CELL_PAD_PX = 11.0  # both sides' padding and a border at the phone's table font (12.8 px)
_HEAD_CHAR_PX, _BODY_CHAR_PX = 7.9, 7.3  # average glyph widths, bold header and regular cells
_MATH = re.compile(r"\$[^$]*\$")
_HTML_TAG = re.compile(r"<[^>]+>")
_MARKUP = re.compile(r"\\(.)|[*`_]")


def shown_length(markdown_text: str) -> float:
    """Roughly how many characters wide a cell's Markdown is at its narrowest: its longest
    word, since a table cell wraps at spaces (maths counts a third of its TeX, unbroken)."""
    markdown_text = html.unescape(_HTML_TAG.sub("", markdown_text.replace(CORNER, "")))  # &lt;bos&gt; shows 5 wide
    maths = max((len(m) / 3 for m in _MATH.findall(markdown_text)), default=0.0)
    words = _MARKUP.sub(r"\1", _MATH.sub(" ", markdown_text)).split()
    return max([maths] + [len(w) for w in words])


def estimated_width(head: list[str], rows: list[list[str]]) -> float:
    """The narrowest a table of these cells can be on a phone, in CSS pixels (an estimate:
    a browser makes a table wider than its column only when it cannot wrap it narrower)."""
    total = 0.0
    for j in range(len(head)):
        widest = max([shown_length(head[j]) * _HEAD_CHAR_PX] + [shown_length(r[j]) * _BODY_CHAR_PX for r in rows])
        total += widest + _CELL_PAD_PX
    return total


def key_columns(rows: list[list[str]]) -> int:
    """How many leading columns it takes to tell the rows apart: 1 when the first column's
    labels are all different; more when they repeat ("decoder" twice, told apart by the next
    column, "masked self-attention" or "cross-attention"). All of them if none suffice."""
    width = len(rows[0]) if rows else 1
    for n in range(1, width + 1):
        if len({tuple(r[:n]) for r in rows}) == len(rows):
            return n
    return width


def narrow_layouts(
    head: list[str], rows: list[list[str]], numeric: list[bool], limit: float = PHONE_COLUMN_PX
) -> list[tuple[list[str], list[list[str]], list[bool]]] | None:
    """The table as it should read on a phone, or None when it fits as it is or cannot be
    made to fit (then it scrolls, with its row labels held in view).

    The leading columns that tell the rows apart (`key_columns`: usually the first alone) are
    the row labels. Tried in order: the table on its side (columns become rows; only when one
    column labels the rows), then its other columns split into two or three groups, each
    repeating the row labels.
    """
    if estimated_width(head, rows) <= limit or len(head) < 3:
        return None
    keys = key_columns(rows)
    if keys == 1:
        on_side_head = [head[0], *(r[0] for r in rows)]
        on_side = [[head[j], *(r[j] for r in rows)] for j in range(1, len(head))]
        if estimated_width(on_side_head, on_side) <= limit:
            side_numeric = [False] + [all(numeric[1:])] * len(rows)
            return [(on_side_head, on_side, side_numeric)]
    if keys >= len(head) - 1:
        return None  # nothing would be left to split
    label_width = estimated_width(head[:keys], [r[:keys] for r in rows])
    groups: list[list[int]] = [[]]
    for j in range(keys, len(head)):
        trial = groups[-1] + [j]
        width = label_width + estimated_width([head[k] for k in trial], [[r[k] for k in trial] for r in rows])
        if groups[-1] and width > limit:
            groups.append([j])
        else:
            groups[-1] = trial
    too_wide = any(
        label_width + estimated_width([head[k] for k in g], [[r[k] for k in g] for r in rows]) > limit for g in groups
    )
    if len(groups) > 3 or too_wide:
        return None
    return [
        ([*head[:keys], *(head[k] for k in g)], [[*r[:keys], *(r[k] for k in g)] for r in rows],
         [*numeric[:keys], *(numeric[k] for k in g)])
        for g in groups
    ]



def _scalar(x: Any) -> Any:
    return x.item() if hasattr(x, "ndim") and x.ndim == 0 else x
