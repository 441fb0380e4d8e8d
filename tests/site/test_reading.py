"""The main line and its asides, as a reader meets them in Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

from numbook import permalinks

from .conftest import ROOT, site_pages

pytestmark = pytest.mark.browser

# Each aside of the page as the reader first gets it, and as it prints.
ASIDES = """() => [...document.querySelectorAll('details.aside')].map((d) => {
  const summary = d.querySelector(':scope > summary');
  const link = d.querySelector(':scope > .numbook-aside-link > a.headerlink');
  return {
    id: d.id,
    open: d.open,
    summary: summary ? summary.textContent.trim() : '',
    controlsInSummary: summary ? summary.querySelectorAll('a, button, input, select, textarea, [tabindex]').length : 0,
    link: link ? link.getAttribute('href') : null,
    shownInside: [...d.children].filter((c) => c !== summary && getComputedStyle(c).display !== "none").length,
  };
})"""


@pytest.fixture(scope="module")
def tab(browser):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    yield page
    context.close()


def test_every_aside_is_closed_named_linked_recorded_and_prints_as_its_summary(tab, served_site, built_site: Path):
    manifest = permalinks.load(ROOT / permalinks.MANIFEST)
    found = 0
    for path in site_pages(built_site):
        if path.startswith("/workbooks/"):
            continue
        tab.goto(served_site + path, wait_until="load")
        on_screen = tab.evaluate(ASIDES)
        tab.emulate_media(media="print")
        on_paper = tab.evaluate(ASIDES)
        tab.emulate_media(media="screen")
        recorded = set(manifest.get(path.lstrip("/"), []))
        for aside, printed in zip(on_screen, on_paper):
            where = f"{path}#{aside['id']}"
            assert not aside["open"], f"{where} is open when the page loads"
            assert len(aside["summary"].split()) >= 3, f"{where}: its summary does not say what is inside"
            assert aside["link"] == f"#{aside['id']}", f"{where}: no link to itself at the top of its body"
            assert aside["controlsInSummary"] == 0, f"{where}: a control inside its summary (nested-interactive)"
            assert aside["id"] in recorded, f"{where} is not in permalinks.json (numbook.permalinks --update)"
            assert aside["shownInside"] > 0, f"{where}: opened, it shows nothing"
            assert printed["shownInside"] == 0, f"{where} prints more than its summary"
        found += len(on_screen)
    assert found >= 1


def test_opening_an_asides_address_opens_it(tab, served_site):
    tab.goto(served_site + "/how-this-book-is-built/#guide-aside-example", wait_until="load")
    tab.wait_for_function("document.getElementById('guide-aside-example').open")
    assert tab.evaluate("document.getElementById('guide-aside-example').getBoundingClientRect().top") < 844


def test_every_part_reads_within_its_targets(browser, served_site):
    """A first pass (asides and folds closed) is at most about 1.5 times the reference lesson:
    words in view per part within `reading.WORD_TARGETS` (and `GROUP_TARGETS`), no chapter taller
    than `reading.SCREEN_TARGET` phone screens or with more than `reading.CODE_LINE_TARGET` code
    lines in view. The table is printed for the closing note."""
    from .reading import (CHAPTERS, CODE_LINE_TARGET, GROUP_TARGETS, SCREEN_TARGET, WORD_TARGETS,
                          by_part, measure)

    readings = measure(browser, served_site, list(CHAPTERS))
    for r in readings:
        print(f"{r.page:32s} {r.words:6d} words {r.screens:5.1f} screens {r.code_lines:4d} code lines")
    tall = [f"{r.page}: {r.screens:.1f} screens" for r in readings if r.screens > SCREEN_TARGET]
    code = [f"{r.page}: {r.code_lines} code lines" for r in readings if r.code_lines > CODE_LINE_TARGET]
    long = [f"{part}: {words} words (target {WORD_TARGETS[part]})"
            for part, words in by_part(readings).items() if words > WORD_TARGETS[part]]
    words = {r.page: r.words for r in readings}
    for pages, target in GROUP_TARGETS.items():
        if sum(words[p] for p in pages) > target:
            long.append(f"{' + '.join(pages)}: {sum(words[p] for p in pages)} words (target {target})")
    assert not tall and not code and not long, "\n".join(tall + code + long)
