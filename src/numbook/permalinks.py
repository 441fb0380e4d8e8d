"""Permanent addresses: every page and anchor the book has published, kept in a manifest.

A citation points at a page (``part2-one-head/``) or at an anchor on it (``#p2-qkv``,
``#fig-p2-attn``). The manifest (``permalinks.json``, committed) lists every page
address and every anchor id a build has published; `missing` compares a new build with it.
A build may add pages and anchors freely. It may not drop one the manifest lists, unless

* the page moved and its old address is a redirect (``mkdocs-redirects``'s
  ``redirect_maps``) to a page that has the anchors, or
* the anchor was renamed and the old id is kept beside the new one (an empty element,
  ``<span id="old-id"></span>`` in the Markdown: not an empty link, which a screen reader
  would announce as a link with no name).

Anchors are the ids inside a page's ``<article>``: section headings, figures, and any
element an author gave an id (equations, questions). Ids that page machinery makes up and
renumbers (tabs and other form controls, footnotes, code lines, notebook cells) are not
addresses anyone should cite, so they are not listed; nor is the page title's (the page's
own address cites it), nor an id named after code (class ``numbook-source-name``: the
engine's source listing, whose ids follow its modules and functions).

    uv run python -m numbook.permalinks --update   # build the book, add what is new
    uv run python -m numbook.permalinks --check    # build the book, list what was dropped
    uv run python -m numbook.permalinks --list [PAGE.md ...]   # what a page can link to, and how

The numbook plugin's ``permalinks: permalinks.json`` option makes ``mkdocs build`` check both
ways at its end (`build_problems`): an address the manifest does not list yet, or one it lists
that the build dropped, is a warning, which fails a strict build.
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import re
import sys
import tempfile
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

MANIFEST = "permalinks.json"
ABOUT = (
    "Every page address and anchor id the published book has had (numbook.permalinks). "
    "A build must keep each one, or redirect its page; add new ones with "
    "`uv run python -m numbook.permalinks --update`."
)
# Ids made up by page machinery, not by an author: Material's and pymdownx's internals
# ("__tabbed_1_2", "__codelineno-0-3"), footnotes, mkdocs-jupyter's cells.
_MACHINE_ID = re.compile(r"^(__|fn:|fnref:|cell-)")
# Form controls' ids are machinery too; a page's title (h1) is cited by the page's address.
_SKIPPED_TAGS = {"input", "label", "h1"}
# Elements named after code (a source listing's functions) move with the code, not the book.
_CODE_NAMED = "numbook-source-name"
_REFRESH = re.compile(r'<meta\s+http-equiv="refresh"\s+content="\d+;\s*url=([^"]+)"', re.I)


class _Anchors(HTMLParser):
    """The citable ids inside the page's first <article> element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.depth = 0  # open <article> elements
        self.seen_article = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "article" and not self.seen_article:
            self.seen_article = True
            self.depth = 1
            return
        if tag == "article" and self.depth:
            self.depth += 1
        if not self.depth or tag in _SKIPPED_TAGS:
            return
        attributes = dict(attrs)
        ident = attributes.get("id")
        if _CODE_NAMED in (attributes.get("class") or "").split():
            return
        if ident and not _MACHINE_ID.match(ident):
            self.ids.append(ident)

    def handle_endtag(self, tag: str) -> None:
        if tag == "article" and self.depth:
            self.depth -= 1


def page_anchors(page_html: str) -> list[str] | None:
    """The citable ids of a page, or None when the HTML is not a page with an <article>."""
    parser = _Anchors()
    parser.feed(page_html)
    return sorted(set(parser.ids)) if parser.seen_article else None


def page_file(site: Path, url: str) -> Path:
    """The file a page address is served from ("" is the home page)."""
    return site / url / "index.html" if url else site / "index.html"


def collect(site: str | os.PathLike[str]) -> dict[str, list[str]]:
    """{page address: its citable anchor ids} for every page of a built site.

    Addresses are relative to the site ("part2-one-head/", "" for the home page). Redirect
    pages and the 404 page are not pages of the book.
    """
    root = Path(site)
    pages: dict[str, list[str]] = {}
    for path in sorted(root.rglob("index.html")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if _REFRESH.search(text):
            continue
        anchors = page_anchors(text)
        if anchors is None:
            continue
        rel = path.parent.relative_to(root).as_posix()
        pages["" if rel == "." else rel + "/"] = anchors
    return pages


def resolve(site: Path, url: str, hops: int = 5) -> tuple[str, str] | None:
    """(address, HTML) of the page an address leads to, following redirects inside the
    site; None when nothing is there or a redirect leaves the site."""
    for _ in range(hops + 1):
        path = page_file(site, url)
        if not path.is_file():
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
        m = _REFRESH.search(text)
        if m is None:
            return url, text
        target = m.group(1).split("#", 1)[0]
        if "://" in target or target.startswith("/"):
            return None
        url = posixpath.normpath(posixpath.join(url, target))
        if url.startswith(".."):
            return None
        url = "" if url == "." else url.rstrip("/") + "/"
    return None


def missing(
    manifest: Mapping[str, list[str]], site: str | os.PathLike[str], pages: Mapping[str, list[str]] | None = None
) -> list[str]:
    """What a built site dropped of the manifest's pages and anchors, one line each.

    ``pages``: the site's pages as `collect` read them, so that they are not read twice.
    """
    root = Path(site)
    problems = []
    for url, anchors in sorted(manifest.items()):
        if pages is not None and url in pages:
            target, present = url, set(pages[url])
        else:
            found = resolve(root, url)
            if found is None:
                problems.append(
                    f"/{url}: the page is gone; if it moved, add its old address to redirects.redirect_maps in mkdocs.yml"
                )
                continue
            target, text = found
            present = set(page_anchors(text) or [])
        where = f"/{url}" + (f" (redirected to /{target})" if target != url else "")
        for anchor in anchors:
            if anchor not in present:
                problems.append(
                    f"{where}#{anchor}: the anchor is gone; if it was renamed, keep the old id beside "
                    f'the new one (<span id="{anchor}"></span>)'
                )
    return problems


def unrecorded(manifest: Mapping[str, list[str]], pages: Mapping[str, list[str]]) -> list[str]:
    """The addresses of a build (`collect`) that the manifest does not list yet, one each:
    ``/page/`` for a new page, ``/page/#anchor`` for each new anchor."""
    new = []
    for url, anchors in sorted(pages.items()):
        known = manifest.get(url)
        if known is None:
            new.append(f"/{url}")
        new.extend(f"/{url}#{anchor}" for anchor in anchors if anchor not in (known or ()))
    return new


def update_command(manifest: str = MANIFEST, config_file: str = "mkdocs.yml") -> str:
    """The command that records a build's new addresses, run where mkdocs.yml is."""
    command = "uv run python -m numbook.permalinks --update"
    if os.path.normpath(manifest) != MANIFEST:
        command += f" --manifest {manifest}"
    if os.path.basename(config_file) != "mkdocs.yml":
        command += f" --config {os.path.basename(config_file)}"
    return command


def build_problems(manifest_path: str | os.PathLike[str], site: str | os.PathLike[str], command: str) -> list[str]:
    """What a finished build publishes that the manifest does not list, and what it lists that the
    build dropped: one message each (none when the two agree). ``command`` records new addresses."""
    name = Path(manifest_path).name
    manifest = load(manifest_path)
    pages = collect(site)
    problems = []
    new = unrecorded(manifest, pages)
    if new:
        shown = new if len(new) <= 12 else [*new[:12], f"... and {len(new) - 12} more"]
        problems.append(
            f"{name} does not list {len(new)} address(es) this build publishes, so a later build could drop "
            f"them unnoticed:\n  " + "\n  ".join(shown) + f"\nRecord them, then commit {name}: {command}"
        )
    dropped = missing(manifest, site, pages)
    if dropped:
        problems.append(
            f"this build drops {len(dropped)} published address(es) that {name} lists (citations and links "
            f"use them):\n  " + "\n  ".join(dropped)
        )
    return problems


def load(path: str | os.PathLike[str]) -> dict[str, list[str]]:
    """The manifest's pages ({} when the file does not exist yet)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {url: list(anchors) for url, anchors in data["pages"].items()}


def merge(old: Mapping[str, list[str]], new: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """The manifest after a build: everything it listed, plus what the build added."""
    urls = set(old) | set(new)
    return {url: sorted(set(old.get(url, [])) | set(new.get(url, []))) for url in sorted(urls)}


def dump(pages: Mapping[str, list[str]]) -> str:
    """The manifest file's text: one anchor a line, so a diff shows each addition."""
    return json.dumps({"about": ABOUT, "pages": dict(sorted(pages.items()))}, indent=1, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Target:
    """Something a page of the book can link to, and how a link to it reads."""

    page: str  # path in the docs directory
    line: int
    kind: str  # "section", "figure", "equation", "aside"
    id: str
    label: str  # what an empty link to it reads ("Section 4.7", "Figure B.1"); "" when it has no number
    title: str  # the heading, the caption (as written) or the aside's summary

    def link(self) -> str:
        """The Markdown that links to it from a page at the top of the docs directory."""
        return f"[{'' if self.label else 'words'}]({self.page}#{self.id})"


def link_targets(config_file: str = "mkdocs.yml") -> tuple[list[Target], dict[str, str]]:
    """Every section, figure, equation and aside id of the book's pages, numbered as a build
    numbers them (nothing runs: numbers need only the parse); and each page's title."""
    from mkdocs.config import load_config
    from mkdocs.structure.files import get_files

    from .book import Book, Settings, SourcePage
    from .plugin import nav_paths, reading_order

    config = load_config(config_file)
    options = config.plugins["numbook"].config
    settings = Settings(
        root=os.path.dirname(os.path.abspath(config_file)), docs_dir=config.docs_dir, cache_dir="", workers=1,
        timeout=1.0, enabled=False, page_label=options.page_label, heading_format=options.heading_format,
        planned=dict(options.planned), planned_text=options.planned_text,
    )
    docs = sorted(get_files(config).documentation_pages(), key=reading_order(config.nav))
    book = Book(settings)
    book.prepare([SourcePage(f.src_uri, f.content_string) for f in docs],
                 published=None if config.nav is None else set(nav_paths(config.nav)))
    labels = book.labels
    targets: list[Target] = []
    titles: dict[str, str] = {}
    for src, page in book.pages.items():
        parsed = page.parsed
        titles[src] = page.heading(settings) or (parsed.title.text if parsed.title else src)
        for h in parsed.headings:
            if h.id:
                info = labels.sections.get((src, h.id))
                targets.append(Target(src, h.line, "section", h.id, info.label if info else "", _plain(h.text)))
        captions = {c.options.figure: str(c.options.caption or "") for c in parsed.code_cells if c.options.figure}
        for fig_id, info in labels.figures.items():
            if info.src_uri == src:
                targets.append(Target(src, info.line, "figure", fig_id, info.label, captions.get(fig_id, "")))
        for eq_id, eq in labels.equations.items():
            if eq.src_uri == src:
                targets.append(Target(src, eq.line, "equation", eq_id, eq.label, ""))
        for aside in parsed.asides:
            summary = page.body[: aside.summary_end].rsplit("<summary>", 1)[-1]
            targets.append(Target(src, aside.line, "aside", aside.id, "", _plain(summary)))
    order = {src: k for k, src in enumerate(book.pages)}
    return sorted(targets, key=lambda t: (order[t.page], t.line)), titles


def _plain(text: str) -> str:
    """Markdown or HTML of a title as plain words, on one line."""
    return " ".join(re.sub(r"<[^>]+>|[*_`]", "", text).split())


def format_targets(targets: Sequence[Target], titles: Mapping[str, str], pages: Collection[str] = ()) -> str:
    """One block per page: the link to paste, what it reads, and the title (``pages``: only these)."""
    lines = []
    for src, title in titles.items():
        mine = [t for t in targets if t.page == src]
        if (pages and src not in pages) or not mine:
            continue
        lines.append(f"docs/{src} · {title}")
        width = max(len(t.link()) for t in mine)
        for t in mine:
            reads = t.label or t.kind
            text = t.title if len(t.title) <= 72 else t.title[:71] + "…"
            lines.append(f"  {t.link():{width}}  {reads:13}  {text}".rstrip())
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def build_site(config_file: str, site_dir: str) -> None:
    """A strict build of the book into ``site_dir`` (the numbook cache makes it quick)."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    config = load_config(config_file, site_dir=site_dir, strict=True)
    if "numbook" in config.plugins:
        config.plugins["numbook"].config["permalinks"] = None  # this build is the one that records them
    config.plugins.on_startup(command="build", dirty=False)
    try:
        build(config)
    finally:
        config.plugins.on_shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numbook.permalinks", description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--update", action="store_true", help="add the build's new pages and anchors to the manifest")
    action.add_argument("--check", action="store_true", help="list the manifest's pages and anchors the build dropped")
    action.add_argument("--list", action="store_true",
                        help="list every section, figure, equation and aside a page can link to, with the "
                             "link to write and what it reads (nothing is built)")
    parser.add_argument("pages", nargs="*", help="with --list: only these pages (paths inside docs/)")
    parser.add_argument("--manifest", default=MANIFEST, help=f"the manifest file (default: {MANIFEST})")
    parser.add_argument("--config", default="mkdocs.yml", help="the site's mkdocs.yml (default: mkdocs.yml)")
    parser.add_argument("--site", help="an already built site to read, instead of building one")
    args = parser.parse_args(argv)
    if args.list:
        targets, titles = link_targets(args.config)
        unknown = sorted(set(args.pages) - set(titles))
        if unknown:
            parser.error(f"not pages of the docs directory: {', '.join(unknown)}")
        print(format_targets(targets, titles, args.pages))
        return 0
    if args.pages:
        parser.error("pages are named only with --list")

    with tempfile.TemporaryDirectory(prefix="permalinks-") as tmp:
        site = args.site
        if site is None:
            site = tmp
            build_site(args.config, site)
        old = load(args.manifest)
        dropped = missing(old, site)
        if args.update:
            new = collect(site)
            merged = merge(old, new)
            Path(args.manifest).write_text(dump(merged), encoding="utf-8")
            anchors = sum(map(len, merged.values()))
            print(
                f"{args.manifest}: {len(merged)} pages ({len(set(merged) - set(old))} new), "
                f"{anchors} anchors ({anchors - sum(map(len, old.values()))} new)"
            )
    for line in dropped:
        print(line, file=sys.stderr)
    if dropped:
        print(f"{len(dropped)} published address(es) missing from this build", file=sys.stderr)
    return 1 if dropped else 0


if __name__ == "__main__":
    sys.exit(main())
