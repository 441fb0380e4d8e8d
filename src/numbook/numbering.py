"""Figure and section numbers, and the cross-references that use them.

A page's number comes from its front matter (``number: 4``). Its figures are numbered
in order, "Figure 4.1", "Figure 4.2"; on a page without a number they are "Figure 1",
"Figure 2". Figure ids are global, so prose anywhere can write ``[](#fig-id)`` (same
page) or ``[](other.md#fig-id)`` and get "Figure 4.3".

The ``##`` headings of a numbered page are its sections, "4.1", "4.2", …; one with an
explicit id (``## Title {#p4-generation}``) can be cited the same way,
``[](#p4-generation)`` or ``[](part4.md#p4-generation)``, and reads "Section 4.7".
Section ids belong to their page (two pages may both have ``{#summary}``). A link to a
numbered page itself, ``[](part4.md)``, reads "Part 4" (the word is the plugin's
``page_label`` option). Numbers need only the parse, not the execution, so references
are checked even when nothing runs.

A long part may be split over several pages that share one ``number``: their sections
and figures are numbered on from page to page in the order the host gives the pages
(the site's navigation), so adding a page after the others never renumbers them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass

from .cells import CellError, FigRef, ParsedPage


@dataclass(frozen=True)
class FigureInfo:
    fig_id: str
    src_uri: str
    label: str  # "Figure 4.3"
    line: int


@dataclass(frozen=True)
class SectionInfo:
    section_id: str
    src_uri: str
    label: str  # "Section 4.7"
    line: int


@dataclass
class Labels:
    """Everything a reference can point at, numbered."""

    figures: dict[str, FigureInfo]
    sections: dict[tuple[str, str], SectionInfo]  # (src_uri, id) -> info
    pages: dict[str, str | None]  # src_uri -> the page's number, None if it has none
    page_label: str = "Part"


def number_sections(
    pages: Mapping[str, tuple[str | None, ParsedPage]],
    figures: Mapping[str, FigureInfo],
    display: Mapping[str, str],
) -> tuple[dict[tuple[str, str], SectionInfo], list[CellError]]:
    """Label the ``##`` headings with explicit ids of numbered pages.

    An id used twice on one page (by two headings, or by a heading and a figure of that
    page) is an error: the HTML would have two elements with one id.
    """
    sections: dict[tuple[str, str], SectionInfo] = {}
    errors: list[CellError] = []
    start = first_sections(pages)
    for src_uri, (number, parsed) in pages.items():
        for k, h in enumerate(parsed.headings, start=start[src_uri]):
            if h.id is None:
                continue
            key = (src_uri, h.id)
            fig = figures.get(h.id)
            if key in sections or (fig is not None and fig.src_uri == src_uri):
                first = sections[key].line if key in sections else fig.line  # type: ignore[union-attr]
                errors.append(
                    CellError(display[src_uri], h.line, f"id {h.id!r} is already used on this page, line {first}")
                )
                continue
            if number:
                sections[key] = SectionInfo(h.id, src_uri, f"Section {section_number(number, k)}", h.line)
            else:
                sections[key] = SectionInfo(h.id, src_uri, "", h.line)
    return sections, errors


def first_sections(pages: Mapping[str, tuple[str | None, ParsedPage]]) -> dict[str, int]:
    """The number of each page's first ``##`` section: 1, or on from earlier pages of its part."""
    used: dict[str, int] = {}
    first: dict[str, int] = {}
    for src_uri, (number, parsed) in pages.items():
        first[src_uri] = used.get(number, 0) + 1 if number else 1
        if number:
            used[number] = used.get(number, 0) + len(parsed.headings)
    return first


def section_number(page_number: str, k: int) -> str:
    return f"{page_number}.{k}"


def figure_label(page_number: str | None, k: int) -> str:
    return f"Figure {page_number}.{k}" if page_number else f"Figure {k}"


def number_figures(
    pages: Mapping[str, tuple[str | None, ParsedPage]], display: Mapping[str, str]
) -> tuple[dict[str, FigureInfo], list[CellError]]:
    """Label every figure of every page; report duplicate ids (both places)."""
    figures: dict[str, FigureInfo] = {}
    errors: list[CellError] = []
    used: dict[str, int] = {}  # figures numbered so far in each part
    for src_uri, (number, parsed) in pages.items():
        k = used.get(number, 0) if number else 0
        for cell in parsed.code_cells:
            fig = cell.options.figure
            if not fig:
                continue
            k += 1
            if fig in figures:
                first = figures[fig]
                errors.append(
                    CellError(
                        display[src_uri],
                        cell.fence_line,
                        f"figure id {fig!r} is already used at {display[first.src_uri]}:{first.line}",
                        cell=cell.index,
                    )
                )
                continue
            figures[fig] = FigureInfo(fig, src_uri, figure_label(number, k), cell.fence_line)
        if number:
            used[number] = k
    return figures, errors


def resolve_ref(
    ref: FigRef, src_uri: str, labels: Labels, display: Mapping[str, str]
) -> tuple[str | None, CellError | None]:
    """The label for a reference, or an error saying what is wrong with it."""
    where = display[src_uri]

    def error(reason: str) -> tuple[None, CellError]:
        return None, CellError(where, ref.line, reason, span=(ref.start, ref.end))

    target = src_uri if not ref.target_page else posixpath.normpath(
        posixpath.join(posixpath.dirname(src_uri), ref.target_page)
    )
    if not ref.fig_id:  # [](page.md)
        if target not in labels.pages:
            return error(f"empty link to {ref.target_page!r}, which is not a page of the book")
        if labels.pages[target] is None:
            return error(
                f"empty link to {display[target]}, which has no number (front matter `number:`): "
                "write the link text"
            )
        return f"{labels.page_label} {labels.pages[target]}", None

    section = labels.sections.get((target, ref.fig_id))
    if section is not None:
        if not section.label:
            return error(
                f"section {ref.fig_id!r} is on {display[target]}, which has no number "
                "(front matter `number:`): write the link text"
            )
        return section.label, None

    info = labels.figures.get(ref.fig_id)
    if info is None:
        elsewhere = sorted(k for k in labels.sections if k[1] == ref.fig_id)
        if len(elsewhere) == 1:
            return error(
                f"section {ref.fig_id!r} is on {display[elsewhere[0][0]]}: write "
                f"[]({_link(elsewhere[0][0], src_uri)}#{ref.fig_id})"
            )
        if ref.target_page and target not in labels.pages:
            return error(f"reference to {ref.target_page!r}, which is not a page of the book")
        return error(f"reference to unknown figure or section id {ref.fig_id!r}")
    if target != info.src_uri:
        return error(
            f"figure {ref.fig_id!r} is on {display[info.src_uri]}: write "
            f"[]({_link(info.src_uri, src_uri)}#{ref.fig_id})"
        )
    return info.label, None


def _link(target: str, src_uri: str) -> str:
    """How page ``src_uri`` writes a link to page ``target`` ("" for itself)."""
    if target == src_uri:
        return ""
    return posixpath.relpath(target, posixpath.dirname(src_uri) or ".")


def section_prefix(page_number: str | None, k: int) -> str:
    """The number put in front of the k-th ``##`` heading of a numbered page."""
    return f"{page_number}.{k} "
