"""How much a first-time reader has to read: words in view and page height on a phone.

A chapter's *main line* is what a reader meets with every fold and aside closed. Its size is
measured in a real Chromium, from the page as shown:

* **words in view**: the words of the article, leaving out code, maths, images, the *Cite
  this page* box and the content of every closed ``<details>`` (folds, asides, checks,
  questions; their summary lines count). A word is a run of letters or digits containing at
  least one letter, so the numbers of a table do not count, its labels do.
* **height**: the article's height in screens of a 390 x 844 phone, with every part laid out
  (the stylesheet lets the browser skip what is off-screen) and every fold and aside closed.
* **code lines in view**: the lines of every code block a reader sees with every fold and aside
  closed (a tab that is not selected is not seen; a block inside a closed ``<details>`` is not
  seen either, although Chromium still gives it client rects; the *Cite this page* box is left
  out, as it is from the words).

Run on a built site (``uv run mkdocs build``)::

    uv run python -m tests.site.reading site/            # every chapter
    uv run python -m tests.site.reading site/ part3-decoder/
"""

from __future__ import annotations

import argparse
import functools
import http.server
import threading
from dataclasses import dataclass
from pathlib import Path

PHONE = {"width": 390, "height": 844}

#: The chapters a first-time reader reads, by the part of the reference lessons each tells.
CHAPTERS = {
    "part1-character-model/": "Part 1",
    "part2-one-head/": "Part 2",
    "part3-learning/": "Part 3",
    "part3-decoder/": "Part 3",
    "part3-context/": "Part 3",
    "part4-cross-attention/": "Part 4",
    "cross-attention-one-page/": "one-page lesson",
}

#: Words in view, at most, per part (issue 47: 1.5 times the reference lesson's words where
#: there is one: Part 3 4,900, Part 4 2,087, the one-page lesson 1,316).
WORD_TARGETS = {"Part 1": 2500, "Part 2": 2500, "Part 3": 7350, "Part 4": 3130, "one-page lesson": 1970}
#: Pages read together against one stretch of a reference lesson, and their words at most
#: (Part 3's learning and decoder pages tell its sections 3.1-3.14: 1.5 times their 2,547 words,
#: rounded down to leave the context page its share).
GROUP_TARGETS = {("part3-learning/", "part3-decoder/"): 4400}
#: Screens of a 390 x 844 phone, at most, per chapter.
SCREEN_TARGET = 28
#: Code lines in view, at most, per chapter (teaching code only: the rest is folded).
CODE_LINE_TARGET = 40

MEASURE = """() => {
  const style = document.createElement('style');
  style.textContent = '* { content-visibility: visible !important; }';
  document.head.append(style);
  document.querySelectorAll('details[open]').forEach((d) => { d.open = false; });
  const article = document.querySelector('article');
  const height = article.getBoundingClientRect().height;
  // a closed <details> (fold, aside, check, "Cite this figure") still lays its content out in
  // Chromium, so getClientRects alone counts code nobody sees; the Cite box is not teaching code
  const codeLines = [...article.querySelectorAll('pre')]
    .filter((pre) => pre.getClientRects().length > 0 && !pre.closest('details:not([open]), .numbook-cite'))
    .reduce((n, pre) => n + pre.textContent.replace(/\\n+$/, '').split('\\n').length, 0);
  const copy = article.cloneNode(true);
  copy.querySelectorAll(
    'pre, code, .highlight, .katex, .arithmatex, img, svg, picture, script, template, style,' +
    '.numbook-cite, .headerlink, .md-source-file, .numbook-problems'
  ).forEach((e) => e.remove());
  copy.querySelectorAll('details').forEach((d) => {
    [...d.children].filter((c) => c.tagName !== 'SUMMARY').forEach((c) => c.remove());
    [...d.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).forEach((n) => n.remove());
  });
  const words = (copy.textContent.match(/[\\p{L}\\p{N}'’-]*\\p{L}[\\p{L}\\p{N}'’-]*/gu) || []).length;
  return {words, height, codeLines};
}"""


@dataclass(frozen=True)
class Reading:
    page: str
    words: int
    screens: float
    code_lines: int


def measure(browser, base_url: str, pages: list[str]) -> list[Reading]:
    """Words in view and phone screens of each page (paths relative to the site's root)."""
    context = browser.new_context(viewport=PHONE)
    try:
        tab = context.new_page()
        readings = []
        for page in pages:
            tab.goto(f"{base_url}/{page}", wait_until="load")
            result = tab.evaluate(MEASURE)
            readings.append(Reading(page, result["words"], result["height"] / PHONE["height"], result["codeLines"]))
        return readings
    finally:
        context.close()


def by_part(readings: list[Reading]) -> dict[str, int]:
    """Words in view per part of the reference lessons."""
    totals: dict[str, int] = {}
    for r in readings:
        part = CHAPTERS[r.page]
        totals[part] = totals.get(part, 0) + r.words
    return totals


def _report(readings: list[Reading]) -> str:
    lines = [f"{'page':32s} {'words':>7s} {'screens':>8s} {'code lines':>11s}"]
    lines += [f"{r.page:32s} {r.words:7,d} {r.screens:8.1f} {r.code_lines:11d}" for r in readings]
    lines.append("")
    lines += [
        f"{part:32s} {words:7,d}   target <= {WORD_TARGETS[part]:,}"
        for part, words in by_part([r for r in readings if r.page in CHAPTERS]).items()
    ]
    return "\n".join(lines)


def main() -> None:
    from playwright.sync_api import sync_playwright

    from .conftest import CHROMIUM, CHROMIUM_ARGS, QuietHandler

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a built site (mkdocs build)")
    parser.add_argument("pages", nargs="*", help="pages to measure (default: every chapter)")
    args = parser.parse_args()
    handler = functools.partial(QuietHandler, directory=str(args.site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.handle_error = lambda request, address: None  # a browser that drops a request it no longer needs
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            pages = args.pages or list(CHAPTERS)
            print(_report(measure(browser, f"http://127.0.0.1:{server.server_address[1]}", pages)))
            browser.close()
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
