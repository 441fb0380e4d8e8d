"""Empty links to sections and pages, computed captions and alt text, the pinned build date."""

from __future__ import annotations

import gzip
import os
import re
import subprocess

import pytest

from numbook.parse import OptionError, parse_info, parse_page, template_parts

from .conftest import build_error

PART = """
---
number: 4
---
# Part four

Generation is in [](#p4-generation); the whole part is [](part4.md).

## The task {#p4-task}

Text.

## Untitled helper heading

## Generate one token at a time {#p4-generation}

Back to [](#p4-task).
"""

OTHER = """
# Unnumbered

See [](part4.md#p4-generation), [](part4.md#p4-task) and [](part4.md).
A plain link [to part four](part4.md) and [](https://example.org) stay as they are.

## A heading {#other-heading}
"""


def test_section_and_page_references(make_site):
    site = make_site(
        {"part4.md": PART, "index.md": OTHER},
        extensions=["attr_list", "toc"],
    )
    site.build()
    part = site.main("part4")
    assert '<a href="#p4-generation">Section 4.3</a>' in part
    assert '<a href="#p4-task">Section 4.1</a>' in part
    assert '<a href="./">Part 4</a>' in part
    assert re.search(r'<h2 id="p4-generation">4\.3 Generate one token at a time</h2>', part)
    index = site.main()
    assert '<a href="part4/#p4-generation">Section 4.3</a>' in index
    assert '<a href="part4/#p4-task">Section 4.1</a>' in index
    assert '<a href="part4/">Part 4</a>' in index
    assert '<a href="part4/">to part four</a>' in index
    assert '<a href="https://example.org"></a>' in index


FIGURE_BLOCK = """
```python exec figure="{fig}" caption="A line." alt="A rising line."
import matplotlib.pyplot as plt
from numbook.api import figure_data
fig, ax = plt.subplots()
ax.plot([0, 1])
figure_data(["x", "y"], [[0, 0], [1, 1]])
```
"""


def test_a_part_split_over_pages_numbers_on_in_nav_order(make_site):
    # Alphabetical order (alpha before zeta) is the opposite of the nav's: the nav decides.
    first = "---\nnumber: 3\n---\n# Part three, first half\n\n## One {#p3-one}\n\n## Two {#p3-two}\n" + FIGURE_BLOCK.format(fig="fig-first")
    second = (
        "---\nnumber: 3\n---\n# Part three, second half\n\n## Three {#p3-three}\n"
        + FIGURE_BLOCK.format(fig="fig-second")
        + "\nBack to [](part3-zeta.md#p3-two) and [](part3-zeta.md#fig-first); here [](#fig-second).\n"
    )
    site = make_site(
        {"index.md": "# Home\n\n[](part3-alpha.md#p3-three) is in [](part3-alpha.md).\n",
         "part3-zeta.md": first, "part3-alpha.md": second},
        extensions=["attr_list", "toc"],
        nav=["index.md", "part3-zeta.md", "part3-alpha.md"],
    )
    site.build()
    zeta, alpha = site.main("part3-zeta"), site.main("part3-alpha")
    assert re.search(r'<h2 id="p3-two">3\.2 Two</h2>', zeta)
    assert re.search(r'<h2 id="p3-three">3\.3 Three</h2>', alpha)
    assert "Figure 3.1" in zeta and "Figure 3.2" in alpha
    assert ">Section 3.2</a>" in alpha and ">Figure 3.1</a>" in alpha and ">Figure 3.2</a>" in alpha
    home = site.main()
    assert ">Section 3.3</a>" in home and ">Part 3</a>" in home


def test_labelled_formulas_are_numbered_on_across_a_part_and_referenced(make_site):
    first = "---\nnumber: 3\n---\n# Part three\n\n$$\\label{eq-a} a = 1$$\n\n$$b = 2$$\n\n$$\\label{eq-c} c = 3$$\n"
    second = "---\nnumber: 3\n---\n# More of part three\n\n$$\\label{eq-d}\nd = 4\n$$\n\nSee [](#eq-d) and [](part3-zeta.md#eq-c).\n"
    site = make_site(
        {"index.md": "# Home\n\n[](part3-alpha.md#eq-d)\n", "part3-zeta.md": first, "part3-alpha.md": second},
        extensions=[{"pymdownx.arithmatex": {"generic": True}}],
        nav=["index.md", "part3-zeta.md", "part3-alpha.md"],
    )
    site.build()
    zeta, alpha = site.main("part3-zeta"), site.main("part3-alpha")
    # the number goes into the TeX (the maths plugin shows it), the label stays for the id
    assert "\\tag{3.1}\\label{eq-a} a = 1" in zeta and "\\tag{3.2}\\label{eq-c}" in zeta
    assert "\\[b = 2\\]" in zeta  # the unlabelled formula is not numbered
    assert "\\tag{3.3}\\label{eq-d}" in alpha
    assert '<a href="#eq-d">Equation 3.3</a>' in alpha and '<a href="../part3-zeta/#eq-c">Equation 3.2</a>' in alpha
    assert ">Equation 3.3</a>" in site.main()


def test_bad_formula_labels_stop_the_build(make_site):
    site = make_site({
        "index.md": "---\nnumber: 1\n---\n# One\n\nA \\label{eq-prose} in prose.\n\n$$\\label{eq-x} x$$\n\n"
                    "$$\\label{eq-x} y$$\n\n$$\\label{9bad} z$$\n\n$$\\label{eq-u}\\label{eq-v} u$$\n\n"
                    "[](#eq-nowhere)\n",
    })
    message = build_error(site)
    assert "docs/index.md:6: \\label{eq-prose} outside a $$ … $$ display formula" in message
    assert "docs/index.md:10: id 'eq-x' is already used by an equation at docs/index.md:8" in message
    assert "docs/index.md:12: equation id '9bad'" in message
    assert "docs/index.md:14: \\label{eq-v}: this formula has a label already" in message
    assert "reference to unknown figure, section or equation id 'eq-nowhere'" in message


def test_page_label_option(make_site):
    site = make_site({"part4.md": PART, "index.md": OTHER}, plugin={"page_label": "Chapter"}, extensions=["attr_list"])
    site.build()
    assert '<a href="part4/">Chapter 4</a>' in site.main()


def test_bad_section_references_stop_the_build(make_site):
    site = make_site(
        {
            "part4.md": PART,
            "index.md": """
                # Home

                [](#p4-generation) is on another page.

                [](part4.md#p4-nowhere) does not exist.

                [](other.md) has no number, [](other.md#other-heading) neither.

                [](missing.md) is not a page.
            """,
            "other.md": """
                # Other

                ## A heading {#other-heading}

                ## Twice {#other-heading}
            """,
        },
        extensions=["attr_list"],
    )
    message = build_error(site)
    assert "docs/index.md:3: section 'p4-generation' is on docs/part4.md: write [](part4.md#p4-generation)" in message
    assert "docs/index.md:5: reference to unknown figure, section or equation id 'p4-nowhere'" in message
    assert "docs/index.md:7: empty link to docs/other.md, which has no number" in message
    assert "docs/index.md:7: section 'other-heading' is on docs/other.md, which has no number" in message
    assert "docs/index.md:9: empty link to 'missing.md', which is not a page of the book" in message
    assert "docs/other.md:5: id 'other-heading' is already used on this page, line 3" in message


def test_parse_reference_forms():
    parsed = parse_page(
        "[](#a) [](p.md#b) [](p.md) [](https://x.org) [](#) []()\n\n## T {#sec-1 .cls}\n\n## U {.cls}\n",
        "docs/x.md",
    )
    assert [(r.target_page, r.fig_id) for r in parsed.refs] == [("", "a"), ("p.md", "b"), ("p.md", "")]
    assert [(h.id, h.has_id) for h in parsed.headings] == [("sec-1", True), (None, False)]


def test_template_parts():
    assert template_parts("plain") == [("plain", False)]
    assert template_parts("w = {py:w[1]}, d = {py:{'a': 1}['a']}.") == [
        ("w = ", False), ("w[1]", True), (", d = ", False), ("{'a': 1}['a']", True), (".", False),
    ]
    assert template_parts("{py:f'{x:.2f}' + '}'}") == [("f'{x:.2f}' + '}'", True)]
    for bad, reason in [("{py:x", "no closing brace"), ("{py: }", "empty expression"), ("{py:x +* 2}", "not a Python")]:
        with pytest.raises(OptionError, match=reason):
            template_parts(bad)
    with pytest.raises(OptionError, match="in alt: .*no closing brace"):
        parse_info('python exec figure="f" caption="c" alt="the {py:x"')


COMPUTED = """
# Computed

```python exec hide
import matplotlib.pyplot as plt
from numbook.api import figure_data
```

```python exec figure="fig-w" caption="The largest weight is {py:max(w)} of {py:len(w)}; <b>{py:label}</b>" alt="Bars; the tallest is {py:max(w)} & {py:tiny}"
w = [0.25, 0.123456, 0.5]
label = "*bold* <i>"
tiny = -1.5e-9
fig, ax = plt.subplots()
ax.bar(range(3), w)
figure_data(["i", "w"], [[i, v] for i, v in enumerate(w)])
```
"""


def test_computed_caption_and_alt(make_site):
    site = make_site({"index.md": COMPUTED})
    site.build()
    page = site.main()
    caption = re.search(r"<figcaption>(.*?)</figcaption>", page, re.S).group(1)
    assert caption.startswith("Figure 1: The largest weight is 0.500 of 3; ")
    assert "<b>" not in caption and "<i>" not in caption and "<em>" not in caption  # escaped, never markup
    assert "&lt;b&gt;" in caption and "bold" in caption
    alt = "Bars; the tallest is 0.500 &amp; \u22121.5\u00d710\u207b\u2079"
    assert page.count(f'alt="{alt}"') == 2
    assert "{py:" not in page


def test_bad_caption_expression_stops_the_build(make_site):
    site = make_site({
        "a.md": """
            # A

            ```python exec figure="fig-a" caption="Largest: {py:max(nothing)}" alt="a"
            import matplotlib.pyplot as plt
            fig, ax = plt.subplots()
            fig.data_table = (["x"], [[1]])
            ```
        """,
        "b.md": """
            # B

            ```python exec figure="fig-b" caption="c" alt="bad {py:1 +* 2}"
            pass
            ```
        """,
    })
    message = build_error(site)
    assert "docs/a.md:3: caption expression `{py:max(nothing)}` failed: NameError: name 'nothing' is not defined" in message
    assert "docs/b.md:3: in alt: `{py:1 +* 2}` is not a Python expression" in message


def _git(root, *args, **env):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env={**os.environ, **env})


def test_build_date_is_the_last_commit(make_site, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    monkeypatch.delenv("SOURCE_DATE_EPOCH")  # unset for this test, restored after it
    site = make_site({"index.md": "# Home\n", "other.md": "# Other\n"}, name="repo")
    site.write("mkdocs.yml", (site.root / "mkdocs.yml").read_text() + "site_url: https://example.org/\n")
    (site.root / ".gitignore").write_text("site/\n.cache/\n")
    date = "2001-02-03T04:05:06+00:00"
    _git(site.root, "init", "-q")
    _git(site.root, "add", "-A")
    _git(
        site.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one",
        GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date,
    )
    site.build(site_dir=tmp_path / "one")
    assert "SOURCE_DATE_EPOCH" not in os.environ  # the plugin took back what it set
    site.build(site_dir=tmp_path / "two")
    one = (tmp_path / "one" / "sitemap.xml.gz").read_bytes()
    assert one == (tmp_path / "two" / "sitemap.xml.gz").read_bytes()
    assert (tmp_path / "one" / "sitemap.xml").read_bytes() == (tmp_path / "two" / "sitemap.xml").read_bytes()
    assert "<lastmod>2001-02-03</lastmod>" in gzip.decompress(one).decode()

    # an explicit value wins
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    site.build(site_dir=tmp_path / "three")
    assert "<lastmod>2023-11-14</lastmod>" in (tmp_path / "three" / "sitemap.xml").read_text()
    assert os.environ["SOURCE_DATE_EPOCH"] == "1700000000"


def test_no_git_leaves_the_date_alone(make_site, monkeypatch, tmp_path):
    from numbook.plugin import pin_build_date

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert pin_build_date(str(tmp_path)) is None
    assert "SOURCE_DATE_EPOCH" not in os.environ
