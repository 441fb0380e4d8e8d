"""Turn arrays, lists of rows or dicts of columns into a Markdown table.

Every cell goes through `numbook.format.format_value`, so tables follow the book's one
number rule and strings cannot inject markup. Numeric columns are right-aligned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .format import escape_text, format_value, is_number


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


def table_markdown(
    data: Any,
    header: Sequence[Any] | None = None,
    index: Sequence[Any] | None = None,
    decimals: int | None = None,
    caption: str | None = None,
) -> str:
    """Render a table as Markdown (the `tables` extension MkDocs always enables)."""
    head, rows, numeric = indexed_rows(data, header, index)
    width = len(numeric)

    def cell(x: Any) -> str:
        return "" if x is None else format_value(x, decimals)

    lines = []
    if caption:
        lines += [f"*{escape_text(caption)}*", ""]
    head_cells = [escape_text(h) if h is not None else "" for h in (head or [""] * width)]
    lines.append("| " + " | ".join(head_cells) + " |")
    lines.append("|" + "|".join("---:" if num else "---" for num in numeric) + "|")
    for r in rows:
        lines.append("| " + " | ".join(cell(x) for x in r) + " |")
    return "\n".join(lines) + "\n"


def _scalar(x: Any) -> Any:
    return x.item() if hasattr(x, "ndim") and x.ndim == 0 else x
