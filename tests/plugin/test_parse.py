"""The page parser: block options, nested fences, line numbers, inline forms, references."""

from __future__ import annotations

import textwrap

import pytest

from numbook.cells import CodeCell, InlineCell
from numbook.parse import OptionError, parse_info, parse_page


def md(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def test_not_exec_blocks_are_ignored():
    assert parse_info("python") is None
    assert parse_info("pycon") is None
    assert parse_info("python executable") is None
    assert parse_info("text exec") is None


def test_flags_and_quoted_values():
    opts = parse_info('python exec hide check="the largest weight goes to \\"river\\""')
    assert opts.hide is True
    assert opts.check == 'the largest weight goes to "river"'
    fig = parse_info("python exec figure=\"fig-x\" caption='Two words' alt=\"A bar chart\" timeout=\"120\"")
    assert (fig.figure, fig.caption, fig.alt, fig.timeout) == ("fig-x", "Two words", "A bar chart", 120.0)
    assert parse_info("python exec kind=setup").kind == "setup"
    assert parse_info("python exec").kind is None  # follows from what the block makes


@pytest.mark.parametrize(
    "info, message",
    [
        ("python exec hidden", "unknown option 'hidden'"),
        ('python exec check="unterminated', "cannot read the options"),
        ('python exec figure="f" caption="c"', "no alt text"),
        ('python exec figure="f" alt="a"', "no caption"),
        ('python exec alt="a"', "only makes sense with figure"),
        ("python exec hide=1", "is a flag"),
        ("python exec check", "needs a value"),
        ('python exec hide hide', "given twice"),
        ('python exec timeout="soon"', "timeout must be a number"),
        ('python exec figure="has space" caption="c" alt="a"', "figure id"),
        ('python exec kind="folded"', "kind must be one of teach, present, setup"),
        ('python exec kind="setup" check="c"', "kind does not apply"),
        ('python exec kind="teach" hide', "give one"),
        ('python exec kind="setup" figure="f" caption="c" alt="a"', "cannot make a figure"),
    ],
)
def test_bad_options_are_errors(info, message):
    with pytest.raises(OptionError, match=message):
        parse_info(info)


def test_bad_option_is_reported_at_its_fence_line():
    page = parse_page(md("""
        # T

        ```python exec colour="red"
        x = 1
        ```
    """), "docs/p.md")
    assert page.cells == []
    assert [(e.page, e.line) for e in page.errors] == [("docs/p.md", 3)]
    assert "unknown option 'colour'" in page.errors[0].reason


def test_line_numbers_count_front_matter():
    text = md("""
        Intro `{py} 1 + 1`.

        ```python exec
        a = 1
        b = 2
        ```
    """)
    page = parse_page(text, "docs/p.md", line_offset=4)
    inline, block = page.cells
    assert isinstance(inline, InlineCell) and inline.line == 5 and inline.expr == "1 + 1"
    assert isinstance(block, CodeCell)
    assert (block.fence_line, block.first_line) == (7, 8)
    assert block.code == "a = 1\nb = 2\n"


def test_fences_inside_longer_or_tilde_fences_are_text():
    page = parse_page(md("""
        ````markdown
        ```python exec
        shown_not_run = 1
        ```
        ````

        ~~~text
        ```python exec
        also_not_run = 1
        ```
        ~~~

        ```python exec
        runs = 1
        ```
    """), "docs/p.md")
    assert [c.code for c in page.cells] == ["runs = 1\n"]
    assert page.cells[0].fence_line == 13


def test_inline_forms_in_code_are_literal():
    page = parse_page(md("""
        Run `{py} a` but not `` `{py} b` `` nor `x {py} c`.

        ```python
        `{py} d`
        ```
    """), "docs/p.md")
    assert [c.expr for c in page.cells] == ["a"]


def test_cells_come_in_document_order():
    page = parse_page(md("""
        `{py} 1`

        ```python exec
        x = 1
        ```

        Then `{py} x` and `{py} x + 1`.
    """), "docs/p.md")
    kinds = [type(c).__name__ for c in page.cells]
    assert kinds == ["InlineCell", "CodeCell", "InlineCell", "InlineCell"]
    assert [c.index for c in page.cells] == [0, 1, 2, 3]


def test_indented_block_keeps_its_indent():
    page = parse_page(md("""
        !!! note

            ```python exec
            if True:
                y = 2
            ```
    """), "docs/p.md")
    (cell,) = page.cells
    assert cell.indent == "    "
    assert cell.code == "if True:\n    y = 2\n"


def test_figure_references_and_headings():
    text = md("""
        See [](#fig-a) and [](../b/c.md#fig-b), not [text](#fig-c).

        ## First {#first}
        ## Second
        ### Not numbered
    """)
    page = parse_page(text, "docs/p.md")
    assert [(r.target_page, r.fig_id, r.line) for r in page.refs] == [("", "fig-a", 1), ("../b/c.md", "fig-b", 1)]
    assert [(h.text, h.has_id, h.line) for h in page.headings] == [("First", True, 3), ("Second", False, 4)]
    assert text[page.headings[1].text_start :].startswith("Second")


def test_unclosed_fence_runs_to_the_end():
    page = parse_page("```python exec\nx = 1\n", "docs/p.md")
    assert [c.code for c in page.cells] == ["x = 1\n"]
