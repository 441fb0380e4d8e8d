"""What numbook.extension does to every page's tree, under any builder: glossary terms a reader
can reach without a mouse, and no table header that names nothing."""

from __future__ import annotations

import markdown


def convert(text: str) -> str:
    return markdown.markdown(text, extensions=["abbr", "tables", "pymdownx.details", "numbook.extension"])


def test_a_glossary_term_is_a_tab_stop_except_inside_a_control():
    html = convert(
        "A TERM in prose, [a TERM in a link](x), and a TERM in a cell:\n\n"
        "| a |\n|---|\n| TERM |\n\n"
        '??? note "a TERM in a summary"\n    and a TERM in the body\n\n'
        "*[TERM]: A definition.\n"
    )
    reachable = html.count('<abbr tabindex="0" title="A definition.">TERM</abbr>')
    assert html.count("<abbr") == 6 and reachable == 4  # prose (2), cell, body
    assert '<a href="x">a <abbr title="A definition.">TERM</abbr> in a link</a>' in html
    assert '<summary>a <abbr title="A definition.">TERM</abbr> in a summary</summary>' in html


def test_an_empty_header_cell_becomes_a_plain_cell():
    html = convert("| | score |\n|---|---:|\n| the | 0.2 |\n")
    head = html[html.index("<thead>"):html.index("</thead>")]
    assert "<td></td>" in head and "<th></th>" not in head and "score</th>" in head
