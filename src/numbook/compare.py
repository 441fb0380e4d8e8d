"""Compare what two builds of one book show: every number, figure, equation and check.

    python -m numbook.compare SITE_A SITE_B

reads the pages both sites have (each ``…/index.html``) and, page by page, compares the
content of the page's ``<article>`` (left out: the "Cite this page" box, which a theme
template adds): the numbers in its text, in order; its figures (ids and images); its
equations (KaTeX's TeX annotations); its checks; and, byte for byte, the figure and data
files (``figures/``, ``data/``) both sites hold. It prints one line a page, the totals, and
what only one site has; it exits 1 when anything the two have in common differs. Builders
differ in the theme around the content, so that is not compared.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import sys
from collections.abc import Sequence
from urllib.parse import urljoin
from dataclasses import dataclass, field
from pathlib import Path

_ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*)</article>', re.S)
_CITE_BOX = re.compile(r'<section class="admonition quote numbook-cite".*?</section>', re.S)
_SKIP = re.compile(r'<a id="__skip" tabindex="-1"></a>')
_TAG = re.compile(r"<[^>]+>")
_NUMBER = re.compile(r"[-+\u2212]?\d+(?:[.,]\d+)*(?:[eE][-+\u2212]?\d+)?")
_FIGURE = re.compile(r'<figure\b[^>]*\bid="([^"]+)"')
_IMG = re.compile(r'<img\b[^>]*\bsrc="([^"]+)"')
_TEX = re.compile(r'<annotation encoding="application/x-tex">(.*?)</annotation>', re.S)
_CHECK = re.compile(r'<details class="[^"]*\bnumbook-check\b')
#: Marks a builder may drop from the markup (Zensical reads search hints and removes them).
_BUILDER_MARKS = re.compile(r' data-search-exclude(?:="[^"]*")?')
_URL_ATTR = re.compile(r'(\s(?:href|src|data-[\w-]+)=")([^"]*)(")')
#: Files the pages' outputs make, compared byte for byte.
OUTPUT_DIRS = ("figures", "data")


@dataclass
class PageFacts:
    numbers: list[str]
    figures: list[str]
    images: list[str]
    equations: list[str]
    checks: int
    content: str


def article(page_html: str) -> str:
    """The page's content as the builder wrote it, less what the theme's templates add."""
    m = _ARTICLE.search(page_html)
    body = m.group(1) if m else page_html
    body = _CITE_BOX.sub("", _SKIP.sub("", body))
    return _BUILDER_MARKS.sub("", body).strip()


def facts(page_html: str, url: str = "") -> PageFacts:
    """What a page shows; ``url`` (the page's, from the site's root) resolves its images."""
    body = article(page_html)
    text = html.unescape(_TAG.sub(" ", body))
    return PageFacts(
        numbers=_NUMBER.findall(text),
        figures=_FIGURE.findall(body),
        images=[urljoin("/" + url, src) for src in _IMG.findall(body)],
        equations=[html.unescape(t).strip() for t in _TEX.findall(body)],
        checks=len(_CHECK.findall(body)),
        content=_URL_ATTR.sub(lambda m: m.group(1) + _resolved(m.group(2), url) + m.group(3), body),
    )


def _resolved(value: str, url: str) -> str:
    """A link as the reader's browser follows it (builders write the same one differently)."""
    if not value or value.startswith(("#", "/")) or ":" in value.split("/")[0] or " " in value:
        return value
    return urljoin("/" + url, value)


@dataclass
class PageResult:
    url: str
    numbers: int
    same_numbers: bool
    figures: int
    same_figures: bool
    equations: int
    same_equations: bool
    checks: int
    same_checks: bool
    same_content: bool  # the article's HTML, byte for byte (less marks a builder drops)
    first_difference: str = ""

    @property
    def same(self) -> bool:
        return self.same_numbers and self.same_figures and self.same_equations and self.same_checks


@dataclass
class Comparison:
    pages: list[PageResult] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)  # pages only the first site has
    only_b: list[str] = field(default_factory=list)
    files: int = 0  # output files both have
    files_differ: list[str] = field(default_factory=list)
    files_only_a: list[str] = field(default_factory=list)
    files_only_b: list[str] = field(default_factory=list)

    @property
    def numbers(self) -> int:
        return sum(p.numbers for p in self.pages)

    @property
    def identical_numbers(self) -> int:
        return sum(p.numbers for p in self.pages if p.same_numbers)

    @property
    def same(self) -> bool:
        return all(p.same for p in self.pages) and not self.files_differ and not self.files_only_a


def _pages(site: Path) -> dict[str, Path]:
    return {
        str(p.parent.relative_to(site)).replace(os.sep, "/").strip(".") + "/": p
        for p in site.rglob("index.html")
    }


def _outputs(site: Path) -> dict[str, Path]:
    found = {}
    for top in OUTPUT_DIRS:
        for p in (site / top).rglob("*"):
            if p.is_file() and p.suffix != ".html":
                found[str(p.relative_to(site)).replace(os.sep, "/")] = p
    return found


def _first_difference(a: list[str], b: list[str]) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"item {i + 1}: {x!r} vs {y!r}"
    return f"{len(a)} vs {len(b)} items"


def compare_sites(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> Comparison:
    site_a, site_b = Path(a), Path(b)
    pages_a, pages_b = _pages(site_a), _pages(site_b)
    result = Comparison(
        only_a=sorted(set(pages_a) - set(pages_b)), only_b=sorted(set(pages_b) - set(pages_a))
    )
    for url in sorted(set(pages_a) & set(pages_b)):
        fa = facts(pages_a[url].read_text(encoding="utf-8"), url)
        fb = facts(pages_b[url].read_text(encoding="utf-8"), url)
        page = PageResult(
            url=url,
            numbers=len(fa.numbers), same_numbers=fa.numbers == fb.numbers,
            figures=len(fa.figures), same_figures=(fa.figures, fa.images) == (fb.figures, fb.images),
            equations=len(fa.equations), same_equations=fa.equations == fb.equations,
            checks=fa.checks, same_checks=fa.checks == fb.checks,
            same_content=fa.content == fb.content,
        )
        for name, x, y in (("numbers", fa.numbers, fb.numbers), ("figures", fa.figures, fb.figures),
                           ("images", fa.images, fb.images), ("equations", fa.equations, fb.equations)):
            if x != y:
                page.first_difference = f"{name}: {_first_difference(x, y)}"
                break
        result.pages.append(page)
    out_a, out_b = _outputs(site_a), _outputs(site_b)
    common = sorted(set(out_a) & set(out_b))
    result.files = len(common)
    result.files_differ = [p for p in common if out_a[p].read_bytes() != out_b[p].read_bytes()]
    result.files_only_a = sorted(set(out_a) - set(out_b))
    result.files_only_b = sorted(set(out_b) - set(out_a))
    return result


def report(c: Comparison, names: tuple[str, str] = ("A", "B")) -> str:
    a, b = names
    lines = []
    for p in c.pages:
        mark = "same" if p.same else "DIFFERENT"
        lines.append(
            f"{mark:9} {p.url or '/'}: {p.numbers} numbers, {p.figures} figures, {p.equations} equations, "
            f"{p.checks} checks" + ("" if p.same_content else " (markup differs)")
            + (f" -- {p.first_difference}" if p.first_difference else "")
        )
    lines.append(
        f"{c.identical_numbers} of {c.numbers} numbers identical on {sum(p.same for p in c.pages)} of "
        f"{len(c.pages)} pages; {c.files - len(c.files_differ)} of {c.files} figure and data files identical"
    )
    for what, items in ((f"pages only {a} has", c.only_a), (f"pages only {b} has", c.only_b),
                        ("files that differ", c.files_differ), (f"files only {a} has", c.files_only_a),
                        (f"files only {b} has", c.files_only_b)):
        if items:
            lines.append(f"{what}: {', '.join(items)}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site_a")
    parser.add_argument("site_b")
    args = parser.parse_args(argv)
    c = compare_sites(args.site_a, args.site_b)
    print(report(c, (args.site_a, args.site_b)))
    return 0 if c.same else 1


if __name__ == "__main__":
    sys.exit(main())
