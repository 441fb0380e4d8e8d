"""Widgets: figure variants, switch and compute declarations, what a reader without JavaScript sees."""

from __future__ import annotations

import json
import re

from .conftest import build_error

VARIANTS_PAGE = """
# Variants

```python exec hide
import matplotlib.pyplot as plt
from numbook.api import switch, table_spec, variant

def line(level):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [level, level])
    fig.data_table = (["x", "y"], [[0, level], [1, level]])
    return fig
```

```python exec
switch("pick", label="Level", options={"low": "low level", "high": "high <level>"},
       figures=["fig-level"],
       tables=[{"low": table_spec({"y": [0.25]}, index=["a"]),
                "high": table_spec({"y": [2.5]}, index=["a"], notes=[["2.5 = 5 / 2"]])}])
```

```python exec figure="fig-level" caption="A level line" alt="A line at 0.25"
low, high = line(0.25), line(2.5)
variant("low", low, alt="A line at 0.25")
variant("high", high, alt="A line at 2.5", caption="The high line")
low
```
"""


def test_figure_variants_are_files_indexed_for_the_switch(make_site):
    site = make_site({"index.md": VARIANTS_PAGE})
    site.build()
    index = json.loads(site.site_file("figures/fig-level.variants.json").read_text())
    assert set(index) == {"low", "high"}
    # the low variant is the figure itself: its files are reused, not written twice
    assert index["low"]["light"] == "fig-level.light.svg" and index["low"]["csv"] == "fig-level.csv"
    assert index["low"]["caption"] == "A level line"  # no caption of its own: the block's
    # each variant carries the size of its own image (CSS px = 4/3 of the SVG's pt)
    for key in ("low", "high"):
        svg = site.site_file(f"figures/{index[key]['light']}").read_text()
        width_pt = float(re.search(r'<svg[^>]*\swidth="([0-9.]+)pt"', svg).group(1))
        assert index[key].pop("width") == round(width_pt * 4 / 3)
        assert index[key].pop("height") > 0
        assert index[key].pop("min_width") is None  # this site sets no text floor
    assert index["high"] == {
        "light": "fig-level.high.light.svg", "dark": "fig-level.high.dark.svg", "csv": "fig-level.high.csv",
        "alt": "A line at 2.5", "caption": "The high line", "header": ["x", "y"],
        "rows": [["0", "2.500"], ["1", "2.500"]],
    }
    for name in ("fig-level.high.light.svg", "fig-level.high.dark.svg", "fig-level.high.csv"):
        assert site.site_file(f"figures/{name}").exists(), name
    assert not site.site_file("figures/fig-level.low.light.svg").exists()
    assert site.site_file("figures/fig-level.high.csv").read_text().splitlines()[1] == "0,2.5"
    figure = re.search(r'<figure class="numbook-figure" id="fig-level"([^>]*)>(.*?)</figure>', site.main(), re.S)
    assert 'data-numbook-variants="figures/fig-level.variants.json"' in figure.group(1)
    assert '<span class="numbook-caption">A level line</span>' in figure.group(2)
    assert figure.group(2).count('alt="A line at 0.25"') == 2  # the default, shown without JavaScript


def test_the_gallery_offers_every_other_view_of_a_switched_figure(make_site):
    site = make_site({"index.md": VARIANTS_PAGE, "figures.md": "# All figures\n"},
                     plugin={"figure_gallery": "figures.md"})
    site.build()
    gallery = site.main("figures")
    views = re.findall(r"<li><em>([^<]+)</em>(.*?)</li>", gallery, re.S)
    assert [key for key, _ in views] == ["high"]  # "low" is the figure itself, listed as such
    assert views[0][1].startswith(": The high line ")  # its own caption
    downloads = re.findall(r'<a href="([^"]+)" download="([^"]+)">', views[0][1])
    assert [name for _, name in downloads] == [
        "fig-level.high.light.svg", "fig-level.high.dark.svg", "fig-level.high.csv"]
    for url, name in downloads:
        # relative to the gallery's address, figures/ (also the folder the figures are in)
        assert url == name and site.site_file(f"figures/{name}").is_file()


def test_switch_exports_its_variants_and_shows_the_default_without_script(make_site):
    site = make_site({"index.md": VARIANTS_PAGE})
    site.build()
    data = json.loads(site.site_file("data/pick.json").read_text())
    assert data["widget"] == "switch" and data["default"] == "low" and data["group"] == "pick"
    assert data["options"] == [["low", "low level"], ["high", "high <level>"]]
    assert data["figures"] == ["fig-level"]
    table = data["tables"][0]
    assert table["high"]["rows"] == [["a", "2.500"]] and table["high"]["notes"] == [["2.5 = 5 / 2"]]
    assert table["low"]["align"] == ["left", "right"] and "notes" not in table["low"]
    page = site.main()
    widget = re.search(r'<div class="numbook-widget" id="widget-pick" data-numbook-widget="switch" '
                       r'data-src="data/pick.json">(.*?)</div>', page, re.S)
    assert widget, page
    assert "Level: low level" in widget.group(1)
    assert '<td style="text-align: right;">0.250</td>' in widget.group(1)
    assert "2.500" not in widget.group(1)  # other variants only in the JSON


def test_compute_carries_the_engine_values_it_must_reproduce(make_site):
    site = make_site({"index.md": """
        # Compute

        ```python exec
        from numbook.api import compute
        compute("soft", function="softmax", label="Three scores", input_label="score <s>",
                inputs={"a": 1.0, "b": 2.0}, outputs={"weight": [0.26894142, 0.73105858]},
                scalars={"sum": 1.0}, params={"values": [[1, 0], [0, 1]]}, decimals=4, bar="weight")
        ```
    """})
    site.build()
    data = json.loads(site.site_file("data/soft.json").read_text())
    assert data["widget"] == "compute" and data["function"] == "softmax"
    assert data["names"] == ["a", "b"] and data["inputs"] == [1.0, 2.0]
    assert data["expected"] == {"columns": {"weight": [0.26894142, 0.73105858]}, "scalars": {"sum": 1.0}}
    assert data["params"] == {"values": [[1, 0], [0, 1]]} and data["decimals"] == 4 and data["bar"] == "weight"
    widget = re.search(r'data-numbook-widget="compute"[^>]*>(.*?)</div>', site.main(), re.S).group(1)
    assert "score &lt;s&gt;" in widget and "0.7311" in widget and "2.0000" in widget


def test_compute_sliders_carry_their_range(make_site):
    site = make_site({"index.md": """
        # Sliders

        ```python exec
        from numbook.api import compute
        compute("ln", function="layernorm", label="One row", input_label="x", control="slider",
                minimum=-2, maximum=2, step=0.01, inputs={"a": 0.61, "b": -2.0},
                outputs={"x − μ": [1.305, -1.305]}, scalars={"mean": -0.695}, params={"eps": 1e-5})
        ```
    """})
    site.build()
    data = json.loads(site.site_file("data/ln.json").read_text())
    assert (data["control"], data["min"], data["max"], data["step"]) == ("slider", -2.0, 2.0, 0.01)
    assert data["inputs"] == [0.61, -2.0] and data["params"] == {"eps": 1e-5}


def test_widget_mistakes_stop_the_build_with_page_and_line(make_site):
    cases = {
        'switch("s", label="x", options={"a": "A"}, default="b")': "default 'b' is not one of",
        'switch("s", label="x", options={"a": "A", "b": "B"}, tables=[{"a": table_spec([[1]])}])':
            "table 1 has variants ['a']",
        'switch("s", label="x", options={"a b": "A"})': "switch option 'a b'",
        'compute("c", function="f", label="x", inputs={"a": 1}, input_label="in", outputs={"o": [1, 2]})':
            "output 'o' has 2 values for 1 inputs",
        'compute("c", function="f", label="x", inputs={"a": 1}, input_label="in", outputs={}, control="slider")':
            "a slider needs minimum < maximum",
        'compute("c", function="f", label="x", inputs={"a": 0.25}, input_label="in", outputs={}, control="slider", '
        'minimum=-1, maximum=1, step=0.1)': "default 0.25 of 'a' is not a slider position",
        'compute("c", function="f", label="x", inputs={"a": 1}, input_label="in", outputs={}, control="dial")':
            "control must be 'number' or 'slider'",
    }
    for call, reason in cases.items():
        site = make_site({"index.md": f"""
            # W

            ```python exec
            from numbook.api import compute, switch, table_spec
            {call}
            ```
        """}, name=f"site{abs(hash(call))}")
        message = build_error(site)
        assert "docs/index.md:5" in message and reason in message, message  # the line of the call


def test_variant_outside_a_figure_block_is_refused(make_site):
    site = make_site({"index.md": """
        # V

        ```python exec
        import matplotlib.pyplot as plt
        from numbook.api import variant
        fig, ax = plt.subplots()
        fig.data_table = (["x"], [[1]])
        variant("a", fig, alt="x")
        plt.close(fig)
        ```
    """})
    assert "variant() called in a block that has no figure option" in build_error(site)
