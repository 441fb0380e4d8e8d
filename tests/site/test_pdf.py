"""The PDF edition of the built book (bookpdf), read back from the PDFs with pypdf and pdfplumber.

One typesetting of the session's build, in both paper sizes. Without WeasyPrint (or the Pango
library it needs) these skip on a developer's machine, saying how to install it; with `CI` set
they never skip: `.ci/run` installs it.
"""

from __future__ import annotations

import functools
import os
import re
import time
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from tests.site.conftest import ROOT

# The first test waits for the whole book to be typeset in both sizes (about 3 minutes on an
# idle 2-core machine, 15 to 30 on one shared with other work): more than the suite's 600 s.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

#: Page counts this edition's PDFs must fall within (A4; US Letter within LETTER_VS_A4 of its A4).
BOOK_PAGES = (60, 400)
CHAPTER_PAGES = (2, 70)
LETTER_VS_A4 = 0.15
#: A page is a hole when its content ends above this share of its height (the issue's bar).
MAX_EMPTY = 1 / 3
#: How rare a page that is still a hole must be (bookpdf.layout floats figures to fill them).
HOLES_PER_PAGES = 80


def require_typesetter() -> None:
    from bookpdf.typeset import INSTALL_HINT, TypesetterMissing, _weasyprint

    try:
        _weasyprint()
    except TypesetterMissing as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but the typesetter is missing ({exc}): .ci/run must install it")
        pytest.skip(f"no typesetter here: {INSTALL_HINT}")


@pytest.fixture(scope="session")
def pdf_edition(built_site: Path):
    """The built book typeset, with what it reported (pages, sizes, seconds)."""
    require_typesetter()
    from bookpdf.typeset import typeset

    start = time.perf_counter()
    report = typeset(ROOT, built_site, log=None)
    seconds = time.perf_counter() - start
    load = os.getloadavg()[0]
    print(f"\nPDF edition: {len(report.outputs)} PDFs in {seconds:.0f} s (load average {load:.1f})")
    for out in report.outputs:
        print(f"  {out.path.name}: {out.pages} pages, {out.bytes / 1e6:.2f} MB")
    return report


@pytest.fixture(scope="session")
def book_config():
    from bookpdf.typeset import read_config

    return read_config(ROOT / "mkdocs.yml")


def _outputs(report, paper=None, chapter=...):
    return [o for o in report.outputs if (paper is None or o.paper == paper)
            and (chapter is ... or o.chapter == chapter)]


@functools.lru_cache(maxsize=None)
def _page_texts(path: Path) -> tuple[str, ...]:
    """The text of each page (pypdf reads a page in about a tenth of a second: once per file)."""
    from pypdf import PdfReader

    return tuple(page.extract_text() or "" for page in PdfReader(path).pages)


def _text(path: Path) -> str:
    return "\n".join(_page_texts(path))


def _web_article(site: Path, path: str) -> BeautifulSoup:
    """A chapter's article as the web shows it before any fold is opened, without its web-only parts."""
    soup = BeautifulSoup((site / path / "index.html").read_text(encoding="utf-8"), "html.parser")
    article = soup.select_one("article.md-content__inner")
    for tag in article.select("script, details.numbook-code, details.numbook-data, details.numbook-check, .numbook-cite, "
                              ".numbook-cite-figure, .katex-mathml, .numbook-table__narrow, "
                              ".numbook-sr-only, a.headerlink"):
        tag.decompose()
    return article


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text.replace("\u00ad", ""))


def test_every_chapter_and_the_book_in_both_paper_sizes(pdf_edition, book_config, built_site):
    from bookpdf.typeset import PAPERS, _prefix, page_path

    prefixes = [_prefix(page_path(src)) for src, _ in book_config.pages]
    for paper in PAPERS:
        assert sorted(o.chapter for o in _outputs(pdf_edition, paper) if o.chapter) == sorted(prefixes)
        assert _outputs(pdf_edition, paper, None), f"no whole book in {paper}"
    for out in pdf_edition.outputs:
        assert out.path.parent == built_site / "pdf" and out.path.stat().st_size == out.bytes > 0


def test_page_counts_within_the_stated_range(pdf_edition):
    book = {o.paper: o.pages for o in _outputs(pdf_edition, chapter=None)}
    assert BOOK_PAGES[0] <= book["A4"] <= BOOK_PAGES[1], book
    assert abs(book["Letter"] - book["A4"]) <= LETTER_VS_A4 * book["A4"], book
    for out in _outputs(pdf_edition):
        if out.chapter:
            assert CHAPTER_PAGES[0] <= out.pages <= CHAPTER_PAGES[1], (out.path.name, out.pages)


def test_each_chapter_pdf_holds_every_figure_and_section_number_of_its_web_page(pdf_edition, book_config, built_site):
    from bookpdf.typeset import _prefix, page_path

    counted = 0
    for src, _ in book_config.pages:
        article = _web_article(built_site, page_path(src))
        labels = [re.match(r"\S+ [A-Z0-9]+\.\d+", fig.figcaption.get_text(" ", strip=True)).group()
                  for fig in article.select("figure.numbook-figure")]
        sections = [h.get_text(" ", strip=True).split(" ")[0] for h in article.find_all(["h2", "h3"])
                    if re.match(r"[A-Z0-9]+\.\d+ ", h.get_text(" ", strip=True))]
        equations = [tag.get_text(strip=True) for tag in article.select(".katex-display .tag")]
        pdf = next(o for o in _outputs(pdf_edition, "A4") if o.chapter == _prefix(page_path(src)))
        text = _squash(_text(pdf.path))
        missing = [x for x in labels + sections + equations if _squash(x) not in text]
        assert not missing, f"{pdf.path.name} lacks {missing}"
        counted += len(labels) + len(sections)
    assert counted > 50


def test_the_numbers_are_the_web_pages_numbers(pdf_edition, book_config, built_site):
    """A sample of the decimals each web page's main line states (prose and tables) is in its PDF."""
    from bookpdf.typeset import _prefix, page_path

    checked = 0
    for src, _ in book_config.pages:
        article = _web_article(built_site, page_path(src))
        values = []
        for block in article.find_all(["p", "td", "li"]):
            values += re.findall(r"−?\d+\.\d{2,}", block.get_text(" "))
        sample = sorted(set(values))[:: max(1, len(set(values)) // 25)]
        pdf = next(o for o in _outputs(pdf_edition, "A4") if o.chapter == _prefix(page_path(src)))
        text = _squash(_text(pdf.path))
        missing = [v for v in sample if _squash(v) not in text]
        assert not missing, f"{pdf.path.name} lacks the web page's {missing}"
        checked += len(sample)
    assert checked >= 100, f"only {checked} numbers sampled"


def test_the_outline_is_the_table_of_contents(pdf_edition, book_config, built_site):
    from pypdf import PdfReader

    for out in _outputs(pdf_edition, chapter=None):
        reader = PdfReader(out.path)

        def walk(items, depth=0):
            for item in items:
                if isinstance(item, list):
                    yield from walk(item, depth + 1)
                else:
                    yield depth, item.title.strip(), reader.get_destination_page_number(item) + 1

        outline = list(walk(reader.outline))
        contents_page = "".join(_page_texts(out.path)[1:3])
        chapters = [(title, page) for depth, title, page in outline if depth == 0][2:]  # after title page, contents
        assert len(chapters) == len(book_config.pages)
        for title, page in chapters:
            # the contents line of each chapter ends with the page the outline sends the reader to
            assert re.search(re.escape(_squash(title)) + r"\.*" + str(page), _squash(contents_page)), (title, page)
        sections = [title for depth, title, _ in outline if depth == 1]
        assert len(sections) >= len(book_config.pages) and all(_squash(s) in _squash(contents_page) for s in sections)


def test_tagged_with_language_and_every_font_embedded(pdf_edition):
    from pypdf import PdfReader

    for out in pdf_edition.outputs:
        reader = PdfReader(out.path)
        root = reader.trailer["/Root"]
        assert root["/MarkInfo"]["/Marked"] and "/StructTreeRoot" in root, out.path.name
        assert root["/Lang"] == "en", out.path.name
        for page in reader.pages[:40]:
            fonts = (page.get("/Resources") or {}).get("/Font") or {}
            for name, ref in fonts.items():
                font = ref.get_object()
                descriptor = (font["/DescendantFonts"][0].get_object() if "/DescendantFonts" in font else font).get("/FontDescriptor")
                assert descriptor is not None and any(k in descriptor.get_object() for k in ("/FontFile", "/FontFile2", "/FontFile3")), (
                    out.path.name, font.get("/BaseFont"))


def _struct(node):
    node = node.get_object()
    if isinstance(node, dict):
        yield node
        kids = node.get("/K")
        for kid in kids if isinstance(kids, list) else [kids]:
            if hasattr(kid, "get_object") and isinstance(kid.get_object(), dict):
                yield from _struct(kid)


def test_no_figure_is_cut_from_its_caption_and_none_leaves_its_page(pdf_edition):
    """Each caption is tagged beside its figure on the same page (the tags are laid out page by
    page), and nothing is drawn below a page's bottom margin or past its right edge."""
    import pdfplumber
    from pypdf import PdfReader

    for out in _outputs(pdf_edition, chapter=None):
        reader = PdfReader(out.path)
        captions = 0
        for node in _struct(reader.trailer["/Root"]["/StructTreeRoot"]):
            kids = node.get("/K")
            kids = [k.get_object() for k in (kids if isinstance(kids, list) else [kids]) if hasattr(k, "get_object")]
            kinds = [k.get("/S") for k in kids if isinstance(k, dict)]
            if "/Caption" in kinds:
                captions += 1
                beside = [k for k in kids if isinstance(k, dict) and k.get("/S") != "/Caption"]
                assert any(n.get("/S") == "/Figure" for k in beside for n in _struct(k)), (
                    f"{out.path.name}: a caption without its figure on its page")
        assert captions > 20
        with pdfplumber.open(out.path) as pdf:
            for number, page in enumerate(pdf.pages, start=1):
                drawn = page.rects + page.curves + page.images
                assert all(o["bottom"] <= page.height - 14 for o in drawn), f"{out.path.name} p. {number}"
                # nor past its right edge (a wide table or formula cut off by the paper)
                assert all(c["x1"] <= page.width - 14 for c in page.chars), f"{out.path.name} p. {number}"


def test_no_table_title_is_left_at_a_page_foot(pdf_edition, book_config, built_site):
    """A table's title (the line over it) is never the last line of a page, its table on the next."""
    import pdfplumber
    from bookpdf.typeset import page_path

    titles = set()
    for src, _ in book_config.pages:
        soup = BeautifulSoup((built_site / page_path(src) / "index.html").read_text(encoding="utf-8"), "html.parser")
        titles |= {" ".join(p.get_text().split()) for p in soup.select("div.numbook-table-output > p:first-child")}
    assert len(titles) >= 20
    orphans = []
    for out in _outputs(pdf_edition, chapter=None):
        with pdfplumber.open(out.path) as pdf:
            for number, page in enumerate(pdf.pages, start=1):
                body = [line["text"].strip() for line in page.extract_text_lines() if line["top"] < page.height * 0.93]
                if body and len(body[-1]) >= 10 and any(body[-1] in title for title in titles):
                    orphans.append(f"{out.path.name} p.{number}: {body[-1]}")
    assert not orphans, orphans


def test_no_page_a_third_empty_but_before_a_chapter(pdf_edition):
    import pdfplumber

    for out in _outputs(pdf_edition, chapter=None):
        holes = []
        with pdfplumber.open(out.path) as pdf:
            count = len(pdf.pages)
            starts = set()
            from pypdf import PdfReader

            reader = PdfReader(out.path)
            for item in reader.outline:
                if not isinstance(item, list):
                    starts.add(reader.get_destination_page_number(item))
            for index, page in enumerate(pdf.pages[:-1]):
                if index + 1 in starts or index < 2:
                    continue  # a chapter's last page, the title page, the contents
                body = [o for o in page.chars + page.rects + page.curves + page.images
                        if 0.07 * page.height < o["top"] and o["bottom"] < 0.93 * page.height]
                top, bottom = 0.07 * page.height, max((o["bottom"] for o in body), default=0)
                empty = 1 - (bottom - top) / (0.86 * page.height)
                if empty > MAX_EMPTY:
                    holes.append(f"p. {index + 1} ({empty:.0%} empty)")
        # A figure taller than what is left of its chapter's second-to-last page, with nothing
        # after it to float past, still leaves one: at most one page in HOLES_PER_PAGES.
        assert len(holes) <= count // HOLES_PER_PAGES, f"{out.path.name}: {holes}"


def test_a_reference_into_another_chapter_prints_its_page(pdf_edition):
    """"Part 4, p. 117": a page that part starts on in the book (one of its pages), as the
    outline has it."""
    from pypdf import PdfReader

    for book in _outputs(pdf_edition, chapter=None):
        reader = PdfReader(book.path)
        starts: dict[str, set[int]] = {}
        for item in reader.outline:
            if not isinstance(item, list) and (part := re.match(r"Part \d+", item.title)):
                starts.setdefault(part.group(), set()).add(reader.get_destination_page_number(item) + 1)
        printed = []
        for text in _page_texts(book.path):
            printed += re.findall(r"(Part \d+), p\.\s?(\d+)", text)
        assert len(printed) >= 5, book.path.name
        wrong = [(part, page) for part, page in printed if int(page) not in starts.get(part, ())]
        assert not wrong, f"{book.path.name}: {wrong[:5]} (parts start on {starts})"


def test_a_chapter_pdf_links_outside_itself_to_the_web_edition(pdf_edition):
    from pypdf import PdfReader

    for out in _outputs(pdf_edition, "A4"):
        if not out.chapter or out.chapter == "home":
            continue
        uris = []
        for page in PdfReader(out.path).pages:
            for annot in page.get("/Annots") or []:
                action = annot.get_object().get("/A") or {}
                if action.get("/URI"):
                    uris.append(str(action["/URI"]))
        assert any("attention-book.github.io" in u for u in uris), out.path.name


def test_each_page_links_its_pdfs(pdf_edition, book_config, built_site):
    from bookpdf.typeset import page_path

    for src, _ in book_config.pages:
        html = (built_site / page_path(src) / "index.html").read_text(encoding="utf-8")
        soup = BeautifulSoup(html, "html.parser")
        links = soup.select(".numbook-cite-pdf a[href]")
        assert len(links) >= 4, src
        assert len(soup.select("a[data-pdf-edition]")) == len(book_config.papers), src
        for link in links:
            target = (built_site / page_path(src) / link["href"]).resolve()
            assert target.is_file(), (src, link["href"])
