"""Plain-data conversions: JSON for widget exports, CSV for figure data.

Both are byte-deterministic: keys sorted, floats written with `repr` (shortest text
that round-trips), no timestamps.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any


def jsonable(x: Any, where: str = "value") -> Any:
    """Convert NumPy arrays/scalars and containers to JSON types; reject NaN and inf."""
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, Mapping):
        return {str(k): jsonable(v, f"{where}[{k!r}]") for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v, where) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"{where} contains {x!r}, which JSON cannot represent; replace it (e.g. by None)")
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    raise TypeError(f"{where} has a {type(x).__name__}, which cannot be exported as JSON")


def export_json(values: Mapping[str, Any]) -> str:
    """The text of an exported data file: sorted keys, compact, newline-terminated."""
    data = {k: jsonable(v, k) for k, v in values.items()}
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False) + "\n"


def _csv_cell(x: Any) -> str:
    if hasattr(x, "item") and getattr(x, "ndim", 1) == 0:
        x = x.item()
    if isinstance(x, float):
        return repr(x)
    return "" if x is None else str(x)


def to_csv(header: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    """CSV text with full-precision numbers (the figure's download)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([str(h) for h in header])
    for r in rows:
        writer.writerow([_csv_cell(x) for x in r])
    return buf.getvalue()
