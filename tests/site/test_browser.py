"""Open every page of the built book in a real Chromium, as a reader would.

Checks per page: maths rendered (no raw TeX left), every image loaded, nothing requested from
another host, no console or page errors, no serious or critical accessibility violation; and on
pages with figures, the light/dark switch swaps the figure variants.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .conftest import site_pages

pytestmark = pytest.mark.browser

RAW_TEX_MARKERS = ("$$", "\\(", "\\[", "\\begin{")
# The article's text outside code (a page may show TeX delimiters as code on purpose).
PROSE_TEXT = """() => {
    const article = document.querySelector('article').cloneNode(true);
    article.querySelectorAll('code, pre, .katex').forEach(e => e.remove());
    return article.textContent;
}"""


@pytest.fixture(scope="module")
def reader_page(browser, served_site):
    """One browser tab that records console errors and requests to other hosts."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.record = {"console": [], "foreign": []}

    def route(route_request):
        host = urlsplit(route_request.request.url).hostname
        if host not in {"127.0.0.1"} and not route_request.request.url.startswith(("data:", "blob:")):
            page.record["foreign"].append(route_request.request.url)
            return route_request.abort()
        return route_request.continue_()

    page.route("**/*", route)
    page.on("console", lambda msg: msg.type == "error" and page.record["console"].append(msg.text))
    page.on("pageerror", lambda error: page.record["console"].append(str(error)))
    yield page
    context.close()


# Figures load lazily: bring each shown image near the screen and wait for it.
LOAD_SHOWN_IMAGES = """async () => {
    for (const image of document.images) {
        if (getComputedStyle(image).display === 'none') continue;
        image.scrollIntoView();
        await image.decode().catch(() => null);
    }
    window.scrollTo(0, 0);
    // Scrolling back makes the header fade the page title out and the site title in: let
    // every finite transition end before anything is measured. Chromium leaves some
    // animations' `finished` promises pending (idle ones, and some already finished), so poll
    // their state, a frame at a time, for at most two seconds.
    const frame = () => new Promise(done => requestAnimationFrame(done));
    const moving = () => document.getAnimations().some(a => a.playState === 'running'
        && a.effect && a.effect.getComputedTiming().endTime !== Infinity);
    const giveUp = performance.now() + 2000;
    do { await frame(); await frame(); } while (moving() && performance.now() < giveUp);
}"""
# Images shown (not hidden by the colour scheme) that did not load, among those matching a selector.
UNLOADED_IMAGES = """selector => [...document.querySelectorAll(selector)]
    .filter(i => getComputedStyle(i).display !== 'none' && !(i.complete && i.naturalWidth > 0))
    .map(i => i.src)"""
FETCHED_SVGS = "() => performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('.svg'))"


def open_page(page, url: str) -> None:
    page.record["console"].clear()
    page.record["foreign"].clear()
    page.goto(url, wait_until="networkidle")


def test_every_page_reads_cleanly(reader_page, served_site, built_site: Path, tmp_path_factory):
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    shots = tmp_path_factory.mktemp("screenshots")
    problems: list[str] = []
    pages = site_pages(built_site)
    assert len(pages) >= 2, pages
    for path in pages:
        url = served_site + path
        open_page(reader_page, url)
        text = reader_page.evaluate(PROSE_TEXT)
        raw = [marker for marker in RAW_TEX_MARKERS if marker in text]
        if raw:
            problems.append(f"{path}: raw TeX left in the text: {raw}")
        if reader_page.locator(".katex-error, .numbook-error").count():
            problems.append(f"{path}: a formula or block rendered as an error")
        reader_page.evaluate(LOAD_SHOWN_IMAGES)
        broken = reader_page.evaluate(UNLOADED_IMAGES, "img")
        if broken:
            problems.append(f"{path}: images not loaded: {broken}")
        if reader_page.record["foreign"]:
            problems.append(f"{path}: requests to other hosts: {reader_page.record['foreign']}")
        if reader_page.record["console"]:
            problems.append(f"{path}: console errors: {reader_page.record['console']}")
        results = axe.run(reader_page)
        serious = [
            f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
            for v in results.response["violations"]
            if v["impact"] in {"serious", "critical"}
        ]
        if serious:
            problems.append(f"{path}: accessibility: {serious}")
        reader_page.screenshot(path=str(shots / (path.strip('/').replace('/', '_') or 'home')) + ".png", full_page=True)
    assert not problems, "\n".join(problems)


def test_dark_mode_swaps_figure_variants(reader_page, served_site, built_site: Path):
    with_figures = [
        p for p in site_pages(built_site)
        if "#only-light" in (built_site / p.strip("/") / "index.html").read_text(encoding="utf-8")
    ]
    if not with_figures:
        pytest.skip("the book has no page with figures yet")
    for path in with_figures:
        open_page(reader_page, served_site + path)
        shown = """() => [...document.querySelectorAll('figure img')]
            .filter(i => getComputedStyle(i).display !== 'none').map(i => i.getAttribute('src'))"""
        light = reader_page.evaluate(shown)
        assert light and all(src.endswith("#only-light") for src in light), (path, light)
        reader_page.evaluate(LOAD_SHOWN_IMAGES)
        fetched = reader_page.evaluate(FETCHED_SVGS)
        assert not [n for n in fetched if ".dark.svg" in n], f"{path}: a light reader downloads dark figures"
        reader_page.evaluate("() => document.body.setAttribute('data-md-color-scheme', 'slate')")
        dark = reader_page.evaluate(shown)
        assert dark and all(src.endswith("#only-dark") for src in dark), (path, dark)
        assert len(dark) == len(light)
        reader_page.evaluate(LOAD_SHOWN_IMAGES)
        unloaded = reader_page.evaluate(UNLOADED_IMAGES, "figure img")
        assert not unloaded, f"{path}: dark figures did not load: {unloaded}"
