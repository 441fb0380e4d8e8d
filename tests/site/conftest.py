"""Fixtures for whole-site tests: one strict build of the book, served on 127.0.0.1."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from typing import Any
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")


def build_book(site_dir: Path, cache_dir: Path) -> Any:
    """Build the whole book in strict mode into site_dir, with its own numbook cache (page runs,
    Markdown conversions, search entries); returns the numbook plugin (its counters)."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    # the PDF edition of this build is typeset next (tests/site/test_pdf.py): its pages link it
    os.environ.setdefault("BOOKPDF_TYPESETS_NEXT", "1")
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(site_dir), strict=True)
    config.plugins["numbook"].config.cache_dir = str(cache_dir)
    config.plugins["numbook-lean"].config.search_cache = str(cache_dir / "search")
    config.plugins.on_startup(command="build", dirty=False)
    try:
        build(config)
    finally:
        config.plugins.on_shutdown()
    return config.plugins["numbook"]


def copy_of_the_book(dest: Path) -> Path:
    """The book's configuration and sources (no cache, no site)."""
    for name in ("docs", "overrides", "src", "figures"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    # numbook-cite, the engine wheel, the strict build's address check
    for name in ("mkdocs.yml", "CITATION.cff", "pyproject.toml", "permalinks.json"):
        shutil.copy2(ROOT / name, dest / name)
    return dest


@pytest.fixture(scope="session")
def book_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The numbook cache of `built_site` (another build of the book may reuse it)."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory, book_cache: Path) -> Path:
    site = tmp_path_factory.mktemp("site")
    build_book(site, book_cache)
    return site


def site_pages(site: Path) -> list[str]:
    """URL paths of every page of the built book (not assets, not the 404 page, not the
    forwarding pages mkdocs-redirects leaves at moved pages' old addresses)."""
    pages = []
    for path in sorted(site.rglob("index.html")):
        rel = path.parent.relative_to(site).as_posix()
        if rel.startswith("assets") or 'http-equiv="refresh"' in path.read_text(encoding="utf-8")[:1000]:
            continue
        pages.append("/" if rel == "." else f"/{rel}/")
    return pages


#: Scroll a page down a screen at a time, then back to the top, as a reader scrolling through
#: it would: every block the stylesheet lets the browser skip until it comes near the screen
#: (`content-visibility: auto`) is then drawn and keeps its real height. An accessibility scan
#: of a page not scrolled reads a skipped block's text at its guessed height, where it can lie
#: over the footer in the geometry although never on the screen (axe then reports its
#: contrast against the footer's background).
DRAW_WHOLE_PAGE = """async () => {
    const frame = () => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    for (let y = 0; y < document.documentElement.scrollHeight; y += innerHeight / 2) {
        window.scrollTo({top: y, behavior: 'instant'});
        await frame();
    }
    window.scrollTo({top: 0, behavior: 'instant'});
    // back at the top the header fades the page title out and the site title in: let every
    // finite transition end (at most two seconds) before anything is measured
    const moving = () => document.getAnimations().some(a => a.playState === 'running'
        && a.effect && a.effect.getComputedTiming().endTime !== Infinity);
    const giveUp = performance.now() + 2000;
    do { await frame(); } while (moving() && performance.now() < giveUp);
}"""


def off_gallery_pages() -> set[str]:
    """URL paths of the pages whose front matter keeps their figures off the gallery page
    (`gallery: false`: the figure functions' demonstrations)."""
    from mkdocs.utils.meta import get_data

    pages = set()
    for path in sorted((ROOT / "docs").rglob("*.md")):
        _, meta = get_data(path.read_text(encoding="utf-8"))
        if meta.get("gallery") is False:
            rel = path.relative_to(ROOT / "docs").with_suffix("").as_posix()
            pages.add("/" if rel == "index" else f"/{rel.removesuffix('/index')}/")
    return pages


@pytest.fixture(scope="session")
def served_site(built_site: Path) -> Iterator[str]:
    """The built book on an ephemeral port of 127.0.0.1 only."""
    handler = functools.partial(QuietHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.handle_error = lambda request, address: None  # a browser that drops a request it no longer needs
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        pass


def require_chromium() -> None:
    """Skip without Chromium on a developer's machine; never skip in CI."""
    if CHROMIUM.exists() and shutil.which(str(CHROMIUM)):
        return
    if os.environ.get("CI"):
        pytest.fail("CI is set but /usr/bin/chromium is missing: .ci/run must install Debian's chromium")
    pytest.skip("needs Debian's Chromium at /usr/bin/chromium (apt-get install chromium); CI installs it")


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


@pytest.fixture(scope="session")
def browser():
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        with contextlib.closing(browser):
            yield browser


# Largest difference between a number a widget shows and the engine's value, per kind of
# number; filled by tests/site/test_widgets.py and reported at the end of the run.
WIDGET_DIFFS: dict[str, float] = {}


def pytest_terminal_summary(terminalreporter):
    if WIDGET_DIFFS:
        terminalreporter.section("largest difference between a widget's number and the engine's")
        for label, diff in sorted(WIDGET_DIFFS.items()):
            terminalreporter.write_line(f"{label:60s} {diff:.3e}")
