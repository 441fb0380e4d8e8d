"""The book keeps every address it has published (permalinks.json), whatever pages it adds."""

from __future__ import annotations

import re
from pathlib import Path

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
