"""numbook-pdf: which PDFs each page links, and what a build without the PDFs says."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from bookpdf.plugin import NEXT, PdfPlugin
from bookpdf.typeset import page_path, read_config

ROOT = Path(__file__).resolve().parents[2]


def plugin(**options) -> PdfPlugin:
    p = PdfPlugin()
    errors, warnings = p.load_config({"leave_out": ["guide.md", "reference/*"], **options})
    assert not errors and not warnings
    return p


def context_for(p: PdfPlugin, src_uri: str) -> dict:
    page = SimpleNamespace(file=SimpleNamespace(src_uri=src_uri))
    return p.on_page_context({}, page=page, config=None, nav=None)["pdf_edition"]


@pytest.fixture(autouse=True)
def typesets_next(monkeypatch):
    """These builds are typeset next (`python -m bookpdf` says so to the build it starts)."""
    monkeypatch.setenv(NEXT, "1")


def test_a_build_that_gets_no_pdfs_links_none(monkeypatch):
    monkeypatch.delenv(NEXT)
    assert context_for(plugin(), "part2-one-head.md") is None
    assert context_for(plugin(make=True), "part2-one-head.md")["chapter"]


def test_a_chapter_links_its_own_pdf_and_the_books_in_each_paper_size():
    pdfs = context_for(plugin(), "part2-one-head.md")
    assert pdfs["chapter"] == [("A4", "pdf/part2-one-head-a4.pdf"), ("Letter", "pdf/part2-one-head-letter.pdf")]
    assert pdfs["book"] == [("A4", "pdf/book-a4.pdf"), ("Letter", "pdf/book-letter.pdf")]
    assert context_for(plugin(), "index.md")["chapter"][0] == ("A4", "pdf/home-a4.pdf")


def test_a_page_the_book_leaves_out_links_the_book_only():
    p = plugin()
    assert context_for(p, "guide.md")["chapter"] is None
    assert context_for(p, "reference/engine.md")["chapter"] is None
    assert context_for(p, "guide.md")["book"]


def test_a_build_that_does_not_make_the_pdfs_says_how_to(caplog, monkeypatch):
    monkeypatch.delenv(NEXT)
    with caplog.at_level(logging.INFO, logger="mkdocs.plugins.numbook.pdf"):
        plugin().on_post_build(config=None)
    assert "uv run --group pdf python -m bookpdf" in caplog.text


def test_the_books_pages_follow_the_nav_without_the_pages_it_leaves_out():
    config = read_config(ROOT / "mkdocs.yml")
    sources = [src for src, _ in config.pages]
    assert sources[0] == "index.md" and "how-this-book-is-built.md" not in sources
    assert not any(src.startswith(("reference/", "workbooks/")) for src in sources)
    assert all(src.endswith(".md") for src in sources)
    assert [page_path(s) for s in ("index.md", "a.md", "d/index.md")] == ["", "a/", "d/"]
