"""Asides: a section's depth in a <details class="aside">, with an id and a summary line."""

from __future__ import annotations

import re

from numbook.parse import parse_page

from .conftest import build_error

ASIDE = """
# Page

The main line.

<details class="aside" id="aside-rounding" markdown="1">
<summary>Look closer: where rounding shows</summary>

```python exec check="two thirds rounds to 0.667"
assert round(2 / 3, 3) == 0.667
```

The value is `{py} 2 / 3`.

</details>

After it.
"""


def test_an_aside_links_to_itself_and_its_blocks_still_run(make_site):
    site = make_site({"index.md": ASIDE}, extensions=["md_in_html", "attr_list"])
    site.build()
    main = site.main()
    summary = re.search(r'<details class="aside" id="aside-rounding">\s*<summary>(.*?)</summary>(.*?)</details>', main, re.S)
    assert summary, main
    assert summary.group(1) == "Look closer: where rounding shows"  # nothing to click inside the summary
    # its permanent link opens its body (a link inside <summary> nests one control in another)
    assert summary.group(2).lstrip().startswith(
        '<div class="numbook-aside-link"><a class="headerlink" href="#aside-rounding" title="Link to this aside">')
    assert "0.667" in main  # the inline value inside it ran
    assert "two thirds rounds to 0.667" in main  # and its check is shown


def test_a_failing_check_inside_an_aside_stops_the_build(make_site):
    site = make_site({"index.md": ASIDE.replace("== 0.667", "== 0.666")}, extensions=["md_in_html"])
    message = build_error(site)
    assert 'docs/index.md:9: check failed for the claim "two thirds rounds to 0.667"' in message


def test_an_aside_without_an_id_or_a_summary_stops_the_build(make_site):
    no_id = ASIDE.replace(' id="aside-rounding"', "")
    assert "docs/index.md:5: an aside needs an id" in build_error(
        make_site({"index.md": no_id}, extensions=["md_in_html"], name="no-id"))
    no_summary = ASIDE.replace("<summary>Look closer: where rounding shows</summary>\n", "")
    assert "docs/index.md:5: an aside needs a summary" in build_error(
        make_site({"index.md": no_summary}, extensions=["md_in_html"], name="no-summary"))


def test_asides_are_found_with_their_lines():
    page = parse_page("Intro.\n\n" + ASIDE, "docs/index.md", line_offset=3)
    assert [(a.id, a.line) for a in page.asides] == [("aside-rounding", 11)]
    assert not page.errors
    # a details of another class, and one inside a code fence, are not asides
    other = parse_page('<details class="example" markdown="1">\n<summary>x</summary>\n</details>\n'
                       '```\n<details class="aside">\n```\n', "p.md")
    assert other.asides == [] and other.errors == []


def test_a_figure_inside_an_aside_is_put_in_place(make_site):
    site = make_site({"index.md": """
        # Page

        <details class="aside" id="aside-figure" markdown="1">
        <summary>Look closer: a figure of its own</summary>

        ```python exec figure="fig-inside" caption="A rising line." alt="A line that rises."
        import matplotlib.pyplot as plt
        from numbook.api import figure_data
        fig, ax = plt.subplots()
        ax.plot([0, 1])
        figure_data(["x", "y"], [[0, 0], [1, 1]])
        ```

        </details>
    """}, extensions=["md_in_html", "attr_list"])
    site.build()
    main = site.main()
    aside = main[main.index('id="aside-figure"'):main.index("</details>", main.index('id="aside-figure"'))]
    assert '<figure class="numbook-figure' in aside and 'id="fig-inside"' in aside
