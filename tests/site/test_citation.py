"""Citations in the built book: every page's box and meta tags, every figure's own citation,
and the figure gallery, all from CITATION.cff (read here independently of the plugin)."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import yaml

from ..reference_managers import bibtex_formats, zotero_reads, zotero_reads_coins
from .conftest import ROOT, off_gallery_pages, site_pages


def metadata() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def edition_url() -> str:
    data = metadata()
    return f"{data['url']}{data['version']}/"


def html_of(site: Path, path: str) -> str:
    return (site / path.strip("/") / "index.html").read_text(encoding="utf-8")


def meta_tags(page: str) -> list[tuple[str, str]]:
    return [(n, unescape(c)) for n, c in re.findall(r'<meta (?:name|property)="([a-z]+[_.:][a-z_]+)" content="([^"]*)">', page)]


def test_every_page_ends_with_its_citation(built_site: Path):
    data = metadata()
    authors = [a.get("name") or f"{a['given-names']} {a['family-names']}" for a in data["authors"]]
    as_read = [(a["name"], "") if a.get("name") else (a["family-names"], a["given-names"]) for a in data["authors"]]
    year = str(data["date-released"])[:4]
    for path in site_pages(built_site):
        page = html_of(built_site, path)
        url = edition_url() + path.lstrip("/")
        article = page[page.index("<article"): page.index("</article>")]
        box = article[article.index('class="admonition quote numbook-cite"'):]
        assert "</section>" in box and box.index("</section>") > len(box) - 200, f"{path}: box is not at the end"
        plain, bibtex = (unescape(t) for t in re.findall(r'<code class="numbook-cite-text[^"]*"[^>]*>(.*?)</code>', box, re.S))
        assert plain.startswith(f"{' and '.join(authors)} ({year}). "), (path, plain)
        visit = re.search(r"\(accessed (\d{4}-\d{2}-\d{2})\)\.$", plain)
        assert visit and f"(version {data['version']}). {url} (accessed " in plain, (path, plain)
        assert re.search(rf"urldate\s+= \{{{visit.group(1)}\}}", bibtex), bibtex  # the build's date, until the script's
        assert data["title"] in plain
        assert f"url       = {{{url}}}" in bibtex or re.search(rf"url\s+= \{{{re.escape(url)}\}}", bibtex), bibtex
        assert re.search(rf"version\s+= \{{{re.escape(str(data['version']))}\}}", bibtex)
        tags = dict(meta_tags(page))
        assert tags["citation_public_url"] == url
        assert tags["citation_publication_date"] == str(data["date-released"]).replace("-", "/")
        assert tags["citation_version"] == str(data["version"])
        assert tags["prism.edition"] == str(data["version"])  # what Zotero files as the edition
        assert tags["citation_publisher"]
        # an organisation stays one author, as a reference manager reads the tags
        assert [zotero_reads(v) for k, v in meta_tags(page) if k == "citation_author"] == as_read
        if path == "/":
            assert tags["citation_title"] == data["title"] and bibtex.startswith("@book{")
            assert tags["og:type"] == "book" and "citation_book_title" not in tags
        else:
            assert tags["citation_book_title"] == data["title"] and bibtex.startswith("@incollection{")
        for style in ("plain", "unsrt", "alpha"):
            formatted = bibtex_formats(bibtex, style)
            assert len(formatted) == 1, (path, style)
            assert f"{data['version']} edition" in formatted[0], formatted  # the edition survives formatting
        # the COinS copy keeps the organisation one single-field author (Zotero's COinS translator)
        coins = unescape(re.search(r'<span class="Z3988" title="([^"]+)"', box).group(1))
        read = zotero_reads_coins(coins)
        assert read["creators"] == [(a, None) if g == "" else (a, g) for a, g in as_read], read
        assert read["url"] == url and read["edition"] == str(data["version"])


def test_a_numbered_part_is_cited_by_its_number_and_title(built_site: Path):
    page = html_of(built_site, "/part2-one-head/")
    tags = dict(meta_tags(page))
    assert tags["citation_title"] == "Part 2. One attention head with chosen weights"
    example = unescape(re.search(r'<code class="numbook-cite-example">(.*?)</code>', page, re.S).group(1))
    assert example == f"Section 2.1, in Part 2. One attention head with chosen weights, {edition_url()}part2-one-head/#p2-two-sentences"


def test_a_page_numbered_only_for_its_sections_is_not_cited_as_a_part(built_site: Path):
    """The one-page lesson numbers its sections L.1, L.2, … but is not "Part L"."""
    page = html_of(built_site, "/cross-attention-one-page/")
    title = dict(meta_tags(page))["citation_title"]
    assert not title.startswith("Part ") and "in one page" in title.lower(), title
    assert re.search(r'<h2 id="[^"]+">L\.1 ', page)


def test_each_page_of_a_part_is_cited_with_the_sections_it_holds(built_site: Path):
    """Part 3 spans three pages: each citation names its own range of section numbers."""
    for path in ("/part3-learning/", "/part3-decoder/", "/part3-context/"):
        page = html_of(built_site, path)
        numbers = re.findall(r'<h2 id="[^"]+">(3\.\d+) ', page)
        plain = unescape(re.search(r'<code class="numbook-cite-text"[^>]*>(.*?)</code>', page, re.S).group(1))
        assert f", sections {numbers[0]}\u2013{numbers[-1]}. In " in plain, (path, numbers, plain)


def figures_of(site: Path) -> dict[str, tuple[str, str, str]]:
    """{figure id: (page path, label, caption)} read from the pages themselves."""
    found = {}
    for path in site_pages(site):
        for fid, body in re.findall(r'<figure class="numbook-figure[^"]*" id="([^"]+)"[^>]*>(.*?)</figure>', html_of(site, path), re.S):
            caption = re.search(r"<figcaption>(Figure [\dA-Z][\d.]*): (.*?) <a class=\"headerlink\"", body, re.S)
            # a figure a switch can change keeps its caption in a span the switch rewrites
            text = re.sub(r'^<span class="numbook-caption">(.*)</span>$', r"\1", caption.group(2), flags=re.S)
            found[fid] = (path, caption.group(1), text)
    return found


def test_every_figure_links_to_itself_and_says_how_to_cite_it(built_site: Path):
    figures = figures_of(built_site)
    assert len(figures) >= 10
    for fid, (path, label, _) in figures.items():
        page = html_of(built_site, path)
        body = re.search(rf'<figure class="numbook-figure[^"]*" id="{fid}"[^>]*>(.*?)</figure>', page, re.S).group(1)
        caption = re.search(r"<figcaption>(.*?)</figcaption>", body, re.S).group(1)
        assert f'href="#{fid}"' in caption
        cite = unescape(re.search(r"<summary>Cite this figure</summary>.*?<code[^>]*>(.*?)</code>", caption, re.S).group(1))
        assert cite.startswith(f"{label}, in: ") and f"{edition_url()}{path.lstrip('/')}#{fid} " in cite, cite


def test_the_gallery_lists_every_figure_of_the_book(built_site: Path):
    off = off_gallery_pages()
    assert off == {"/reference/figure-functions/"}
    figures = {fid: f for fid, f in figures_of(built_site).items() if f[0] not in off}
    gallery = html_of(built_site, "/figures/")
    items = re.findall(r'<li class="numbook-gallery__item">(.*?)</figure></li>', gallery, re.S)
    listed = {}
    for item in items:
        href, label, caption = re.search(r'<p class="numbook-gallery__caption"><a href="([^"]+)">([^<]+)</a>: (.*?)</p>', item, re.S).groups()
        page, fid = href.split("#")
        listed[fid] = ("/" + page.removeprefix("../"), label, caption)
        for kind in (".light.svg", ".dark.svg", ".csv"):
            download = re.search(rf'<a href="([^"]*{re.escape(fid + kind)})" download=', item).group(1)
            assert (built_site / "figures" / download).resolve().is_file(), download
        # a figure a switch changes: every other view it can show, with its files
        index = built_site / "figures" / f"{fid}.variants.json"
        views = json.loads(index.read_text()) if index.exists() else {}
        offered = re.findall(r'<li><em>([^<]+)</em>.*?</li>', item, re.S)
        assert sorted(offered) == sorted(k for k, v in views.items() if not v["light"].startswith(fid + ".light")), fid
        for key in offered:
            for kind in (".light.svg", ".dark.svg", ".csv"):
                download = re.search(rf'<a href="([^"]*{re.escape(f"{fid}.{key}{kind}")})" download=', item).group(1)
                assert (built_site / "figures" / download).resolve().is_file(), download
    assert listed == figures
    # in the order of the book: the part numbers never go back (a page with its own
    # figure_prefix, such as the one-page lesson's "Figure L.1", stands outside the parts)
    prefixes = [label.split()[1].split(".")[0] for _, label, _ in listed.values() if "." in label]
    numbered = [int(p) for p in prefixes if p.isdigit()]
    assert numbered == sorted(numbered)


def test_each_chapter_has_its_own_description(built_site: Path):
    """A reference manager saves a page's <meta name="description"> as its abstract: each
    chapter's is its own opening paragraph, the home page keeps the book's."""
    seen = {}
    for path in site_pages(built_site):
        page = html_of(built_site, path)
        description = unescape(re.search(r'<meta name="description" content="([^"]*)">', page).group(1))
        if path == "/":
            assert description.startswith("An open textbook"), description
            continue
        assert 40 <= len(description) <= 300, (path, description)
        # it is the page's opening: its words come before the first section's heading
        article = page[page.index("<article"): page.index("</article>")]
        letters = lambda text: re.sub(r"\W+", "", text)  # noqa: E731 - tags split words at markup
        opening = letters(unescape(re.sub(r"<[^>]+>", "", article.split("<h2", 1)[0])))
        assert letters(" ".join(description.split()[:8])) in opening, (path, description)
        assert description not in seen.values(), (path, description)
        seen[path] = description


def test_the_citation_file_is_published(built_site: Path):
    assert (built_site / "CITATION.cff").read_bytes() == (ROOT / "CITATION.cff").read_bytes()
