"""One built page's article, rewritten for paper.

On screen a chapter keeps its depth behind folds; on paper nothing can be opened, so:
asides (and every other reader's fold: questions, tables of weights) print open, with their
summary as a heading; a check becomes a small mark that says how many assertions verified
its claim (the code stays on the web); the code and data folds of figures, tables and
widgets stay out; a widget prints its default state (the page's own fallback) and a line
saying what the web lets the reader move, with its address; every tab of a tabbed block
prints, under its label. Figures keep their light SVG, at its natural size.

Ids get the chapter's prefix, so that every chapter's anchors can live in one book, and
links are rewritten: to the same book (``#prefix--id``), or to the web edition (absolute).
Everything here reads the markup numbook and the theme publish, never a chapter's content.
"""

from __future__ import annotations

import ast
import copy
import json
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from bs4 import BeautifulSoup, Tag

#: Folds whose content is code or a figure's numbers: on the web only.
WEB_ONLY_FOLDS = ("numbook-code", "numbook-data", "numbook-cite-figure")
#: A code block of at most this many lines, and a table of at most this many rows (its header
#: included), is never split across pages; longer ones break between lines or rows.
SHORT_CODE_LINES = 12
SHORT_TABLE_ROWS = 16
#: A table wider than this many characters (its columns' longest texts, with room between) is
#: set as several tables one under the other (the page's measure at the tables' size).
TABLE_CHARS = 88
#: What numbook writes into an empty link: "Figure 4.3", "Section 4.7", "Part 4", "Equation 2.3".
NUMBERED_REFERENCE = re.compile(r"^[A-Z][a-z]+ [A-Z0-9]+(\.\d+)*$")
#: Figures are drawn for a screen column (3.55 in wide, 10 pt text); on paper they are set at
#: this share of that size (their text near the body's), at most this high and wide (points).
FIGURE_SCALE = 0.85
FIGURE_MAX_HEIGHT_PT = 400.0
FIGURE_MAX_WIDTH_PT = 450.0
#: What the web edition shows that paper leaves out, element by element.
WEB_ONLY = (
    "a.headerlink", ".numbook-aside-link", ".numbook-cite", ".md-source-file",
    ".md-content__button", ".numbook-table__narrow", ".numbook-sr-only", ".numbook-export",
    ".numbook-problems", "script", "noscript", "style", "link", "template",
    # KaTeX's MathML copy of each formula, for screen readers of the web page: on paper it would
    # be laid out unseen, and copied with the formula's visible text
    ".katex-mathml",
)


@dataclass(frozen=True)
class PageRef:
    """A page of the book: where its HTML is in the site, and its address on the web."""

    path: str  # "part2-one-head/" (the site's address of the page, relative, "" for the home page)
    prefix: str  # the chapter's id prefix, unique in the book: "part2-one-head"

    @property
    def html_file(self) -> str:
        return posixpath.join(self.path, "index.html")


@dataclass
class Section:
    """A numbered (or not) ``h2`` of a chapter: the contents and the outline list it."""

    id: str
    title: str


@dataclass
class Chapter:
    """A chapter ready for paper: its title, sections and body (HTML), and what it counted."""

    page: PageRef
    title: str
    web_url: str  # the chapter's permanent address in this edition
    body: str
    sections: list[Section] = field(default_factory=list)
    citation: str = ""  # the page's own citation text ("Cite this page", as text)
    checks: int = 0
    assertions: int = 0
    widgets: list[str] = field(default_factory=list)  # ids of the widgets it printed


def count_assertions(code: str) -> int:
    """How many ``assert`` statements a check's code holds (the code as the page shows it)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return len(re.findall(r"(?m)^\s*assert\b", code))
    return sum(isinstance(node, ast.Assert) for node in ast.walk(tree))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _text(tag: Tag) -> str:
    return re.sub(r"\s+", " ", tag.get_text(" " if tag.name == "summary" else "")).strip()


class PaperRewriter:
    """Rewrites one page of a built site for paper (see the module's docstring)."""

    def __init__(self, site: Path, page: PageRef, book_pages: Mapping[str, PageRef], web_base: str):
        self.site = site
        self.page = page
        self.book_pages = book_pages  # site path -> page, for every page the book holds
        self.web_base = web_base  # the edition's permanent address, ending in "/"

    # -- the page ---------------------------------------------------------------------------
    def chapter(self, title: str | None = None) -> Chapter:
        soup = BeautifulSoup((self.site / self.page.html_file).read_text(encoding="utf-8"), "html.parser")
        meta = soup.find("meta", attrs={"name": "citation_public_url"})
        web_url = meta["content"] if meta else urljoin(self.web_base, self.page.path)
        citation = soup.select_one(".numbook-cite code.numbook-cite-text")
        article = soup.select_one("article.md-content__inner") or soup.body
        chapter = Chapter(self.page, "", web_url, "", citation=_text(citation) if citation else "")
        self._unfold(article, soup, chapter)
        for tag in article.select(", ".join(WEB_ONLY)):
            tag.decompose()
        self._tabs(article, soup)
        self._figures(article)
        self._widgets(article, soup, chapter, web_url)
        self._tables(article)
        self._links(article, web_url)
        self._ids(article)
        h1 = article.find("h1")
        if h1 is not None:
            if title:
                h1.string = title
            h1["class"] = ["paper-chapter-title"]
            chapter.title = _text(h1)
        else:
            chapter.title = title or self.page.path
        for h2 in article.find_all("h2"):
            if h2.get("id"):
                chapter.sections.append(Section(h2["id"], _text(h2)))
        chapter.body = article.decode_contents()
        return chapter

    # -- folds ------------------------------------------------------------------------------
    def _unfold(self, article: Tag, soup: BeautifulSoup, chapter: Chapter) -> None:
        """Put every held-back fold's content in place, then give each fold its paper form."""
        for details in article.find_all("details"):
            classes = set(details.get("class", []))
            if classes & set(WEB_ONLY_FOLDS):
                details.decompose()
        while (held := article.find("script", attrs={"data-numbook-fold": True})) is not None:
            inner = BeautifulSoup(held.string or "", "html.parser")
            held.replace_with(inner)
        for details in article.find_all("details"):
            if details.decomposed:
                continue
            classes = set(details.get("class", []))
            if classes & set(WEB_ONLY_FOLDS):
                details.decompose()
            elif "numbook-check" in classes:
                self._check(details, soup, chapter)
        for strip in article.select(".numbook-checks"):
            strip.name = "p"
            strip["class"] = ["paper-checks"]
        for legend in article.select(".numbook-check-legend"):
            legend.name = "span"
            legend["class"] = ["paper-check-legend"]
            legend.clear()
            legend.append(
                "✓ marks a statement about these numbers that the build verified, and says by how "
                "many assertions; the web edition shows them. "
            )
        # every other fold prints open, its summary as a heading (innermost first)
        for details in reversed(article.find_all("details")):
            summary = details.find("summary", recursive=False)
            kind = [c for c in details.get("class", []) if c] or ["fold"]
            box = soup.new_tag("section", attrs={"class": f"paper-fold paper-{kind[0]}"})
            if details.get("id"):
                box["id"] = details["id"]
            if summary is not None:
                heading = soup.new_tag("p", attrs={"class": "paper-fold__title"})
                for child in list(summary.contents):
                    heading.append(child.extract())
                summary.decompose()
                box.append(heading)
            for child in list(details.contents):
                box.append(child.extract())
            details.replace_with(box)

    def _check(self, details: Tag, soup: BeautifulSoup, chapter: Chapter) -> None:
        code = details.find("code")
        count = count_assertions(code.get_text()) if code is not None else 0
        claim = details.select_one(".numbook-check__claim")
        mark = soup.new_tag("span", attrs={"class": "paper-check"})
        mark.append(f"✓ {_plural(count, 'assertion')}")
        if claim is not None:  # the claim stays the mark's name for whoever reads the tags
            mark["title"] = _text(claim)
        details.replace_with(mark)
        chapter.checks += 1
        chapter.assertions += count

    # -- tabs, figures, tables, widgets ----------------------------------------------------
    def _tabs(self, article: Tag, soup: BeautifulSoup) -> None:
        """Every tab of a tabbed block, one after another, each under its label."""
        for tabs in article.select("div.tabbed-set"):
            labels = [_text(label) for label in tabs.select(":scope > .tabbed-labels > label")]
            blocks = tabs.select(":scope > .tabbed-content > .tabbed-block")
            out = soup.new_tag("div", attrs={"class": "paper-tabs"})
            for label, block in zip(labels, blocks):
                tab = soup.new_tag("div", attrs={"class": "paper-tab"})
                title = soup.new_tag("p", attrs={"class": "paper-tab__label"})
                title.string = label
                tab.append(title)
                for child in list(block.contents):
                    tab.append(child.extract())
                out.append(tab)
            tabs.replace_with(out)

    def _figures(self, article: Tag) -> None:
        """The light SVG of each figure, at its natural size (the web's narrow layout stays)."""
        for img in article.find_all("img"):
            src = img.get("src", "")
            if src.endswith("#only-dark"):
                img.decompose()
                continue
            src = src.split("#", 1)[0]
            if not urlsplit(src).scheme:  # relative to the site's root: one document holds every chapter
                src = posixpath.normpath(posixpath.join(self.page.path, unquote(src)))
            img["src"] = src
            for attr in ("width", "height", "style", "loading", "decoding"):
                img.attrs.pop(attr, None)
            size = svg_size(self.site / src) if src.endswith(".svg") else None
            if size is not None:
                width, height = size
                scale = min(FIGURE_SCALE, FIGURE_MAX_HEIGHT_PT / height, FIGURE_MAX_WIDTH_PT / width)
                img["style"] = f"width: {width * scale:.1f}pt; height: {height * scale:.1f}pt"
        for n, block in enumerate(article.select("figure, div.numbook-widget, div.numbook-table-output"), start=1):
            block["data-paper-block"] = f"{self.page.prefix}-{n}"
        for picture in article.find_all("picture"):
            for source in picture.find_all("source"):
                source.decompose()
            picture.unwrap()
        for scroll in article.select(".numbook-figure__scroll"):
            scroll.unwrap()

    def _tables(self, article: Tag) -> None:
        """Short tables and code blocks are kept whole on one page (a class paper.css reads)."""
        for wrap in article.select(".md-typeset__scrollwrap, .md-typeset__table"):
            wrap.unwrap()
        for table in article.find_all("table"):
            split_wide_table(table)
        for table in article.find_all("table"):
            if len(table.find_all("tr")) <= SHORT_TABLE_ROWS:
                table["class"] = table.get("class", []) + ["paper-short"]
        for pre in article.find_all("pre"):
            if pre.get_text().rstrip("\n").count("\n") + 1 <= SHORT_CODE_LINES:
                pre["class"] = pre.get("class", []) + ["paper-short"]

    def _widgets(self, article: Tag, soup: BeautifulSoup, chapter: Chapter, web_url: str) -> None:
        for widget in article.select("div.numbook-widget"):
            data = self._widget_data(widget.get("data-src", ""))
            anchor = widget.get("id", "")
            address = f"{web_url}#{anchor}" if anchor else web_url
            note = soup.new_tag("p", attrs={"class": "paper-widget-note"})
            note.append(widget_note(data) + " Interactive on the web: ")
            link = soup.new_tag("a", attrs={"href": address, "class": "paper-web-link"})
            link.string = address
            note.append(link)
            widget.append(note)
            widget["class"] = ["paper-widget"]
            chapter.widgets.append(anchor)

    def _widget_data(self, src: str) -> dict:
        if not src:
            return {}
        path = self.site / posixpath.normpath(posixpath.join(self.page.path, unquote(src)))
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    # -- links and ids ----------------------------------------------------------------------
    def _links(self, article: Tag, web_url: str) -> None:
        for link in article.find_all("a", href=True):
            href = link["href"]
            parts = urlsplit(href)
            if parts.scheme or href.startswith("//") or href.startswith("mailto:"):
                continue
            if href.startswith("#"):
                link["href"] = f"#{self.page.prefix}--{unquote(href[1:])}"
                link["class"] = link.get("class", []) + ["paper-xref"]
                continue
            target = posixpath.normpath(posixpath.join(self.page.path or ".", unquote(parts.path)))
            target = "" if target == "." else target
            page_key = target.rstrip("/") + "/" if target and not posixpath.splitext(target)[1] else target
            if page_key.endswith("index.html"):
                page_key = page_key[: -len("index.html")]
            book_page = self.book_pages.get(page_key)
            if book_page is not None:
                fragment = unquote(parts.fragment) if parts.fragment else ""
                link["href"] = f"#{book_page.prefix}--{fragment or 'top'}"
                link["class"] = link.get("class", []) + ["paper-xref"]
                if book_page.prefix != self.page.prefix:
                    link["data-paper-chapter"] = book_page.prefix
                    if NUMBERED_REFERENCE.match(_text(link)):  # "Part 4, p. 57"; other text: "(p. 57)"
                        link["class"] = link.get("class", []) + ["paper-numbered"]
                    link["data-paper-web"] = urljoin(self.web_base, page_key) + (f"#{fragment}" if fragment else "")
            else:
                address = urljoin(web_url, href)
                link["href"] = address
                if link.has_attr("download") or posixpath.splitext(parts.path)[1] in (".csv", ".ipynb", ".whl", ".json", ".cff"):
                    link.attrs.pop("download", None)
                    link["class"] = link.get("class", []) + ["paper-web-link", "paper-download"]
                    link["data-paper-url"] = address
                else:
                    link["class"] = link.get("class", []) + ["paper-web-link"]

    def _ids(self, article: Tag) -> None:
        for tag in article.find_all(id=True):
            tag["id"] = f"{self.page.prefix}--{tag['id']}"
        for label in article.find_all("label", attrs={"for": True}):
            label["for"] = f"{self.page.prefix}--{label['for']}"


def split_wide_table(table: Tag, budget: int = TABLE_CHARS) -> None:
    """A table too wide for the page (a screen scrolls it sideways) as several tables one under
    the other, each with the first column (the rows' labels) and as many of the next columns
    as fit in ``budget`` characters. A table with merged cells is left as it is."""
    rows = table.find_all("tr")
    if not rows or table.find(attrs={"colspan": True}) or table.find(attrs={"rowspan": True}):
        return
    cells = [row.find_all(["th", "td"], recursive=False) for row in rows]
    columns = len(cells[0])
    if columns < 3 or any(len(row) != columns for row in cells):
        return
    widths = [max(len(row[k].get_text(strip=True)) for row in cells) + 2 for k in range(columns)]
    if sum(widths) <= budget:
        return
    chunks, chunk, used = [], [], widths[0]
    for k in range(1, columns):
        if chunk and used + widths[k] > budget:
            chunks.append(chunk)
            chunk, used = [], widths[0]
        chunk.append(k)
        used += widths[k]
    chunks.append(chunk)
    pieces = []
    for chunk in chunks:
        piece = copy.copy(table)
        for row in piece.find_all("tr"):
            row_cells = row.find_all(["th", "td"], recursive=False)
            for k, cell in enumerate(row_cells):
                if k and k not in chunk:
                    cell.decompose()
        piece["class"] = piece.get("class", []) + ["paper-table-part"]
        pieces.append(piece)
    for piece in reversed(pieces):
        table.insert_after(piece)
    table.decompose()


def svg_size(path: Path) -> tuple[float, float] | None:
    """An SVG file's natural width and height in points (matplotlib writes them so)."""
    try:
        with open(path, encoding="utf-8") as handle:
            head = handle.read(2000)
    except OSError:
        return None
    root = re.search(r"<svg\b[^>]*>", head)
    if root is None:
        return None
    sizes = []
    for name in ("width", "height"):
        found = re.search(rf'\b{name}="([\d.]+)(pt|px)?"', root.group())
        if found is None:
            return None
        value = float(found.group(1))
        sizes.append(value * 0.75 if found.group(2) == "px" else value)
    return sizes[0], sizes[1]


def widget_note(data: Mapping) -> str:
    """What the web lets the reader move in a widget, from the data its page published."""
    label = str(data.get("label") or "this widget").rstrip(".")
    kind = data.get("widget")
    if kind == "switch":
        options = [str(o[1]) if isinstance(o, (list, tuple)) else str(o) for o in data.get("options", [])]
        default = next((str(o[1]) for o in data.get("options", []) if isinstance(o, (list, tuple))
                        and str(o[0]) == str(data.get("default"))), None)
        shown = f" Printed: {default}." if default else ""
        choices = ", ".join(options[:-1]) + (" or " if len(options) > 1 else "") + (options[-1] if options else "")
        return f"{label}: on the web the reader chooses {choices}.{shown}"
    if kind == "compute":
        names = [str(n) for n in data.get("names", [])]
        what = str(data.get("input_label") or "input")
        control = "slider" if data.get("control") == "slider" else "box"
        span = ""
        if data.get("min") is not None and data.get("max") is not None:
            span = f" from {_num(data['min'])} to {_num(data['max'])}"
        each = f"the {what} of {', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else f"the {what}"
        return (f"{label}: on the web the reader sets {each} (a {control} each{span}) and every "
                "number of the table follows. Printed: the values the page was built with.")
    return f"{label}: on the web the reader can change it. Printed: its first state."


def _num(value: object) -> str:
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return text.replace("-", "\u2212")
