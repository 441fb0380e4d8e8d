"""Every figure kind: data behind it, ink-only text, deterministic SVG, legible layout."""

from __future__ import annotations

import re

import matplotlib
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex, to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Rectangle
from matplotlib.text import Text

from bookfigures import palette as pal
from bookfigures.preview import apply_ink_map, render_png, save_svg

from bookfigures.catalogue import EXAMPLES

INK = set(pal.DARK_INK_MAP)
CELL_TEXT = {pal.CELL_TEXT_DARK, pal.CELL_TEXT_LIGHT}
NAMES = sorted(EXAMPLES)


@pytest.fixture(scope="module")
def figures() -> dict[str, Figure]:
    return {name: EXAMPLES[name].build() for name in NAMES}


def _hex(color) -> str:
    return to_hex(color, keep_alpha=False)


def _texts(fig: Figure) -> list[Text]:
    """Every text the reader sees: tick labels only for ticks inside the view limits."""
    all_ticks, drawn_ticks = set(), []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                all_ticks |= {id(tick.label1), id(tick.label2)}
            if ax.axison and axis.get_visible():  # the ticks matplotlib will actually draw
                drawn_ticks += [lab for tick in axis._update_ticks()
                                for lab in (tick.label1, tick.label2)]
    texts = [t for t in fig.findobj(Text) if id(t) not in all_ticks] + drawn_ticks
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def _drawn(fig: Figure):
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    return renderer


def _cell_under(text: Text) -> Rectangle | None:
    """The opaque cell rectangle a number is written on, if any."""
    x, y = text.get_position()
    for patch in text.axes.patches if text.axes else []:
        if isinstance(patch, Rectangle) and patch.get_facecolor()[3] == 1.0:
            x0, y0 = patch.get_xy()
            if x0 <= x <= x0 + patch.get_width() and y0 <= y <= y0 + patch.get_height():
                return patch
    return None


# --- the data behind each figure ------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_figure_carries_a_consistent_data_table(name, figures):
    fig = figures[name]
    assert isinstance(fig, Figure)
    header, rows = fig.data_table
    assert header and all(isinstance(h, str) for h in header)
    assert len(rows) == EXAMPLES[name].rows
    for row in rows:
        assert len(row) == len(header)
        assert all(v is None or type(v) in (int, float, str, bool) for v in row), row


def test_heatmap_table_holds_full_precision_weights_and_marks_masked_cells(figures):
    from bookfigures.catalogue import causal_weights

    weights, _mask = causal_weights(10)
    header, rows = figures["heatmap_causal_10x10"].data_table
    assert len(header) == 11
    assert rows[3][1:5] == [float(w) for w in weights[3, :4]]  # not rounded to the display
    assert rows[3][5:] == ["masked"] * 6


# --- colours: only ink flips, fixed colours sit where they are legible ------------------


@pytest.mark.parametrize("name", NAMES)
def test_text_is_ink_or_cell_text_on_its_own_cell(name, figures):
    for text in _texts(figures[name]):
        color = _hex(text.get_color())
        if color in INK:
            continue
        assert color in CELL_TEXT, f"{text.get_text()!r} uses non-ink colour {color}"
        cell = _cell_under(text)
        assert cell is not None, f"{text.get_text()!r} has a fixed colour but no cell under it"
        assert pal.contrast_ratio(_hex(cell.get_facecolor()), color) >= 4.5


@pytest.mark.parametrize("name", NAMES)
def test_spines_ticks_and_grids_are_ink(name, figures):
    for ax in figures[name].axes:
        for spine in ax.spines.values():
            if spine.get_visible():
                assert _hex(spine.get_edgecolor()) in INK
        for axis in (ax.xaxis, ax.yaxis):
            for line in axis.get_ticklines() + axis.get_gridlines():
                if line.get_visible():
                    assert _hex(line.get_color()) in INK
                    assert _hex(line.get_markeredgecolor()) in INK


@pytest.mark.parametrize("name", NAMES)
def test_backgrounds_are_transparent(name, figures):
    fig = figures[name]
    assert fig.patch.get_alpha() in (None, 0) and fig.patch.get_facecolor()[3] == 0
    assert all(ax.patch.get_facecolor()[3] == 0 for ax in fig.axes)


@pytest.mark.parametrize("name", NAMES)
def test_dark_variant_swaps_every_ink_and_nothing_else(name, figures):
    light = save_svg(figures[name]).decode()
    dark = apply_ink_map(light)
    found = set(re.findall(r"#[0-9a-f]{6}\b", light))
    assert found & INK, "figure uses no ink at all?"
    assert not INK & set(re.findall(r"#[0-9a-f]{6}\b", dark))
    assert found - INK == set(re.findall(r"#[0-9a-f]{6}\b", dark)) - set(pal.DARK_INK_MAP.values())
    every_hex = re.findall(r"#[0-9a-fA-F]{6}\b", light)
    assert all(h == h.lower() for h in every_hex)  # the swap is case-sensitive


# --- SVG: text stays text, bytes are deterministic -------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_svg_keeps_text_as_filled_text(name, figures):
    svg = save_svg(figures[name]).decode()
    elements = re.findall(r"<text([^>]*)>(.*?)</text>", svg, flags=re.S)
    assert elements and "DejaVuSans-" not in svg  # no glyph outlines
    for attrs, body in elements:
        # a text without an explicit fill would be black on the slate page
        tspans = re.findall(r"<tspan[^>]*>", body)
        assert "fill:" in attrs or (tspans and all("fill:" in t for t in tspans)), attrs


@pytest.mark.parametrize("name", NAMES)
def test_svg_is_byte_identical_across_builds(name, figures):
    # the module's figure has been drawn and saved by other tests already: a fresh one
    # built from the same inputs must still give the same bytes
    first = save_svg(figures[name])
    assert save_svg(EXAMPLES[name].build()) == first
    assert b"<dc:date>" not in first


def test_resaving_one_figure_gives_identical_bytes_with_the_plugin_settings():
    """The square-celled causal grid is the case where an unfrozen layout drifts per save."""
    fig = EXAMPLES["heatmap_causal_10x10"].build()
    with matplotlib.rc_context({"svg.hashsalt": "book", "svg.fonttype": "none"}):
        import io

        a, b = io.BytesIO(), io.BytesIO()
        fig.savefig(a, format="svg", metadata={"Date": None})
        fig.savefig(b, format="svg", metadata={"Date": None})
    assert a.getvalue() == b.getvalue()


# --- layout: sizes, font sizes, nothing overlapping or cut off --------------------------


# Material's smallest running text (footnotes, tables) on a 390 px phone, and that phone's
# text column; both measured in Chromium on the built site.
FOOTNOTE_PX = 12.8
PHONE_COLUMN_PX = 358
# Too many cells (or step labels as long as "3: rive → <eos>") to fit a phone legibly: the
# site lets these scroll sideways instead of shrinking them.
SCROLLS_ON_A_PHONE = {"heatmap_causal_10x10", "shape_diagram", "step_rows"}


@pytest.mark.parametrize("name", NAMES)
def test_smallest_text_reads_at_footnote_size_and_the_figure_fits_a_phone(name, figures):
    """Measured on the SVG the site publishes: every font size (mathtext sub- and
    superscripts included) at natural size, and the natural width."""
    from numbook.figures import smallest_font, svg_of, svg_size

    svg = svg_of(figures[name])
    width, _height, box = svg_size(svg)
    px_per_unit = width / box
    assert smallest_font(svg) * px_per_unit >= FOOTNOTE_PX, f"smallest text {smallest_font(svg)} units"
    if name not in SCROLLS_ON_A_PHONE:
        assert width <= PHONE_COLUMN_PX, f"{width:.0f} px wide: shrinks on a phone"
    assert figures[name].get_figwidth() <= 6.4


@pytest.mark.parametrize("name", NAMES)
def test_no_text_overlaps_other_text_or_leaves_the_figure(name, figures):
    fig = figures[name]
    renderer = _drawn(fig)
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in _texts(fig)]
    frame = fig.bbox.padded(1)
    for label, box in boxes:
        assert frame.containsx(box.x0) and frame.containsx(box.x1), f"{label!r} cut off"
        assert frame.containsy(box.y0) and frame.containsy(box.y1), f"{label!r} cut off"
    upright = [(label, box) for (label, box), t in zip(boxes, _texts(fig)) if t.get_rotation() == 0]
    for i, (la, a) in enumerate(upright):  # rotated labels: their bounding boxes overlap anyway
        for lb, b in upright[i + 1:]:
            assert not a.padded(-1).overlaps(b.padded(-1)), f"{la!r} overlaps {lb!r}"


# --- attention heatmaps -----------------------------------------------------------------


def _cell_numbers(fig: Figure) -> list[Text]:
    return [t for t in _texts(fig) if _hex(t.get_color()) in CELL_TEXT]


def test_causal_heatmap_writes_numbers_only_in_allowed_cells(figures):
    from bookfigures.catalogue import causal_weights

    weights, mask = causal_weights(10)
    fig = figures["heatmap_causal_10x10"]
    numbers = _cell_numbers(fig)
    assert len(numbers) == int(mask.sum()) == 55
    for t in numbers:
        j, i = (int(round(v)) for v in t.get_position())
        assert mask[i, j], f"number written in blocked cell ({i}, {j})"
        shown = "<0.01" if weights[i, j] < 0.005 else f"{weights[i, j]:.2f}"
        assert t.get_text() == shown


def test_masked_cells_are_hatched_and_explained(figures):
    fig = figures["heatmap_causal_10x10"]
    hatched = [p for p in fig.axes[0].patches if p.get_hatch()]
    assert len(hatched) == 45
    assert all(p.get_facecolor()[3] == 0 for p in hatched)  # not a colour that reads as 0.00
    assert all(_hex(p.get_hatchcolor()) in INK for p in hatched)
    legend_texts = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert any("blocked" in t for t in legend_texts)


def test_a_tiny_weight_never_reads_as_zero():
    """0.00 in a cell would look like a masked cell; a real weight that rounds away says so."""
    import bookfigures as bf

    fig = bf.attention_heatmap([[0.996, 0.001, 0.003], [0.0, 0.5, 0.5]], ["a", "b"], ["x", "y", "z"])
    written = {(int(round(t.get_position()[1])), int(round(t.get_position()[0]))): t.get_text()
               for t in _cell_numbers(fig)}
    assert written[(0, 0)] == ">0.99" and written[(0, 1)] == "<0.01" and written[(0, 2)] == "<0.01"
    assert written[(1, 0)] == "0.00"  # exactly zero, unmasked: written as it is
    assert written[(1, 1)] == "0.50"


@pytest.mark.parametrize("shape", [(4, 4), (3, 4), (1, 4), (10, 10)])
def test_heatmap_writes_one_number_per_cell_without_mask(shape):
    import bookfigures as bf

    weights = np.full(shape, 1.0 / shape[1])
    fig = bf.attention_heatmap(weights, [f"q{i}" for i in range(shape[0])],
                               [f"k{j}" for j in range(shape[1])])
    assert len(_cell_numbers(fig)) == shape[0] * shape[1]
    assert len(fig.data_table[1]) == shape[0] and len(fig.data_table[0]) == shape[1] + 1


def test_heavier_weight_gets_a_darker_cell():
    import bookfigures as bf

    fig = bf.attention_heatmap([[0.1, 0.2, 0.7]], ["q"], ["a", "b", "c"])
    faces = sorted((p.get_x(), pal.relative_luminance(_hex(p.get_facecolor())))
                   for p in fig.axes[0].patches)
    lum = [f for _x, f in faces]
    assert lum[0] > lum[1] > lum[2]


def test_labels_come_from_the_caller_and_must_match_the_data():
    import bookfigures as bf

    fig = bf.attention_heatmap(np.eye(2), ["rive", "$5"], ["x", "y"])
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["rive", r"\$5"]
    with pytest.raises(ValueError, match="expected 3 labels"):
        bf.attention_heatmap(np.eye(3), ["a", "b"], ["a", "b", "c"])
    with pytest.raises(ValueError, match="mask shape"):
        bf.attention_heatmap(np.eye(3), list("abc"), list("abc"), mask=np.ones((2, 3), bool))


# --- bars ----------------------------------------------------------------------------------


def test_target_bar_differs_by_colour_weight_and_text(figures):
    fig = figures["probability_bars_logits"]
    prob_ax = fig.axes[-1]
    colours = [_hex(b.get_facecolor()) for b in prob_ax.patches]
    target = 2  # "rive"
    assert colours[target] == pal.HIGHLIGHT
    assert set(colours[:target] + colours[target + 1:]) == {pal.NEUTRAL}
    marks = [t for t in _texts(fig) if "target" in t.get_text()]
    assert pal.HIGHLIGHT == pal.ROLE_COLORS["t"]  # the legend's target colour
    assert len(marks) == 1 and marks[0].get_fontweight() == "bold"
    assert fig.axes[0].get_yticklabels()[target].get_fontweight() == "bold"
    header, rows = fig.data_table
    assert header == ["token", "logit", "probability", "is_target"]
    assert [r[-1] for r in rows].count(True) == 1 and rows[target][0] == "rive"


def test_probability_values_are_written_on_the_bars():
    import bookfigures as bf

    fig = bf.probability_bars(["a", "b"], [0.25, 0.75])
    written = sorted(t.get_text() for t in _texts(fig) if re.fullmatch(r"[\d.]+", t.get_text()))
    assert "0.250" in written and "0.750" in written
    assert len({_hex(b.get_facecolor()) for b in fig.axes[0].patches}) == 1  # no target: no highlight


def test_a_bar_label_never_rounds_onto_zero_or_onto_certainty():
    """A probability of 4e-5 is not "0.000", and 0.99987 is not "1.000"."""
    import bookfigures as bf

    fig = bf.probability_bars(["a", "b", "c", "d"], [4e-5, 0.0, 0.3, 0.69996])
    assert [t.get_text() for t in fig.axes[0].texts] == ["<0.001", "0.000", "0.300", "0.700"]
    fig = bf.probability_bars(["a", "b"], [0.99987, 0.00013])
    assert [t.get_text() for t in fig.axes[0].texts] == [">0.999", "<0.001"]
    pairs = bf.paired_bars(["x", "y"], [0.0048, 0.5], [-0.001, 0.99987], decimals=2, upper=1.0)
    labels = [t.get_text() for t in pairs.axes[0].texts]
    assert labels == ["<0.01", ">−0.01", "0.50", ">0.99"]


def test_paired_bars_record_a_change_only_when_the_second_series_follows_the_first():
    import bookfigures as bf

    assert bf.paired_bars(["x"], [1.0], [0.5]).data_table == (["label", "before", "after", "change"], [["x", 1.0, 0.5, -0.5]])
    side_by_side = bf.paired_bars(["x"], [0.2], [0.3], names=["river", "cheque"], change=False)
    assert side_by_side.data_table == (["label", "river", "cheque"], [["x", 0.2, 0.3]])


def test_paired_bars_take_one_axis_for_every_variant_and_refuse_one_that_cuts_a_bar():
    """Switch variants share `xlim`: the same axis whatever their own values."""
    import bookfigures as bf

    small = bf.paired_bars(["x", "y"], [0.2, 0.4], [0.1, 0.3], xlim=(0, 2.5))
    large = bf.paired_bars(["x", "y"], [0.2, 0.4], [1.5, 1.9], xlim=(0, 2.5))
    assert small.axes[0].get_xlim() == large.axes[0].get_xlim() == (0.0, 2.5)
    assert bf.paired_bars(["x"], [0.2], [0.4]).axes[0].get_xlim() != (0.0, 2.5)  # default: fits its bars
    with pytest.raises(ValueError, match="cuts off"):
        bf.paired_bars(["x"], [0.2], [3.0], xlim=(0, 2.5))
    with pytest.raises(ValueError, match="below"):
        bf.paired_bars(["x"], [0.2], [0.3], xlim=(1, 0))


def test_row_before_after_takes_one_axis_for_every_panel_and_variant():
    import bookfigures as bf

    fig = bf.row_before_after([[0.2, -0.1]] * 2, [[0.5, 0.3], [0.1, 0.0]], ["a", "b"], xlim=(-0.5, 1.5))
    assert {ax.get_xlim() for ax in fig.axes} == {(-0.5, 1.5)}
    assert all(-0.5 <= t <= 1.5 for ax in fig.axes for t in ax.get_xticks())
    with pytest.raises(ValueError, match="cuts off"):
        bf.row_before_after([0.2, -0.1], [0.5, 0.3], ["a", "b"], xlim=(0, 1))  # −0.1 is left of 0


def test_before_after_has_a_panel_per_context_and_records_the_change(figures):
    fig = figures["row_before_after"]
    assert len(fig.axes) == 2
    header, rows = fig.data_table
    assert header[-1] == "change"
    assert rows[4] == ["cheque sentence", "water", 0.2, 0.1, pytest.approx(-0.1)]
    for ax in fig.axes:  # before outlined, after solid: the two differ in shape, not only colour
        fills = {p.get_facecolor()[3] for p in ax.patches}
        assert fills == {0.0, 1.0}


# --- preview tool ---------------------------------------------------------------------------


def test_preview_renders_both_modes_at_phone_width(tmp_path, figures):
    from PIL import Image

    fig = figures["heatmap_cross_3x4"]
    light = render_png(fig, tmp_path / "l.png", mode="light", width_px=360, scale=1)
    dark = render_png(fig, tmp_path / "d.png", mode="dark", width_px=360, scale=1)
    with Image.open(light) as a, Image.open(dark) as b:
        assert abs(a.size[0] - min(360, fig.get_figwidth() * 96)) <= 1
        assert a.getpixel((1, 1))[:3] == (255, 255, 255)
        assert b.getpixel((1, 1))[:3] == (0x1E, 0x21, 0x29)
    # the original figure is left untouched by the dark preview
    assert all(_hex(t.get_color()) in INK | CELL_TEXT for t in _texts(fig))


# --- sliding window, labelled points, loss curves -----------------------------------------


def test_sliding_window_draws_one_row_per_pair_with_framed_window_and_bold_target(figures):
    fig = figures["sliding_window"]
    header, rows = fig.data_table
    assert header == ["pair", "window", "next"]
    assert [r[1:] for r in rows] == [["...", "a"], ["..a", "a"], [".aa", "b"], ["aab", "i"], ["abi", "d"],
                                     ["bid", "."]]
    ax = fig.axes[0]
    frames = [p for p in ax.patches if p.get_facecolor()[3] == 0 and p.get_linewidth() > 2]
    assert len(frames) == 6 and {p.get_width() for p in frames} == {3}
    targets = [p for p in ax.patches if _hex(p.get_facecolor()) == pal.HIGHLIGHT]
    assert len(targets) == 6
    bold = [t.get_text() for t in ax.texts if t.get_fontweight() == "bold"]
    assert bold == ["a", "a", "b", "i", "d", "."]


def test_labelled_points_style_groups_by_colour_and_marker_and_label_every_point(figures):
    fig = figures["labelled_points_27"]
    lines = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() == "None"]
    styles = {(ln.get_label(), _hex(ln.get_color()), ln.get_marker()) for ln in lines}
    assert len(styles) == 3
    assert len({c for _, c, _ in styles}) == 3 and len({m for _, _, m in styles}) == 3
    labels = sorted(t.get_text() for t in fig.axes[0].texts)
    assert labels == sorted(".abcdefghijklmnopqrstuvwxyz")
    with pytest.raises(ValueError, match="shape"):
        import bookfigures as bf

        bf.labelled_points(np.zeros((3, 3)), list("abc"), list("xyz"))


def test_loss_curve_with_two_curves_records_both_and_the_references(figures):
    header, rows = figures["loss_curve_two_with_references"].data_table
    assert header == ["step", "training names", "held-out names", "unigram, held-out", "bigram, held-out"]
    assert rows[0][0] == 0 and rows[-1][0] == 16000 and rows[-1][3:] == [2.81, 2.35]
    written = [t.get_text() for t in _texts(figures["loss_curve_two_with_references"])]
    assert "bigram, held-out: 2.350" in written and "5.300" in written and "2.000" in written


def test_a_chart_legend_stays_inside_where_it_is_clear_and_goes_below_where_it_is_not():
    import bookfigures as bf
    from bookfigures.collisions import check_figure

    x = np.arange(1, 9)
    clear = bf.line_chart(x, {"rising": x / 8, "rising less": x / 16})  # the upper left is empty
    assert clear.axes[0].get_legend() is not None and not clear.legends
    crowded = bf.line_chart(x, {"up": x / 8, "down": 1 - x / 8, "flat high": 0 * x + 0.95,
                                "flat low": 0 * x + 0.05})  # a line through every corner
    assert crowded.axes[0].get_legend() is None and len(crowded.legends) == 1
    for fig in (clear, crowded):
        check_figure(fig)


def test_marks_give_the_values_in_the_legend_instead_of_piling_markers_on_the_curves():
    import bookfigures as bf

    n = 2 ** np.arange(8)
    series = {"linear": 40 * n, "square": 3 * n ** 2, "close to linear": 30 * n}
    marks = {x: {name: f(x) for name, f in (("linear", lambda m: 40 * m), ("square", lambda m: 3 * m ** 2),
                                              ("close to linear", lambda m: 30 * m))} for x in (10, 20)}
    fig = bf.cost_curves(n, series, logx=True, logy=True, marks=marks)
    [legend] = fig.legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts == ["linear: 400 → 800", "square: 300 → 1,200", "close to linear: 300 → 600"]
    assert legend.get_title().get_text() == "n = 10 → n = 20"
    ax = fig.axes[0]
    dotted = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":" and len(set(ln.get_xdata())) == 1]
    assert sorted(ln.get_xdata()[0] for ln in dotted) == [10, 20]
    assert len(ax.get_lines()) == len(series) + 2  # no marker drawn at the marks
    with pytest.raises(ValueError, match="the mark at 10"):
        bf.cost_curves(n, series, marks={10: {"linear": 400}})


def test_size_labels_share_one_count_of_significant_digits():
    import bookfigures as bf

    fig = bf.bar_sizes(["a", "b", "c", "d", "e"], [0.12, 0.1234, 1.5, 12.0, 2.4e-5])
    written = [t.get_text() for t in _texts(fig) if t.get_text()[0].isdigit()]
    assert {"0.120", "0.123", "1.50", "12.0", "2.40×10⁻⁵"} <= set(written)


def test_log_axis_ticks_are_plain_powers_of_ten():
    """mathtext would draw the exponent at 70 % size, below the legibility floor."""
    figures = EXAMPLES["bar_sizes_log"].build()
    ticks = [t.get_text() for t in _texts(figures) if t.get_text().startswith("10")]
    assert ticks and all(re.fullmatch(r"10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+", t) for t in ticks), ticks


def test_bars_can_wear_a_legend_role_instead_of_a_target():
    import bookfigures as bf

    fig = bf.probability_bars(["the", "cat", "sleeps"], [0.1, 0.7, 0.2], role="a")
    assert {_hex(b.get_facecolor()) for b in fig.axes[0].patches} == {pal.ROLE_COLORS["a"]}
    assert not [t for t in _texts(fig) if "target" in t.get_text()]
    with pytest.raises(ValueError, match="unknown role"):
        bf.probability_bars(["a"], [1.0], role="z")


# --- dataflow diagrams and generation work ------------------------------------------------


def test_parameter_subscripts_keep_the_text_size_and_sit_lower(figures):
    """mathtext's W_Q would set Q at 70 % size, below the legibility floor on a phone."""
    fig = figures["dataflow_part2"]
    renderer = _drawn(fig)
    texts = _texts(fig)
    assert not [t.get_text() for t in texts if "$" in t.get_text()]
    for sub in ("Q", "K", "V", "O"):
        [letter] = [t for t in texts if t.get_text() == sub]
        base = min((t for t in texts if t.get_text() == "× W"),
                   key=lambda t: abs(t.get_window_extent(renderer).x1 - letter.get_window_extent(renderer).x0))
        b, s = base.get_window_extent(renderer), letter.get_window_extent(renderer)
        assert letter.get_fontsize() == base.get_fontsize() >= 10
        assert -1 < s.x0 - b.x1 < 3  # right after the W (within a pixel of its drawn end)
        assert s.y0 < b.y0  # lower than the W (display y points up)


def test_work_steps_fills_computed_rows_and_outlines_reused_ones_within_a_phone_column(figures):
    from bookfigures._common import PHONE_WIDTH_IN

    from bookfigures.catalogue import WORK, WORK_COLUMNS

    fig = figures["work_steps"]
    squares = [p for p in fig.axes[0].patches if p.get_width() == p.get_height()]
    filled = [p for p in squares if p.get_fill() and p.get_facecolor()[3] > 0]
    assert len(filled) == sum(new for w in WORK for new, _ in w.values())
    assert len(squares) - len(filled) == sum(kept for w in WORK for _, kept in w.values())
    colours = {_hex(p.get_edgecolor()) for p in squares}
    assert colours <= {pal.ROLE_COLORS[role] for _, role in WORK_COLUMNS.values()}
    assert fig.get_figwidth() <= PHONE_WIDTH_IN
    _header, rows = fig.data_table
    assert len(rows) == len(WORK) * len(WORK_COLUMNS)


def test_labels_carry_positions_and_subscripts_as_plain_text():
    from bookfigures import position_labels, subscript

    assert position_labels(["the", "bank", "the"]) == ["1 the", "2 bank", "3 the"]
    assert subscript(10) == "₁₀" and "e′" + subscript(3) == "e′₃"


def test_mask_panels_count_and_hatch_exactly_the_blocked_cells():
    import bookfigures as bf

    masks = {"causal": np.tril(np.ones((5, 5), bool)), "cross": np.ones((2, 3), bool)}
    fig = bf.mask_panels(masks)
    for ax, (name, m) in zip(fig.axes, masks.items()):
        assert ax.get_xlabel() == f"{name}\n{int(m.sum())} of {m.size} allowed"
        hatched = [p for p in ax.patches if p.get_hatch()]
        filled = [p for p in ax.patches if not p.get_hatch()]
        assert len(hatched) == int((~m).sum()) and len(filled) == int(m.sum())
        for p in hatched:  # a blocked cell sits where the mask says False
            j, i = (int(round(v + 0.5)) for v in p.get_xy())
            assert not m[i, j]
    header, rows = fig.data_table
    assert header == ["mask", "query", "keys it may read"]
    assert rows[0] == ["causal", "1", "1"] and rows[4] == ["causal", "5", "1 2 3 4 5"]
    with pytest.raises(ValueError, match="at least one mask"):
        bf.mask_panels({})


# --- label placement in the diagrams (bookfigures._placement) ------------------------------


def test_a_label_beside_a_slanted_arrow_clears_it_over_its_whole_height():
    from bookfigures._placement import beside, segment_hits

    from bookfigures._placement import x_at

    p, q = (1.0, 0.0), (0.4, 0.5)  # leaning left
    for side in (1, -1):
        rect, x, y = beside(p, q, 0.5, 0.6, 0.17, side, gap=0.05)
        assert not segment_hits(rect.grown(0.049), p, q)  # any margin below the gap misses the line
        assert (x == rect.x0) if side > 0 else (x == rect.x1)
        assert abs(x - x_at(p, q, y)) < 0.05 + 0.17  # and the label stays by its arrow


def test_the_room_prefers_a_clear_spot_then_one_away_from_other_arrows_then_the_first():
    from bookfigures._placement import Rect, Room

    room = Room()
    room.add_area(Rect(0, 0, 1, 1), owner="box")
    room.add_polyline([(2.0, -1.0), (2.0, 3.0)], owner=("edge", "a", "b"))
    on_box, near_arrow, far = Rect(0.5, 0.5, 1.5, 0.7), Rect(1.5, 1.5, 1.85, 1.7), Rect(3.0, 1.5, 3.4, 1.7)
    (rect, name), clashes = room.place([(on_box, "on box"), (near_arrow, "near"), (far, "far")])
    assert (name, clashes) == ("far", 0)  # "near" is clear but within NEAR of an arrow not its own
    (rect, name), _ = room.place([(on_box, "on box"), (Rect(1.5, 2.0, 1.85, 2.2), "near")],
                                 own=[("edge", "a", "b")])
    assert name == "near"  # its own arrow is no reason to move
    (rect, name), _ = room.place([(Rect(3.0, 2.5, 3.4, 2.7), "vetoed"), (Rect(3.0, 3.0, 3.4, 3.2), "kept")],
                                 veto=lambda r: r.y0 < 2.9)
    assert name == "kept"


def test_labels_wrap_at_spaces_or_before_a_parenthesis_never_leaving_a_crumb():
    from bookfigures.dataflow import _wrapped

    assert _wrapped("softmax(Q Kᵀ / √3)", 10) == "softmax\n(Q Kᵀ / √3)"
    assert _wrapped("token + position", 10) == "token +\nposition"
    assert _wrapped("residual +", 10) is None  # not "residual" over a lone "+"
    assert _wrapped("softmax(Q Kᵀ/√1 + M)", 10, 3) == "softmax\n(Q Kᵀ/√1\n+ M)"


def test_nested_groups_get_nested_frames_that_take_in_no_other_box():
    """A block's frame holds its head's frame; a head's frame holds its labels but not the
    other head's box beside it (Fig 3.9 before: frames crossing, a label across a frame)."""
    import bookfigures as bf
    from bookfigures.collisions import check_figure
    from tinyformer.models import decoder_stack as ds

    cfg = ds.DecoderConfig(vocab_size=7, context=9, d_model=4, n_heads=2, n_layers=1, d_ff=2)
    g = ds.dataflow(ds.init_params(cfg, 0), [1, 2, 3])
    g = g.only([n.id for n in g.nodes if n.id.startswith("b0.")])
    g = g.collapse(["b0.h0.scores", "b0.h0.masked", "b0.h0.weights"], into="b0.h0.weights", label="weights A",
                   op_label="softmax(Q Kᵀ/√1 + M)")
    g = g.collapse_prefix("b0.h1.", into="b0.h1", label="head 2", op_label="")
    fig = bf.dataflow_diagram(g, labels={"b0.h0.Q": "Q", "b0.h0.K": "K", "b0.h0.V": "V"})
    check_figure(fig, "block")
    ax = fig.axes[0]
    names = {t.get_text() for t in ax.texts if t.get_fontstyle() == "italic"}
    boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch)]
    frames = [p.get_bbox() for p in boxes if p.get_edgecolor()[:3] == to_rgba(pal.INK_GRID)[:3]]
    assert names == {"block 1", "block 1, head 1"} and len(frames) == 2
    outer, inner = sorted(frames, key=lambda b: -b.width * b.height)
    assert outer.x0 < inner.x0 and inner.x1 < outer.x1 and outer.y0 < inner.y0 and inner.y1 < outer.y1
    [head2] = [p.get_bbox() for p in boxes if p.get_edgecolor()[:3] != to_rgba(pal.INK_GRID)[:3]
               and any(t.get_text() == "head 2" and p.get_bbox().contains(*t.get_position()) for t in ax.texts)]
    assert not inner.overlaps(head2)


def test_param_labels_rename_parameters_in_the_data_table_only():
    """A page may call the engine's P its E_pos: the data table says so, the graph is unchanged."""
    import bookfigures as bf
    from tinyformer.models import onehead

    params = onehead.load_params()
    graph = onehead.dataflow(params, onehead.encode(onehead.RIVER_SENTENCE))
    plain_rows = bf.dataflow_diagram(graph).data_table[1]
    renamed = bf.dataflow_diagram(graph, param_labels={"P": "E_pos", "W1": "W_1"}).data_table[1]
    column = 3  # from, shape in, operation, parameters, ...
    before = [row[column] for row in plain_rows]
    after = [row[column] for row in renamed]
    assert "P (20 × 4)" in before and "E_pos (20 × 4)" in after and "P (20 × 4)" not in after
    assert any(cell.startswith("W_1 (4 × 8), b1") for cell in after)
    assert [b for b, a in zip(before, after) if b != a] == [c for c in before if c.startswith(("P ", "W1 "))]
    assert {p.name for p in graph.params()} >= {"P", "W1"}
