"""booksite.cite: citations from Citation File Format metadata, and the numbook-cite plugin
on a throwaway site."""

from __future__ import annotations

import datetime
import re

import pytest

from booksite.cite import (
    CitationError,
    add_figure_citations,
    build_date,
    edition_from_cff,
    figure_citation,
    opening_text,
    page_citation,
)

from ..reference_managers import bibtex_formats, zotero_reads, zotero_reads_coins
from .conftest import build_error

METADATA = {
    "cff-version": "1.2.0",
    "title": "A Book & Its {Braces}",
    "authors": [
        {"given-names": "Ada", "family-names": "Lovelace"},
        {"given-names": "Ludwig", "name-particle": "van", "family-names": "Beethoven"},
        {"name": "The Book Collective"},
    ],
    "version": "2.1",
    "date-released": datetime.date(2026, 3, 4),  # YAML reads an unquoted date as a date
    "repository-code": "https://example.org/people/a-book",
}
SITE = "https://example.org/a-book/"
ACCESSED = "2026-05-06"  # the date the tests' editions give for a visit


def edition_from_cff(data, site_url, **kwargs):  # noqa: F811 - the tests' fixed visit date
    from booksite.cite import edition_from_cff as from_cff

    return from_cff(data, site_url, accessed=datetime.date.fromisoformat(ACCESSED), **kwargs)


def test_edition_url_and_authors():
    edition = edition_from_cff(METADATA, SITE)
    assert edition.url == "https://example.org/a-book/2.1/"
    assert edition.year == "2026"
    assert edition.author_line == "Ada Lovelace, Ludwig van Beethoven and The Book Collective"
    assert [a.inverted for a in edition.authors] == ["Lovelace, Ada", "van Beethoven, Ludwig", "The Book Collective"]
    assert edition.key == "a-book-its"  # the title's first words
    # mike's plugin has already appended the version it deploys: not appended twice
    assert edition_from_cff(METADATA, "https://example.org/a-book/2.1", deployed="2.1").url == edition.url


def test_a_part_of_the_book():
    edition = edition_from_cff(METADATA, SITE)
    c = page_citation(edition, "part2/", "Part 2. Heads", section=("Section 2.1", "p2-first"))
    url = "https://example.org/a-book/2.1/part2/"
    assert c.url == url
    assert c.plain == (
        "Ada Lovelace, Ludwig van Beethoven and The Book Collective (2026). Part 2. Heads. "
        f"In A Book & Its {{Braces}} (version 2.1). {url} (accessed {ACCESSED})."
    )
    assert c.bibtex.startswith("@incollection{a-book-its-2.1-part2,\n")
    fields = dict(re.findall(r"^  (\w+)\s+= \{(.*)\},$", c.bibtex, re.M))
    assert fields == {
        "author": "Lovelace, Ada and van Beethoven, Ludwig and {The Book Collective}",
        "title": "{Part 2. Heads}",  # braced: the standard styles would lower-case it
        "booktitle": r"A Book \& Its \{Braces\}",  # BibTeX's special characters escaped
        # no publisher in the metadata: a book on the web is published by its authors
        "publisher": "Ada Lovelace, Ludwig van Beethoven and The Book Collective",
        "edition": "2.1",  # what the standard styles print ("2.1 edition"); `version` is biblatex's
        "year": "2026",
        "version": "2.1",
        "url": url,
        "urldate": ACCESSED,
    }
    meta = dict(c.meta)
    assert [v for k, v in c.meta if k == "citation_author"] == [
        "Lovelace, Ada", "van Beethoven, Ludwig", "The Book Collective,"
    ]
    assert meta["citation_publisher"] == "Ada Lovelace, Ludwig van Beethoven and The Book Collective"
    assert meta["prism.edition"] == "2.1" and "og:type" not in meta
    assert meta["citation_title"] == "Part 2. Heads"
    assert meta["citation_book_title"] == "A Book & Its {Braces}"
    assert meta["citation_publication_date"] == "2026/03/04"
    assert meta["citation_version"] == "2.1"
    assert meta["citation_public_url"] == url
    assert c.example == f"Section 2.1, in Part 2. Heads, {url}#p2-first"


def test_a_page_names_the_sections_it_holds():
    edition = edition_from_cff(METADATA, SITE)
    c = page_citation(edition, "part3c/", "Part 3. Limits", sections=("3.15", "3.21"))
    assert c.plain.startswith(
        "Ada Lovelace, Ludwig van Beethoven and The Book Collective (2026). Part 3. Limits, "
        "sections 3.15\u2013" "3.21. In A Book"
    )
    fields = dict(re.findall(r"^  (\w+)\s+= \{(.*)\},$", c.bibtex, re.M))
    assert (fields["chapter"], fields["type"]) == ("3.15--3.21", "sections")  # BibTeX: "sections 3.15--3.21"
    one = page_citation(edition, "part5/", "Part 5. Short", sections=("5.1", "5.1"))
    assert "Part 5. Short, section 5.1. In " in one.plain
    assert re.search(r"chapter\s+= \{5\.1\}", one.bibtex) and re.search(r"type\s+= \{section\}", one.bibtex)
    book = page_citation(edition, "", "Home", whole_book=True, sections=("1.1", "1.2"))
    assert "section" not in book.plain and "chapter" not in book.bibtex


def test_the_home_page_cites_the_whole_book():
    edition = edition_from_cff(METADATA, SITE)
    c = page_citation(edition, "", "Home", whole_book=True)
    assert c.title == "A Book & Its {Braces}"
    assert c.bibtex.startswith("@book{a-book-its-2.1,\n") and "booktitle" not in c.bibtex
    assert "citation_book_title" not in dict(c.meta)
    assert dict(c.meta)["og:type"] == "book"  # what tells Zotero a page without a book title is the book
    assert dict(c.meta)["citation_title"] == "A Book & Its {Braces}"
    assert c.example is None


@pytest.mark.parametrize("style", ["plain", "unsrt", "alpha"])
def test_every_entry_formats_under_the_standard_bibtex_styles(style):
    """pybtex's plain, unsrt and alpha are BibTeX's own styles: a missing required field
    (an @incollection without a publisher, say) raises instead of being dropped."""
    edition = edition_from_cff(METADATA, SITE)
    entries = [
        page_citation(edition, "", "Home", whole_book=True),
        page_citation(edition, "part2/", "Part 2. Heads"),
        page_citation(edition, "part3c/", "Part 3. Limits", sections=("3.15", "3.21")),
    ]
    text = bibtex_formats("\n\n".join(c.bibtex for c in entries), style)
    assert len(text) == 3
    assert "The Book Collective" in text[0] and "Ada Lovelace, Ludwig van Beethoven" in text[0]
    assert "https://example.org/a-book/2.1/" in text[0]
    assert "Part 3. Limits. In A Book & Its" in text[2] and "https://example.org/a-book/2.1/part3c/" in text[2]
    # what an instructor cites survives formatting: the edition, and a chapter's sections
    assert all("2.1 edition" in t for t in text), text
    assert "3.15\u20133.21" in text[2] or "3.15--3.21" in text[2], text[2]
    assert f"visited on {ACCESSED}" in text[1]


def test_reference_managers_keep_an_organisation_as_one_author():
    edition = edition_from_cff(METADATA, SITE)
    tags = page_citation(edition, "part2/", "Part 2. Heads").meta
    read = [zotero_reads(content) for name, content in tags if name == "citation_author"]
    assert read == [("Lovelace", "Ada"), ("van Beethoven", "Ludwig"), ("The Book Collective", "")]
    assert zotero_reads("The Book Collective") == ("Collective", "The Book")  # what the comma avoids
    # COinS: Zotero's COinS translator keeps the organisation as one single-field author
    coins = zotero_reads_coins(page_citation(edition, "part2/", "Part 2. Heads").coins)
    assert coins["creators"] == [("Lovelace", "Ada"), ("van Beethoven", "Ludwig"), ("The Book Collective", None)]
    assert (coins["itemType"], coins["title"], coins["bookTitle"]) == ("bookSection", "Part 2. Heads", "A Book & Its {Braces}")
    assert (coins["edition"], coins["date"], coins["url"]) == ("2.1", "2026-03-04", "https://example.org/a-book/2.1/part2/")
    book = zotero_reads_coins(page_citation(edition, "", "Home", whole_book=True).coins)
    assert (book["itemType"], book["title"]) == ("book", "A Book & Its {Braces}")


def test_the_visit_date_is_the_builds(monkeypatch):
    """Until the site's script puts the reader's date in, a citation gives the build's date:
    SOURCE_DATE_EPOCH's (UTC), as MkDocs dates its sitemap, else today."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(datetime.datetime(2025, 12, 31, 23, 30, tzinfo=datetime.timezone.utc).timestamp())))
    assert build_date() == datetime.date(2025, 12, 31)
    from booksite.cite import edition_from_cff as from_cff

    c = page_citation(from_cff(METADATA, SITE), "part2/", "Part 2. Heads")
    assert c.plain.endswith("(accessed 2025-12-31).") and re.search(r"urldate\s+= \{2025-12-31\}", c.bibtex)
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert build_date() == datetime.date.today()


def test_a_chapters_description_is_its_opening_paragraph():
    html = (
        '<h1 id="t">Part 2 · Heads</h1>\n'
        '<details class="aside"><summary>Look closer</summary><p>Not this.</p></details>\n'
        '<p>A head reads <span class="katex"><span class="katex-mathml"><math><semantics><mrow><mi>x</mi></mrow>'
        '<annotation encoding="application/x-tex">x_i</annotation></semantics></math></span>'
        '<span class="katex-html" aria-hidden="true">x i</span></span> &amp; writes <a href="#">rows</a>.</p>\n'
        "<p>Second paragraph.</p>"
    )
    assert opening_text(html) == "A head reads x_i & writes rows."
    long = "<p>" + " ".join(["word"] * 200) + "</p>"
    cut = opening_text(long, limit=50)
    assert len(cut) <= 50 and cut.endswith("\u2026") and not cut[:-1].endswith(" ")


def test_figure_citation_and_where_it_goes():
    edition = edition_from_cff(METADATA, SITE)
    page = page_citation(edition, "part2/", "Part 2. Heads")
    text = figure_citation(edition, page, "Figure 2.3", "fig-heat")
    assert text.startswith("Figure 2.3, in: Ada Lovelace")
    assert "https://example.org/a-book/2.1/part2/#fig-heat" in text
    html = (
        '<figure class="numbook-figure" id="fig-heat">\n<img src="a.svg">\n'
        "<figcaption>Figure 2.3: Heat &amp; light</figcaption>\n</figure>\n"
        '<figure class="numbook-figure" id="fig-other"><figcaption>Figure 2.4: x</figcaption></figure>'
    )
    out = add_figure_citations(html, {"fig-heat": text}, ACCESSED)
    first = re.search(r'id="fig-heat">(.*?)</figure>', out, re.S).group(1)
    caption = re.search(r"<figcaption>(.*?)</figcaption>", first, re.S).group(1)
    assert caption.startswith("Figure 2.3: Heat &amp; light<details")
    assert "Cite this figure" in caption and "fig-heat" in caption
    assert out.count("Cite this figure") == 1  # only the figures asked for


@pytest.mark.parametrize(
    "change, message",
    [
        ({"version": None}, "lacks version"),
        ({"authors": None, "title": None}, "lacks title, authors"),
        ({"date-released": "March 2026"}, "date-released must be a date"),
        ({"authors": [{"orcid": "x"}]}, "authors[0]: an author needs family-names"),
    ],
)
def test_metadata_that_cannot_make_a_citation_is_an_error(change, message):
    with pytest.raises(CitationError, match=re.escape(message)):
        edition_from_cff({**METADATA, **change}, SITE)


def test_mike_deploying_another_version_than_the_metadata_names_is_an_error():
    with pytest.raises(CitationError, match="mike is deploying version '3.0' but CITATION.cff names version '2.1'"):
        edition_from_cff(METADATA, SITE, deployed="3.0")


def test_no_site_url_is_an_error():
    with pytest.raises(CitationError, match="site_url is not set"):
        edition_from_cff(METADATA, "")


CFF = """\
cff-version: 1.2.0
message: Cite it.
title: Throwaway Book
authors:
  - family-names: Lovelace
    given-names: Ada
version: "1.0"
date-released: 2026-01-02
"""

PAGE = """\
---
number: 3
title: Heads
---

## First things {#p3-first}

```python exec figure="fig-a" caption="A line." alt="A line from 0 to 1."
import matplotlib.pyplot as plt
from numbook.api import figure_data
fig, ax = plt.subplots()
ax.plot([0, 1])
figure_data(["x"], [[0], [1]])
```
"""


def cite_site(make_site):
    """A throwaway site with numbook-cite, and a theme template that shows what it was given."""
    import yaml

    site = make_site({"index.md": "# Home\n", "heads.md": PAGE})
    config = yaml.safe_load((site.root / "mkdocs.yml").read_text())
    config["site_url"] = "https://example.org/throwaway/"
    config["plugins"].append("numbook-cite")
    config["theme"] = {"name": "mkdocs", "custom_dir": "theme"}
    config["extra"] = {"version": {"provider": "mike"}}
    (site.root / "mkdocs.yml").write_text(yaml.safe_dump(config))
    site.write("CITATION.cff", CFF)
    site.write("theme/main.html", """\
        {% extends "base.html" %}
        {% block content %}{{ super() }}
        <pre id="plain">{{ citation.plain }}</pre>
        {% for name, value in citation.meta %}<meta name="{{ name }}" content="{{ value }}">{% endfor %}
        <p id="version-menu">{{ config.extra.version }}</p>
        {% endblock %}
        """)
    return site


def test_plugin_on_a_site(make_site, monkeypatch):
    """Every page gets its citation in the template context; figures get theirs in the caption;
    Material's version menu is left out of a build that mike did not start."""
    monkeypatch.delenv("MIKE_DOCS_VERSION", raising=False)
    site = cite_site(make_site)
    site.build()
    heads = site.html("heads")
    url = "https://example.org/throwaway/1.0/heads/"
    assert f"Ada Lovelace (2026). Part 3. Heads. In Throwaway Book (version 1.0). {url}" in heads
    assert f'<meta name="citation_public_url" content="{url}">' in heads
    assert '<meta name="citation_title" content="Part 3. Heads">' in heads
    menu = re.search(r'<p id="version-menu">(.*?)</p>', heads, re.S).group(1)
    assert "mike" not in menu
    figure = re.search(r'<figure class="numbook-figure" id="fig-a">(.*?)</figure>', heads, re.S).group(1)
    assert f"Figure 3.1, in: Ada Lovelace (2026). Part 3. Heads. In Throwaway Book (version 1.0). {url}#fig-a" in figure
    home = site.html()
    assert "Ada Lovelace (2026). Throwaway Book (version 1.0). https://example.org/throwaway/1.0/ (accessed" in home
    # the metadata file itself is published at the site's root
    assert (site.root / "site" / "CITATION.cff").read_text() == CFF


def test_plugin_under_mike(make_site, monkeypatch):
    """`mike deploy 1.0` keeps the version menu; deploying a version CITATION.cff does not name
    stops the build, since every citation would name the wrong edition."""
    site = cite_site(make_site)
    monkeypatch.setenv("MIKE_DOCS_VERSION", "1.0")
    site.build()
    menu = re.search(r'<p id="version-menu">(.*?)</p>', site.html("heads"), re.S).group(1)
    assert "mike" in menu
    assert 'content="https://example.org/throwaway/1.0/heads/"' in site.html("heads")
    monkeypatch.setenv("MIKE_DOCS_VERSION", "2.0")
    message = build_error(site, prefix="numbook-cite:")
    assert "mike is deploying version '2.0' but CITATION.cff names version '1.0'" in message

