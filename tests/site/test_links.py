"""Every internal link and anchor of the built site leads somewhere.

MkDocs validates the links an author writes in Markdown; it does not see what plugins and
the theme add afterwards (notebook pages, generated tables of contents, search results,
stylesheets). This walks the finished HTML, CSS and search index instead, as a reader's
browser would follow them.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

# attributes whose value is one URL, and those that hold a list of them
URL_ATTRIBUTES = {"href", "src", "data", "poster", "action"}
SRCSET_ATTRIBUTES = {"srcset"}
CSS_URL = re.compile(r"""url\(\s*(['"]?)(?P<url>[^'")]+)\1\s*\)""")


class PageLinks(HTMLParser):
    """The ids a page defines and the URLs it points at, with the line of each."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.urls: list[tuple[int, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0]
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.append(value)
            elif name in URL_ATTRIBUTES and not (tag == "link" and ("rel", "canonical") in attrs):
                self.urls.append((line, value))
            elif name in SRCSET_ATTRIBUTES:
                self.urls.extend((line, part.split()[0]) for part in value.split(",") if part.strip())
            elif name == "style":
                self.urls.extend((line, m["url"]) for m in CSS_URL.finditer(value))


def parse(path: Path) -> PageLinks:
    links = PageLinks()
    links.feed(path.read_text(encoding="utf-8"))
    links.close()
    return links


def url_of(site: Path, path: Path) -> str:
    """The URL path a file is served at: `dir/index.html` is also `dir/`."""
    rel = path.relative_to(site).as_posix()
    return "/" + (rel.removesuffix("index.html") if rel.endswith("index.html") else rel)


def target_file(site: Path, url_path: str) -> Path | None:
    """The file a URL path (already resolved, absolute) is served from, if any."""
    path = site / unquote(url_path).lstrip("/")
    if url_path.endswith("/") or path.is_dir():
        path = path / "index.html"
    return path if path.is_file() else None


def is_internal(url: str) -> bool:
    parts = urlsplit(url)
    return not parts.scheme and not parts.netloc and not url.startswith("//")


class SiteLinks:
    """Ids per HTML page of the site, parsed once."""

    def __init__(self, site: Path) -> None:
        self.site = site
        self.pages = {path: parse(path) for path in sorted(site.rglob("*.html"))}
        self.ids = {path: set(links.ids) for path, links in self.pages.items()}

    def broken(self, base_url: str, url: str) -> str | None:
        """Why `url`, seen on the page at `base_url`, leads nowhere; None if it resolves."""
        resolved = urljoin(base_url, url)
        parts = urlsplit(resolved)
        target = target_file(self.site, parts.path)
        if target is None:
            return f"{url}: no file {parts.path}"
        fragment = unquote(parts.fragment)
        if fragment and target.suffix == ".html" and fragment not in self.ids[target]:
            return f"{url}: {posixpath.relpath(target.relative_to(self.site).as_posix())} has no id {fragment!r}"
        return None


@pytest.fixture(scope="module")
def site_links(built_site: Path) -> SiteLinks:
    return SiteLinks(built_site)


def test_the_walk_sees_the_notebook_pages_and_their_tables_of_contents(site_links: SiteLinks):
    # a guard against a walk that silently checks nothing
    workbooks = [p for p in site_links.pages if "workbooks" in p.parts and p.name == "index.html"]
    assert len(workbooks) >= 3  # the section page and at least two notebooks
    fragments = [url for p in workbooks for _, url in site_links.pages[p].urls if url.startswith("#")]
    assert len(fragments) > 20


def test_every_internal_link_of_every_page_resolves(site_links: SiteLinks):
    problems = []
    # The PDF edition is typeset after the build (tests/site/test_pdf.py, which checks these
    # links once it is there); until then its links wait for it.
    typeset = (site_links.site / "pdf").is_dir()
    for path, links in site_links.pages.items():
        base = url_of(site_links.site, path)
        for line, url in links.urls:
            if not typeset and urljoin(base, url).startswith("/pdf/"):
                continue
            if is_internal(url) and (why := site_links.broken(base, url)):
                problems.append(f"{path.relative_to(site_links.site)}:{line}: {why}")
    assert not problems, "\n".join(problems)


def test_no_page_gives_one_id_to_two_elements(site_links: SiteLinks):
    problems = [
        f"{path.relative_to(site_links.site)}: id {name!r} x{count}"
        for path, links in site_links.pages.items()
        for name, count in Counter(links.ids).items()
        if count > 1
    ]
    assert not problems, "\n".join(problems)


def test_every_search_result_leads_to_its_section(site_links: SiteLinks):
    index = json.loads((site_links.site / "search" / "search_index.json").read_text(encoding="utf-8"))
    locations = [doc["location"] for doc in index["docs"]]
    assert any("#" in location for location in locations)
    problems = [why for location in locations if (why := site_links.broken("/", location))]
    assert not problems, "\n".join(problems)


def test_every_url_in_the_stylesheets_resolves(site_links: SiteLinks):
    problems = []
    for css in sorted(site_links.site.rglob("*.css")):
        base = url_of(site_links.site, css)
        for match in CSS_URL.finditer(css.read_text(encoding="utf-8")):
            url = match["url"]
            if is_internal(url) and not url.startswith("#") and (why := site_links.broken(base, url)):
                problems.append(f"{css.relative_to(site_links.site)}: {why}")
    assert not problems, "\n".join(problems)
