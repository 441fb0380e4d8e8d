"""The figures of `bookfigures.part3_context_extra` (Part 3's page on context and cost), held to
the house rules every figure kind meets in `test_figures.py`: the data behind it, ink-only text,
a dark variant, deterministic SVG, footnote-size text on a phone, nothing overlapping."""

from __future__ import annotations

import re

import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from bookfigures import palette as pal
from bookfigures.part3_context_extra import attention_shapes, attention_shapes_alt
from bookfigures.preview import apply_ink_map, save_svg
from tinyformer import cost

from .test_figures import FOOTNOTE_PX, INK, PHONE_COLUMN_PX, _drawn, _hex, _texts


@pytest.fixture(scope="module")
def fig() -> Figure:
    return attention_shapes(10, cost.PART2)


def test_data_table_holds_the_cost_model_s_four_products_and_their_sum(fig):
    header, rows = fig.data_table
    assert header == ["product", "shapes", "MACs"]
    counts = cost.onehead_full(10)
    assert [r[2] for r in rows] == [counts[t] for t in ("qkv", "scores", "mix", "out_proj")] + [900]
    assert [r[1] for r in rows[:4]] == ["[10 × 4][4 × 8]", "[10 × 3][3 × 10]", "[10 × 10][10 × 2]",
                                        "[10 × 2][2 × 4]"]
    assert all(type(v) in (int, str) for row in rows for v in row)


def test_one_square_per_number_of_every_factor_and_result(fig):
    squares = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    d, dk, dv, n = 4, 3, 2, 10
    per_product = [n * d + d * (2 * dk + dv) + n * (2 * dk + dv), n * dk + dk * n + n * n,
                   n * n + n * dv + n * dv, n * dv + dv * d + n * d]
    assert len(squares) == sum(per_product)


def test_alt_text_says_the_counts_in_words():
    alt = attention_shapes_alt(10, cost.PART2)
    assert "320" in alt and "300" in alt and "200" in alt and "80" in alt and "900" in alt


def test_text_is_ink_and_the_dark_variant_swaps_it(fig):
    assert all(_hex(t.get_color()) in INK for t in _texts(fig))
    light = save_svg(fig).decode()
    dark = apply_ink_map(light)
    assert set(re.findall(r"#[0-9a-f]{6}\b", light)) & INK
    assert not INK & set(re.findall(r"#[0-9a-f]{6}\b", dark))
    assert fig.patch.get_facecolor()[3] == 0


def test_svg_is_deterministic_and_keeps_text(fig):
    first = save_svg(fig)
    assert save_svg(attention_shapes(10, cost.PART2)) == first
    assert b"<text" in first and b"DejaVuSans-" not in first


def test_legible_on_a_phone_and_nothing_overlaps(fig):
    from numbook.figures import smallest_font, svg_of, svg_size

    svg = svg_of(fig)
    width, _height, box = svg_size(svg)
    assert smallest_font(svg) * width / box >= FOOTNOTE_PX
    assert width <= PHONE_COLUMN_PX
    renderer = _drawn(fig)
    texts = [(t.get_text(), t.get_window_extent(renderer)) for t in _texts(fig)]
    frame = fig.bbox.padded(1)
    squares = [p.get_window_extent(renderer) for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    for k, (label, box_) in enumerate(texts):
        assert frame.containsx(box_.x0) and frame.containsx(box_.x1), f"{label!r} cut off"
        assert frame.containsy(box_.y0) and frame.containsy(box_.y1), f"{label!r} cut off"
        for other, box2 in texts[k + 1:]:
            assert not box_.padded(-1).overlaps(box2.padded(-1)), f"{label!r} overlaps {other!r}"
        assert not any(box_.padded(-1).overlaps(sq) for sq in squares), f"{label!r} crosses a square"


def test_the_colours_are_the_legend_s():
    fig = attention_shapes(10, cost.PART2)
    edges = {_hex(p.get_edgecolor()) for p in fig.axes[0].patches}
    roles = {pal.ROLE_COLORS[r] for r in ("e", "q", "k", "v", "a", "d")}
    assert roles <= edges
