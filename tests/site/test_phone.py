"""The built book on a 390 px phone, in a real Chromium.

* Every figure's smallest text, as displayed, is at least the size of Material's footnote
  text there: measured from the width the browser gives the image and, independently of the
  plugin's own parser, from the SVG's viewBox and the font sizes of its text.
* Nothing the text names is off-screen: tables fit the column (or, at most two per page,
  scroll with their row labels held, a cue that says so and their first columns in view), no
  formula or figure is cut, sliders and controls are big enough for a thumb, and the page never
  scrolls sideways.
* The book's own features work there (issue 48): every check opens within the screen, at 320,
  390 and 1280 px, by tap and by keyboard; a glossary term opens its definition on tap and on
  focus, beside the term; no line of code is wider than its box, and a wrapped one is marked;
  a table split for a phone keeps the columns that tell its rows apart.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from .conftest import DRAW_WHOLE_PAGE, site_pages

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
# The size of Material's footnote text on this page, measured with a probe element.
FOOTNOTE_PX = """() => {
    const probe = document.createElement('div');
    probe.className = 'footnote';
    probe.textContent = 'x';
    document.querySelector('.md-typeset').appendChild(probe);
    const size = parseFloat(getComputedStyle(probe).fontSize);
    probe.remove();
    return size;
}"""
# Lay out what is off screen too (the page's stylesheet lets a browser skip it until the
# reader scrolls near: content-visibility), so that everything can be measured where it is shown.
LAY_OUT_EVERYTHING = """() => {
  const style = document.createElement('style');
  style.textContent = '* { content-visibility: visible !important; }';
  document.head.append(style);
}"""
# Every aside opened, as a reader who wants its depth would: its figures are measured too.
OPEN_ASIDES = "() => document.querySelectorAll('details.aside').forEach(d => { d.open = true; })"
# The image each figure shows at this width: a <picture> may have picked its narrow layout.
SHOWN_FIGURES = """() => [...document.querySelectorAll('figure.numbook-figure img')]
    .filter(i => getComputedStyle(i).display !== 'none')
    .map(i => {
        const source = i.parentElement.matches('picture') ? i.parentElement.querySelector('source') : null;
        const chosen = source && matchMedia(source.media).matches ? new URL(source.srcset, location.href).href : i.src;
        return {src: new URL(chosen).pathname, width: i.getBoundingClientRect().width};
    })"""
_SIZE = re.compile(r"(?:^|;)\s*font-size\s*:\s*([0-9.]+)px", re.I)
_SHORTHAND = re.compile(r"(?:^|;)\s*font\s*:\s*(?:[a-z-]+\s+)*?([0-9.]+)px", re.I)


def svg_text_sizes(svg: str) -> tuple[float, list[float]]:
    """(viewBox width, font size of every element that sets one), read with ElementTree."""
    root = ET.fromstring(svg.encode("utf-8"))
    box_width = float(re.split(r"[\s,]+", root.attrib["viewBox"].strip())[2])
    sizes = []
    for element in root.iter():
        style = element.attrib.get("style", "")
        found = _SIZE.findall(style) + _SHORTHAND.findall(style)
        if "font-size" in element.attrib:
            found.append(element.attrib["font-size"].removesuffix("px"))
        sizes += [float(s) for s in found]
    return box_width, sizes


def test_svg_text_sizes_reads_styles_and_attributes():
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 300 100">'
           '<text style="font: 10px \'DejaVu Sans\'; text-anchor: middle">a</text>'
           '<g style="fill: #000; font-size: 7.5px"><text font-size="12">b</text></g></svg>')
    assert svg_text_sizes(svg) == (300.0, [10.0, 7.5, 12.0])


@pytest.fixture(scope="module")
def phone(browser):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    yield page
    context.close()


def _file_of(built_site: Path, page_url: str, src: str) -> Path:
    path = urlsplit(urljoin(page_url, src)).path
    return built_site / path.lstrip("/")


def test_every_figure_reads_at_footnote_size_on_a_phone(phone, served_site, built_site: Path):
    problems, measured = [], 0
    for path in site_pages(built_site):
        url = served_site + path
        phone.goto(url, wait_until="networkidle")
        floor = phone.evaluate(FOOTNOTE_PX)
        assert 10 <= floor <= 16, f"{path}: footnote text measured at {floor} px?"
        phone.evaluate(OPEN_ASIDES)
        phone.evaluate(LAY_OUT_EVERYTHING)
        for image in phone.evaluate(SHOWN_FIGURES):
            box_width, sizes = svg_text_sizes(_file_of(built_site, url, image["src"]).read_text())
            assert sizes, f"{image['src']} has no text?"
            smallest = min(sizes) * image["width"] / box_width
            measured += 1
            if smallest < floor - 0.01:
                problems.append(f"{path} {image['src']}: smallest text {smallest:.1f} px < {floor} px "
                                f"at {image['width']:.0f} px wide")
    assert measured, "no figure was measured"
    assert not problems, "\n".join(problems)


CHAPTERS = ["/", "/notation/", "/part1-character-model/", "/part2-one-head/", "/part3-learning/",
            "/part3-decoder/", "/part3-context/", "/part4-cross-attention/", "/cross-attention-one-page/"]
MAX_SCROLLING_TABLES = 2
MIN_SLIDER_PX, MIN_TARGET_PX, WIDGET_BUTTON_PX = 240, 24, 44
# Everything on a page a phone reader may need to see or touch, measured where it is shown.
# (after LAY_OUT_EVERYTHING)
PHONE_READING = r"""() => {
  const article = document.querySelector('article');
  const column = article.clientWidth;
  const seen = e => e.checkVisibility() && !e.closest('details:not([open])');
  const rect = e => e.getBoundingClientRect();
  const text = e => (e.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 50);
  const tables = [...article.querySelectorAll('table')].filter(seen).map(t => {
    const box = t.closest('.md-typeset__scrollwrap, .numbook-widget-scroll');
    const wide = t.scrollWidth > column + 1 || (box && box.scrollWidth > box.clientWidth + 1);
    const first = t.rows[1]?.cells[0] || t.rows[0]?.cells[0];
    const named = t.querySelector('.numbook-named');
    // the words over a box that scrolls (book.css draws them from book.js's mark)
    const cue = box ? getComputedStyle(box, '::before').content : 'none';
    return {text: text(t), wide, sticky: first ? getComputedStyle(first).position === 'sticky' : false,
            named: !!named, cue: cue !== 'none' && cue !== 'normal' && /scroll/i.test(cue),
            atStart: box ? box.scrollLeft === 0 : true, aside: !!t.closest('details.aside')};
  });
  const equations = [...article.querySelectorAll('.katex-display')].filter(seen)
    .filter(e => e.scrollWidth > e.clientWidth + 1).map(text);
  const figures = [...article.querySelectorAll('.numbook-figure__scroll')].filter(seen)
    .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.closest('figure').id);
  const sliders = [...article.querySelectorAll('input[type=range]')].filter(seen)
    .map(s => ({name: s.getAttribute('aria-label') || s.id || s.name, width: Math.round(rect(s).width)}));
  const controls = [...article.querySelectorAll('button, input:not([type=hidden]), select, summary, .md-button, label:has(> input)')]
    .filter(seen).filter(e => !(e.matches('input[type=radio], input[type=checkbox]') && e.closest('label')))
    .map(e => { const r = rect(e); return {what: e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ')[0] : ''),
      text: text(e), width: Math.round(r.width), height: Math.round(r.height),
      widget: !!e.closest('.numbook-widget')}; })
    .filter(c => c.width > 0 && c.height > 0);
  // a code block's "Source:" line sits below its box, never under it
  const sources = [...article.querySelectorAll('.numbook-sources')].filter(seen).filter(p => {
    const code = p.previousElementSibling;
    return code && rect(p).top < rect(code).bottom - 0.5;
  }).map(text);
  // each tab label is read whole: its text is not cut, and it lies inside its row of labels
  const tabs = [...article.querySelectorAll('.tabbed-labels > label')].filter(seen).filter(l => {
    const row = rect(l.parentElement), r = rect(l);
    return l.scrollWidth > l.clientWidth + 1 || r.left < row.left - 1 || r.right > row.right + 1;
  }).map(text);
  return {column, pageWidth: document.documentElement.scrollWidth, viewport: innerWidth,
          tables, equations, figures, sliders, controls, sources, tabs};
}"""
NEXT_FRAMES = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"
SCREENSHOTS = Path(os.environ.get("PHONE_SCREENSHOTS", Path(__file__).resolve().parents[2] / ".cache" / "phone"))


def test_a_phone_reader_sees_everything_the_text_names(phone, served_site):
    """At 390 x 844: tables fit the column (at most two matrices scroll: each opens at its first
    columns, holds its row labels in view, says in words that it scrolls, and marks the cell the
    text names), no formula or figure is cut, sliders are long enough for a thumb, every control
    is at least 24 x 24 px (a widget's own buttons 44 px tall), and the page itself never scrolls
    sideways. Each chapter's screenshot is kept for a person."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    problems, tables_seen = [], 0
    for path in CHAPTERS:
        phone.goto(served_site + path, wait_until="networkidle")
        phone.evaluate("() => window.bookWidgets.startAll(true)")  # every widget, not only those near
        phone.wait_for_function("() => [...document.querySelectorAll('[data-numbook-widget]')]"
                                ".every(w => w.dataset.numbookReady === 'yes')")
        phone.evaluate(LAY_OUT_EVERYTHING)
        name = path.strip("/") or "home"
        phone.screenshot(path=str(SCREENSHOTS / f"{name}.jpeg"), full_page=True, type="jpeg", quality=60)
        phone.evaluate(OPEN_ASIDES)  # what a reader who opens them sees must fit too
        phone.evaluate(NEXT_FRAMES)  # book.js marks a table that scrolls once it is laid out
        seen = phone.evaluate(PHONE_READING)
        if seen["pageWidth"] > seen["viewport"]:
            problems.append(f"{path}: the page is {seen['pageWidth']} px wide in a {seen['viewport']} px screen")
        tables_seen += len(seen["tables"])
        scrolling = [t for t in seen["tables"] if t["wide"]]
        main_line = [t for t in scrolling if not t["aside"]]  # an aside's long table of weights may scroll
        if len(main_line) > MAX_SCROLLING_TABLES:
            problems.append(f"{path}: {len(main_line)} tables wider than the column: {[t['text'] for t in main_line]}")
        for t in scrolling:
            if not t["sticky"]:
                problems.append(f"{path}: table «{t['text']}» scrolls without its row labels in view")
            if not t["cue"]:
                problems.append(f"{path}: table «{t['text']}» scrolls without saying so")
            if not t["atStart"]:
                problems.append(f"{path}: table «{t['text']}» opens scrolled past its first columns")
            if not t["aside"] and not t["named"]:
                problems.append(f"{path}: table «{t['text']}» scrolls without marking the cell the text names")
        problems += [f"{path}: formula cut at the right edge: «{e}»" for e in seen["equations"]]
        problems += [f"{path}: figure {f} scrolls sideways" for f in seen["figures"]]
        problems += [f"{path}: «{t}» slides under the code box above it" for t in seen["sources"]]
        problems += [f"{path}: tab label «{t}» is cut" for t in seen["tabs"]]
        problems += [f"{path}: slider {s['name']} is {s['width']} px long" for s in seen["sliders"]
                     if s["width"] < MIN_SLIDER_PX]
        for c in seen["controls"]:
            tall = WIDGET_BUTTON_PX if c["widget"] and c["what"].startswith(("button", "label")) else MIN_TARGET_PX
            if c["width"] < MIN_TARGET_PX or c["height"] < tall:
                problems.append(f"{path}: {c['what']} «{c['text']}» is {c['width']} x {c['height']} px")
    assert tables_seen > 100, "the test measured too few tables"
    assert not problems, "\n".join(problems)


CHECKS = """() => [...document.querySelectorAll('details.numbook-check')].map(d => ({
    open: d.open,
    height: d.getBoundingClientRect().height,
    name: d.querySelector('summary').textContent.trim(),
}))"""


# The check marks a reader can see, in page coordinates. Chromium lays out the content of a
# closed <details> (an aside) without showing it (content-visibility: hidden, since about
# version 130): its marks have boxes, piled where the aside's summary is, that no reader sees.
SHOWN_MARKS = """() => [...document.querySelectorAll('.numbook-check__mark')]
    .filter(m => m.checkVisibility())
    .map(m => { const r = m.getBoundingClientRect();
                return {left: r.left + scrollX, right: r.right + scrollX, top: r.top + scrollY, bottom: r.bottom + scrollY}; })"""


def test_checks_fold_to_a_small_mark_that_opens(phone, served_site):
    phone.goto(served_site + "/part2-one-head/", wait_until="networkidle")
    checks = phone.evaluate(CHECKS)
    assert len(checks) >= 10
    for check in checks:
        assert not check["open"]
        assert check["height"] <= 32, f"a folded check takes {check['height']} px: {check['name'][:60]}"
        assert check["name"].startswith("✓Checked when this page was built: ")
    # checks in a row stand side by side: no mark covers another, asides closed or open
    assert phone.locator("details.numbook-check + details.numbook-check").count() >= 1
    for asides_open in (False, True):
        phone.evaluate(f"() => document.querySelectorAll('details.aside').forEach(d => {{ d.open = {str(asides_open).lower()}; }})")
        marks = phone.evaluate(SHOWN_MARKS)
        assert len(marks) >= 10
        for i, a in enumerate(marks):
            for b in marks[i + 1:]:
                apart = (a["right"] <= b["left"] or b["right"] <= a["left"]
                         or a["bottom"] <= b["top"] or b["bottom"] <= a["top"])
                assert apart, f"two check marks overlap at {a} and {b} (asides open: {asides_open})"
    phone.evaluate("() => document.querySelectorAll('details.aside').forEach(d => { d.open = false; })")
    first = phone.locator("details.numbook-check summary").first
    first.click()
    opened = phone.evaluate(CHECKS)[0]
    assert opened["open"] and opened["height"] > 60  # the claim and its assertions
    assert phone.locator("details.numbook-check").first.locator("code").first.is_visible()


FOLDS = """() => ({
    held: document.querySelectorAll('script[data-numbook-fold]').length,
    elements: document.querySelectorAll('*').length,
})"""


def test_folds_are_built_into_the_page_when_opened_by_keyboard_or_printed(phone, served_site, built_site):
    html_text = (built_site / "part3-decoder" / "index.html").read_text(encoding="utf-8")
    phone.goto(served_site + "/part3-decoder/", wait_until="networkidle")
    before = phone.evaluate(FOLDS)
    # every check and every figure's data waits as text, in the HTML
    assert before["held"] == html_text.count('<script type="text/html" data-numbook-fold>')
    assert before["held"] >= phone.locator("details.numbook-check").count() > 20
    check = phone.locator("details.numbook-check").first
    assert check.locator("code").count() == 0
    check.locator("summary").focus()
    phone.keyboard.press("Enter")
    assert check.evaluate("d => d.open") and check.locator("code").first.is_visible()
    data = phone.locator("details.numbook-data").first
    data.locator("summary").click()
    assert data.locator("table tbody tr").count() > 0 and data.locator("a[download]").is_visible()
    assert phone.evaluate(FOLDS)["held"] == before["held"] - 2
    # before printing, every fold is put in place (Material opens them all for paper)
    phone.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    after = phone.evaluate(FOLDS)
    assert after["held"] == 0 and after["elements"] > before["elements"] + 1000
    assert phone.locator("details.numbook-check code").count() == phone.locator("details.numbook-check").count()


# How far the title's permalink mark (¶, shown on hover) reaches below the title's last line
# of text: a mark wrapped onto a line of its own leaves an empty line under the title.
TITLE_MARK_OVERHANG = """async () => {
    await document.fonts.ready;
    const title = document.querySelector('.md-content h1');
    if (!title) return null;
    const mark = title.querySelector('.headerlink');
    const half = parseFloat(getComputedStyle(title).fontSize) / 2;
    if (!mark || getComputedStyle(mark).display === 'none') return {title: title.textContent, overhang: 0, half};
    const text = document.createRange();
    text.setStartBefore(title.firstChild);
    text.setEndBefore(mark);
    const textBottom = Math.max(...[...text.getClientRects()].map(r => r.bottom));
    return {title: title.textContent, overhang: mark.getBoundingClientRect().bottom - textBottom, half};
}"""


def test_no_title_ends_in_an_empty_line_on_a_phone(phone, served_site, built_site: Path):
    problems, titles = [], 0
    for path in site_pages(built_site):
        phone.goto(served_site + path, wait_until="load")
        measured = phone.evaluate(TITLE_MARK_OVERHANG)
        if measured is None:
            continue
        titles += 1
        if measured["overhang"] > measured["half"]:  # a mark on the text's line sticks out a few px
            problems.append(f"{path} «{measured['title'][:50]}»: the ¶ mark wraps "
                            f"{measured['overhang']:.0f} px below the title")
    assert titles >= 10, f"only {titles} pages have a title"
    assert not problems, "\n".join(problems)


# ---- issue 48: the book's own features on a phone ------------------------------------------

READING_PAGES = [p for p in CHAPTERS if p != "/"] + ["/figures/"]


@pytest.fixture(scope="module")
def touch(browser):
    """A 390 px phone that taps (touch events), for what a reader's finger does."""
    context = browser.new_context(viewport=PHONE, has_touch=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    context.close()
    assert not errors, errors


# Every check of the page opened at once (each puts its assertions in place as it opens), then
# each measured: its box, its claim and its code against the screen.
OPEN_CHECKS = "() => document.querySelectorAll('details.numbook-check').forEach(d => { d.open = true; })"
CHECKS_IN_VIEW = """() => [...document.querySelectorAll('details.numbook-check')].filter(d => d.checkVisibility()).map(d => {
    const r = d.getBoundingClientRect(), claim = d.querySelector('.numbook-check__claim');
    const c = claim.getBoundingClientRect(), code = d.querySelector('pre > code');
    return {claim: claim.textContent.slice(34, 90), left: r.left, right: r.right,
            claimLeft: c.left, claimRight: c.right, claimShown: claim.checkVisibility() && c.width > 20,
            hasCode: !!code, codeFits: !!code && code.scrollWidth <= code.clientWidth + 1,
            codeInside: !!code && code.getBoundingClientRect().left >= r.left - 1
                && code.getBoundingClientRect().right <= r.right + 1};
})"""


@pytest.mark.parametrize("width", [320, 390, 1280])
def test_every_check_opens_within_the_screen(browser, served_site, width):
    """Opened, a check lies within the screen (the issue: a box 560-660 px wide from x = -200 on
    a 390 px phone), its claim shown and its code inside its own box, never wider than it."""
    context = browser.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    problems, measured = [], 0
    try:
        for path in READING_PAGES:
            page.goto(served_site + path, wait_until="load")
            page.evaluate(LAY_OUT_EVERYTHING)
            page.evaluate(OPEN_ASIDES)
            page.evaluate(OPEN_CHECKS)
            page.wait_for_function("() => !document.querySelector('details.numbook-check > script[data-numbook-fold]')")
            for check in page.evaluate(CHECKS_IN_VIEW):
                measured += 1
                where = f"{path} «{check['claim']}» at {width} px"
                if check["left"] < -0.5 or check["right"] > width + 0.5:
                    problems.append(f"{where}: opened from x = {check['left']:.0f} to {check['right']:.0f}")
                if not check["claimShown"] or check["claimLeft"] < 0 or check["claimRight"] > width:
                    problems.append(f"{where}: the claim is not in view")
                if not (check["hasCode"] and check["codeFits"] and check["codeInside"]):
                    problems.append(f"{where}: its code is missing, wider than its box or outside the check")
    finally:
        context.close()
    assert measured > 100, f"only {measured} checks measured"
    assert not problems, "\n".join(problems[:40])


SUMMARY_STATE = """s => ({open: s.parentElement.open, expanded: s.parentElement.open,
    name: s.textContent.replace(/\\s+/g, ' ').trim(), focused: document.activeElement === s})"""


def test_a_check_opens_by_tap_and_by_keyboard_and_names_its_claim(touch, served_site):
    """A tap on the mark opens the check, and Enter on the focused mark closes and opens it;
    what a screen reader announces for the mark is the claim (the summary's text: the mark
    itself is hidden from it) and whether it is open (a <details>' own state)."""
    touch.goto(served_site + "/cross-attention-one-page/", wait_until="networkidle")
    summary = touch.locator("details.numbook-check > summary:visible").nth(2)
    summary.scroll_into_view_if_needed()
    state = summary.evaluate(SUMMARY_STATE)
    assert not state["open"] and state["name"].startswith("✓Checked when this page was built: ")
    assert summary.locator(".numbook-check__mark").get_attribute("aria-hidden") == "true"
    summary.tap()
    touch.wait_for_function("s => s.parentElement.open && s.parentElement.querySelector('pre code')", arg=summary.element_handle())
    box = summary.evaluate("s => s.parentElement.getBoundingClientRect().toJSON()")
    assert box["left"] >= 0 and box["right"] <= PHONE["width"], box
    summary.focus()
    touch.keyboard.press("Enter")
    assert not summary.evaluate(SUMMARY_STATE)["open"]
    touch.keyboard.press(" ")
    state = summary.evaluate(SUMMARY_STATE)
    assert state["open"] and state["focused"]


TERM_STATE = """() => {
    const box = document.getElementById('book-term');
    const term = document.querySelector('[aria-describedby="book-term"]');
    const rect = e => e && e.getBoundingClientRect().toJSON();
    return {shown: !!box && !box.hidden && box.checkVisibility(), text: box ? box.textContent : null,
            box: box && !box.hidden ? rect(box) : null, term: rect(term), described: term ? term.textContent : null,
            role: box && box.getAttribute('role')};
}"""


def _apart(a: dict, b: dict) -> bool:
    return a["right"] <= b["left"] or b["right"] <= a["left"] or a["bottom"] <= b["top"] or b["bottom"] <= a["top"]


def _definition_beside(state: dict, term_text: str, definition: str, width: int) -> list[str]:
    problems = []
    if not state["shown"]:
        return [f"«{term_text}»: no definition shown"]
    if state["text"] != definition or state["described"] != term_text or state["role"] != "tooltip":
        problems.append(f"«{term_text}»: shows «{state['text']}» as the description of «{state['described']}»")
    if not _apart(state["box"], state["term"]):
        problems.append(f"«{term_text}»: the definition covers the term ({state['box']} over {state['term']})")
    if state["box"]["left"] < 0 or state["box"]["right"] > width:
        problems.append(f"«{term_text}»: the definition runs off the screen ({state['box']})")
    return problems


def test_a_glossary_term_opens_its_definition_by_tap_and_by_keyboard(touch, served_site):
    """On a 390 px phone every glossary term (<abbr title>) is a tab stop; a tap or the
    keyboard's focus shows its definition beside it (never over it, within the screen) as its
    description; Escape, a tap elsewhere or moving on closes it. (test_glossary_site.py holds
    every title to the glossary's definition.)"""
    touch.goto(served_site + "/part2-one-head/", wait_until="networkidle")
    terms = touch.locator("article p abbr[title]")
    assert terms.count() > 10
    unreachable = touch.evaluate("""() => [...document.querySelectorAll('article abbr[title]')]
        .filter(a => !a.parentElement.closest('a, summary, button, label') && a.tabIndex !== 0).length""")
    assert unreachable == 0, f"{unreachable} terms are not tab stops"
    problems = []
    for k in (0, 3, terms.count() - 1):
        term = terms.nth(k)
        text, definition = term.text_content(), term.get_attribute("title")
        term.scroll_into_view_if_needed()
        term.tap()
        problems += _definition_beside(touch.evaluate(TERM_STATE), text, definition, PHONE["width"])
        touch.keyboard.press("Escape")
        assert not touch.evaluate(TERM_STATE)["shown"], "Escape did not close the definition"
        assert term.get_attribute("title") == definition  # the term keeps its title when closed
        term.tap()
        touch.touchscreen.tap(4, PHONE["height"] // 2)  # the page's margin: nothing there
        assert not touch.evaluate(TERM_STATE)["shown"], "a tap elsewhere did not close the definition"
    # by keyboard: Tab from the element before a term lands on it and shows its definition
    term = terms.nth(5)
    text, definition = term.text_content(), term.get_attribute("title")
    term.evaluate("t => t.insertAdjacentHTML('beforebegin', '<button id=before-term>·</button>')")
    touch.focus("#before-term")
    touch.keyboard.press("Tab")
    assert touch.evaluate("() => document.activeElement.textContent") == text
    problems += _definition_beside(touch.evaluate(TERM_STATE), text, definition, PHONE["width"])
    touch.keyboard.press("Tab")
    assert not touch.evaluate(TERM_STATE)["shown"], "moving on did not close the definition"
    assert not problems, "\n".join(problems)


# Every code block a reader can open (asides, checks and folds opened), measured as shown: does
# it scroll sideways, does any line wrap without its continuation mark, and does a copy (what
# Material's button takes: the block's rendered text) give the code as written?
CODE_BLOCKS = """() => [...document.querySelectorAll('article pre > code')].filter(c => c.checkVisibility()).map(c => {
    const unmarked = [...c.childNodes].filter(n => n.nodeType === 3 && n.textContent.trim()).length;
    const lineHeight = parseFloat(getComputedStyle(c).lineHeight);
    const wrapped = [...c.querySelectorAll(':scope > .numbook-line')].filter(l => l.getBoundingClientRect().height > 1.5 * lineHeight).length;
    c.setAttribute('data-md-copying', '');
    const copied = c.innerText.trimEnd();
    c.removeAttribute('data-md-copying');
    return {text: c.textContent.slice(0, 50), scrolls: c.scrollWidth > c.clientWidth + 1,
            cite: c.classList.contains('numbook-cite-text'), unmarked, wrapped, copyExact: copied === c.textContent.trimEnd()};
})"""


@pytest.mark.parametrize("width", [320, 390])
def test_no_line_of_code_is_wider_than_its_box(browser, served_site, width):
    """Teaching code, checks' assertions, printed output and folded code: no line runs past the
    right edge of its box (nothing is cut, nothing scrolls); a line that wraps is one of
    numbook-lean's marked lines, so its continuation shows as such; a copy is the code."""
    context = browser.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    problems, blocks, wrapped = [], 0, 0
    try:
        for path in READING_PAGES:
            page.goto(served_site + path, wait_until="load")
            page.evaluate(LAY_OUT_EVERYTHING)
            page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
            page.wait_for_function("() => !document.querySelector('script[data-numbook-fold]')")
            for block in page.evaluate(CODE_BLOCKS):
                blocks += 1
                wrapped += block["wrapped"]
                if block["scrolls"]:
                    problems.append(f"{path} at {width} px: a line is wider than its box in «{block['text']}»")
                if block["unmarked"] and not block["cite"]:
                    problems.append(f"{path}: {block['unmarked']} lines without their span in «{block['text']}»")
                if not block["copyExact"]:
                    problems.append(f"{path}: a copy of «{block['text']}» is not the code")
    finally:
        context.close()
    assert blocks > 200 and wrapped > 20, (blocks, wrapped)
    assert not problems, "\n".join(problems[:40])


# A computed table's phone layout (stacked tables): the leading columns every part repeats,
# and whether those tell each part's rows apart.
SPLIT_TABLES = """() => [...document.querySelectorAll('.numbook-table__narrow')].filter(n => n.checkVisibility()).map(n => {
    const parts = [...n.querySelectorAll('table')].map(t => ({
        head: [...t.tHead.rows[0].cells].map(c => c.textContent.trim()),
        rows: [...t.tBodies[0].rows].map(r => [...r.cells].map(c => c.textContent.trim()))}));
    let keys = 0;
    while (parts.every(p => p.head[keys] !== undefined && p.head[keys] === parts[0].head[keys])) keys++;
    const apart = parts.every(p => new Set(p.rows.map(r => JSON.stringify(r.slice(0, keys)))).size === p.rows.length);
    return {text: n.textContent.replace(/\\s+/g, ' ').trim().slice(0, 50), parts: parts.length, keys, apart};
})"""


def test_a_table_split_for_a_phone_keeps_the_columns_that_tell_its_rows_apart(phone, served_site):
    """Each part of a table split for a phone repeats the leading columns that tell its rows
    apart (the Guide's example needs two: its first column says "decoder" twice)."""
    split = []
    for path in READING_PAGES + ["/how-this-book-is-built/"]:
        phone.goto(served_site + path, wait_until="load")
        phone.evaluate(OPEN_ASIDES)
        split += [dict(t, path=path) for t in phone.evaluate(SPLIT_TABLES) if t["parts"] > 1]
    assert any(t["keys"] > 1 for t in split), "no split table needs two label columns: this test checks little"
    bad = [f"{t['path']} «{t['text']}»: its parts repeat {t['keys']} columns, which do not tell its rows apart"
           for t in split if t["keys"] == 0 or not t["apart"]]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("width", [390, 780])
def test_axe_finds_nothing_serious_or_moderate_on_a_phone_or_a_tablet(browser, served_site, width):
    """axe-core on Home, every chapter and the gallery at a phone's and a tablet's width: no
    critical, serious or moderate finding (scrolling boxes reachable by keyboard, landmarks
    named, no empty table header; the issue found all three). At 1280 px every page is scanned
    by test_browser.py's test_every_page_reads_cleanly, to the same bar."""
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    problems = []
    try:
        for path in CHAPTERS + ["/figures/"]:
            page.goto(served_site + path, wait_until="networkidle")
            page.evaluate(DRAW_WHOLE_PAGE)
            for v in axe.run(page).response["violations"]:
                if v["impact"] in {"critical", "serious", "moderate"}:
                    problems.append(f"{path} at {width} px: {v['id']} ({v['impact']}) at "
                                    f"{[n['target'] for n in v['nodes']][:3]}")
    finally:
        context.close()
    assert not problems, "\n".join(problems)
