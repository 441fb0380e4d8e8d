"""Announced pages, generated part titles, figure prefixes, references in generated
Markdown, and figures that stay legible on a narrow screen."""

from __future__ import annotations

import re

import yaml

from numbook.figures import legible_width, smallest_font, svg_size
from numbook.parse import parse_page

from .conftest import build_error

PART2 = """
---
number: 2
title: One head
---

Back to [](part1.md).

## First {#p2-first}
"""

PART4 = """
---
number: 4
title: Cross-attention
---

Before this: [](part2.md) and [](part1.md).
"""

PART1 = """
---
number: 1
title: A character model
---

Text.
"""


def _with_nav(site, nav: list) -> None:
    config = yaml.safe_load((site.root / "mkdocs.yml").read_text())
    config["nav"] = nav
    (site.root / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False))


def test_an_announced_page_is_named_until_it_is_written_then_linked(make_site):
    pages = {"index.md": "# Home\n\nStart with [](part1.md).\n", "part2.md": PART2, "part4.md": PART4}
    site = make_site(pages, plugin={"planned": {"part1.md": 1}})
    site.build()
    home = site.main()
    assert "Start with Part 1 (coming soon)." in home
    assert "part1" not in home  # no link to a page that does not exist
    assert '<a href="../part2/">Part 2</a>' in site.main("part4")
    assert "Back to Part 1 (coming soon)." in site.main("part2")

    site.page("part1.md", PART1)  # the part lands: the same prose now links
    site.build()
    assert 'Start with <a href="part1/">Part 1</a>.' in site.main()
    assert '<a href="../part1/">Part 1</a>' in site.main("part4")


def test_a_written_page_left_out_of_the_nav_is_still_only_announced(make_site):
    site = make_site(
        {"index.md": "# Home\n\n[](part1.md) and [](part2.md).\n", "part1.md": PART1, "part2.md": PART2},
        plugin={"planned": {"part1.md": 1}},
    )
    _with_nav(site, [{"Home": "index.md"}, {"Part 2": "part2.md"}])
    site.build()
    home = site.main()
    assert "Part 1 (coming soon) and" in home and '<a href="part2/">Part 2</a>' in home


def test_announced_page_rules(make_site):
    site = make_site(
        {
            "index.md": "# Home\n\nSee [](part1.md#p1-window).\n\nAnd [](part3.md).\n",
            "part2.md": PART2,
            "part4.md": PART4,
        },
        plugin={"planned": {"part1.md": 1, "part2.md": 3}},
    )
    _with_nav(site, [{"Home": "index.md"}, {"Two": "part2.md"}, {"Four": "part4.md"}])
    message = build_error(site)
    assert "docs/index.md:3: 'part1.md' is announced but not published yet, so 'p1-window' has no number" in message
    assert "docs/index.md:5: empty link to 'part3.md', which is not a page of the book" in message
    assert "docs/part2.md:1: the plugin's `planned` option announces this page as number 3" in message
    assert "docs/part4.md" not in message  # part2 is published, part1 announced


def test_a_page_outside_the_nav_cannot_be_linked_by_number(make_site):
    site = make_site({"index.md": "# Home\n\n[](part4.md)\n", "part4.md": PART4})
    _with_nav(site, ["index.md"])
    message = build_error(site)
    assert "docs/index.md:3: empty link to docs/part4.md, which is not in the nav" in message


def test_the_title_of_a_numbered_page_is_made_from_its_front_matter(make_site):
    site = make_site({"index.md": "# Home\n", "part2.md": PART2}, plugin={"planned": {"part1.md": 1}})
    site.build()
    assert re.search(r"<h1[^>]*>Part 2 · One head</h1>", site.main("part2"))

    site.page("part2.md", PART2.replace("\nBack", "\n# Part 2 · One head\n\nBack"))
    site.build()  # a hand-written H1 that reads the same is accepted, and not doubled
    assert len(re.findall(r"<h1", site.main("part2"))) == 1

    site.page("part2.md", PART2.replace("\nBack", "\n# One head, again\n\nBack"))
    message = build_error(site)
    assert "docs/part2.md:6: this page's H1 is made from its front matter (`# Part 2 · One head`)" in message


def test_heading_format_option(make_site):
    site = make_site({"index.md": "# Home\n", "part4.md": "---\nnumber: 4\ntitle: Cross-attention\n---\n"},
                     plugin={"heading_format": "{number}. {title}", "page_label": "Chapter"})
    site.build()
    assert re.search(r"<h1[^>]*>4\. Cross-attention</h1>", site.main("part4"))


FIGURES = """
---
figure_prefix: L
---
# Lesson

```python exec figure="fig-one" caption="One." alt="one"
from matplotlib.figure import Figure
fig = Figure(figsize=(4, 2))
ax = fig.subplots()
ax.set_title("small", fontsize=8)
ax.set_xlabel("large", fontsize=16)
fig.data_table = (["x"], [[1]])
fig
```

```python exec figure="fig-two" caption="Two." alt="two"
fig = Figure(figsize=(4, 2))
fig.subplots().set_title("t", fontsize=10)
fig.data_table = (["x"], [[2]])
fig
```

[](#fig-one) and [](#fig-two).
"""


def test_figure_prefix_gives_a_page_its_own_figure_numbers(make_site):
    site = make_site({"index.md": "# Home\n", "lesson.md": FIGURES})
    site.build()
    page = site.main("lesson")
    assert "Figure L.1: One." in page and "Figure L.2: Two." in page
    assert '<a href="#fig-one">Figure L.1</a> and <a href="#fig-two">Figure L.2</a>' in page


def test_figures_carry_their_size_and_a_legible_minimum_width(make_site):
    site = make_site({"index.md": "# Home\n", "lesson.md": FIGURES}, plugin={"figure_min_text_px": 12})
    site.build()
    page = site.main("lesson")
    svg = site.site_file("figures/fig-one.light.svg").read_text()
    width, height, box = svg_size(svg)
    assert smallest_font(svg) == 8  # the title; the axis label is 16
    images = re.findall(r'<img src="[^"]*fig-one\.(?:light|dark)\.svg[^"]*"[^>]*>', page)
    assert len(images) == 2
    for image in images:
        assert f'width="{round(width)}" height="{round(height)}"' in image
        # 8 units of a viewBox `box` wide: 12 px need a display width of 12 * box / 8
        minimum = int(re.search(r'style="min-width:(\d+)px"', image).group(1))
        assert minimum == -(-12 * box // 8)
    assert '<div class="numbook-figure__scroll">' in page


def test_without_a_text_floor_figures_get_no_minimum_width(make_site):
    site = make_site({"index.md": "# Home\n", "lesson.md": FIGURES})
    site.build()
    assert "min-width" not in site.main("lesson")


def test_svg_size_reads_units_and_viewbox():
    assert svg_size('<svg width="72pt" height="36pt" viewBox="0 0 72 36">') == (96.0, 48.0, 72.0)
    assert svg_size('<svg viewBox="0 0 200 100"><text font-size="10">') == (200.0, 100.0, 200.0)
    assert svg_size('<svg width="300" height="150" viewBox="0,0,150,75">') == (300.0, 150.0, 150.0)
    assert svg_size("<svg>") is None
    assert smallest_font('<text style="font: 9.5px \'DejaVu Sans\'">a</text><text font-size="11">b</text>') == 9.5
    assert smallest_font("<svg><path/></svg>") is None
    # a 10-unit font in a 400-unit-wide viewBox reaches 12.8 px at 512 px wide
    assert legible_width('<svg viewBox="0 0 400 100"><text style="font-size: 10px">x</text></svg>', 12.8) == 512.0
    assert legible_width('<svg viewBox="0 0 400 100"></svg>', 12.8) is None


GENERATED = """
---
number: 3
---
# Three

```python exec
from numbook.api import markdown
markdown("| Part | What |\\n|---|---|\\n| [](part1.md) | soon |\\n| [](index.md) | here |\\n| `[](x.md)` | code |")
```

## Section {#p3-sec}
"""


def test_references_in_generated_markdown_are_filled_and_checked(make_site):
    site = make_site({"index.md": "---\nnumber: 0\n---\n# Home\n", "three.md": GENERATED},
                     plugin={"planned": {"part1.md": 1}})
    site.build()
    page = site.main("three")
    assert "<td>Part 1 (coming soon)</td>" in page
    assert '<td><a href="../">Part 0</a></td>' in page
    assert "<code>[](x.md)</code>" in page  # a code span stays literal

    site.page("three.md", GENERATED.replace("[](part1.md)", "[](#nowhere)"))
    message = build_error(site)
    assert "docs/three.md:6: reference to unknown figure, section or equation id 'nowhere'" in message


def test_parse_finds_the_first_title():
    parsed = parse_page("Intro\n\n# The title {#t}\n\n## A section\n\n# Another\n", "docs/x.md", 3)
    assert parsed.title is not None and parsed.title.text == "The title" and parsed.title.line == 6
    assert [h.text for h in parsed.headings] == ["A section"]
    assert parse_page("```\n# not a title\n```\n", "docs/x.md").title is None
