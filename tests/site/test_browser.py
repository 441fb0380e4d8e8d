"""Open every page of the built book in a real Chromium, as a reader would.

Checks per page: maths rendered (no raw TeX left), every image loaded, nothing requested from
another host, no console or page errors, no moderate, serious or critical accessibility
violation (axe); and on pages with figures, the light/dark switch swaps the figure variants;
and a formula or figure that scrolls sideways is named for keyboard and screen-reader users.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .conftest import DRAW_WHOLE_PAGE, site_pages

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


# Figures load lazily: bring each shown image near the screen and wait for it. An image in a
# closed fold or aside is not shown, and a lazy one there never loads until it is opened.
LOAD_SHOWN_IMAGES = """async () => {
    for (const image of document.images) {
        if (getComputedStyle(image).display === 'none' || image.closest('details:not([open])')) continue;
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
# Images shown (not hidden by the colour scheme, nor in a closed fold or aside) that did not
# load, among those matching a selector.
UNLOADED_IMAGES = """selector => [...document.querySelectorAll(selector)]
    .filter(i => getComputedStyle(i).display !== 'none' && !i.closest('details:not([open])')
        && !(i.complete && i.naturalWidth > 0))
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
        reader_page.evaluate(DRAW_WHOLE_PAGE)
        reader_page.evaluate(LOAD_SHOWN_IMAGES)  # ends at the top, every transition ended
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
            if v["impact"] in {"moderate", "serious", "critical"}
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


# Scroll the page to its end half a screen at a time; at each stop, once the screen is drawn
# and the fonts it asked for have loaded, report each formula and figure box in view: does it
# scroll sideways, and is it named as a region?
SCROLL_BOXES_WHILE_READING = """async () => {
    const frame = () => new Promise(done => requestAnimationFrame(done));
    const seen = [];
    let boxes = 0;  // a box keeps its number however the page changes around it
    for (let y = 0; y < document.documentElement.scrollHeight; y += innerHeight / 2) {
        scrollTo(0, y);
        await frame(); await frame();
        await document.fonts.ready;
        await frame();
        document.querySelectorAll('.katex-display, .numbook-figure__scroll, .md-typeset__scrollwrap').forEach((box) => {
            const i = box.dataset.testBox ??= String(++boxes);
            const r = box.getBoundingClientRect();
            if (r.bottom < 0 || r.top > innerHeight || box.closest('template, details:not([open])')) return;
            seen.push({
                i, kind: box.className.split(' ')[0],
                scrolls: box.scrollWidth > box.clientWidth + 1,
                named: box.getAttribute('tabindex') === '0' && box.getAttribute('role') === 'region'
                    && /scrolls sideways/.test(box.getAttribute('aria-label') || ''),
                label: box.getAttribute('aria-label'),
            });
        });
    }
    return seen;
}"""


def test_a_box_that_scrolls_sideways_is_named_once_it_comes_near(browser, served_site, built_site: Path):
    """book.js measures a formula or figure only when it nears the screen (the rest of the
    page is not laid out yet): on a screen narrower than any phone, where some do scroll, each
    one in view that scrolls is reachable by keyboard and named by its number on the page (no
    two alike), and none that fits is a tab stop."""
    context = browser.new_context(viewport={"width": 240, "height": 640})
    page = context.new_page()
    problems, scrolling = set(), 0
    try:
        for path in site_pages(built_site):
            page.goto(served_site + path, wait_until="networkidle")
            labels: dict[str, int] = {}  # each named box's label -> the box it names
            for box in page.evaluate(SCROLL_BOXES_WHILE_READING):
                table = box["kind"] == "md-typeset__scrollwrap"
                scrolling += box["scrolls"] and not table
                if box["named"] != (box["scrolls"] or table):
                    problems.add(f"{path}: {box['kind']} #{box['i']} scrolls={box['scrolls']} named={box['named']}")
                if box["named"]:
                    # named by what it holds, as the page numbers it, and by no other box's name
                    if not re.match(r"(Table \d+|Figure [A-Z]?[\d.]+|Equation \(.+\)|Formula \d+) \(scrolls sideways\)$", box["label"]):
                        problems.add(f"{path}: a box named «{box['label']}»")
                    if labels.setdefault(box["label"], box["i"]) != box["i"]:
                        problems.add(f"{path}: two boxes named «{box['label']}»")
    finally:
        context.close()
    assert scrolling, "no formula or figure scrolls even at 240 px: this test checks nothing"
    assert not problems, "\n".join(sorted(problems))


PALETTE_STATE = """() => ({
    scheme: document.body.getAttribute('data-md-color-scheme'),
    shownToggles: [...document.querySelectorAll('[data-book-palette] label')].filter(l => !l.hidden).length,
    colorScheme: document.querySelector('meta[name=color-scheme]')?.content,
    themeColor: document.querySelector('meta[name=theme-color]')?.content,
})"""


def test_light_dark_toggle_follows_the_system_until_the_reader_chooses(browser, served_site):
    """The book's own toggle (overrides/partials/javascripts/palette.html, in place of Material's
    component): the system's setting at load and when it changes, then the reader's choice,
    kept on the next page, by mouse or Enter; one toggle shown, the browser told the scheme."""
    context = browser.new_context(color_scheme="dark")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(served_site + "/")
        state = page.evaluate(PALETTE_STATE)
        assert state["scheme"] == "slate" and state["colorScheme"] == "dark", state
        assert state["shownToggles"] == 1 and state["themeColor"].startswith("#"), state
        page.emulate_media(color_scheme="light")
        page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'default'")
        assert page.evaluate(PALETTE_STATE)["colorScheme"] == "light"

        page.locator("[data-book-palette] label:not([hidden])").click()  # the reader picks dark
        assert page.evaluate(PALETTE_STATE)["scheme"] == "slate"
        page.goto(served_site + "/notation/")
        assert page.evaluate(PALETTE_STATE)["scheme"] == "slate", "the choice was not kept"
        page.emulate_media(color_scheme="light")
        page.wait_for_timeout(100)
        assert page.evaluate(PALETTE_STATE)["scheme"] == "slate", "the system overrode the choice"

        page.focus("[data-book-palette] input:checked")
        page.keyboard.press("Enter")
        state = page.evaluate(PALETTE_STATE)
        assert state["scheme"] == "default" and state["shownToggles"] == 1, state
        assert page.evaluate("document.activeElement.id") == "__palette_0"
    finally:
        context.close()
    assert not errors, errors


# Record, from before the page is read, each change to the attributes of <html> and <body>, and
# whether the page's content had been read when it came (the observer runs between scripts, so
# a change made by a script in the head is seen before any of the body is read). Setting a
# value that is already there (the same classes, in any order) changes nothing and is left out.
WATCH_ROOT_MARKS = """
window.rootMarks = [];
const same = (a, b) => a === b || (a !== null && b !== null
    && [...new Set(a.split(/\\s+/))].sort().join(' ') === [...new Set(b.split(/\\s+/))].sort().join(' '));
new MutationObserver(changes => changes.forEach(change => {
    if (change.target !== document.documentElement && change.target !== document.body) return;
    const value = change.target.getAttribute(change.attributeName);
    if (same(change.oldValue, value)) return;
    window.rootMarks.push({
        element: change.target.tagName, attribute: change.attributeName, from: change.oldValue, value,
        contentRead: !!document.querySelector('.md-content'),
    });
})).observe(document, { attributes: true, attributeOldValue: true, subtree: true,
    attributeFilter: ['class', 'data-js-focus-visible', 'data-md-color-scheme', 'data-md-color-primary',
                      'data-md-color-accent', 'data-md-color-media'] });
"""


def test_the_page_root_is_marked_before_the_content_is_read(browser, served_site):
    """A change to <html>'s or <body>'s class or attributes once the content exists restyles
    every element on screen; Material's bundle makes several (no-js -> js, its focus-visible
    polyfill) and the palette sets the colours. The book sets them all while the head and
    header are read (overrides/partials/javascripts/root-markers.html, palette.html), so once
    the chapter is read and Material has run, nothing on the root changes."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    context.add_init_script(WATCH_ROOT_MARKS)
    page = context.new_page()
    try:
        page.goto(served_site + "/part3-decoder/", wait_until="networkidle")
        assert page.evaluate("typeof window.document$ !== 'undefined'"), "Material's bundle did not run: this test checks nothing"
        marks = page.evaluate("window.rootMarks")
        root = page.evaluate("[document.documentElement.className, document.documentElement.hasAttribute('data-js-focus-visible')]")
    finally:
        context.close()
    early = {(m["element"], m["attribute"]) for m in marks if not m["contentRead"]}
    late = [m for m in marks if m["contentRead"]]
    assert {("HTML", "class"), ("HTML", "data-js-focus-visible")} <= early, early
    assert set(root[0].split()) >= {"js", "js-focus-visible"} and "no-js" not in root[0] and root[1], root
    assert not late, f"the page's root changed after its content was read: {late}"


def test_the_search_index_waits_until_the_reader_reaches_for_search(browser, served_site):
    """Material requests the whole search index on every page it opens
    (overrides/partials/javascripts/search-on-demand.html holds that back): a page read without
    searching never asks for it; the search button on a phone, or the keyboard shortcut on a
    desktop, fetches it and search answers; a page opened from a search result (?h=) fetches it
    at once, for Material to highlight the terms, and so does a shared search (?q=)."""
    for viewport, reach in (({"width": 390, "height": 844}, "tap"), ({"width": 1280, "height": 900}, "key")):
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        asked: list[str] = []
        page.on("request", lambda request: "search_index.json" in request.url and asked.append(request.url))
        try:
            page.goto(served_site + "/part2-one-head/", wait_until="networkidle")
            page.wait_for_timeout(500)
            assert page.evaluate("typeof window.document$ !== 'undefined'"), "Material's bundle did not run: this test checks nothing"
            assert asked == [], f"the index was fetched before the reader searched ({reach})"
            if reach == "tap":
                page.locator("label[for=__search]").first.click()
            else:
                page.keyboard.press("/")
            page.keyboard.type("softmax")
            page.wait_for_selector(".md-search-result__item", timeout=15_000)
            assert len(asked) == 1, asked

            asked.clear()
            page.goto(served_site + "/part2-one-head/?h=softmax", wait_until="networkidle")
            page.wait_for_selector("article mark", timeout=15_000)
            assert len(asked) == 1, asked

            asked.clear()  # a shared search (?q=): Material opens search with the query in it
            page.goto(served_site + "/part2-one-head/?q=softmax", wait_until="networkidle")
            page.wait_for_selector(".md-search-result__item", timeout=15_000)
            assert len(asked) == 1, asked
        finally:
            context.close()


@pytest.mark.parametrize("width", [800, 1280])
def test_no_figure_scrolls_sideways_on_a_wide_screen(browser, served_site, built_site: Path, width):
    """A figure's image keeps a minimum width (its smallest text legible); in a column wider than
    that it must not scroll (Material's fit-content once made such figures narrower than their
    minimum, and they scrolled at 1280 px)."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    scrolling = []
    try:
        for path in site_pages(built_site):
            page.goto(served_site + path, wait_until="load")
            page.evaluate("() => document.querySelectorAll('details.aside').forEach(d => { d.open = true; })")
            page.add_style_tag(content="* { content-visibility: visible !important; }")
            scrolling += [f"{path}#{fig}" for fig in page.evaluate(
                """() => [...document.querySelectorAll('.numbook-figure__scroll')]
                    .filter(b => b.checkVisibility() && b.scrollWidth > b.clientWidth + 1)
                    .map(b => b.closest('figure').id)""")]
    finally:
        context.close()
    assert not scrolling, scrolling
