"""The figure gallery: a page listing every figure numbook made, built from its registry."""

from __future__ import annotations

import posixpath
import re

import pytest
import yaml

from numbook.gallery import PREVIEW_MAX_HEIGHT_PX

from .conftest import build_error, logged

FIG = """\
```python exec figure="{id}" caption="{caption}" alt="A line."
import matplotlib.pyplot as plt
from numbook.api import figure_data
top = {n}
fig, ax = plt.subplots()
ax.plot([0, top])
figure_data(["x"], [[0], [{n}]])
```
"""

NUMBERED = (
    "---\nnumber: 2\ntitle: Heads\n---\n\n## Scores {#p2-scores}\n\n"
    + FIG.format(id="fig-scores", caption="Scores: largest {py:top * 10}", n=3)
    + "\n## The update *of* a row\n\n"
    + FIG.format(id="fig-update", caption="The update", n=4)
)
# Part 2 goes on, on a second page: its sections and figures are numbered on.
CONTINUED = "---\nnumber: 2\ntitle: More heads\n---\n\n## More {#p2-more}\n\n" + FIG.format(
    id="fig-more", caption="More", n=5
)
UNNUMBERED = "# Notes\n\nBefore any section.\n\n" + FIG.format(id="fig-note", caption="A note & more", n=1)
GALLERY = "# All figures\n\nEvery figure, listed when the site is built.\n"


def gallery_site(make_site, **plugin):
    site = make_site(
        {"index.md": "# Home\n", "b-heads.md": NUMBERED, "c-more.md": CONTINUED, "a-notes.md": UNNUMBERED,
         "figures.md": GALLERY},
        plugin={"figure_gallery": "figures.md", **plugin},
    )
    config = yaml.safe_load((site.root / "mkdocs.yml").read_text())
    # The navigation puts the numbered page first, against the alphabet of the file names.
    config["nav"] = [{"Home": "index.md"}, {"Part 2 · Heads": "b-heads.md"}, {"Part 2, more": "c-more.md"},
                     {"Notes": "a-notes.md"}, {"All figures": "figures.md"}]
    (site.root / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    return site


def test_gallery_lists_every_figure_in_book_order(make_site):
    site = gallery_site(make_site)
    site.build()
    gallery = site.main("figures")
    assert "Every figure, listed when the site is built." in gallery  # the page's own prose stays
    items = re.findall(r'<li class="numbook-gallery__item">(.*?)</li>', gallery, re.S)
    labels = [re.search(r'<a href="([^"]+)">(Figure [\d.]+)</a>: (.*?)</p>', i).groups() for i in items]
    assert labels == [
        ("../b-heads/#fig-scores", "Figure 2.1", "Scores: largest 30"),  # caption as computed on its page
        ("../b-heads/#fig-update", "Figure 2.2", "The update"),
        ("../c-more/#fig-more", "Figure 2.3", "More"),
        ("../a-notes/#fig-note", "Figure 1", "A note &amp; more"),
    ]
    # where each figure is: the page's navigation title and the numbered section, linked when it has an id
    assert re.search(r'In <a href="../b-heads/">Part 2 · Heads</a>, <a href="../b-heads/#p2-scores">2.1 Scores</a>', items[0])
    assert 'In <a href="../b-heads/">Part 2 · Heads</a>, 2.2 The update of a row</p>' in items[1]
    assert '<a href="../c-more/#p2-more">2.3 More</a></p>' in items[2]  # numbered on from the first page
    assert 'In <a href="../a-notes/">Notes</a></p>' in items[3]  # before any section
    # every link points at an element that exists, and every download is the published file
    for item, (href, label, _) in zip(items, labels):
        page, anchor = href.removeprefix("../").split("#")
        assert f'id="{anchor}"' in site.html(page.rstrip("/")), href
        downloads = dict((text, url) for url, text in re.findall(r'<a href="([^"]+)" download="[^"]+">([^<]+)</a>', item))
        assert set(downloads) == {"SVG, light", "SVG, dark", "data, CSV"}
        for url in downloads.values():
            # relative to the gallery's address, figures/ (which is also the top-level figure folder)
            assert site.site_file(posixpath.normpath(posixpath.join("figures", url))).is_file(), url
        assert downloads["SVG, dark"].endswith(f"{anchor}.dark.svg")
        assert f'src="{downloads["SVG, light"]}#only-light"' in item and f'src="{downloads["SVG, dark"]}#only-dark"' in item
        # each preview keeps its box while it loads: the figure's own shape, at most the preview's height
        page_img = re.search(rf'<img src="[^"]*{anchor}\.light\.svg#only-light"[^>]*\swidth="(\d+)" height="(\d+)"',
                             site.html(page.rstrip("/")))
        sizes = re.findall(r'<img [^>]*\swidth="(\d+)" height="(\d+)"', item)
        assert len(sizes) == 2 and sizes[0] == sizes[1], item
        (w, h), (page_w, page_h) = map(int, sizes[0]), map(int, page_img.groups())
        assert h <= PREVIEW_MAX_HEIGHT_PX and h == min(page_h, PREVIEW_MAX_HEIGHT_PX)
        assert abs(w / h - page_w / page_h) < 0.02


def test_gallery_page_that_does_not_exist_is_an_error(make_site):
    site = gallery_site(make_site, figure_gallery="gallery.md")
    assert "figure_gallery is 'gallery.md', which is not a page" in build_error(site)


def test_gallery_leaves_out_a_page_whose_blocks_failed(make_site):
    site = gallery_site(make_site)
    site.page("a-notes.md", UNNUMBERED + "\n```python exec\nraise ValueError('no')\n```\n")
    site.build(serve=True)  # serving shows the error on its page and builds the rest
    items = re.findall(r'<li class="numbook-gallery__item">', site.main("figures"))
    assert len(items) == 3


def test_a_failing_figure_is_reported_at_its_own_page_not_the_gallerys(make_site):
    """The gallery waits for every page's figures; a problem it meets there belongs to the page
    that has it. MkDocs heads an error raised while it reads a page with "Error reading page
    '<that page>'": that page, and then the problem's own page and line, must be the first
    an author reads."""
    from mkdocs.exceptions import Abort

    site = gallery_site(make_site)
    # read after figures.md (MkDocs reads the pages in the order of their paths)
    site.page("z-new.md", "# New\n\n" + FIG.format(id="fig-new", caption="New", n=6).replace(
        'figure_data(["x"], [[0], [6]])\n', ""))
    with logged() as messages, pytest.raises(Abort):
        site.build(strict=True)
    errors = "\n".join(messages)
    assert "figures.md" not in errors, errors
    first = errors.find("docs/z-new.md:")
    assert 0 <= first and "Error reading page 'z-new.md'" in errors[:first], errors
    assert "figure 'fig-new' has no data" in errors[first:], errors


def test_a_page_that_says_gallery_false_keeps_its_figures_off_the_gallery(make_site):
    """A page of demonstrations (the catalogue of figure functions) is not a page of the book's figures."""
    site = gallery_site(make_site)
    site.page("a-notes.md", "---\ngallery: false\n---\n\n" + UNNUMBERED)
    site.build()
    gallery = site.main("figures")
    assert "fig-note" not in gallery and gallery.count('<li class="numbook-gallery__item">') == 3
    assert 'id="fig-note"' in site.html("a-notes")  # the page itself still shows it
