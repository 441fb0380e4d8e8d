"""Blocks run in order in one namespace; hidden and check blocks; tables; inline values; escaping."""

from __future__ import annotations

import html
import re

from .conftest import build_error


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


def test_hidden_block_runs_but_is_not_shown(make_site):  # b
    site = make_site({"index.md": """
        ```python exec hide
        secret_name = 6 * 7
        ```

        The answer is `{py} secret_name`.
    """})
    site.build()
    page = site.html()
    assert "secret_name" not in page
    assert "The answer is 42." in text_of(page)


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
        ["", "p", "q"],
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
    plugin = site.build()
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
