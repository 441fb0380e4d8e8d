"""Versioned editions with mike: two releases deployed side by side into a local git
repository, each still at its own address, with `latest` forwarding to the newer one.

The throwaway book uses this book's own edition settings (the mike plugin's alias type and
Material's version menu from mkdocs.yml, the numbook-cite plugin with a CITATION.cff), so the
test fails if those settings stop producing working editions.
"""

from __future__ import annotations

import functools
import http.server
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT, QuietHandler

SITE_URL = "https://example.org/book/"
MIKE = str(Path(sys.executable).parent / "mike")  # the dev dependency's command


class _Lenient(yaml.SafeLoader):
    """Reads mkdocs.yml without MkDocs' own tags (!ENV, !!python/...), which are left as None."""


_Lenient.add_multi_constructor("!", lambda loader, suffix, node: None)
_Lenient.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def book_settings() -> tuple[dict, dict]:
    """The mike plugin's options and Material's version menu, as this book sets them."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Lenient)
    mike = next(p["mike"] for p in config["plugins"] if isinstance(p, dict) and "mike" in p)
    return mike, config["extra"]["version"]


def run(args: list[str], cwd: Path) -> str:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "NO_MKDOCS_2_WARNING": "1", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00",
           "BOOKPDF_TYPESETS_NEXT": "1"}  # each edition gets its PDFs (numbook-pdf links them)
    env.pop("MIKE_DOCS_VERSION", None)
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def release(repo: Path, version: str, words: str) -> None:
    """Write edition `version` of the throwaway book, commit it, deploy it as the latest."""
    (repo / "CITATION.cff").write_text(
        "cff-version: 1.2.0\nmessage: Cite it.\ntitle: Throwaway Book\n"
        f"authors:\n  - name: The Throwaway Authors\nversion: '{version}'\ndate-released: 2026-01-02\n",
        encoding="utf-8",
    )
    (repo / "docs" / "index.md").write_text(f"# Throwaway Book\n\n{words}\n", encoding="utf-8")
    (repo / "docs" / "part.md").write_text(f"---\ntitle: A part\n---\n\n# A part\n\n{words}\n", encoding="utf-8")
    run(["git", "add", "-A"], repo)
    run(["git", "commit", "-q", "-m", f"edition {version}"], repo)
    run([MIKE, "deploy", "--update-aliases", version, "latest"], repo)


@pytest.fixture(scope="module")
def editions(tmp_path_factory) -> Path:
    """The gh-pages branch after releasing 1.0 and then 2.0, checked out in a folder."""
    mike, version_menu = book_settings()
    repo = tmp_path_factory.mktemp("book")
    (repo / "docs" / "javascripts").mkdir(parents=True)
    (repo / "docs" / "javascripts" / "book.js").write_text(
        (ROOT / "docs" / "javascripts" / "book.js").read_text(encoding="utf-8"), encoding="utf-8")
    config = {
        "site_name": "Throwaway Book",
        "site_url": SITE_URL,
        "theme": {"name": "material", "font": False, "custom_dir": str(ROOT / "overrides")},
        "plugins": [{"mike": mike}, "numbook-cite", "numbook-pdf"],
        "extra_javascript": ["javascripts/book.js"],  # adds the page's PDFs to the edition menu
        "extra": {"version": version_menu},
        "nav": [{"Home": "index.md"}, {"A part": "part.md"}],
    }
    (repo / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    run(["git", "init", "-q", "-b", "main"], repo)
    run(["git", "config", "user.email", "test@example.org"], repo)
    run(["git", "config", "user.name", "Test"], repo)
    release(repo, "1.0", "The first edition says one thing.")
    release(repo, "2.0", "The second edition says another.")
    run([MIKE, "set-default", "latest"], repo)
    archive = subprocess.run(["git", "archive", "--format=tar", "gh-pages"], cwd=repo, capture_output=True, check=True).stdout
    published = tmp_path_factory.mktemp("gh-pages")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(published, filter="data")
    return published


@pytest.fixture(scope="module")
def served_editions(editions: Path):
    handler = functools.partial(QuietHandler, directory=str(editions))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_both_editions_stay_at_their_own_addresses(editions: Path):
    versions = json.loads((editions / "versions.json").read_text())
    assert [(v["version"], v["aliases"]) for v in versions] == [("2.0", ["latest"]), ("1.0", [])]
    first = (editions / "1.0" / "part" / "index.html").read_text()
    second = (editions / "2.0" / "part" / "index.html").read_text()
    assert "The first edition says one thing." in first and "another" not in first
    assert "The second edition says another." in second
    # each edition cites its own permanent address and its own version
    assert f'<meta name="citation_public_url" content="{SITE_URL}1.0/part/">' in first
    assert '<meta name="citation_version" content="1.0">' in first
    assert f'<meta name="citation_public_url" content="{SITE_URL}2.0/part/">' in second
    # latest is a forward to the newer edition, page by page; the site's root goes to latest
    assert re.search(r'url=\.\./\.\./2\.0/part/"', (editions / "latest" / "part" / "index.html").read_text())
    assert re.search(r'url=latest/"', (editions / "index.html").read_text())


@pytest.mark.browser
def test_a_reader_following_latest_lands_on_the_newer_edition(browser, served_editions: str):
    page = browser.new_page()
    try:
        page.goto(served_editions + "/latest/part/#top", wait_until="networkidle")
        assert page.url == served_editions + "/2.0/part/#top"
        assert "The second edition says another." in page.inner_text("article")
        # Material's version menu lists both editions, read from the site's versions.json
        page.wait_for_selector(".md-version__current")
        assert page.inner_text(".md-version__current").strip() == "2.0"
        editions = page.locator(".md-version__item:not(.numbook-pdf-edition) .md-version__link")
        assert [t.split()[0] for t in editions.all_inner_texts()] == ["2.0", "1.0"]
        # and the page's PDF edition, in each paper size (numbook-pdf, book.js)
        pdfs = page.locator(".numbook-pdf-edition .md-version__link")
        assert pdfs.all_inner_texts() == ["PDF, A4", "PDF, Letter"]
        assert pdfs.first.get_attribute("href").endswith("/2.0/pdf/part-a4.pdf")
        # an earlier edition still answers at its address, and says it is not the newest
        page.goto(served_editions + "/1.0/part/", wait_until="networkidle")
        assert "The first edition says one thing." in page.inner_text("article")
        page.wait_for_selector("[data-md-component=outdated]:not([hidden])")
    finally:
        page.close()
