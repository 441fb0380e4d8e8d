"""Every chapter carries the glossary's definitions where its terms are used (as <abbr>
titles, which Material shows as tooltips), and each reads exactly as the glossary file has it."""

from __future__ import annotations

import html
import re
from pathlib import Path

from tests.meta.test_glossary import glossary

CHAPTERS = ["part1-character-model", "part2-one-head", "part3-learning", "part3-decoder",
            "part3-context", "part4-cross-attention", "cross-attention-one-page", "notation"]
ABBR = re.compile(r'<abbr title="([^"]*)">([^<]*)</abbr>')


def test_terms_carry_their_glossary_definition_on_every_chapter(built_site: Path):
    entries = glossary()
    for chapter in CHAPTERS:
        page = (built_site / chapter / "index.html").read_text(encoding="utf-8")
        article = page[page.find("<article"):page.find("</article>")]
        found = [(html.unescape(term), html.unescape(title)) for title, term in ABBR.findall(article)]
        assert found, f"{chapter}: no term carries a definition"
        wrong = {term for term, title in found if entries.get(term) != title}
        assert not wrong, f"{chapter}: definitions that differ from the glossary: {sorted(wrong)}"


def test_the_notation_page_lists_every_definition_as_written(built_site: Path):
    """The glossary table shows each definition's text whole (a token name such as <eos> is
    text, not a tag the browser would swallow)."""
    page = (built_site / "notation" / "index.html").read_text(encoding="utf-8")
    section = page[page.find('id="notation-glossary"'):]
    cells = re.findall(r"<tr>\s*<td>(.*?)</td>\s*<td>(.*?)</td>\s*</tr>", section, re.S)
    shown = {}
    for term, definition in cells:
        plain = lambda text: html.unescape(re.sub(r"<[^>]+>", "", text)).strip()  # noqa: E731
        shown[plain(term).lower()] = plain(definition)
    entries = glossary()
    assert {t.lower() for t in entries} <= set(shown)
    differ = [t for t, d in entries.items() if shown[t.lower()] != d]
    assert not differ, f"definitions shown otherwise than written: {differ}"
