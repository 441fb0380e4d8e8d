"""The one rule by which every number in the book is written.

Tables, inline values and figure data tables all go through `format_number`, so a
value reads the same wherever it appears:

* integers (Python or NumPy) are written in full: ``42``, ``−7``;
* floats are written fixed-point with ``decimals`` digits after the point
  (default 3, set by the plugin's ``decimals`` option): ``0.125``, ``−3.500``;
* a nonzero float whose magnitude is below ``10**-decimals`` (it would read as zero)
  or at least ``1e15`` is written in scientific notation with the mantissa rounded to
  ``decimals`` digits, trailing zeros dropped: ``1.2×10⁻⁷``, ``−3×10¹⁶``;
* NaN is ``NaN``, infinities are ``∞`` and ``−∞``;
* negative numbers use the minus sign U+2212 (typographic, and never a hyphen);
  a float that rounds to zero is ``0.000``, never ``−0.000``.

Booleans are not numbers here: they are written ``True``/``False``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

MINUS = "\u2212"
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_LARGE = 1e15

_default_decimals = 3


def set_default_decimals(decimals: int) -> None:
    """Set the book-wide default (the plugin calls this with its ``decimals`` option)."""
    global _default_decimals
    if decimals < 0:
        raise ValueError("decimals must be >= 0")
    _default_decimals = int(decimals)


def is_number(x: Any) -> bool:
    """True for real numbers (Python or NumPy), False for bools and everything else."""
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        return False
    return isinstance(x, numbers.Real)


def format_number(x: Any, decimals: int | None = None) -> str:
    """Write a real number by the book's rule (see the module docstring)."""
    if not is_number(x):
        raise TypeError(f"format_number expects a real number, got {type(x).__name__}")
    d = _default_decimals if decimals is None else int(decimals)
    if isinstance(x, numbers.Integral):
        n = int(x)
        return f"{MINUS}{-n}" if n < 0 else str(n)
    f = float(x)
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "∞" if f > 0 else f"{MINUS}∞"
    sign = MINUS if f < 0 else ""
    a = abs(f)
    if a != 0 and (a < 10.0**-d or a >= _LARGE):
        mantissa, exponent = f"{a:.{d}e}".split("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        exp = str(int(exponent)).translate(_SUPERSCRIPT)
        return f"{sign}{mantissa}×10{exp}"
    text = f"{a:.{d}f}"
    if set(text) <= {"0", "."}:
        return text  # rounds to zero: no sign
    return sign + text


# Characters that Markdown (or its extensions: tables, arithmatex, attr_list) could read
# as markup. Replacing them by numeric entities keeps the text exactly as written.
_MD_SPECIAL = {c: f"&#{ord(c)};" for c in "\\`*_[]{}|$~^#!"}
_MD_SPECIAL.update({"<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&#39;"})


def escape_text(text: str) -> str:
    """Make arbitrary text safe to put into Markdown prose or a table cell.

    HTML is escaped (so ``<script>`` shows as text) and Markdown's own punctuation is
    turned into entities, so nothing in a computed string becomes markup.
    """
    text = str(text).replace("\r\n", " ").replace("\n", " ")
    return "".join(_MD_SPECIAL.get(c, c) for c in text)


def plain_value(x: Any, decimals: int | None = None) -> str:
    """Numbers (NumPy scalars and 0-d arrays too) by the rule, anything else as ``str``; not escaped."""
    if hasattr(x, "ndim") and getattr(x, "ndim", None) == 0 and hasattr(x, "item"):
        x = x.item()
    if is_number(x):
        return format_number(x, decimals)
    return str(x)


def format_value(x: Any, decimals: int | None = None) -> str:
    """Format anything for the page: numbers by the rule, everything else as escaped text."""
    return escape_text(plain_value(x, decimals))
