"""Figures: SVG files in light and dark, numbering, references, alt/caption, data behind them."""

from __future__ import annotations

import csv
import io
import json
import logging
import re

import yaml

from .conftest import build_error

FIGURE_PAGE = """
---
number: 4
---
# Chapter four

As [](#fig-line) shows, and [](other.md#fig-bars) too.

## Plots

```python exec hide
import matplotlib.pyplot as plt
from numbook.api import figure_data
```

```python exec figure="fig-first" caption="The first one" alt="A flat line"
fig, ax = plt.subplots()
ax.plot([0, 1], [1, 1], color="black")
figure_data(["x", "y"], [[0, 1.0], [1, 1.0]])
```

```python exec figure="fig-line" caption="Loss & <accuracy>" alt="A line rising from 0 to 0.5"
fig, ax = plt.subplots()
ax.plot([0, 1, 2], [0.0, 0.25, 0.5])
ax.set_title("rising")
figure_data(["step", "loss"], [[0, 0.0], [1, 0.25], [2, 0.123456789]])
```
"""

OTHER_PAGE = """
# Unnumbered

Back to [](index.md#fig-line).

```python exec figure="fig-bars" caption="Bars" alt="Two bars"
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.bar([1, 2], [3, 4])
fig.data_table = (["k", "v"], [[1, 3], [2, 4]])
```
"""


def test_figures_are_svg_files_numbered_and_referenced(make_site):  # c
    site = make_site({"index.md": FIGURE_PAGE, "other.md": OTHER_PAGE})
    site.build()
    page = site.main()

    # files, light and dark, real SVG text (never a base64 image in the page)
    for fig_id in ("fig-first", "fig-line"):
        light = site.site_file(f"figures/{fig_id}.light.svg").read_text()
        dark = site.site_file(f"figures/{fig_id}.dark.svg").read_text()
        assert light.lstrip().startswith("<?xml") and "<svg" in light
        assert light != dark
    assert "base64" not in page and "data:image" not in page
    # text stays text in the SVG, and the dark variant re-inks black
    light = site.site_file("figures/fig-line.light.svg").read_text()
    assert "rising" in light
    assert "#000000" in site.site_file("figures/fig-first.light.svg").read_text()
    assert "#000000" not in site.site_file("figures/fig-first.dark.svg").read_text()

    # both variants in the page, following Material's #only-light / #only-dark convention
    figure = re.search(r'<figure class="numbook-figure" id="fig-line">(.*?)</figure>', page, re.S).group(1)
    assert 'src="figures/fig-line.light.svg#only-light"' in figure
    assert 'src="figures/fig-line.dark.svg#only-dark"' in figure
    assert figure.count('alt="A line rising from 0 to 0.5"') == 2
    caption = re.search(r"<figcaption>(.*?)</figcaption>", figure, re.S).group(1)
    assert caption.startswith("Figure 4.2: Loss &amp; &lt;accuracy&gt; ")
    # the caption links to the figure itself, so a reader can copy the figure's address
    assert re.search(r'<a [^>]*href="#fig-line"[^>]*>', caption)

    # numbering within the page's number; unnumbered pages count alone
    assert "Figure 4.1: The first one" in page
    other = site.main("other")
    assert "Figure 1: Bars" in other

    # references filled in, on the same page and across pages
    assert '<a href="#fig-line">Figure 4.2</a>' in page
    assert '<a href="other/#fig-bars">Figure 1</a>' in page
    assert '<a href="../#fig-line">Figure 4.2</a>' in other

    # section numbers
    assert re.search(r"<h2[^>]*>4\.1 Plots</h2>", page)


def test_figure_data_table_and_csv(make_site):  # c
    site = make_site({"index.md": FIGURE_PAGE, "other.md": OTHER_PAGE})
    site.build()
    page = site.main()
    data = re.search(r'<details class="numbook-data">(.*?)</details>', page.split('id="fig-line"')[1], re.S).group(1)
    assert "<th>step</th><th>loss</th>" in data
    assert "<tr><td>2</td><td>0.123</td></tr>" in data  # displayed by the number rule
    assert 'href="figures/fig-line.csv"' in data
    rows = list(csv.reader(io.StringIO(site.site_file("figures/fig-line.csv").read_text())))
    assert rows == [["step", "loss"], ["0", "0.0"], ["1", "0.25"], ["2", "0.123456789"]]  # full precision
    assert list(csv.reader(io.StringIO(site.site_file("figures/fig-bars.csv").read_text())))[1] == ["1", "3"]


def _with_plugins(site, *, before: list, hooks: list[str] = ()) -> None:
    """Add plugins ahead of numbook (and hook files) to a throwaway site's mkdocs.yml."""
    path = site.root / "mkdocs.yml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    config["plugins"] = [*before, *config["plugins"]]
    if hooks:
        config["hooks"] = list(hooks)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def test_search_indexes_the_figure_but_not_the_numbers_behind_it(make_site):
    site = make_site({"index.md": FIGURE_PAGE, "other.md": OTHER_PAGE})
    _with_plugins(site, before=["search"])
    site.build()
    page = site.main()
    after_figure = page.split('id="fig-line"')[1].split("</figure>", 1)[1]
    # in place: the figure's code fold right under it, then the data behind it
    assert re.match(r'\s*<details class="numbook-code">\s*<summary>Code for Figure [\d.]+</summary>.*?</details>'
                    r'\s*<details class="numbook-data">', after_figure, re.S)
    assert "<!--numbook-data" not in page
    index = json.loads(site.site_file("search/search_index.json").read_text(encoding="utf-8"))
    text = " ".join(doc["text"] for doc in index["docs"])
    assert "Loss &amp; &lt;accuracy&gt;" in text or "Loss & <accuracy>" in text  # the caption is found
    assert "The data behind" not in text
    assert "Download the data" not in text
    assert not re.search(r"0\.123(?!456789)", text)  # the table's rounded cell (the code shows it in full)


def test_a_plugin_that_drops_the_data_stops_the_build(make_site):
    site = make_site({"index.md": FIGURE_PAGE, "other.md": OTHER_PAGE})
    site.write("strip_comments.py", """
        import re

        def on_page_content(html, **kwargs):
            return re.sub(r"<!--.*?-->", "", html, flags=re.S)
    """)
    _with_plugins(site, before=[], hooks=["strip_comments.py"])
    message = build_error(site)
    assert "docs/index.md" in message
    assert "the data behind 2 figure(s) went missing" in message


def test_figure_without_alt_stops_the_build(make_site):  # c, g
    site = make_site({"index.md": """
        # T

        ```python exec figure="fig-a" caption="A caption"
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        ```
    """})
    message = build_error(site)
    assert "docs/index.md:3" in message and "no alt text" in message


def test_figure_without_data_stops_the_build(make_site):
    site = make_site({"index.md": """
        ```python exec figure="fig-a" caption="c" alt="a"
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        ```
    """})
    message = build_error(site)
    assert "docs/index.md:" in message and "has no data" in message


def test_figure_rules(make_site):
    site = make_site({
        "a.md": """
            ```python exec
            import matplotlib.pyplot as plt
            plt.subplots()
            ```
        """,
        "b.md": """
            ```python exec figure="fig-two" caption="c" alt="a"
            import matplotlib.pyplot as plt
            plt.subplots(); plt.subplots()
            ```
        """,
        "c.md": """
            ```python exec figure="fig-two" caption="c" alt="a"
            pass
            ```

            See [](#fig-nowhere).
        """,
    })
    message = build_error(site)
    assert "docs/a.md:1: block left 1 matplotlib figure(s) open but has no figure option" in message
    assert "docs/b.md:1: block has figure='fig-two' and must make exactly one figure" in message
    assert "it made 2" in message
    assert "docs/c.md:1: figure id 'fig-two' is already used at docs/b.md:1" in message
    assert "docs/c.md:5: reference to unknown figure, section or equation id 'fig-nowhere'" in message


def test_dark_colors_option(make_site):
    site = make_site(
        {"index.md": """
            ```python exec figure="fig-red" caption="c" alt="a red line"
            import matplotlib.pyplot as plt
            from numbook.api import figure_data
            fig, ax = plt.subplots()
            ax.plot([0, 1], [0, 1], color="#ff0000")
            figure_data(["x"], [[0], [1]])
            ```
        """},
        plugin={"dark_colors": "palette:DARK"},
    )
    site.write("src/palette.py", 'DARK = {"#FF0000": "#00ff00"}\n')
    import sys

    sys.path.insert(0, str(site.root / "src"))
    try:
        site.build()
    finally:
        sys.path.remove(str(site.root / "src"))
        sys.modules.pop("palette", None)
    assert "#ff0000" in site.site_file("figures/fig-red.light.svg").read_text()
    dark = site.site_file("figures/fig-red.dark.svg").read_text()
    assert "#ff0000" not in dark and "#00ff00" in dark


def test_a_figure_the_block_ends_with_is_its_figure(make_site):
    # Figure helpers may build a matplotlib Figure that pyplot does not know, and return it.
    site = make_site({"index.md": """
        ```python exec figure="fig-helper" caption="Made by a helper" alt="Three bars"
        from matplotlib.figure import Figure

        def bars(values):
            fig = Figure(figsize=(3, 2))
            fig.add_subplot().bar(range(len(values)), values)
            fig.data_table = (["i", "value"], [[i, v] for i, v in enumerate(values)])
            return fig

        bars([0.2, 0.5, 0.3])
        ```
    """})
    site.build()
    assert "Figure 1: Made by a helper" in site.main()
    assert "<svg" in site.site_file("figures/fig-helper.light.svg").read_text()
    assert site.site_file("figures/fig-helper.csv").read_text().splitlines()[1] == "0,0.2"


NESTED_PAGE = """
# Nested

Both [](#fig-inside) and [](#fig-outside) are anchors of this page.

!!! note "A figure in an admonition"

    ```python exec figure="fig-inside" caption="Inside" alt="One bar inside a note"
    import matplotlib.pyplot as plt
    from numbook.api import figure_data
    fig, ax = plt.subplots()
    ax.bar([1], [2])
    figure_data(["k", "v"], [[1, 2]])
    ```

```python exec figure="fig-outside" caption="Outside" alt="One bar after the note"
fig, ax = plt.subplots()
ax.bar([1], [3])
figure_data(["k", "v"], [[1, 3]])
```
"""


def test_figures_in_and_out_of_admonitions_are_whole_html(make_site, caplog):
    # Figures reach the page after Markdown has run (Book.render holds them back,
    # Book.finish puts them in): each must arrive whole, where its block was, and never
    # inside a paragraph (an indented block is inline HTML to Markdown).
    caplog.set_level(logging.INFO, logger="mkdocs")
    site = make_site({"index.md": NESTED_PAGE}, extensions=["admonition", "pymdownx.superfences"])
    site.build()
    page = site.main()
    # the first figure, with its data table, closes the note; the second follows it
    assert re.search(
        r'<div class="admonition note">.*?<figure class="numbook-figure" id="fig-inside">.*?'
        r"<tr><td>1</td><td>2</td></tr>.*?</details>\s*</div>",
        page,
        re.S,
    )
    after = page.split('<figure class="numbook-figure" id="fig-outside">')[1]
    assert re.search(r"<figcaption>Figure 2: Outside <a [^>]*>&para;</a></figcaption>", after) and "<tr><td>1</td><td>3</td></tr>" in after
    assert not re.search(r"<p>\s*<(figure|details)", page)
    assert "data-numbook=" not in page
    # MkDocs saw both figure ids as anchors of the page (it validates links to them)
    assert '<a href="#fig-inside">Figure 1</a>' in page
    assert not [r.getMessage() for r in caplog.records if "anchor" in r.getMessage()]


NARROW_PAGE = """
# Narrow

```python exec figure="fig-wide" caption="Wide" alt="Twelve bars"
import matplotlib.pyplot as plt
from numbook.api import figure_data, narrow

fig, ax = plt.subplots(figsize=(9, 2))
ax.bar(range(12), range(12))
figure_data(["k", "v"], [[k, k] for k in range(12)])
side, ax2 = plt.subplots(figsize=(3, 4))
ax2.barh(range(12), range(12))
narrow(side)
fig
```
"""


def test_a_figure_with_a_narrow_layout_shows_it_on_a_phone(make_site):
    site = make_site({"index.md": NARROW_PAGE})
    site.build()
    page = site.main()
    figure = re.search(r'<figure class="numbook-figure numbook-figure--narrow" id="fig-wide">(.*?)</figure>', page, re.S)
    assert figure, "the figure is marked as having a narrow layout"
    pictures = re.findall(r'<picture><source media="([^"]+)" srcset="([^"]+)"[^>]*><img src="([^"]+)"', figure.group(1))
    assert [(m, src, img) for m, src, img in pictures] == [
        ("(max-width: 37.49em)", "figures/fig-wide.narrow.light.svg", "figures/fig-wide.light.svg#only-light"),
        ("(max-width: 37.49em)", "figures/fig-wide.narrow.dark.svg", "figures/fig-wide.dark.svg#only-dark"),
    ]
    wide = site.site_file("figures/fig-wide.light.svg").read_text()
    side = site.site_file("figures/fig-wide.narrow.light.svg").read_text()
    assert wide != side and site.site_file("figures/fig-wide.narrow.dark.svg").is_file()


def test_narrow_outside_a_figure_block_is_an_error(make_site):
    site = make_site({"index.md": """
        ```python exec
        import matplotlib.pyplot as plt
        from numbook.api import narrow
        fig, ax = plt.subplots()
        narrow(fig)
        plt.close("all")
        ```
    """})
    message = build_error(site)
    assert "narrow() called in a block that has no figure option" in message


def test_a_figure_may_show_its_data_at_more_decimals(make_site):
    site = make_site({"index.md": """
        # Precise

        ```python exec figure="fig-fine" caption="Small changes" alt="Two bars"
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        ax.bar([1, 2], [0.12345, 0.12361])
        fig.data_table = (["k", "loss"], [[1, 0.12345], [2, 0.12361]])
        fig.data_decimals = 4
        ```
    """})
    site.build()
    page = site.main()
    data = re.search(r'<details class="numbook-data">(.*?)</details>', page, re.S).group(1)
    assert "<td>0.1235</td>" in data and "<td>0.1236</td>" in data  # not 0.123 twice
    assert "0.12361" in site.site_file("figures/fig-fine.csv").read_text()  # the CSV keeps every digit
