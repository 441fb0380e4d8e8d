"""The catalogue behind the page *The figure functions*: a demo for every function that draws."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest
from matplotlib.figure import Figure

import bookfigures as bf
from bookfigures import catalogue


def test_every_figure_function_has_a_demo_and_every_demo_a_function():
    drawing = catalogue.figure_functions()
    assert set(catalogue.DEMOS) == set(drawing), "a figure function without a demo (or the reverse): edit DEMOS"
    assert set(drawing) | set(catalogue.helper_functions()) == set(bf.__all__)
    assert {"attention_heatmap", "probability_bars", "dataflow_diagram"} <= set(drawing)
    assert "book_style" in catalogue.helper_functions() and "matrix_view" not in catalogue.helper_functions()


@pytest.mark.parametrize("name", sorted(catalogue.DEMOS))
def test_each_demo_is_drawn_by_its_own_function(name):
    source = inspect.getsource(catalogue.EXAMPLES[catalogue.DEMOS[name]].build)
    assert f"bf.{name}(" in source, f"{catalogue.DEMOS[name]} does not call {name}"


def test_what_the_catalogue_says_of_a_function_comes_from_the_function():
    assert catalogue.call("attention_heatmap").startswith("attention_heatmap(weights, row_labels, col_labels")
    assert catalogue.call("attention_heatmap").endswith(", …)")  # it has options
    assert catalogue.call("past_and_memory") == "past_and_memory(out)"  # none
    assert catalogue.summary("attention_heatmap") == inspect.getdoc(bf.attention_heatmap).split("\n\n")[0].replace("\n", " ")
    assert all(catalogue.summary(name) for name in bf.__all__), "a public function without a docstring"


def test_a_demo_is_a_figure_with_its_data():
    fig = catalogue.demo("probability_bars")
    assert isinstance(fig, Figure) and fig.data_table[1]


def test_the_catalogue_prints_without_a_built_site():
    """`python -m bookfigures.catalogue`: each function's call and summary, as the page lists them."""
    printed = subprocess.run([sys.executable, "-m", "bookfigures.catalogue"], capture_output=True, text=True,
                             check=True).stdout
    for name in bf.__all__:
        assert f"  {catalogue.call(name)}\n      {catalogue.summary(name)}\n" in printed, name
    assert printed.index("probability_bars(") < printed.index("Helpers") < printed.index("book_style(")
