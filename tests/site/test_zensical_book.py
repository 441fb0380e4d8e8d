"""The whole book built by Zensical shows what the MkDocs build shows, number for number.

A copy of the project (docs, engine, figures' style, theme overrides, mkdocs.yml,
CITATION.cff) is built with `zensical build`, reusing the numbook cache of the session's
MkDocs build (`built_site`), and compared page by page with it (`numbook.compare`): every
number, figure, equation and check, and every figure and data file byte for byte. The
only pages Zensical may lack are the workbooks (mkdocs-jupyter is MkDocs-only). The count
is printed. Skipped where Zensical is not installed, never in CI (`.ci/run` installs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from numbook.compare import compare_sites, report

from ..builders import require_zensical
from .conftest import ROOT

#: What a build of the book reads, besides the installed packages.
PROJECT = ("docs", "src", "figures", "overrides", "mkdocs.yml", "CITATION.cff")


def copy_project(dest: Path, cache_dir: Path) -> Path:
    for name in PROJECT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, dest / name)
    config = dest / "mkdocs.yml"
    text = config.read_text(encoding="utf-8")
    marker = "  - numbook:\n"
    assert text.count(marker) == 1, "mkdocs.yml lists the numbook plugin once, with options"
    config.write_text(text.replace(marker, f"{marker}      cache_dir: {cache_dir}\n"), encoding="utf-8")
    return dest


@pytest.mark.slow
def test_zensical_builds_the_book_with_every_number_of_the_mkdocs_build(built_site, book_cache, tmp_path, capsys):
    require_zensical()
    root = copy_project(tmp_path / "book", book_cache)
    done = subprocess.run(
        [sys.executable, "-m", "zensical", "build"], cwd=root, env=dict(os.environ, NO_COLOR="1"),
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "numbook: Zensical" in done.stderr and "it leaves out" in done.stderr  # says what it lacks
    c = compare_sites(built_site, root / "site")
    summary = report(c, ("MkDocs", "Zensical"))
    with capsys.disabled():
        print("\nZensical against MkDocs: " + next(x for x in summary.splitlines() if "numbers identical" in x))
    assert c.same, summary
    assert c.numbers > 10_000 and c.identical_numbers == c.numbers
    assert c.files > 100 and not c.files_differ and not c.files_only_a, summary
    assert all(url.startswith("workbooks/") for url in c.only_a), summary
    assert not c.only_b, summary
