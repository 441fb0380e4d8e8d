"""The built book on a 390 px phone, in a real Chromium.

* Every figure's smallest text, as displayed, is at least the size of Material's footnote
  text there: measured from the width the browser gives the image and, independently of the
  plugin's own parser, from the SVG's viewBox and the font sizes of its text.
* Nothing the text names is off-screen: tables fit the column (or, at most two per page,
  scroll with their row labels held and the named cell in view), no formula or figure is cut,
  sliders and controls are big enough for a thumb, and the page never scrolls sideways.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from .conftest import site_pages

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
    let namedInView = null;
    if (named && box) {
      const b = rect(box), c = rect(named);
      namedInView = c.left >= b.left - 1 && c.right <= b.right + 1;
    }
    return {text: text(t), wide, sticky: first ? getComputedStyle(first).position === 'sticky' : false,
            named: !!named, namedInView, aside: !!t.closest('details.aside')};
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
SCREENSHOTS = Path(os.environ.get("PHONE_SCREENSHOTS", Path(__file__).resolve().parents[2] / ".cache" / "phone"))


def test_a_phone_reader_sees_everything_the_text_names(phone, served_site):
    """At 390 x 844: tables fit the column (at most two matrices scroll, their row labels held in
    view and the named cell scrolled to), no formula or figure is cut, sliders are long enough
    for a thumb, every control is at least 24 x 24 px (a widget's own buttons 44 px tall), and
    the page itself never scrolls sideways. Each chapter's screenshot is kept for a person."""
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
            if not t["aside"] and not (t["named"] and t["namedInView"]):
                problems.append(f"{path}: table «{t['text']}» scrolls without the cell the text names in view")
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


#: True for a check mark a reader can see: its check is inside no closed fold or aside.
SEEN_MARK = "m => !(m.closest('details.numbook-check') || m).parentElement.closest('details:not([open])')"


def test_checks_fold_to_a_small_mark_that_opens(phone, served_site):
    phone.goto(served_site + "/part2-one-head/", wait_until="networkidle")
    checks = phone.evaluate(CHECKS)
    assert len(checks) >= 10
    for check in checks:
        assert not check["open"]
        assert check["height"] <= 32, f"a folded check takes {check['height']} px: {check['name'][:60]}"
        assert check["name"].startswith("✓Checked when this page was built: ")
    # checks in a row stand side by side: no mark a reader sees covers another, with the
    # asides closed and with them open (a closed aside still lays out its marks in Chromium,
    # at places nobody sees, so those are left out)
    assert phone.locator("details.numbook-check + details.numbook-check").count() >= 1
    for state in ("closed", "open"):
        if state == "open":
            phone.evaluate("() => document.querySelectorAll('details.aside').forEach(d => { d.open = true; })")
        marks = [m.bounding_box() for m in phone.locator(".numbook-check__mark").all()
                 if m.evaluate(SEEN_MARK)]
        assert len(marks) >= 10, f"too few check marks seen with the asides {state}"
        for i, a in enumerate(marks):
            for b in marks[i + 1:]:
                apart = (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                         or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])
                assert apart, f"two check marks overlap at {a} and {b} (asides {state})"
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
