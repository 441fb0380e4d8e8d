"""Part 1's own figures: every step's minibatch loss, drawn per block as a band and a mean; the
loss curve with a yardstick where the curves end; held-out loss against window length."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from bookfigures.collisions import check_figure
from bookfigures.part1_character_model_extra import (loss_curve_low_yardstick, losses_by_window, minibatch_blocks,
                                                     minibatch_loss_band)


def test_blocks_summarise_each_run_of_steps():
    losses = np.arange(12, dtype=float)  # 3 blocks of 4
    stats = minibatch_blocks(losses, 4)
    assert stats["start"].tolist() == [0, 4, 8] and stats["mean"].tolist() == [1.5, 5.5, 9.5]
    assert np.allclose(stats["low"], np.percentile(losses.reshape(3, 4), 10, axis=1))
    assert np.allclose(stats["high"], np.percentile(losses.reshape(3, 4), 90, axis=1))
    with pytest.raises(ValueError, match="13 steps do not split into blocks of 4"):
        minibatch_blocks(np.arange(13.0), 4)


@pytest.fixture(scope="module")
def figure():
    rng = np.random.default_rng(0)
    steps = 1600
    losses = 2.0 + 1.2 * np.exp(-np.arange(steps) / 150) + rng.normal(0, 0.1, steps)  # (1600,)
    losses[1200:] -= 0.04
    return minibatch_loss_band(losses, block=100, curve_steps=[0, 400, 800, 1200, 1600],
                               curve=[3.2, 2.1, 2.05, 2.03, 1.99], drop_step=1200,
                               drop_label="η 0.4 → 0.04", ylim=(1.8, 2.6))


def test_data_table_has_one_row_per_block_and_the_curve_where_it_was_measured(figure):
    header, rows = figure.data_table
    assert header[0] == "first step of the block" and len(rows) == 16
    assert rows[4][0] == 400 and rows[4][4] == 2.1 and rows[1][4] is None


def test_texts_stay_inside_the_figure_and_apart(figure):
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    texts = [t for t in figure.findobj(Text) if t.get_visible() and t.get_text().strip()]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_rotation() == 0]
    frame = figure.bbox.padded(1)
    for label, box in boxes:
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, label
    for i, (la, a) in enumerate(boxes):
        for lb, b in boxes[i + 1:]:
            assert not a.padded(-1).overlaps(b.padded(-1)), f"{la!r} overlaps {lb!r}"


def test_fits_a_phone_column_at_footnote_size(figure):
    from numbook.figures import smallest_font, svg_of, svg_size

    svg = svg_of(figure)
    width, _height, box = svg_size(svg)
    assert width <= 358 and smallest_font(svg) * width / box >= 12.8


def test_low_yardstick_is_drawn_labelled_clear_of_the_curves_and_in_the_data_table():
    steps = list(range(0, 16001, 800))
    train = [3.35, *np.linspace(2.2, 2.0, len(steps) - 1)]  # falls fast, then ends under the yardstick
    heldout = [3.35, *np.linspace(2.25, 2.056, len(steps) - 1)]
    fig = loss_curve_low_yardstick(steps, {"training names": train, "held-out names": heldout},
                                   references={"unigram": 2.811, "bigram": 2.355},
                                   low_reference=("window counts", 2.062))
    check_figure(fig, "low yardstick")
    assert any(t.get_text() == "window counts: 2.062" for t in fig.findobj(Text))
    assert 2.062 in [line.get_ydata()[0] for line in fig.axes[0].get_lines() if line.get_linestyle() == ":"]
    header, rows = fig.data_table
    assert header[-1] == "window counts" and all(row[-1] == 2.062 for row in rows)


def test_low_yardstick_puts_the_last_values_in_the_legend():
    """The curves end beside the yardstick: their last values go in the legend, not at their ends."""
    steps = list(range(0, 16001, 800))
    train = [3.35, *np.linspace(2.2, 1.997, len(steps) - 1)]
    heldout = [3.35, *np.linspace(2.25, 2.056, len(steps) - 1)]
    fig = loss_curve_low_yardstick(steps, {"training names": train, "held-out names": heldout},
                                   references={"bigram": 2.355}, low_reference=("interpolated counts", 1.944))
    check_figure(fig, "last values in the legend")
    legend = fig.legends[0] if fig.legends else fig.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["training names, last 1.997", "held-out names, last 2.056"]
    written = {t.get_text() for t in fig.axes[0].texts}
    assert "3.350" in written and not {"1.997", "2.056"} & written


def test_losses_by_window_keeps_a_colour_per_model_and_a_line_style_per_data_size():
    windows = list(range(1, 9))
    losses = {"interpolated counts": {"all": np.linspace(2.35, 1.95, 8), "a quarter": np.linspace(2.36, 2.1, 8)},
              "MLP": {"all": np.linspace(2.36, 2.05, 8), "a quarter": np.linspace(2.37, 2.3, 8)}}
    fig = losses_by_window(windows, losses)
    check_figure(fig, "losses by window")
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    assert set(lines) == {f"{m}, {s}" for m in losses for s in ("all", "a quarter")}
    for model in losses:  # one colour and marker per model
        a, q = lines[f"{model}, all"], lines[f"{model}, a quarter"]
        assert a.get_color() == q.get_color() and a.get_marker() == q.get_marker()
        assert a.get_linestyle() != q.get_linestyle()
    assert lines["MLP, all"].get_color() != lines["interpolated counts, all"].get_color()
    header, rows = fig.data_table
    assert header[0] == "window (characters)" and [r[0] for r in rows] == windows
    assert rows[2][header.index("MLP, a quarter")] == pytest.approx(losses["MLP"]["a quarter"][2])
    with pytest.raises(ValueError, match="MLP, all: 3 values for 8 windows"):
        losses_by_window(windows, {"MLP": {"all": [2.0, 2.1, 2.2]}})
