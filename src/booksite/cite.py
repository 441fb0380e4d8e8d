"""Cite the book, a page or a figure, from one metadata file read when the site is built.

The project's ``CITATION.cff`` (the Citation File Format, which GitHub and Zenodo read too)
is the only place where the book's title, authors, version and release date are written.
The ``numbook-cite`` MkDocs plugin reads it once per build and, for every page, puts a
`Citation` in the template context as ``citation``: the theme's templates turn it into the
citation box at the end of the page and the Highwire ``citation_*`` meta tags that reference
managers read. Under the caption of each figure numbook made it adds a "Cite this figure"
text.

Permanent addresses: an edition (a version) is published under ``<site_url><version>/``
(``mike deploy <version>``), and stays there when later editions appear, so every citation
names the edition's own address. A build that ``mike`` did not start cites the edition named
in ``CITATION.cff``; one that it did start must deploy that same version (otherwise the build
stops: the citations would name the wrong edition). Material's version menu reads
``versions.json``, which only a ``mike`` deployment has, so the plugin leaves the menu out of
other builds (a local preview, the test build) instead of letting them request a missing file.

The date a reader accessed a page cannot be known when the site is built: the texts hold the
build's date (``SOURCE_DATE_EPOCH`` where it is set, as MkDocs' own dates, else today), which the
site's script replaces with the reader's date; a copy saved or printed without the script keeps
a real date.

Each chapter's ``<meta name="description">`` is its opening paragraph (or its front matter's
``description``), so a reference manager saves each chapter's own abstract; ``CITATION.cff`` is
published at the site's root.

Nothing here knows the book's subject.
"""

from __future__ import annotations

import dataclasses
import datetime
import html
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from html.parser import HTMLParser
from urllib.parse import quote, urlencode, urljoin

import yaml
from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from numbook.stored import memo_by_digest

log = logging.getLogger("mkdocs.plugins.numbook.cite")

#: How long a chapter's description (its opening, ``<meta name="description">``) may be.
DESCRIPTION_CHARS = 300
#: The environment variable `mike deploy` sets to the version it is building.
MIKE_VERSION_VARIABLE = "MIKE_DOCS_VERSION"

_FIGURE = re.compile(
    r'(<figure class="numbook-figure[^"]*" id="(?P<id>[^"]+)"[^>]*>.*?)(?P<end></figcaption>)', re.S
)
_BIBTEX_SPECIAL = str.maketrans({c: "\\" + c for c in "&%$#_{}"})


class CitationError(ValueError):
    """The metadata file is missing, unreadable, or lacks what a citation needs."""


@dataclass(frozen=True)
class Author:
    plain: str  # "Ada Lovelace", or an organisation's name
    inverted: str  # "Lovelace, Ada" (reference managers' order), or the name
    bibtex: str  # "Lovelace, Ada", or "{Name}" so BibTeX does not split it
    highwire: str  # citation_author: "Lovelace, Ada", or "Name," (see `_author`)


@dataclass(frozen=True)
class Edition:
    """What every citation of this build shares."""

    title: str
    authors: tuple[Author, ...]
    version: str
    released: datetime.date
    url: str  # the permanent address of this edition, ending in "/"
    key: str  # stem of the BibTeX keys
    publisher: str  # who publishes it: preferred-citation's publisher, or its authors
    accessed: str  # the date a citation says the page was accessed, until the site's script sets the reader's
    language: str = "en"

    @property
    def year(self) -> str:
        return str(self.released.year)

    @property
    def author_line(self) -> str:
        return _author_line(self.authors)


@dataclass(frozen=True)
class Citation:
    """How to cite one page: the texts of its citation box and its meta tags."""

    title: str  # what is cited: a part of the book, or the book itself
    url: str  # its permanent address
    plain: str  # one line of text, with the edition's ``accessed`` date
    bibtex: str
    meta: tuple[tuple[str, str], ...]  # Highwire (name, content) pairs
    coins: str  # the same as a COinS OpenURL (ContextObject), for the reference managers that read it
    example: str | None = None  # how to cite one section of the page, if it has numbered ones


def load_cff(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The metadata file as a mapping; a missing or malformed file is a CitationError."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CitationError(f"cannot read {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CitationError(f"{path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise CitationError(f"{path} must be a YAML mapping (cff-version, title, authors, ...)")
    return data


def _author(entry: Any, where: str) -> Author:
    if not isinstance(entry, dict):
        raise CitationError(f"{where}: each author must be a mapping")
    if entry.get("family-names"):
        family = " ".join(str(entry[k]) for k in ("name-particle", "family-names") if entry.get(k))
        given = str(entry.get("given-names", "")).strip()
        suffix = f", {entry['name-suffix']}" if entry.get("name-suffix") else ""
        plain = f"{given} {family}".strip() + suffix
        inverted = f"{family}{suffix}, {given}" if given else family + suffix
        bibtex = f"{family}{suffix}, {given}" if given else family + suffix
        return Author(plain, inverted, bibtex, inverted if given else inverted + ",")
    if entry.get("name"):
        # An organisation is one family name with no given name. Reference managers read a
        # citation_author without a comma as "First ... Last" (Zotero's Embedded Metadata
        # translator: ZU.cleanAuthor splits at the last space, "Project, A. B."); with a comma,
        # as "Last, First". "Name," is that form with an empty given name: the whole name
        # stays the family name, and styles print it as it is written.
        name = str(entry["name"])
        return Author(name, name, "{" + name + "}", name + ",")
    raise CitationError(f"{where}: an author needs family-names (a person) or name (an organisation)")


def build_date() -> datetime.date:
    """The date this build stands for: ``SOURCE_DATE_EPOCH`` (UTC) where it is set, else today.

    MkDocs dates its sitemap the same way, so two builds of one commit are identical."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    if epoch.isdigit():
        return datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc).date()
    return datetime.date.today()


def edition_from_cff(
    data: Mapping[str, Any],
    site_url: str,
    *,
    deployed: str | None = None,
    where: str = "CITATION.cff",
    accessed: datetime.date | None = None,
) -> Edition:
    """The edition a build publishes, from the metadata and the site's address.

    ``deployed`` is the version `mike` is deploying, if it is; it must be the metadata's.
    ``site_url`` may already end with that version (mike's plugin appends it). ``accessed``
    is the date the citations give until a reader's own replaces it (default: `build_date`).
    """
    missing = [k for k in ("title", "authors", "version", "date-released") if not data.get(k)]
    if missing:
        raise CitationError(f"{where} lacks {', '.join(missing)}: a citation needs them")
    version = str(data["version"])
    if deployed is not None and deployed != version:
        raise CitationError(
            f"mike is deploying version {deployed!r} but {where} names version {version!r}: "
            f"set version (and date-released) in {where} first, so citations name the edition they are in"
        )
    released = data["date-released"]
    if isinstance(released, str):
        try:
            released = datetime.date.fromisoformat(released)
        except ValueError:
            raise CitationError(f"{where}: date-released must be a date, YYYY-MM-DD, not {released!r}") from None
    if not isinstance(released, datetime.date):
        raise CitationError(f"{where}: date-released must be a date, YYYY-MM-DD")
    authors = data["authors"]
    if not isinstance(authors, list):
        raise CitationError(f"{where}: authors must be a list")
    if not site_url:
        raise CitationError("site_url is not set in mkdocs.yml: citations need the book's permanent address")
    root = site_url.rstrip("/")
    url = root + "/" if root.endswith("/" + version) else urljoin(root + "/", version + "/")
    # BibTeX keys start with the title's first words: "how-transformers-attend-0.1.0-part2".
    stem = "-".join(re.findall(r"[A-Za-z0-9]+", str(data["title"]).lower())[:3])
    people = tuple(_author(a, f"{where}, authors[{k}]") for k, a in enumerate(authors))
    return Edition(
        title=str(data["title"]),
        authors=people,
        version=version,
        released=released,
        url=url,
        key=stem or "book",
        publisher=_publisher(data) or _author_line(people),
        accessed=(accessed or build_date()).isoformat(),
    )


def _publisher(data: Mapping[str, Any]) -> str | None:
    """The publisher CITATION.cff names (``preferred-citation: publisher: name:``), if any.

    A book on the web that names none is published by its authors.
    """
    preferred = data.get("preferred-citation")
    publisher = preferred.get("publisher") if isinstance(preferred, dict) else None
    name = publisher.get("name") if isinstance(publisher, dict) else None
    return str(name) if name else None


def _author_line(authors: Sequence[Author]) -> str:
    names = [a.plain for a in authors]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _bibtex(kind: str, key: str, fields: Sequence[tuple[str, str]]) -> str:
    width = max(len(name) for name, _ in fields)
    lines = [f"  {name.ljust(width)} = {{{value}}}," for name, value in fields]
    return f"@{kind}{{{key},\n" + "\n".join(lines) + "\n}"


def _bib(text: str) -> str:
    return text.translate(_BIBTEX_SPECIAL)


def page_citation(
    edition: Edition,
    page_url: str,
    title: str,
    *,
    whole_book: bool = False,
    section: tuple[str, str] | None = None,
    sections: tuple[str, str] | None = None,
) -> Citation:
    """How to cite one page (``page_url`` relative to the site, "" for the home page).

    ``title`` is what the page is cited as ("Part 2. One attention head"); ``whole_book``
    cites the book itself instead (the home page). ``section`` is (label, anchor) of one of
    the page's numbered sections, to show how a section is cited; ``sections`` the numbers of
    its first and last sections ("3.15", "3.21"), which the citation names (a part may span
    several pages).
    """
    url = urljoin(edition.url, page_url)
    authors = edition.author_line
    slug = re.sub(r"[^A-Za-z0-9]+", "-", page_url).strip("-").lower()
    key = f"{edition.key}-{edition.version}" + (f"-{slug}" if slug and not whole_book else "")
    author_field = " and ".join(a.bibtex for a in edition.authors)
    # Highwire tags (Google Scholar, Zotero, Mendeley). A chapter is a section of a book
    # (citation_book_title); the home page is the book itself, which only Open Graph's type
    # says to Zotero (citation_title alone reads as a journal article). The edition is PRISM's
    # (Zotero's RDF import reads prism:edition; citation_version is Google Scholar's).
    meta: list[tuple[str, str]] = [("citation_title", edition.title if whole_book else title)]
    meta += [("citation_author", a.highwire) for a in edition.authors]
    meta.append(("citation_publication_date", edition.released.strftime("%Y/%m/%d")))
    if not whole_book:
        meta.append(("citation_book_title", edition.title))
    meta += [
        ("citation_publisher", edition.publisher),
        ("citation_version", edition.version),
        ("prism.edition", edition.version),
        ("citation_public_url", url),
        ("citation_language", edition.language),
    ]
    if whole_book:
        meta.append(("og:type", "book"))
    # The standard BibTeX styles need a publisher for a book and a chapter in one
    # (@incollection: author, title, booktitle, publisher, year). The edition and, for a chapter,
    # its sections are fields every standard style prints (`edition`; `chapter` with its `type`,
    # "sections 3.15--3.21"); `version` and `urldate` are biblatex's, which BibTeX skips.
    publisher = [("publisher", _bib(edition.publisher))]
    common = [("edition", _bib(edition.version)), ("year", edition.year), ("version", edition.version),
              ("url", url), ("urldate", edition.accessed)]
    span = None
    if sections is not None and not whole_book:
        first, last = sections
        span = ("section", first, first) if first == last else ("sections", first, last)
    accessed = edition.accessed
    if whole_book:
        plain = f"{authors} ({edition.year}). {edition.title} (version {edition.version}). {url} (accessed {accessed})."
        bibtex = _bibtex("book", key, [("author", author_field), ("title", _bib(edition.title)), *publisher, *common])
        cited = edition.title
    else:
        where = f", {span[0]} {span[1]}" + (f"\u2013{span[2]}" if span[2] != span[1] else "") if span else ""
        plain = (
            f"{authors} ({edition.year}). {title}{where}"
            + f". In {edition.title} (version {edition.version}). {url} (accessed {accessed})."
        )
        chapter = []
        if span:
            chapter = [("chapter", span[1] + (f"--{span[2]}" if span[2] != span[1] else "")), ("type", span[0])]
        bibtex = _bibtex(
            "incollection",
            key,
            # the title braced whole: styles lower-case a chapter's title ("Part 3. limits")
            [("author", author_field), ("title", "{" + _bib(title) + "}"), ("booktitle", _bib(edition.title)),
             *chapter, *publisher, *common],
        )
        cited = title
    coins = _coins(edition, url, None if whole_book else title)
    example = None
    if section is not None:
        label, anchor = section
        example = f"{label}, in {cited}, {url}#{anchor}"
    return Citation(title=cited, url=url, plain=plain, bibtex=bibtex, meta=tuple(meta), coins=coins, example=example)


def _coins(edition: Edition, url: str, chapter: str | None) -> str:
    """A COinS ContextObject (OpenURL 1.0, key/encoded-value) for the book or one chapter of it.

    Reference managers that read COinS (Zotero's COinS translator, among others) take
    ``rft.aucorp`` as one organisation, never split into a first and a last name: the one
    form in which such a reader keeps the book's corporate author whole.
    """
    fields = [
        ("ctx_ver", "Z39.88-2004"),
        ("rft_val_fmt", "info:ofi/fmt:kev:mtx:book"),
        ("rft.genre", "book" if chapter is None else "bookitem"),
        ("rft.btitle", edition.title),
    ]
    if chapter is not None:
        fields.append(("rft.atitle", chapter))
    for author in edition.authors:
        fields.append(("rft.aucorp", author.plain) if author.bibtex.startswith("{") else ("rft.au", author.inverted))
    fields += [
        ("rft.date", edition.released.isoformat()),
        ("rft.pub", edition.publisher),
        ("rft.edition", edition.version),
        ("rft_id", url),
    ]
    return urlencode(fields, quote_via=quote)


@memo_by_digest(maxsize=64)  # under `serve`, every page but the edited one is the same at each save
def opening_text(content_html: str, limit: int = DESCRIPTION_CHARS) -> str:
    """The plain text of a page's first paragraph (maths as its TeX), cut at a word within ``limit``.

    Only a paragraph of the page's own flow counts, not one inside an aside, a figure, a table
    or a citation box."""
    parser = _Opening()
    for start in range(0, len(content_html), 4096):  # stop at the paragraph, not the page's end
        parser.feed(content_html[start:start + 4096])
        if parser._done:
            break
    text = re.sub(r"\s+", " ", "".join(parser.text)).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "\u2026"


class _Opening(HTMLParser):
    """Collects the text of the first top-level ``<p>``; KaTeX's HTML is skipped, its TeX kept."""

    _SKIP_INSIDE = {"details", "figure", "table", "aside", "nav", "pre", "section", "script", "style", "template"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self._open: list[str] = []  # tags open around the current position
        self._in_p = False
        self._done = False
        self._hidden = 0  # depth inside what is not read (KaTeX's rendered HTML, its MathML)
        self._tex = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._done:
            return
        if tag in ("br", "img", "hr", "input", "meta", "link", "wbr"):
            return
        classes = (dict(attrs).get("class") or "").split()
        if self._hidden or "katex-html" in classes or tag == "math":
            self._hidden += 1
        if tag == "annotation" and dict(attrs).get("encoding") == "application/x-tex":
            self._tex = True
        if tag == "p" and not self._in_p and not any(t in self._SKIP_INSIDE for t in self._open):
            self._in_p = True
        self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._done or tag not in self._open:
            return
        while self._open:
            closed = self._open.pop()
            if self._hidden:
                self._hidden -= 1
            if closed == "annotation":
                self._tex = False
            if closed == tag:
                break
        if tag == "p" and self._in_p and not any(t == "p" for t in self._open):
            self._done = bool("".join(self.text).strip())
            self._in_p = False

    def handle_data(self, data: str) -> None:
        if self._done or not self._in_p:
            return
        if self._tex:
            self.text.append(data.strip())
        elif not self._hidden:
            self.text.append(data)


def figure_citation(edition: Edition, page: Citation, label: str, fig_id: str) -> str:
    """One line that cites a figure: its number, the page it is on, and its own address."""
    return (
        f"{label}, in: {edition.author_line} ({edition.year}). {page.title}. "
        + ("" if page.title == edition.title else f"In {edition.title} ")
        + f"(version {edition.version}). {page.url}#{fig_id} (accessed {edition.accessed})."
    )


def add_figure_citations(page_html: str, cite_figure: Mapping[str, str], accessed: str) -> str:
    """Put a collapsed "Cite this figure" text at the end of each listed figure's caption;
    ``accessed`` is the date in the texts that the site's script replaces with the reader's."""

    def add(m: re.Match[str]) -> str:
        text = cite_figure.get(m.group("id"))
        if text is None:
            return m.group(0)
        return (
            m.group(1)
            + '<details class="numbook-cite-figure"><summary>Cite this figure</summary>'
            + f'<pre><code class="numbook-cite-text" data-accessed="{accessed}">{html.escape(text)}</code></pre>'
            + "</details>"
            + m.group("end")
        )

    return _FIGURE.sub(add, page_html)


class CiteConfig(base.Config):
    #: The Citation File Format file, relative to mkdocs.yml.
    file = c.Type(str, default="CITATION.cff")


class CitePlugin(BasePlugin[CiteConfig]):
    """Give every page its citation (box, meta tags) and every figure its own citation."""

    def __init__(self) -> None:
        self.edition: Edition | None = None
        self._citations: dict[str, Citation] = {}

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        root = os.path.dirname(os.path.abspath(config.config_file_path or "mkdocs.yml"))
        path = os.path.join(root, self.config.file)
        deployed = os.environ.get(MIKE_VERSION_VARIABLE) or None
        try:
            self.edition = edition_from_cff(
                load_cff(path), config.site_url or "", deployed=deployed, where=self.config.file
            )
        except CitationError as exc:
            raise PluginError(f"numbook-cite: {exc}") from None
        self.edition = _with_language(self.edition, config)
        self._citations = {}
        version_menu = config.extra.get("version")
        if deployed is None and isinstance(version_menu, dict) and version_menu.get("provider") == "mike":
            # No versions.json exists outside a mike deployment: no menu to fill.
            config.extra.pop("version")
            log.debug("numbook-cite: version menu left out (this build is not a mike deployment)")
        return config

    def citation(self, page: Page, config: MkDocsConfig) -> Citation:
        """The page's citation (computed once per page and build)."""
        assert self.edition is not None
        key = page.file.src_uri
        if key not in self._citations:
            # The page's own title (front matter), not the shorter one the navigation may give it.
            title = str(page.meta.get("title") or page.title or page.file.src_uri)
            number = page.meta.get("number")
            # A part (a page whose H1 numbook writes from `number` and `title`) is cited as
            # "Part 4. Title"; a page numbered only for its sections (L.1, L.2) keeps its title.
            is_part = number is not None and "title" in page.meta
            if is_part and not title.startswith(f"{_page_label(config)} {number}"):
                title = f"{_page_label(config)} {number}. {title}"
            numbered = []  # (number, anchor) of the page's sections, in order
            if number is not None:
                numbered = [
                    (child.title.split(" ", 1)[0], child.id)
                    for item in page.toc
                    for child in [item, *item.children]
                    if child.level == 2 and child.id
                ]
            self._citations[key] = page_citation(
                self.edition,
                page.url,
                title,
                whole_book=page.is_homepage,
                section=(f"Section {numbered[0][0]}", numbered[0][1]) if numbered else None,
                sections=(numbered[0][0], numbered[-1][0]) if numbered else None,
            )
        return self._citations[key]

    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        """Publish the metadata file itself at the site's root, where citation tools look."""
        root = os.path.dirname(os.path.abspath(config.config_file_path or "mkdocs.yml"))
        name = os.path.basename(self.config.file)
        if files.get_file_from_path(name) is None:
            files.append(File.generated(config, name, abs_src_path=os.path.join(root, self.config.file)))
        return files

    def on_page_content(self, html: str, *, page: Page, config: MkDocsConfig, files: Files) -> str | None:
        if not page.is_homepage and not page.meta.get("description"):
            # each chapter's own abstract for reference managers (the home page keeps the book's)
            opening = opening_text(html)
            if opening:
                page.meta["description"] = opening
        figures = _figure_labels(config, page.file.src_uri)
        if not figures or self.edition is None:
            return html
        cited = self.citation(page, config)
        texts = {fid: figure_citation(self.edition, cited, label, fid) for fid, label in figures.items()}
        return add_figure_citations(html, texts, self.edition.accessed)

    def on_page_context(self, context: dict[str, Any], *, page: Page, config: MkDocsConfig, nav: Any) -> dict[str, Any]:
        if self.edition is not None:
            context["citation"] = self.citation(page, config)
            context["citation_accessed"] = self.edition.accessed
        return context


def _with_language(edition: Edition, config: MkDocsConfig) -> Edition:
    """The edition in the site's language (the theme's ``language``)."""
    return dataclasses.replace(edition, language=str(config.theme.get("language") or edition.language))


def _numbook(config: MkDocsConfig) -> Any:
    return config.plugins.get("numbook")


def _page_label(config: MkDocsConfig) -> str:
    """The word numbook puts before a page's number ("Part")."""
    numbook = _numbook(config)
    return numbook.config.page_label if numbook is not None else "Part"


def _figure_labels(config: MkDocsConfig, src_uri: str) -> dict[str, str]:
    """{figure id: "Figure 4.3"} for the figures numbook made on this page."""
    numbook = _numbook(config)
    book = getattr(numbook, "book", None)
    if book is None:
        return {}
    return {f.fig_id: f.label for f in book.figures.values() if f.src_uri == src_uri}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m booksite.cite --version``: the version CITATION.cff names (release scripts
    compare it with the tag they deploy)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m booksite.cite", description=main.__doc__)
    parser.add_argument("--file", default="CITATION.cff", help="the Citation File Format file")
    parser.add_argument("--version", action="store_true", required=True, help="print the version it names")
    args = parser.parse_args(argv)
    try:
        data = load_cff(args.file)
    except CitationError as exc:
        parser.error(str(exc))
    if not data.get("version"):
        parser.error(f"{args.file} names no version")
    print(data["version"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
