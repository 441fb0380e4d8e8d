"""The reader's edition: every chapter reads as a book, with its code one click away.

Measured in Chromium at a phone's and a laptop's width, counting only what a reader sees
(not inside a closed fold, not in a hidden tab, not the *Cite this page* box):

* at most 60 lines of code in view per chapter, and none of them presentation code (a line
  that passes a caption, alt text, labels, headers, decimals, a title or axis labels, or calls
  a figure, table or widget function): that code is folded after what it made;
* every figure and every computed table has its code fold directly after it;
* a page that shows check marks shows their legend once, before the first mark.
"""

from __future__ import annotations

import re

import pytest

import bookfigures
from numbook import api, widgets

pytestmark = pytest.mark.browser

CHAPTERS = [
    "/", "/notation/", "/part1-character-model/", "/part2-one-head/", "/part3-learning/",
    "/part3-decoder/", "/part3-context/", "/part4-cross-attention/", "/cross-attention-one-page/",
]
WIDTHS = [390, 1280]
MAX_VISIBLE_LINES = 60

_KEYWORDS = ("alt", "caption", "header", "index", "decimals", "title", "xlabel", "ylabel", "labels",
             "xticklabels", "yticklabels", "row_labels", "col_labels")
_DRAWING = sorted(set(bookfigures.__all__) | {"table", "variant", "figure_data", "export"}
                  | {name for name in ("switch", "compute", "declare") if hasattr(widgets, name)})
assert hasattr(api, "table")
# A keyword argument (no space before `=`, as the book's code is written), or a call.
PRESENTATION_LINE = re.compile(
    r"(?:^|[(,])\s*(?:" + "|".join(_KEYWORDS) + r")=(?!=)|\b(?:" + "|".join(_DRAWING) + r")\("
)

READ_PAGE = """() => {
    const article = document.querySelector('article');
    const seen = e => e.checkVisibility() && !e.closest('details:not([open])') && !e.closest('.numbook-cite');
    const code = [...article.querySelectorAll('pre > code')]
        .filter(c => !c.closest('.numbook-output') && seen(c))
        .map(c => c.textContent.replace(/\\n$/, ''));
    const foldAfter = e => {
        let next = e.nextElementSibling;
        while (next && next.matches('.numbook-table-output')) next = next.nextElementSibling;
        return !!next && next.matches('details.numbook-code');
    };
    const figures = [...article.querySelectorAll('figure.numbook-figure')]
        .map(f => ({id: f.id, fold: foldAfter(f)}));
    const tables = [...article.querySelectorAll('.numbook-table-output')]
        .map(t => ({text: t.textContent.trim().slice(0, 50), fold: foldAfter(t)}));
    const legends = [...article.querySelectorAll('.numbook-check-legend')];
    const firstCheck = article.querySelector('details.numbook-check');
    const legendFirst = !firstCheck || (legends.length === 1 &&
        !!(legends[0].compareDocumentPosition(firstCheck) & Node.DOCUMENT_POSITION_FOLLOWING));
    return {code, figures, tables, legends: legends.length, checks: !!firstCheck, legendFirst};
}"""


def test_presentation_lines_are_recognised():
    assert PRESENTATION_LINE.search('table(E, header=["a"], decimals=1)')
    assert PRESENTATION_LINE.search("    ylabel=\"head\", title=\"x\")")
    assert PRESENTATION_LINE.search("attention_heatmap(w, toks, toks)")
    assert not PRESENTATION_LINE.search("dec_in, labels = encdec.split_target(target)")
    assert not PRESENTATION_LINE.search("probs = softmax(logits)  # (5,)")


@pytest.fixture(scope="module", params=WIDTHS, ids=lambda w: f"{w}px")
def reader(request, browser):
    context = browser.new_context(viewport={"width": request.param, "height": 844})
    page = context.new_page()
    yield page
    context.close()


@pytest.mark.parametrize("path", CHAPTERS)
def test_a_chapter_shows_prose_and_teaching_code_only(reader, served_site, path):
    reader.goto(served_site + path, wait_until="load")
    seen = reader.evaluate(READ_PAGE)
    lines = [line for block in seen["code"] for line in block.split("\n")]
    assert len(lines) <= MAX_VISIBLE_LINES, f"{path}: {len(lines)} lines of code in view"
    drawing = [line.strip() for line in lines if PRESENTATION_LINE.search(line)]
    assert not drawing, f"{path}: presentation code in view: {drawing}"
    assert [f["id"] for f in seen["figures"] if not f["fold"]] == [], f"{path}: a figure without its code fold"
    assert [t["text"] for t in seen["tables"] if not t["fold"]] == [], f"{path}: a table without its code fold"
    if seen["checks"]:
        assert seen["legendFirst"], f"{path}: {seen['legends']} check legends, or one after the first mark"
    else:
        assert seen["legends"] == 0
