"""Typeset a built site as a book: the whole book and each chapter, in every paper size.

The book is laid out once per paper size (WeasyPrint). Each chapter's PDF is a cover page
(what it is, how to cite it) followed by the book's own pages of that chapter, so its page
numbers, and the "p. 41" of a cross-reference into another chapter, are the book's. In a
chapter's PDF a link whose target lies outside the chapter goes to the web edition instead.
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import dataclasses
import posixpath
import time
from concurrent.futures import ProcessPoolExecutor
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import yaml

from .book import PAPER_CSS, Facts, chapter_cover, chapter_section, contents, document, read_facts, title_page
from .content import Chapter, PageRef, PaperRewriter
from .layout import Hole, fill_holes

#: Paper sizes by the name a reader knows them by, and the file suffix that names them.
PAPERS = {"A4": ("A4", "a4"), "Letter": ("letter", "letter")}
#: Where the PDFs go, inside the site.
OUTPUT_DIR = "pdf"
#: How to install the typesetter (said by the build and by this command when it is missing).
INSTALL_HINT = (
    "the PDF edition needs WeasyPrint and Pango: `apt-get install libpango-1.0-0 libpangoft2-1.0-0 "
    "fonts-dejavu-core` (Debian), then `uv run --group pdf python -m bookpdf`"
)


class TypesetterMissing(RuntimeError):
    """WeasyPrint (or the Pango library it needs) is not installed."""


@dataclass(frozen=True)
class BookConfig:
    """What the book holds, from the ``numbook-pdf`` entry of ``mkdocs.yml``'s plugins."""

    pages: tuple[tuple[str, str], ...]  # (source .md, nav title), in reading order
    leave_out: tuple[str, ...] = ()
    front_title: str | None = None  # the home page's heading in the book
    papers: tuple[str, ...] = ("A4", "Letter")
    output_dir: str = OUTPUT_DIR
    language: str = "en"


class _Lenient(yaml.SafeLoader):
    """Reads mkdocs.yml without running its tags (``!ENV``, ``!!python/...``)."""


_Lenient.add_multi_constructor("!", lambda loader, suffix, node: None)
_Lenient.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _flatten(nav: Any, title: str | None = None) -> Iterable[tuple[str, str]]:
    if isinstance(nav, str):
        yield nav, title or nav
    elif isinstance(nav, list):
        for item in nav:
            yield from _flatten(item)
    elif isinstance(nav, dict):
        for key, value in nav.items():
            yield from _flatten(value, key)


def read_config(mkdocs_yml: Path) -> BookConfig:
    data = yaml.load(mkdocs_yml.read_text(encoding="utf-8"), Loader=_Lenient) or {}
    options: dict[str, Any] = {}
    for plugin in data.get("plugins") or []:
        if isinstance(plugin, dict) and "numbook-pdf" in plugin:
            options = plugin["numbook-pdf"] or {}
    leave_out = tuple(options.get("leave_out") or ())
    pages = tuple(
        (src, title) for src, title in _flatten(data.get("nav") or [])
        if src.endswith(".md") and not any(fnmatch(src, pattern) for pattern in leave_out)
    )
    theme = data.get("theme") or {}
    return BookConfig(
        pages=pages,
        leave_out=leave_out,
        front_title=options.get("front_title"),
        papers=tuple(options.get("papers") or ("A4", "Letter")),
        output_dir=str(options.get("dir") or OUTPUT_DIR),
        language=str(theme.get("language") or "en") if isinstance(theme, dict) else "en",
    )


def page_path(src: str) -> str:
    """The site address (relative, with a trailing slash) MkDocs gives a page's source."""
    stem = src[: -len(".md")]
    if stem == "index" or stem.endswith("/index"):
        return stem[: -len("index")]
    return stem + "/"


def _prefix(path: str) -> str:
    return path.strip("/").replace("/", "-") or "home"


@dataclass
class Output:
    """One PDF written: which, where, how many pages, how large."""

    path: Path
    paper: str
    chapter: str | None  # the chapter's prefix, None for the whole book
    pages: int
    first_page: int = 1  # the book's number of its first page (after a chapter's cover)
    bytes: int = 0


@dataclass
class Report:
    outputs: list[Output] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    holes: dict[str, list[tuple[str, Hole]]] = field(default_factory=dict)  # paper -> pages left a third empty

    def merge(self, other: Report) -> None:
        self.outputs += other.outputs
        self.seconds.update(other.seconds)
        self.holes.update(other.holes)


def _weasyprint():
    try:
        import weasyprint  # noqa: PLC0415 (optional: the site builds without it)
        from weasyprint.text.fonts import FontConfiguration  # noqa: PLC0415
    except (ImportError, OSError) as exc:  # OSError: WeasyPrint is there, Pango is not
        raise TypesetterMissing(f"{exc}; {INSTALL_HINT}") from exc
    return weasyprint, FontConfiguration


def read_chapters(site: Path, config: BookConfig) -> tuple[list[Chapter], str]:
    """Every chapter of the book rewritten for paper, and the edition's web address."""
    refs = [PageRef(page_path(src), _prefix(page_path(src))) for src, _ in config.pages]
    by_path = {ref.path: ref for ref in refs}
    home = (site / "index.html").read_text(encoding="utf-8")
    marker = 'name="citation_public_url" content="'
    web_base = home[home.index(marker) + len(marker):].split('"', 1)[0] if marker in home else ""
    chapters = []
    for ref, (src, _) in zip(refs, config.pages):
        title = config.front_title if ref.path == "" else None
        chapters.append(PaperRewriter(site, ref, by_path, web_base).chapter(title))
    return chapters, web_base


def typeset(project: Path, site: Path, papers: Sequence[str] | None = None, log=print,
            config: BookConfig | None = None) -> Report:
    """Write ``<site>/pdf/``: the book and each chapter, in each paper size.

    Each paper size is laid out in a process of its own (two cores: both at once).
    """
    _weasyprint()  # say now, not in a worker, when the typesetter is missing
    config = config or read_config(project / "mkdocs.yml")
    wanted = list(papers or config.papers)
    report = Report()
    start = time.perf_counter()
    chapters, web_base = read_chapters(site, config)
    report.seconds["read"] = time.perf_counter() - start
    if len(wanted) == 1 or (os.cpu_count() or 1) == 1:
        for paper in wanted:
            report.merge(typeset_paper(project, site, paper, config, chapters, web_base, log))
        return report
    with ProcessPoolExecutor(max_workers=min(len(wanted), os.cpu_count() or 1),
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        for done in [pool.submit(typeset_paper, project, site, paper, config, chapters, web_base, None)
                     for paper in wanted]:
            part = done.result()
            for out in part.outputs:
                if out.chapter is None and log:
                    log(f"bookpdf: {out.path.name}: {out.pages} pages, {out.bytes / 1e6:.1f} MB")
            report.merge(part)
    return report


def typeset_paper(project: Path, site: Path, paper: str, config: BookConfig, chapters: Sequence[Chapter],
                  web_base: str, log=print) -> Report:
    """The book and its chapters (rewritten for paper: `read_chapters`) in one paper size."""
    weasyprint, FontConfiguration = _weasyprint()
    facts = read_facts(project / "CITATION.cff", config.language)
    report = Report()
    book_citation = chapters[0].citation if chapters and chapters[0].page.path == "" else facts.title
    out_dir = site / config.output_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    font_config = FontConfiguration()
    sheets = [
        weasyprint.CSS(filename=str(site / "assets/katex/katex.min.css"), font_config=font_config),
        weasyprint.CSS(filename=str(site / "assets/katex/colors.css"), font_config=font_config),
        weasyprint.CSS(filename=str(PAPER_CSS), font_config=font_config),
    ]
    base_url = str(site / "index.html")
    web_of = {c.page.prefix: c.web_url for c in chapters}
    size, suffix = PAPERS[paper]
    paper_sheets = [*sheets, weasyprint.CSS(string=f"@page {{ size: {size}; }}")]

    def lay_out(parts: Sequence[str], title: str = facts.title) -> Any:
        return weasyprint.HTML(string=document(facts, parts, [], title), base_url=base_url).render(
            stylesheets=paper_sheets, font_config=font_config)

    t0 = time.perf_counter()
    bodies, left = {}, []
    for chapter in chapters:
        body, holes = fill_holes(chapter.body, lambda b, c=chapter: lay_out(
            [chapter_section(dataclasses.replace(c, body=b))]).pages)
        bodies[chapter.page.prefix] = body
        left += [(chapter.page.prefix, h) for h in holes]
    report.holes[paper] = left
    report.seconds[f"chapters laid out {paper}"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    laid = [dataclasses.replace(c, body=bodies[c.page.prefix]) for c in chapters]
    doc = lay_out([title_page(facts, book_citation, web_base), contents(laid)] + [chapter_section(c) for c in laid])
    book_file = out_dir / f"book-{suffix}.pdf"
    doc.write_pdf(book_file, pdf_tags=True)
    report.outputs.append(Output(book_file, paper, None, len(doc.pages), 1, book_file.stat().st_size))
    report.seconds[f"book {paper}"] = time.perf_counter() - t0
    if log:
        log(f"bookpdf: {book_file.name}: {len(doc.pages)} pages, {book_file.stat().st_size / 1e6:.1f} MB, "
            f"{report.seconds[f'book {paper}']:.0f} s")
    t0 = time.perf_counter()
    starts = chapter_starts(doc.pages, chapters)
    book_url = f"{web_base}{config.output_dir}/book-{suffix}.pdf"
    for k, chapter in enumerate(chapters):
        first = starts[chapter.page.prefix]
        last = starts[chapters[k + 1].page.prefix] if k + 1 < len(chapters) else len(doc.pages)
        cover = lay_out([chapter_cover(facts, chapter, first + 1, last, book_url)],
                        f"{chapter.title} ({facts.title})")
        own = set().union(*(page.anchors for page in doc.pages[first:last]))
        pages = [_web_links(page, own, web_of) for page in doc.pages[first:last]]
        chapter_file = out_dir / f"{chapter.page.prefix}-{suffix}.pdf"
        cover.copy(cover.pages + pages).write_pdf(chapter_file, pdf_tags=True)
        report.outputs.append(Output(chapter_file, paper, chapter.page.prefix, 1 + last - first,
                                     first + 1, chapter_file.stat().st_size))
    report.seconds[f"chapters {paper}"] = time.perf_counter() - t0
    return report


def chapter_starts(pages: Sequence[Any], chapters: Sequence[Chapter]) -> dict[str, int]:
    """The index of the page each chapter starts on (where its ``prefix--top`` anchor is)."""
    wanted = {f"{c.page.prefix}--top": c.page.prefix for c in chapters}
    starts: dict[str, int] = {}
    for index, page in enumerate(pages):
        for anchor in page.anchors:
            if anchor in wanted and wanted[anchor] not in starts:
                starts[wanted[anchor]] = index
    missing = [c.page.prefix for c in chapters if c.page.prefix not in starts]
    if missing:
        raise RuntimeError(f"chapters not found in the laid-out book: {missing}")
    return starts


def _web_links(page: Any, own: set[str], web_of: Mapping[str, str]) -> Any:
    """A copy of a book page whose links into other chapters go to the web edition instead."""
    links = []
    for link in page.links:
        kind, target, *rest = link
        if kind == "internal" and target not in own:
            prefix, _, anchor = target.partition("--")
            if prefix in web_of:
                url = web_of[prefix] + ("" if anchor in ("", "top") else f"#{anchor}")
                link = ("external", url, *rest)
        links.append(link)
    copied = copy.copy(page)
    copied.links = links
    return copied
