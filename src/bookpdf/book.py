"""The whole book as one HTML document for paper: title page, contents, then every chapter.

The facts of the title page come from ``CITATION.cff`` (title, authors, edition, release
date, licence) and the book's citation from the home page's *Cite this page* box, as the site
published it. The contents list each chapter and its sections with the page they start on
(CSS ``target-counter``); the typesetter reads the outline from the same headings.
"""

from __future__ import annotations

import datetime
import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .content import Chapter

#: The stylesheet that sets the book on paper (beside this module).
PAPER_CSS = Path(__file__).with_name("paper.css")


@dataclass(frozen=True)
class Facts:
    """The book's bibliographic facts, from its ``CITATION.cff``."""

    title: str
    authors: tuple[str, ...]
    version: str
    released: str  # ISO date
    licence: str
    url: str  # the address of the book (all editions)
    language: str = "en"

    @property
    def author_line(self) -> str:
        names = list(self.authors)
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]

    @property
    def released_text(self) -> str:
        try:
            day = datetime.date.fromisoformat(self.released)
        except ValueError:
            return self.released
        return f"{day.day} {day:%B %Y}"


def read_facts(cff: Path, language: str = "en") -> Facts:
    """Title, authors, version, release date and licence of ``CITATION.cff``."""
    data: dict[str, Any] = yaml.safe_load(cff.read_text(encoding="utf-8")) or {}
    authors = []
    for entry in data.get("authors") or []:
        if entry.get("name"):
            authors.append(str(entry["name"]))
        else:
            authors.append(" ".join(str(entry[k]) for k in ("given-names", "family-names") if entry.get(k)))
    licence = data.get("license", "")
    if isinstance(licence, list):
        licence = ", ".join(licence)
    return Facts(
        title=str(data.get("title", "")),
        authors=tuple(authors),
        version=str(data.get("version", "")),
        released=str(data.get("date-released", "")),
        licence=str(licence),
        url=str(data.get("url", "")),
        language=language,
    )


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def title_page(facts: Facts, citation: str, edition_url: str) -> str:
    return f"""
<section class="paper-title-page" id="paper-title">
  <p class="paper-title">{_e(facts.title)}</p>
  <p class="paper-authors">{_e(facts.author_line)}</p>
  <p class="paper-edition">Edition {_e(facts.version)} · {_e(facts.released_text)}</p>
  <div class="paper-title-facts">
    <p>Every number, table and figure in this book was computed from the book's own code when
    this edition was built, the same build as the web edition at
    <a href="{_e(edition_url)}">{_e(edition_url)}</a>, where the widgets can be moved and every
    check's code read.</p>
    <p><strong>Licence:</strong> {_e(facts.licence)}.</p>
    <p><strong>Cite this book:</strong> {_e(citation)}</p>
  </div>
</section>"""


def contents(chapters: Sequence[Chapter]) -> str:
    items = []
    for chapter in chapters:
        sections = "".join(
            f'<li><a href="#{_e(s.id)}">{_e(s.title)}</a></li>' for s in chapter.sections
        )
        items.append(
            f'<li class="paper-contents__chapter"><a href="#{_e(chapter.page.prefix)}--top">{_e(chapter.title)}</a>'
            + (f"<ol>{sections}</ol>" if sections else "") + "</li>"
        )
    return (
        '<nav class="paper-contents" id="paper-contents" aria-labelledby="paper-contents-title">'
        '<h1 class="paper-contents__title" id="paper-contents-title">Contents</h1>'
        f'<ol>{"".join(items)}</ol></nav>'
    )


def chapter_section(chapter: Chapter) -> str:
    return (
        f'<section class="paper-chapter" id="{_e(chapter.page.prefix)}--top" '
        f'data-paper-chapter-start="{_e(chapter.page.prefix)}">{chapter.body}</section>'
    )


def document(
    facts: Facts,
    parts: Sequence[str],
    stylesheets: Sequence[str],
    title: str,
    description: str = "",
) -> str:
    """A complete HTML document from pieces of body (title page, contents, chapters)."""
    links = "".join(f'<link rel="stylesheet" href="{_e(href)}">' for href in stylesheets)
    meta = [f'<meta name="author" content="{_e(facts.author_line)}">',
            f'<meta name="dcterms.created" content="{_e(facts.released)}">',
            '<meta name="generator" content="bookpdf (WeasyPrint)">']
    if description:
        meta.append(f'<meta name="description" content="{_e(description)}">')
    return (
        f'<!DOCTYPE html><html lang="{_e(facts.language)}"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title>{''.join(meta)}{links}</head>"
        f'<body class="md-typeset">{"".join(parts)}</body></html>'
    )


def chapter_cover(facts: Facts, chapter: Chapter, first_page: int, last_page: int, book_pdf: str) -> str:
    """The first page of a chapter's own PDF: what it is, where it comes from, how to cite it."""
    return f"""
<section class="paper-title-page paper-chapter-cover" id="paper-cover">
  <p class="paper-cover-from">From <em>{_e(facts.title)}</em>, edition {_e(facts.version)}
  ({_e(facts.released_text)}), {_e(facts.author_line)}</p>
  <p class="paper-title">{_e(chapter.title)}</p>
  <div class="paper-title-facts">
    <p>Pages {first_page}–{last_page} of the book, with the book's page numbers: a page number
    in a cross-reference ("p. {first_page}") is the book's. The whole book:
    <a href="{_e(book_pdf)}">{_e(book_pdf)}</a>. On the web, with its widgets and every check's
    code: <a href="{_e(chapter.web_url)}">{_e(chapter.web_url)}</a>.</p>
    <p>This chapter's {chapter.checks} checked claims were verified by {chapter.assertions}
    assertions when this edition was built.</p>
    <p><strong>Licence:</strong> {_e(facts.licence)}.</p>
    <p><strong>Cite this chapter:</strong> {_e(chapter.citation)}</p>
  </div>
</section>"""
