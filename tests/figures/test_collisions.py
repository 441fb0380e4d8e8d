"""The label-collision check (`bookfigures.collisions`): tiny figures made to collide, or not,
then every figure kind of the catalogue.

Every figure of the book, its phone layouts and switch variants included, is checked when
the site is built: `mkdocs.yml` names `check_figure` as numbook's `figure_check`, so a
label that collides stops the build at its block (`test_the_build_checks_every_figure`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from bookfigures.collisions import FigureCollision, belongs_to, check_figure, collisions, one_label

from bookfigures.catalogue import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]


def sheet(width: float = 3.0, height: float = 2.0):
    """A figure whose axes fill it, one unit per inch, y up; no ticks or spines."""
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    return fig, ax


def kinds(found) -> list[str]:
    return sorted(c.kind for c in found)


# --- (a) text over text ---------------------------------------------------------------------


def test_two_texts_on_top_of_each_other_collide_and_apart_they_do_not():
    fig, ax = sheet()
    ax.text(0.5, 1.0, "softmax", va="center")
    ax.text(0.9, 1.05, "weights", va="center")
    found = collisions(fig)
    assert kinds(found) == ["text overlaps text"]
    assert {found[0].first, found[0].second} == {"'softmax'", "'weights'"}

    fig, ax = sheet()
    ax.text(0.5, 1.0, "softmax", va="center")
    ax.text(0.5, 1.4, "weights", va="center")  # a line below: boxes 0.16 in high, 0.4 in apart
    assert collisions(fig) == []


def test_a_turned_text_is_its_turned_box_not_the_box_around_it():
    """Two labels at 45 degrees, side by side: their axis-aligned boxes overlap, the texts do not."""
    fig, ax = sheet()
    for x in (1.0, 1.3):
        ax.text(x, 1.0, "a long tick label", rotation=45, rotation_mode="anchor", va="center")
    assert collisions(fig) == []  # the turned boxes do not overlap...
    extents = [t.get_window_extent(fig.canvas.get_renderer()) for t in ax.texts]
    assert extents[0].overlaps(extents[1])  # ...the axis-aligned extents do

    fig, ax = sheet()
    for x in (1.0, 1.1):
        ax.text(x, 1.0, "a long tick label", rotation=45, rotation_mode="anchor", va="center")
    assert kinds(collisions(fig)) == ["text overlaps text"]


def test_the_pieces_of_one_label_may_touch():
    fig, ax = sheet()
    base = ax.text(1.0, 1.0, "× W", va="center")
    sub = ax.text(1.26, 0.96, "Q", va="center")  # a lowered subscript, overlapping its base
    assert kinds(collisions(fig)) == ["text overlaps text"]
    one_label(base, sub)
    assert collisions(fig) == []


# --- (b) lines, arrows, markers and outlines through texts -----------------------------------


def test_a_line_through_a_text_is_flagged_and_one_beside_it_is_not():
    fig, ax = sheet()
    ax.text(1.0, 1.0, "residual +", ha="center", va="center")
    ax.plot([1.3, 1.3], [0.2, 1.8], color="k", linewidth=1)  # right through "+"
    found = collisions(fig)
    assert kinds(found) == ["line crosses text"] and "'residual +'" in str(found[0])

    fig, ax = sheet()
    ax.text(1.0, 1.0, "residual +", ha="center", va="center")
    ax.plot([1.6, 1.6], [0.2, 1.8], color="k", linewidth=1)  # clear of its right end
    assert collisions(fig) == []


def test_an_arrow_across_a_label_is_flagged():
    fig, ax = sheet()
    ax.text(1.5, 1.0, "softmax(Q Kᵀ / √3)", ha="center", va="center")
    ax.add_patch(FancyArrowPatch((1.0, 1.8), (1.0, 0.2), arrowstyle="-|>", mutation_scale=9))
    assert kinds(collisions(fig)) == ["line crosses text"]


def test_an_arrowhead_inside_a_label_is_flagged():
    fig, ax = sheet()
    ax.text(1.5, 1.0, "× W_Q here", ha="center", va="center")
    ax.add_patch(FancyArrowPatch((1.5, 1.9), (1.5, 1.02), arrowstyle="-|>", mutation_scale=9))
    assert kinds(collisions(fig)) == ["line crosses text"]


def test_a_text_inside_its_own_box_or_cell_is_fine_and_one_poking_out_is_not():
    fig, ax = sheet()
    ax.add_patch(Rectangle((0.5, 0.5), 1.5, 1.0, facecolor="#0072b2", edgecolor="k"))
    ax.text(1.25, 1.0, "0.42", ha="center", va="center")
    assert collisions(fig) == []

    fig, ax = sheet()
    ax.add_patch(Rectangle((0.5, 0.8), 0.4, 0.4, facecolor="#0072b2"))  # no edge: its fill's outline counts
    ax.text(0.7, 1.0, "encoded rows", ha="center", va="center")
    assert kinds(collisions(fig)) == ["line crosses text"]


def test_a_line_that_belongs_to_its_label_may_cross_it():
    fig, ax = sheet()
    label = ax.text(1.0, 1.0, "struck", ha="center", va="center")
    [line] = ax.plot([0.6, 1.4], [1.0, 1.0], color="k")
    assert kinds(collisions(fig)) == ["line crosses text"]
    belongs_to(label, line)
    assert collisions(fig) == []


def test_a_marker_on_a_label_is_flagged():
    fig, ax = sheet()
    ax.text(1.0, 1.0, "n = 10", ha="center", va="center")
    ax.plot([1.0], [1.0], "o", markersize=9, markerfacecolor="none")
    assert kinds(collisions(fig)) == ["marker covers text"]


def test_grid_lines_ticks_and_spines_are_left_out():
    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0.9, 1.0])
    ax.grid(True)
    ax.text(0.5, 0.25, "on a grid line", ha="center", va="center")  # y = 0.25 is a grid line
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1])
    fig.set_layout_engine("constrained")
    assert collisions(fig) == []


def test_a_line_is_cut_where_its_axes_clip_it():
    fig = Figure(figsize=(3, 2))
    ax = fig.add_axes((0.3, 0.3, 0.6, 0.6))
    ax.plot([-10, 10], [0.5, 0.5], color="k")  # runs far outside the axes, but is clipped to them
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_axis_off()
    fig.text(0.15, 0.6, "outside", ha="center", va="center")  # left of the axes, at the line's height
    assert collisions(fig) == []


def test_a_data_line_along_the_edge_of_a_label_is_flagged_and_one_clear_of_it_is_not():
    """Part 1's Figure 1.3 had a training curve running along the top of a yardstick's label,
    overlapping its box by less than the tolerance: a data line keeps `CLEARANCE_PT` from a text."""
    from bookfigures.collisions import CLEARANCE_PT

    def along(gap_pt: float):
        fig, ax = sheet()
        ax.text(1.5, 1.0, "window counts: 2.062", ha="center", va="top")  # its box's top at y = 1 in
        top = 1.0
        ax.plot([0.2, 2.8], [top + gap_pt / 72, top + gap_pt / 72], color="#0072b2", linewidth=0.01)
        return collisions(fig)

    assert CLEARANCE_PT > 0.75  # beyond the overlap the old check let through
    assert kinds(along(0.5)) == ["data line too close to text"]  # no overlap, still too close
    assert kinds(along(-0.3)) == ["data line too close to text"]  # overlaps by less than the tolerance
    assert along(CLEARANCE_PT + 0.5) == []


def _labelled_markers(label_x: float, others: list[tuple[float, float]], **annotate):
    """A marker at (1, 1) named by a label at `label_x` points to its right; more markers at `others`."""
    fig, ax = sheet()
    ax.plot([1.0], [1.0], "s", markersize=6, color="#0072b2")
    ax.plot(*zip(*others), "o", markersize=6, color="#c2501f")
    ax.annotate("i", (1.0, 1.0), xytext=(label_x, 0), textcoords="offset points", ha="left", va="center",
                **annotate)
    return fig


def test_a_label_between_two_markers_is_flagged_and_one_beside_its_own_is_not():
    """Part 1's Figure 1.5 wrote "i" between its square and the boundary mark's circle."""
    between = _labelled_markers(7, [(1.0 + 16 / 72, 1.0)])  # the circle 16 pt right, past the label
    assert kinds(collisions(between)) == ["label as near another marker as its own"]
    nearer_other = _labelled_markers(7, [(1.0 + 12 / 72, 1.0 - 9 / 72)])  # a circle just below the label
    assert "label as near another marker as its own" in kinds(collisions(nearer_other))
    beside = _labelled_markers(7, [(1.0 + 40 / 72, 1.0)])  # the circle well beyond the label
    assert collisions(beside) == []


def test_a_label_with_a_leader_line_or_on_overlapping_markers_is_not_ambiguous():
    led = _labelled_markers(24, [(1.0 + 16 / 72, 1.0 + 12 / 72)], arrowprops=dict(arrowstyle="-"))
    assert "label as near another marker as its own" not in kinds(collisions(led))
    on_top = _labelled_markers(7, [(1.0, 1.0 + 3 / 72)])  # two markers drawn over each other
    assert collisions(on_top) == []


# --- (c) legends ----------------------------------------------------------------------------


def _legend_over_a_line(**legend):
    fig = Figure(figsize=(3, 2))
    ax = fig.add_axes((0.15, 0.15, 0.8, 0.8))
    x = np.linspace(0, 1, 20)
    ax.plot(x, 0.8 + 0 * x, label="flat line", color="#0072b2")
    ax.plot(x, x, label="rising", color="#c2501f")
    ax.set_ylim(0, 1)
    leg = ax.legend(loc="upper left", **legend)
    return fig, leg


def test_a_legend_without_background_over_data_is_flagged():
    fig, _ = _legend_over_a_line(frameon=False)
    found = collisions(fig)
    assert "legend without background over data" in kinds(found)
    assert "line 'flat line'" in {c.second for c in found}


def test_a_legend_with_an_opaque_background_may_sit_over_data():
    fig, _ = _legend_over_a_line(frameon=True, framealpha=1.0, facecolor="#d0d7de")
    assert collisions(fig) == []
    # the book accepts only a background that flips with the page (an ink of the dark map)
    assert collisions(fig, backgrounds={"#d0d7de"}) == []
    assert "legend without background over data" in kinds(collisions(fig, backgrounds={"#ffffff"}))
    fig, _ = _legend_over_a_line(frameon=True, framealpha=0.5)  # see-through is no background
    assert "legend without background over data" in kinds(collisions(fig))


def test_a_legend_clear_of_the_data_needs_no_background():
    fig = Figure(figsize=(3, 2.4), layout="constrained")
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], label="rising")
    ax.plot([0, 1], [1, 0], label="falling")
    fig.legend(loc="outside lower left", ncols=2, frameon=False)
    assert collisions(fig) == []


# --- the whole check ------------------------------------------------------------------------


def test_check_figure_lists_every_collision_or_returns_the_figure():
    fig, ax = sheet()
    ax.text(1.0, 1.0, "residual +", ha="center", va="center")
    ax.plot([1.3, 1.3], [0.2, 1.8], color="k")
    ax.text(1.0, 1.05, "again", ha="center", va="center")
    with pytest.raises(FigureCollision) as err:
        check_figure(fig, "fig-demo.narrow")
    message = str(err.value)
    assert message.startswith("fig-demo.narrow: 2 label collision(s)")
    assert "line crosses text: line / 'residual +'" in message and "'again'" in message

    fig, ax = sheet()
    ax.text(1.0, 1.0, "alone", ha="center", va="center")
    assert check_figure(fig) is fig


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_figure_kind_of_the_catalogue_passes(name):
    check_figure(EXAMPLES[name].build(), name)


def test_the_build_checks_every_figure():
    """The book's own figures, phone layouts and switch variants: checked by numbook as they are
    made (its `figure_check` option), so a collision stops `mkdocs build` at its block."""
    from mkdocs.config import load_config

    config = load_config(str(ROOT / "mkdocs.yml"))
    assert config.plugins["numbook"].config.figure_check == "bookfigures.collisions:check_figure"


def test_clear_of_everything_names_only_what_collides():
    from bookfigures.collisions import clear_of_everything

    fig, ax = sheet()
    crossed = ax.text(1.0, 1.0, "crossed", ha="center", va="center")
    free = ax.text(1.0, 1.6, "free", ha="center", va="center")
    ax.plot([1.0, 1.0], [0.8, 1.2], color="k")
    assert not clear_of_everything(fig, crossed)
    assert clear_of_everything(fig, free)
