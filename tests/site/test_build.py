"""The whole book builds in strict mode, and its prose is its own."""

from __future__ import annotations

import os
import posixpath
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, site_pages

SEED_OVERLAP = ROOT.parent / "shared" / "tools" / "seed_overlap.py"


def test_strict_build_renders_every_nav_page(built_site: Path):
    pages = site_pages(built_site)
    for path in pages:
        html = (built_site / path.strip("/") / "index.html").read_text(encoding="utf-8")
        assert "numbook-error" not in html, path
        assert 'class="arithmatex"' not in html, f"{path}: maths left for the browser"
    assert "/how-this-book-is-built/" in pages


def test_the_next_link_leads_through_the_parts_in_order(built_site: Path):
    """Home's "Next" is Part 1, and each part's "Next" is the part after it."""
    def next_of(path: str) -> str:
        html = (built_site / path / "index.html").read_text(encoding="utf-8")
        found = re.search(r'<a href="([^"]+)" class="md-footer__link md-footer__link--next"', html)
        assert found, f"{path or 'home'} has no Next link"
        return posixpath.normpath(posixpath.join(path, found.group(1)))

    assert next_of("") == "part1-character-model"
    assert next_of("part1-character-model") == "part2-one-head"


def test_every_numbered_page_is_titled_from_its_front_matter(built_site: Path):
    """Part 1, both pages of Part 3 and the others read "Part N · title", with no second H1."""
    import yaml

    numbered = 0
    for source in sorted((ROOT / "docs").glob("*.md")):
        text = source.read_text(encoding="utf-8")
        if not text.startswith("---\n"):
            continue
        meta = yaml.safe_load(text.split("---\n", 2)[1])
        if "number" not in meta:
            continue
        html = (built_site / source.stem / "index.html").read_text(encoding="utf-8")
        article = html[html.index("<article"): html.index("</article>")]
        titles = [re.sub(r"<[^>]+>|&para;", "", h).strip() for h in re.findall(r"<h1[^>]*>(.*?)</h1>", article, re.S)]
        if "title" not in meta:  # numbered for its sections only (the one-page lesson, L.1…): its own H1
            assert len(titles) == 1 and not titles[0].startswith("Part "), (source.name, titles)
            continue
        numbered += 1
        assert titles == [f"Part {meta['number']} · {meta['title']}"], (source.name, titles)
    assert numbered >= 5  # Parts 1, 2, 3 (two pages) and 4


def test_no_page_fetches_from_another_host(built_site: Path):
    for page in built_site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        for attribute in ('src="http', "src='http", 'href="https://fonts', "@import url(http"):
            assert attribute not in html, f"{page.relative_to(built_site)} loads {attribute}…"


@pytest.mark.skipif(not SEED_OVERLAP.exists(), reason="../shared/tools/seed_overlap.py is not beside this checkout")
def test_prose_shares_no_run_of_words_with_the_reference_lessons():
    done = subprocess.run(
        [sys.executable, str(SEED_OVERLAP), "--docs", str(ROOT / "docs")],
        capture_output=True, text=True, env=dict(os.environ),
    )
    assert done.returncode == 0, done.stdout[-3000:]


def test_a_published_workbook_installs_and_links_to_its_own_edition(built_site: Path):
    """The .ipynb saved straight from the site (no download button) names the wheel of the
    edition it came from, pinned by the wheel's hash, and links to that edition's pages."""
    import hashlib
    import json as json_module

    from booksite.cite import edition_from_cff, load_cff

    edition = edition_from_cff(load_cff(ROOT / "CITATION.cff"), "https://attention-book.github.io/")
    for notebook_path in sorted(built_site.glob("workbooks/*/*.ipynb")):
        notebook = json_module.loads(notebook_path.read_text(encoding="utf-8"))
        code = "".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
        address = re.search(r'ENGINE_WHEEL = "([^"]+)"', code).group(1)
        url, _, pin = address.partition("#sha256=")
        assert url.startswith(f"{edition.url}wheels/tinyformer-"), address
        wheel = built_site / url.removeprefix(edition.url)
        assert pin == hashlib.sha256(wheel.read_bytes()).hexdigest()
        text = "".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
        links = re.findall(r"\]\(([^)\s]+)\)", text)
        assert links and all(link.startswith((edition.url, "#", "https://")) for link in links), links


def test_every_formula_of_the_book_has_valid_mathml(built_site: Path):
    """What a screen reader reads of a formula is its MathML: well-formed, and no token
    element (mi, mo, …) holding another element (KaTeX's \\boldsymbol did, under every
    coloured symbol)."""
    from tests.markup import mathml_problems

    formulas, problems = 0, []
    for path in site_pages(built_site):
        page = (built_site / path.strip("/") / "index.html").read_text(encoding="utf-8")
        formulas += page.count("<math")
        problems += [f"{path}: {p}" for p in mathml_problems(page)]
    assert formulas > 500
    assert not problems, "\n".join(problems[:20])
