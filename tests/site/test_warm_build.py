"""A warm build of the book (every page's runs, conversions and search entries reused) writes
the very site a cold build writes: the caches save time and change nothing, also after an
input that no page names in its code changed (tests/plugin/test_staleness.py has every kind
of input on a small project; here the book's own style sheet)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import build_book, copy_of_the_book


def tree(root: Path) -> dict[str, bytes]:
    """Every file MkDocs wrote, by path. Not pdf/: the PDF edition is typeset after the build
    from its pages (tests/site/test_pdf.py writes it into the session's site)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).parts[0] != "pdf"}


def test_a_warm_build_is_the_cold_build_byte_for_byte(built_site, book_cache, tmp_path):
    plugin = build_book(tmp_path / "warm", book_cache)
    assert plugin.pages_executed == 0
    assert plugin.memo.misses == 0 and plugin.memo.hits >= 10
    cold, warm = tree(built_site), tree(tmp_path / "warm")
    assert sorted(cold) == sorted(warm)
    assert [name for name in cold if cold[name] != warm[name]] == []


def build_copy(book: Path, site: Path) -> int:
    """Build a copy of the book in a process of its own, every module taken from the copy
    (the style sheet the figures read is the copy's); returns how many pages it ran."""
    env = {**os.environ, "PYTHONPATH": str(book / "src"), "SOURCE_DATE_EPOCH": "1700000000",
           "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
                          cwd=book, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    found = re.findall(r"numbook: (\d+) pages executed, (\d+) from cache", proc.stderr)
    assert found, proc.stderr[-2000:]
    return int(found[0][0])


def test_a_warm_build_after_the_style_sheet_changed_is_the_cold_build(built_site, book_cache, tmp_path):
    book = copy_of_the_book(tmp_path / "book")
    style = book / "figures" / "book.mplstyle"
    style.write_text(style.read_text().replace("grid.linewidth:     0.8", "grid.linewidth:     0.9"))
    cold = copy_of_the_book(tmp_path / "cold")
    shutil.copy(style, cold / "figures" / "book.mplstyle")
    # the built book's cache names the files its pages read relatively: it serves the copy
    shutil.copytree(book_cache, book / ".cache" / "numbook")
    executed = build_copy(book, tmp_path / "warm-site")
    assert build_copy(cold, tmp_path / "cold-site") > executed > 0  # only the pages that draw ran
    warm_site, cold_site = tree(tmp_path / "warm-site"), tree(tmp_path / "cold-site")
    assert [name for name in cold_site.keys() | warm_site.keys() if cold_site.get(name) != warm_site.get(name)] == []
    before = tree(built_site)
    assert any(name.endswith(".svg") and before.get(name) != svg for name, svg in cold_site.items())
