"""The book's figures as one list: the registry a gallery page (or any host) is built from.

Every figure numbook made in a build is described by a `FigureEntry`: its number, its
caption as it reads on its page, the ``##`` section it sits in, and the files it was
published as (the light and dark SVG and the CSV of its data). `gallery_html` turns the
list into the HTML of a page that lists them all, for readers who want a figure for a
slide or a handout. Nothing here knows what the figures show.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .cells import Heading
from .figures import display_size, variant_stem
from .format import escape_text
from .numbering import section_prefix
from .render import _plain, figures_dir

if TYPE_CHECKING:
    from .book import Book


@dataclass(frozen=True)
class ViewEntry:
    """Another version of a figure that a switch on its page shows (the files it was published as)."""

    key: str  # the switch's value for it
    caption: str | None  # its caption, where it differs from the figure's
    light: str
    dark: str
    data: str


@dataclass(frozen=True)
class FigureEntry:
    """One published figure, and where everything about it lives (paths in the docs tree)."""

    fig_id: str
    src_uri: str  # the page that shows it
    label: str  # "Figure 4.3"
    caption: str  # as shown under the figure, computed values filled in
    section: str | None  # the heading of the section it is in, numbered as on the page
    section_id: str | None  # that heading's explicit id, if it has one
    light: str  # src_uri of the light SVG
    dark: str  # src_uri of the dark SVG
    data: str  # src_uri of the CSV of its data
    views: tuple[ViewEntry, ...] = ()  # the other versions a switch can show
    size: tuple[int, int] | None = None  # width, height of the figure on its page, CSS pixels


def figure_entries(book: Book, page_order: Sequence[str] = ()) -> list[FigureEntry]:
    """Every figure that was made in this build, pages in ``page_order`` (then by path),
    figures in page order. A figure whose page failed is left out: it was not published; so
    are the figures of a page whose front matter says ``gallery: false`` (a catalogue of
    demonstrations, say, which are not figures of the book)."""
    rank = {src_uri: k for k, src_uri in enumerate(page_order)}
    pages = sorted(book.pages.values(), key=lambda p: (rank.get(p.src_uri, len(rank)), p.src_uri))
    entries: list[FigureEntry] = []
    for p in pages:
        if p.run is None or p.run.error is not None or not p.in_gallery:
            continue
        fence_lines = {c.index: c.fence_line for c in p.parsed.code_cells}
        for out in p.run.outputs:
            fig = out.figure
            if fig is None or fig.fig_id not in book.figures:
                continue
            section, section_id = _section_above(
                p.parsed.headings, p.number, fence_lines.get(out.index, 0), book.first_section.get(p.src_uri, 1)
            )
            base = figures_dir(p.src_uri) + fig.fig_id
            views = []
            for v in fig.variants:
                stem = variant_stem(fig, v)
                if stem == fig.fig_id:
                    continue  # the figure itself, as the page first shows it
                stem = figures_dir(p.src_uri) + stem
                caption = None if v["caption"] in (None, fig.caption) else v["caption"]
                views.append(ViewEntry(v["key"], caption, stem + ".light.svg", stem + ".dark.svg", stem + ".csv"))
            entries.append(
                FigureEntry(
                    fig_id=fig.fig_id,
                    src_uri=p.src_uri,
                    label=book.figures[fig.fig_id].label,
                    caption=fig.caption,
                    section=section,
                    section_id=section_id,
                    light=base + ".light.svg",
                    dark=base + ".dark.svg",
                    data=base + ".csv",
                    views=tuple(views),
                    size=_size(fig.svg),
                )
            )
    return entries


def _size(svg: str) -> tuple[int, int] | None:
    size = display_size(svg)
    return None if size is None else (int(size["width"]), int(size["height"]))


# The tallest a preview is drawn (cite-print.css: 14rem of Material's 20px root font on a
# wide screen); narrower columns shrink it further, keeping its shape.
PREVIEW_MAX_HEIGHT_PX = 280


def preview_attributes(size: tuple[int, int] | None, max_height: int = PREVIEW_MAX_HEIGHT_PX) -> str:
    """``width``/``height`` of a preview: the page's size scaled down to ``max_height`` at
    most, so the browser keeps the preview's box before the image arrives (no shift)."""
    if size is None:
        return ""
    width, height = size
    scale = min(1.0, max_height / height) if height else 1.0
    return f' width="{max(1, round(width * scale))}" height="{max(1, round(height * scale))}"'


def _section_above(
    headings: Sequence[Heading], page_number: str | None, line: int, first: int = 1
) -> tuple[str | None, str | None]:
    """The last ``##`` heading before ``line``, with the number the page shows in front of it
    (``first`` is the number of the page's first section: a part may span pages)."""
    found = None
    for k, h in enumerate(headings, start=first):
        if h.line > line:
            break
        found = (k, h)
    if found is None:
        return None, None
    k, h = found
    prefix = section_prefix(page_number, k) if page_number else ""
    return prefix + _plain(h.text), h.id


def gallery_html(
    entries: Sequence[FigureEntry],
    url_for: Callable[[str], str],
    page_titles: Mapping[str, str],
) -> str:
    """The HTML of a gallery: one item per figure, with a small preview in the reader's
    colour scheme, its number (a link to it), caption, page and section, and downloads.

    ``url_for`` maps a docs path to a URL relative to the gallery page; ``page_titles``
    maps a page's docs path to the title to show for it (its path when missing).
    """
    if not entries:
        return '<p class="numbook-gallery-empty">No figure was made in this build.</p>'
    items = []
    for e in entries:
        page_url = url_for(e.src_uri)
        where = escape_text(page_titles.get(e.src_uri, e.src_uri))
        where_html = f'<a href="{html.escape(page_url)}">{where}</a>'
        if e.section:
            section = escape_text(e.section)
            if e.section_id:
                section = f'<a href="{html.escape(page_url)}#{html.escape(e.section_id)}">{section}</a>'
            where_html += f", {section}"
        light, dark, data = (html.escape(url_for(u)) for u in (e.light, e.dark, e.data))
        fid = html.escape(e.fig_id)
        box = preview_attributes(e.size)
        items.append(
            '<li class="numbook-gallery__item"><figure>\n'
            # The caption right below says what the preview shows: the image is decorative here.
            f'<div class="numbook-gallery__preview"><img src="{light}#only-light" alt=""{box} loading="lazy" '
            f'decoding="async"><img src="{dark}#only-dark" alt=""{box} loading="lazy" decoding="async"></div>\n'
            f'<figcaption><p class="numbook-gallery__caption"><a href="{html.escape(page_url)}#{fid}">'
            f"{html.escape(e.label)}</a>: {escape_text(e.caption)}</p>\n"
            f'<p class="numbook-gallery__where">In {where_html}</p>\n'
            f'<p class="numbook-gallery__downloads">Download: {_downloads(fid, light, dark, data)}</p>\n'
            + _views_html(e, url_for)
            + "</figcaption>\n</figure></li>"
        )
    return '<ul class="numbook-gallery">\n' + "\n".join(items) + "\n</ul>"


def _views_html(entry: FigureEntry, url_for: Callable[[str], str]) -> str:
    """The downloads of a figure's other versions (those its page's switch shows), if any."""
    if not entry.views:
        return ""
    items = []
    for v in entry.views:
        name = html.escape(f"{entry.fig_id}.{v.key}")
        light, dark, data = (html.escape(url_for(u)) for u in (v.light, v.dark, v.data))
        caption = f": {escape_text(v.caption)}" if v.caption else ""
        items.append(f"<li><em>{html.escape(v.key)}</em>{caption} {_downloads(name, light, dark, data)}</li>")
    return (
        '<p class="numbook-gallery__views">Other views, which the switch on its page shows:</p>\n'
        '<ul class="numbook-gallery__views">' + "".join(items) + "</ul>\n"
    )


def _downloads(name: str, light: str, dark: str, data: str) -> str:
    """The three download links of one figure or view (``name`` and URLs already escaped)."""
    return (
        f'<a href="{light}" download="{name}.light.svg">SVG, light</a> · '
        f'<a href="{dark}" download="{name}.dark.svg">SVG, dark</a> · '
        f'<a href="{data}" download="{name}.csv">data, CSV</a>'
    )
