"""The book keeps every address it has published (permalinks.json), whatever pages it adds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from numbook import permalinks

from .conftest import ROOT, site_pages


def test_the_build_keeps_every_published_page_and_anchor(built_site: Path):
    manifest = permalinks.load(ROOT / permalinks.MANIFEST)
    assert manifest, "permalinks.json is missing: run `uv run python -m numbook.permalinks --update`"
    # the manifest holds the citable addresses: sections and figures of the numbered parts too
    assert {"p2-qkv", "fig-p2-attn"} <= set(manifest["part2-one-head/"])
    dropped = permalinks.missing(manifest, built_site)
    assert not dropped, "\n".join(dropped)


def test_every_formula_and_question_of_the_chapters_can_be_cited(built_site: Path):
    """An instructor cites "Equation 3.4" or "Question 3" by its own address, and finds its number."""
    manifest = permalinks.load(ROOT / permalinks.MANIFEST)
    formulas = questions = 0
    for path in site_pages(built_site):
        if path.startswith("/workbooks/"):
            continue  # notebooks: the reader's own maths
        page = (built_site / path.strip("/") / "index.html").read_text(encoding="utf-8")
        recorded = set(manifest.get(path.lstrip("/"), []))
        labelled = re.findall(r'<div class="numbook-equation" id="([^"]+)">(.*?)<a class="headerlink" href="#\1"', page, re.S)
        assert len(labelled) == page.count('class="katex-display"'), f"{path}: a display formula without \\label"
        for ident, rendered in labelled:
            number = re.sub(r"<[^>]+>", "", rendered.split('<span class="tag">', 1)[-1]).strip()
            assert re.fullmatch(r"\(([\dA-Z]+\.)?\d+\)", number), f"{path}#{ident} shows {number!r}, not its number"
            assert ident in recorded, f"{path}#{ident} is not in permalinks.json"
        for attributes in re.findall(r'<details class="question"([^>]*)>', page):
            ident = re.search(r'id="([^"]+)"', attributes)
            assert ident and ident.group(1) in recorded, f"{path}: a question without a recorded id"
        formulas, questions = formulas + len(labelled), questions + page.count('<details class="question"')
    assert formulas >= 30 and questions >= 13


# What a reader lands on at an anchor: the element's own content, or, for an empty marker kept
# for an old id, the content right after it.
ANCHOR_TARGETS = """ids => ids.map(id => {
    const el = document.getElementById(id);
    if (!el) return {id, found: false};
    const has = e => !!e && ((e.textContent || '').trim().length > 0 || !!e.querySelector('img, svg, table, picture'));
    let next = el.nextElementSibling;
    if (!next && el.parentElement) next = el.parentElement.nextElementSibling;
    return {id, found: true, content: has(el) || has(next)};
})"""


@pytest.mark.browser
def test_every_published_anchor_points_at_content(browser, served_site, built_site: Path):
    """A cited address lands on something: a heading, a figure, a formula, a question, or the
    content an old id's marker stands beside (never an empty element with nothing after it)."""
    manifest = permalinks.load(ROOT / permalinks.MANIFEST)
    page = browser.new_page()
    try:
        empty = []
        for path, ids in manifest.items():
            if path.startswith("workbooks/") or not ids:
                continue
            page.goto(f"{served_site}/{path}", wait_until="domcontentloaded")
            for result in page.evaluate(ANCHOR_TARGETS, ids):
                if not (result["found"] and result["content"]):
                    empty.append(f"/{path}#{result['id']}")
    finally:
        page.close()
    assert not empty, "anchors with nothing at them:\n" + "\n".join(empty)


def test_no_caption_points_above_or_below(built_site: Path):
    """A caption is read in the gallery and in citations too, where "the table above" is wrong."""
    from .test_citation import figures_of

    wrong = {fid: caption for fid, (_, _, caption) in figures_of(built_site).items()
             if re.search(r"\b(above|below)\b", caption, re.I)}
    assert not wrong, wrong
