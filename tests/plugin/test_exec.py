"""Blocks run in order in one namespace; hidden and check blocks; tables; inline values; escaping."""

from __future__ import annotations

import html
import logging
import re

import pytest
from mkdocs.exceptions import Abort

from .conftest import build_error, logged


def text_of(fragment: str) -> str:
    """Visible text of an HTML fragment (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_blocks_share_one_namespace_in_order_and_show_code_and_output(make_site):  # a
    site = make_site({"index.md": """
        # Page

        ```python exec
        total = 2 + 3
        print("first", total)
        ```

        ```python exec
        total = total * 10
        print("second", total)
        ```

        ```python exec
        x = 1
        ```
    """})
    site.build()
    page = site.html()
    first = page.index("first 5")
    second = page.index("second 50")
    assert first < second
    # the reader sees the code exactly as it ran, then what it printed
    assert page.index("total = 2 + 3") < first
    assert page.index("total = total * 10") < second
    outputs = re.findall(r'<pre class="numbook-output">(.*?)</pre>', page, re.S)
    assert [text_of(o).strip() for o in outputs] == ["first 5", "second 50"]  # a silent block: no box


def test_hidden_block_runs_and_its_code_waits_in_the_setup_fold(make_site):  # b
    site = make_site({"index.md": """
        ```python exec hide
        secret_name = 6 * 7
        ```

        The answer is `{py} secret_name`.
    """})
    site.build()
    page = site.main()
    assert "The answer is 42." in text_of(page)
    folds = re.findall(r'<details class="numbook-code numbook-setup">(.*?)</details>', page, re.S)
    assert len(folds) == 1 and "secret_name = 6 * 7" in text_of(folds[0])  # in the setup fold, not lost
    assert "secret_name" not in text_of(re.sub(r"<details.*?</details>", "", page, flags=re.S))


def test_check_block_is_shown_as_a_collapsed_verification(make_site):  # b
    site = make_site(
        {"index.md": """
            ```python exec hide
            weights = {"river": 0.7, "bank": 0.3}
            ```

            The largest weight goes to river.

            ```python exec check="the largest weight goes to river"
            assert max(weights, key=weights.get) == "river"
            ```
        """},
        theme="material",
        extensions=["admonition", "pymdownx.details", "pymdownx.superfences"],
    )
    site.build()
    page = site.html()
    box = re.search(r'<details class="numbook-check">(.*?)</details>', page, re.S)
    assert box, "a check renders as a closed details element"
    summary = re.search(r"<summary>(.*?)</summary>", box.group(1), re.S).group(1)
    # folded to a mark: the visible ✓ is hidden from screen readers, the claim names it
    assert re.search(r'<span class="numbook-check__mark" aria-hidden="true"[^>]*>✓</span>', summary)
    assert "Checked when this page was built: the largest weight goes to river" in text_of(summary)
    assert 'title="Checked when this page was built: the largest weight goes to river"' in summary
    assert 'max(weights, key=weights.get) == "river"' in text_of(box.group(1))


def test_check_block_folds_without_markdown_extensions(make_site):
    site = make_site({"index.md": """
        ```python exec check="two is more than one & less than <three>"
        assert 1 < 2 < 3
        ```
    """})
    site.build()
    box = re.search(r'<details class="numbook-check">(.*?)</details>', site.main(), re.S)
    assert box, "without pymdownx.details the check is raw HTML, still folded"
    assert "✓" in box.group(1) and "assert 1 &lt; 2 &lt; 3" in box.group(1)
    assert "two is more than one & less than <three>" in text_of(box.group(1))


def test_failing_check_stops_the_build_and_quotes_the_claim(make_site):  # b
    site = make_site({"index.md": """
        # Claims

        ```python exec hide
        weights = {"river": 0.2, "bank": 0.8}
        ```

        ```python exec check="the largest weight goes to river"
        best = max(weights, key=weights.get)
        assert best == "river", f"largest is {best}"
        ```
    """})
    message = build_error(site)
    assert "docs/index.md:9" in message  # the assert line
    assert 'check failed for the claim "the largest weight goes to river"' in message
    assert "largest is bank" in message
    assert "Traceback" in message


def test_tables_follow_the_number_rule(make_site):  # d
    site = make_site({"index.md": """
        ```python exec hide
        import numpy as np
        from numbook.api import table
        table(np.array([[1.0, -0.5], [2e-9, 12.25]]), header=["p", "q"], index=["a", "b"])
        table({"n": [1, 2], "name": ["x|y", "<i>"]}, decimals=1)
        ```
    """}, plugin={"decimals": 2})
    site.build()
    page = site.main()
    rows = re.findall(r"<tr>(.*?)</tr>", page, re.S)
    cells = [[text_of(c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.S)] for r in rows]
    assert cells == [
        ["row", "p", "q"],  # the corner's name, for screen readers only
        ["a", "1.00", "\u22120.50"],
        ["b", "2×10⁻⁹", "12.25"],
        ["n", "name"],
        ["1", "x|y"],
        ["2", "<i>"],
    ]
    assert "<i>" not in page  # the string is text, not markup


def test_inline_values_are_formatted_and_see_blocks_above(make_site):  # e
    site = make_site({"index.md": """
        ---
        number: 2
        ---
        # Inline

        ```python exec hide
        p = 0.123456
        n = 7
        ```

        p is `{py} p`, n is `{py} n`, tiny is `{py} p * 1e-6`, text is `{py} f"{p:.1f}"`,
        and the literal form `` `{py} p` `` stays code.
    """})
    site.build()
    text = text_of(site.html())
    assert "p is 0.123, n is 7, tiny is 1.235×10⁻⁷, text is 0.1," in text
    assert "`{py} p`" in text


def test_printed_markup_is_escaped(make_site):  # k
    site = make_site({"index.md": """
        ```python exec
        print("<script>alert(1)</script> & <b>bold</b>")
        ```

        Inline: `{py} "<script>x</script>"`.
    """})
    site.build()
    body = site.html().split("<body", 1)[1]
    assert "<script>alert" not in body and "<script>x" not in body and "<b>bold" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in body
    assert "Inline: &lt;script&gt;x&lt;/script&gt;." in body


def test_markdown_output_is_the_authors_choice(make_site):
    site = make_site({"index.md": """
        ```python exec hide
        from numbook.api import markdown
        markdown("**bold from code**")
        ```
    """})
    site.build()
    assert "<strong>bold from code</strong>" in site.html()


def test_disabled_plugin_shows_code_and_runs_nothing(make_site):
    site = make_site({"index.md": """
        ```python exec
        raise SystemExit("must not run")
        ```

        Value `{py} 1 + 1`.
    """}, plugin={"enabled": False})
    plugin = site.build(serve=True)  # a disabled plugin is a preview: `mkdocs build` refuses it
    page = site.html()
    assert 'raise SystemExit(&quot;must not run&quot;)' in page
    assert "<code>1 + 1</code>" in page
    assert plugin.book.executed == []


def test_api_works_when_numbook_itself_lies_under_a_watched_dir(make_site):
    # In the book, numbook lives in src/ next to the engine, and src/ is watched.
    import os

    import numbook

    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(numbook.__file__)))
    site = make_site({"index.md": """
        ```python exec hide
        from numbook.api import table
        table([[1, 2.5]], header=["n", "x"])
        ```
    """}, plugin={"watch": ["src", package_parent]})
    site.build()
    assert "2.500" in site.main()


KINDS_PAGE = """
    # Kinds

    ```python exec kind=setup
    from numbook.api import table
    import numpy as np
    ```

    The scores are computed here, in view:

    ```python exec
    scores = np.array([1.0, 2.0])  # (2,)
    ```

    ```python exec
    table(scores[None, :], header=["a", "b"], decimals=1)
    ```

    ```python exec kind=setup
    HELPER = 3
    ```

    ```python exec kind=present
    doubled = scores * 2
    ```

    ## Later

    ```python exec hide
    later = 1
    ```

    The sum is `{py} doubled.sum() + HELPER + later`.
"""


def _folds(page: str) -> list[tuple[str, str, str]]:
    """(class, summary, text) of each closed fold of code, in page order."""
    return [(cls, text_of(summary), text_of(body)) for cls, summary, body in re.findall(
        r'<details class="(numbook-code[^"]*)">\s*<summary>(.*?)</summary>(.*?)</details>', page, re.S)]


def test_block_kinds_teach_in_view_present_after_their_output_setup_in_one_fold(make_site):
    site = make_site({"index.md": KINDS_PAGE})
    site.build()
    page = site.main()
    folds = _folds(page)
    assert [(cls, summary) for cls, summary, _ in folds] == [
        ("numbook-code numbook-setup", "Code that sets up this page"),
        ("numbook-code", "Code for this table"),
        ("numbook-code", "Code behind the numbers that follow"),
    ]
    setup_text = folds[0][2]
    assert "from numbook.api import table" in setup_text and "HELPER = 3" in setup_text  # both setup blocks
    assert "For Later later = 1" in " ".join(setup_text.split())  # a hidden block, with where it stood
    assert "table(scores" in folds[1][2] and "doubled = scores * 2" in folds[2][2]
    outside = re.sub(r"<details.*?</details>", "", page, flags=re.S)
    assert "scores = np.array" in text_of(outside)  # teaching code stays in view
    for hidden in ("import numpy", "table(scores", "HELPER = 3", "doubled ="):
        assert hidden not in text_of(outside)
    # the table's fold follows the table, and the setup fold comes first, at its first block
    assert page.index("<table>") < page.index("Code for this table")
    assert page.index("Code that sets up this page") < page.index("The scores are computed")
    assert "The sum is 10.0." in text_of(page) or "The sum is 10." in text_of(page)


CHECKS_PAGE = """
    # Checks

    ```python exec
    x = 2
    ```

    Two is even and positive.

    ```python exec check="two is even"
    assert x % 2 == 0
    ```

    ```python exec check="two is positive"
    assert x > 0
    ```

    And it is small.

    ```python exec check="two is small"
    assert x < 10
    ```
"""


def test_neighbouring_checks_share_a_strip_and_the_first_carries_the_legend(make_site):
    site = make_site(
        {"index.md": CHECKS_PAGE, "guide.md": "# Guide\n\n## Checks {#checks}\n\nHow they work.\n"},
        extensions=["md_in_html", "attr_list"],
        plugin={"check_help": "guide.md#checks"},
    )
    site.build()
    page = site.main()
    strips = re.findall(r'<div class="numbook-checks">(.*?)</div>\s*(?=<p|<div class="numbook-checks"|$)', page, re.S)
    assert [s.count('<details class="numbook-check"') for s in strips] == [2, 1]
    legends = re.findall(r'<p class="numbook-check-legend">(.*?)</p>', page, re.S)
    assert len(legends) == 1 and page.index("numbook-check-legend") < page.index('class="numbook-check"')
    assert "verified" in text_of(legends[0]) and 'href="guide/#checks"' in legends[0]


SOURCES_PAGE = """
    # Sources

    ```python exec kind=setup
    from toyengine import layers
    ```

    ```python exec
    y = layers.double(3)  # (): an int
    z = layers.Box(y).value
    w = max(y, z)  # a builtin: no link
    ```

    ```python exec
    layers.double(1)  # the same call again: a link on each block that makes it
    ```
"""
SOURCE_LISTING = """
    # Source

    ## `double` {#toyengine.layers.double}

    ## `Box` {#toyengine.layers.Box}
"""


def test_teaching_code_links_each_engine_call_to_its_source(make_site):
    site = make_site(
        {"guide/index.md": SOURCES_PAGE, "reference/source.md": SOURCE_LISTING},
        extensions=["attr_list"],
        plugin={"source_links": {"toyengine": "reference/source.md"}},
    )
    site.write("src/toyengine/__init__.py", "")
    site.write("src/toyengine/layers.py", "def double(x):\n    return 2 * x\n\n\nclass Box:\n"
               "    def __init__(self, value):\n        self.value = value\n")
    site.build()
    page = site.main("guide")
    lines = re.findall(r'<p class="numbook-sources">(.*?)</p>', page, re.S)
    links = [re.findall(r'<a href="([^"]+)"><code>([^<]+)</code></a>', line) for line in lines]
    assert links == [
        [("../reference/source/#toyengine.layers.double", "layers.double"),
         ("../reference/source/#toyengine.layers.Box", "layers.Box")],
        [("../reference/source/#toyengine.layers.double", "layers.double")],
    ]


def test_a_source_link_to_a_missing_anchor_fails_a_strict_build(make_site):
    site = make_site(
        {"index.md": SOURCES_PAGE, "reference/source.md": "# Source\n\nNothing listed.\n"},
        extensions=["attr_list"],
        plugin={"source_links": {"toyengine": "reference/source.md"}},
    )
    site.write("src/toyengine/__init__.py", "")
    site.write("src/toyengine/layers.py", "def double(x):\n    return 2 * x\n\n\nclass Box:\n    value = 1\n"
               "    def __init__(self, value):\n        pass\n")
    config = site.root / "mkdocs.yml"
    config.write_text(config.read_text() + "validation:\n  anchors: warn\n")
    with logged(logging.WARNING) as warnings, pytest.raises(Abort):
        site.build(strict=True)
    assert any("#toyengine.layers.double" in w for w in warnings)
