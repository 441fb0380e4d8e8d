"""What an instructor does with the book, in a real Chromium: copy a citation, let a
reference manager read a page, take a figure from the gallery, print a chapter."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT, off_gallery_pages
from .test_browser import LOAD_SHOWN_IMAGES, UNLOADED_IMAGES

pytestmark = pytest.mark.browser

CHAPTER = "/part4-cross-attention/"  # figures, tabs, links to other pages


@pytest.fixture(scope="module")
def tab(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    context.close()


def metadata() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def test_citation_box_copies_the_citation_with_the_readers_date(tab, served_site):
    before = datetime.date.today().isoformat()
    tab.goto(served_site + CHAPTER, wait_until="networkidle")
    after = datetime.date.today().isoformat()
    box = tab.locator("article .numbook-cite")
    # the box is the last thing in the chapter
    assert tab.evaluate("() => document.querySelector('article').lastElementChild.matches('.numbook-cite')")
    texts = box.locator("code.numbook-cite-text").all_inner_texts()
    assert len(texts) == 2
    for text in texts:
        assert "YYYY-MM-DD" not in text
        assert f"accessed {before})" in text or f"accessed {after})" in text or \
            re.search(rf"urldate\s+= \{{({before}|{after})\}}", text), text
    # Material's copy button copies exactly the text shown
    bibtex = box.locator("pre").nth(1)
    bibtex.hover()
    bibtex.get_by_title("Copy to clipboard").click()
    copied = tab.evaluate("() => navigator.clipboard.readText()")
    assert copied.strip() == texts[1].strip()
    assert copied.startswith("@incollection{") and f"version   = {{{metadata()['version']}}}" in copied
    assert not tab.errors


def test_reference_managers_find_the_meta_tags(tab, served_site):
    tab.goto(served_site + CHAPTER, wait_until="networkidle")
    tags = tab.evaluate("""() => [...document.querySelectorAll('head meta[name^="citation_"]')]
        .map(m => [m.name, m.content])""")
    data = metadata()
    names = [name for name, _ in tags]
    for required in ("citation_title", "citation_author", "citation_publication_date",
                     "citation_book_title", "citation_version", "citation_public_url"):
        assert required in names
    values = dict(tags)
    assert values["citation_title"] == "Part 4. Cross-attention: translate one phrase"
    assert values["citation_book_title"] == data["title"]
    assert values["citation_public_url"] == f"{data['url']}{data['version']}{CHAPTER}"
    # the link a reader copies from the address bar of this edition agrees with the tag
    assert tab.evaluate("() => document.querySelector('link[rel=canonical]').href").startswith(data["url"])


def test_gallery_shows_every_figure_and_its_downloads(tab, served_site, built_site: Path):
    tab.goto(served_site + "/figures/", wait_until="networkidle")
    items = tab.locator("li.numbook-gallery__item")
    figures = sum(
        len(re.findall(r'<figure class="numbook-figure[ "]', p.read_text(encoding="utf-8")))
        for p in built_site.rglob("index.html") if not p.is_relative_to(built_site / "figures")
        and "/" + p.parent.relative_to(built_site).as_posix() + "/" not in off_gallery_pages()
    )
    assert items.count() == figures > 0
    tab.evaluate(LOAD_SHOWN_IMAGES)
    assert tab.evaluate(UNLOADED_IMAGES, ".numbook-gallery img") == []
    main = tab.evaluate("() => document.querySelectorAll('.numbook-gallery__downloads a[download]').length")
    assert main == 3 * figures
    downloads = tab.evaluate("() => [...document.querySelectorAll('.numbook-gallery a[download]')].map(a => a.href)")
    assert len(downloads) > main  # and the other views of figures a switch changes
    for url in downloads:
        response = tab.request.get(url)
        assert response.ok, url
        kind = "image/svg+xml" if url.endswith(".svg") else "text/csv"
        assert response.headers["content-type"].startswith(kind), (url, response.headers["content-type"])
    # a figure's number leads to the figure on its page
    link = items.nth(items.count() - 1).locator(".numbook-gallery__caption a")
    target = link.get_attribute("href").split("#")[1]
    link.click()
    tab.wait_for_load_state("networkidle")
    assert tab.url.endswith("#" + target)
    assert tab.evaluate("id => document.getElementById(id)?.tagName", target) == "FIGURE"


# What the page looks like at the moment it is printed: print.js runs first (its listener was
# added first), so this listener sees the page as the printer will.
RECORD_PRINT = """() => addEventListener('beforeprint', () => {
    window.printed = {
        scheme: document.body.getAttribute('data-md-color-scheme'),
        lazy: document.querySelectorAll('img[loading=lazy]').length,
        tabs: [...document.querySelectorAll('.tabbed-set')].map(set =>
            [...set.querySelectorAll(':scope > input')].findIndex(i => i.checked)),
        links: [...document.querySelectorAll('article a[data-print-href]')].map(a => a.dataset.printHref),
    };
})"""
SWITCHED_FIGURE_SRC = "() => document.querySelector('#fig-p4-step-losses img').src"  # absolute
CHOSEN_TABS = "() => [...document.querySelectorAll('.tabbed-set')].map(set => [...set.querySelectorAll(':scope > input')].findIndex(i => i.checked))"
PRINT_MEDIA_FACTS = """() => {
    const hidden = sel => [...document.querySelectorAll(sel)].every(e => !e.checkVisibility());
    const shown = [...document.querySelectorAll('figure img')].filter(i => getComputedStyle(i).display !== 'none');
    const crossPage = [...document.querySelectorAll('article p a[data-print-href]')]
        .find(a => !a.getAttribute('href').startsWith('#'));
    return {
        navigation: hidden('.md-header') && hidden('.md-sidebar') && hidden('.md-footer') && hidden('.md-search'),
        figures: document.querySelectorAll('figure.numbook-figure').length,
        shown: shown.map(i => i.getAttribute('src')),
        unloaded: shown.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
        whole: [...document.querySelectorAll('figure.numbook-figure')].every(f => getComputedStyle(f).breakInside === 'avoid'),
        linkAfter: crossPage ? getComputedStyle(crossPage, '::after').content : null,
        foldBodies: [...document.querySelectorAll('details.numbook-code, details.numbook-data, details.numbook-check')]
            .flatMap(d => [...d.children].filter(c => c.tagName !== 'SUMMARY'))
            .filter(c => c.checkVisibility()).length,
        folds: document.querySelectorAll('details.numbook-code, details.numbook-data').length,
        claims: [...document.querySelectorAll('.numbook-check__claim')].filter(c => c.checkVisibility()
            && c.getBoundingClientRect().width > 50).length,
        checks: [...document.querySelectorAll('details.numbook-check')]  // an aside prints as its summary
            .filter(d => !d.closest('details.aside')).length,
    };
}"""


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_a_chapter_prints_cleanly(browser, served_site, scheme):
    data = metadata()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(served_site + CHAPTER, wait_until="networkidle")
        page.evaluate("() => window.bookWidgets.startAll(true)")  # widgets start lazily, near the screen
        page.wait_for_function("() => document.getElementById('widget-p4-lr').dataset.numbookReady === 'yes'")
        page.evaluate(f"() => document.body.setAttribute('data-md-color-scheme', '{scheme}')")
        # the reader chose another tab somewhere: the printout shows the page's default
        defaults = page.evaluate(CHOSEN_TABS)
        assert defaults and all(k == 0 for k in defaults)
        page.locator(".tabbed-set").first.locator(".tabbed-labels > label").nth(1).click()
        chosen = page.evaluate(CHOSEN_TABS)
        assert chosen[0] == 1
        # the reader moved the page's learning-rate switch, which swaps a table and a figure
        switch = page.locator("#widget-p4-lr")
        served = switch.get_attribute("data-selected")
        figure_src = SWITCHED_FIGURE_SRC
        served_src = page.evaluate(figure_src)
        other = switch.locator(f"input[type=radio]:not([value='{served}'])").first
        moved = other.get_attribute("value")
        other.focus()
        page.keyboard.press("Space")  # the reader picks another rate
        page.wait_for_function(f"() => ({figure_src})() !== {served_src!r}")
        page.evaluate(RECORD_PRINT.replace(
            "window.printed = {",
            f"window.printed = {{switch: document.getElementById('widget-p4-lr').dataset.selected, figure: ({figure_src})(),",
        ))

        pdf = page.pdf(format="A4", print_background=False)  # Chromium's print to PDF

        assert pdf.startswith(b"%PDF-")
        assert len(re.findall(rb"/Type\s*/Page\b", pdf)) >= 5  # a long chapter, many pages
        printed = page.evaluate("() => window.printed")
        assert printed["scheme"] == "default"  # light colours on paper
        assert printed["lazy"] == 0  # every figure asked for, not only those near the screen
        assert printed["tabs"] == defaults
        assert (printed["switch"], printed["figure"]) == (served, served_src)  # the widget as served
        edition = f"{data['url']}{data['version']}/"
        assert printed["links"] and all(u.startswith(("http://", "https://")) for u in printed["links"])
        assert any(u.startswith(edition) and u != edition + CHAPTER.lstrip("/") for u in printed["links"])
        assert not any("127.0.0.1" in u for u in printed["links"])  # the edition's address, not this host's
        # afterwards the reader's screen is as they left it
        assert page.evaluate(CHOSEN_TABS) == chosen
        assert switch.get_attribute("data-selected") == moved
        assert page.evaluate(figure_src) != served_src
        assert page.evaluate("() => document.body.getAttribute('data-md-color-scheme')") == scheme

        page.emulate_media(media="print")
        facts = page.evaluate(PRINT_MEDIA_FACTS)
        assert facts["navigation"], "navigation, search or footer would be printed"
        assert facts["figures"] and len(facts["shown"]) == facts["figures"]
        assert all(src.endswith("#only-light") for src in facts["shown"]), facts["shown"]
        assert facts["unloaded"] == []
        assert facts["whole"]
        assert facts["linkAfter"] and edition in facts["linkAfter"]
        # folds print closed: summaries only, and each check as its claim in words
        assert facts["folds"] > 10 and facts["foldBodies"] == 0
        assert facts["checks"] > 10 and facts["claims"] == facts["checks"]
    finally:
        context.close()
