"""Small helpers shared by the figure functions: data tables, safe labels, fixed colours."""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Real

import numpy as np
from matplotlib.figure import Figure

from .palette import DARK_INK_MAP

DataTable = tuple[list[str], list[list]]

#: The widest a figure is drawn when it can be: 3.55 in, 355 CSS px once saved with its margin,
#: which fits the 358 px text column of a 390 px phone, so the figure is never scaled down there
#: and its 10 pt text reads at 13.3 px. Only grids too big for it (a 10 x 10 head) are wider,
#: and the site lets those scroll sideways rather than shrink.
PHONE_WIDTH_IN = 3.55
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def py_value(x: object) -> object:
    """A plain Python number or string (NumPy scalars and arrays would not serialise cleanly)."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (Real, np.floating)):
        return float(x)
    if x is None:
        return None
    return str(x)


def attach_table(fig: Figure, header: Sequence[str], rows: Sequence[Sequence[object]]) -> Figure:
    """Set `fig.data_table`, the numbers behind the figure that the reader can download."""
    header = [str(h) for h in header]
    clean = [[py_value(v) for v in row] for row in rows]
    for row in clean:
        if len(row) != len(header):
            raise ValueError(f"data_table row {row!r} does not match header {header!r}")
    fig.data_table = (header, clean)
    return fig


def plain(label: object) -> str:
    """A label shown literally: '$' would otherwise switch matplotlib into mathtext."""
    return str(label).replace("$", r"\$")


def fixed(hex_color: str) -> str:
    """A data colour guaranteed not to be an ink key, so the dark-mode swap cannot touch it."""
    c = hex_color.lower()
    while c in DARK_INK_MAP:
        last = int(c[5:7], 16)
        c = c[:5] + f"{last + 1 if last < 255 else last - 1:02x}"
    return c


def as_2d(values: object, name: str) -> np.ndarray:
    """A float matrix; a single row (1-D input) becomes a 1 x n matrix."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D, got shape {arr.shape}")
    return arr


def check_labels(labels: Sequence[object], n: int, name: str) -> list[str]:
    """Labels as strings, with a clear error when their count does not match the data."""
    out = [str(label) for label in labels]
    if len(out) != n:
        raise ValueError(f"{name}: expected {n} labels, got {len(out)}")
    return out


def text_width_in(label: str, fontsize: float = 10.0) -> float:
    """Rough width of a label in inches (DejaVu Sans averages ~0.6 em per character)."""
    return len(label) * 0.6 * fontsize / 72.0


def sig_text(value: float, digits: int = 3) -> str:
    """A value with exactly `digits` significant digits, trailing zeros kept ("0.120", "2.40×10⁻⁵").

    One rule for a whole figure, so labels never mix two and three significant digits.
    """
    if value == 0:
        return "0"
    exponent = int(np.floor(np.log10(abs(value))))
    if -4 <= exponent < digits:
        text = f"{value:.{max(digits - 1 - exponent, 0)}f}"
    else:
        mantissa = value / 10.0**exponent
        text = f"{mantissa:.{digits - 1}f}×10" + str(exponent).translate(_SUPERSCRIPT)
    return text.replace("-", "\u2212")


def power_of_ten(value: float, _pos: object = None) -> str:
    """Log-axis tick labels as "10⁻³" in one font size (mathtext would shrink the exponent)."""
    if value <= 0:
        return ""
    exponent = np.log10(value)
    if not np.isclose(exponent, round(exponent)):
        return ""
    return "10" + str(int(round(exponent))).translate(_SUPERSCRIPT)


def value_text(value: float, decimals: int, *, upper: float | None = None) -> str:
    """A value as a figure writes it beside its bar or in its cell, never rounded onto a bound.

    A non-zero value too small to show reads "<0.01" (">−0.01" below zero): "0.00" would
    claim nothing is there, which for a weight looks like a masked cell. With ``upper`` (1
    for a probability), a value just below it reads ">0.99" rather than "1.00".
    """
    smallest = 10.0**-decimals
    if 0 < value < smallest / 2:
        return "<" + fmt(smallest, decimals)
    if -smallest / 2 < value < 0:
        return ">" + fmt(-smallest, decimals)
    if upper is not None and upper - smallest / 2 <= value < upper:
        return ">" + fmt(upper - smallest, decimals)
    return fmt(value, decimals)


def fmt(value: float, decimals: int) -> str:
    """One number format for every cell: fixed decimals, a real minus sign, no '-0.00'."""
    text = f"{value:.{decimals}f}"
    if text.startswith("-") and float(text) == 0.0:
        text = text[1:]
    return text.replace("-", "\u2212")
