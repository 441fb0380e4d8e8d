"""The one number rule (expected strings written by hand from the rule in numbook.format)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from numbook.format import escape_text, format_number, format_value


@pytest.mark.parametrize(
    "x, decimals, expected",
    [
        (42, None, "42"),
        (-7, None, "\u22127"),
        (np.int64(12), None, "12"),
        (0.125, None, "0.125"),
        (-3.5, None, "\u22123.500"),
        (2.0, None, "2.000"),
        (np.float32(0.5), None, "0.500"),
        (0.0, None, "0.000"),
        (-0.0, None, "0.000"),
        (0.001, None, "0.001"),
        (0.0009, None, "9×10⁻⁴"),
        (1.2e-7, None, "1.2×10⁻⁷"),
        (-1.23456e-7, None, "\u22121.235×10⁻⁷"),
        (3e16, None, "3×10¹⁶"),
        (0.123456, 5, "0.12346"),
        (0.00042, 5, "0.00042"),
        (7.25, 0, "7"),
        (0.5, 0, "5×10⁻¹"),
        (math.nan, None, "NaN"),
        (math.inf, None, "∞"),
        (-math.inf, None, "\u2212∞"),
    ],
)
def test_format_number(x, decimals, expected):
    assert format_number(x, decimals) == expected


def test_small_values_never_read_as_zero():
    # below 10**-decimals a value switches to scientific notation instead of "−0.00"
    assert format_number(-0.004, 2) == "\u22124×10⁻³"
    assert format_number(-0.0049, 3) == "\u22120.005"


def test_non_numbers_are_rejected_by_format_number():
    with pytest.raises(TypeError):
        format_number("1.0")
    with pytest.raises(TypeError):
        format_number(True)


def test_format_value_escapes_text():
    assert format_value("<b>") == "&lt;b&gt;"
    assert format_value(np.float64(0.25)) == "0.250"
    assert format_value(np.array(3)) == "3"
    assert format_value(True) == "True"
    assert "*" not in escape_text("a*b*c") and "|" not in escape_text("a|b")


def test_vectors_and_shapes_read_as_the_book_writes_them():
    import numpy as np

    from numbook.api import fmt_shape, fmt_vector

    assert fmt_vector(np.array([0.125, -0.3, 1.0]), 2) == "[0.12, \u22120.30, 1.00]"
    assert fmt_vector([1, 2]) == "[1, 2]"  # integers stay integers
    assert fmt_shape(np.zeros((4, 3))) == "4 × 3"
    assert fmt_shape(np.zeros(3)) == "1 × 3"  # one row
    assert fmt_shape((2, 5)) == "2 × 5"


def test_literal_text_and_lists_in_prose():
    import pytest

    from numbook.api import fmt_list, fmt_quoted

    assert fmt_quoted("..a") == "\u201c..a\u201d"
    assert fmt_list(["a"]) == "a"
    assert fmt_list(["a", "b"]) == "a and b"
    assert fmt_list(("a", "b", "c"), "or") == "a, b or c"
    with pytest.raises(ValueError):
        fmt_list([])
