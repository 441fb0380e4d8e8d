"""Figure and section numbers, and the cross-references that use them.

A page's number comes from its front matter (``number: 4``). Its figures are numbered
in order, "Figure 4.1", "Figure 4.2"; on a page without a number they are "Figure 1",
"Figure 2". Figure ids are global, so prose anywhere can write ``[](#fig-id)`` (same
page) or ``[](other.md#fig-id)`` and get "Figure 4.3".

The ``##`` headings of a numbered page are its sections, "4.1", "4.2", …; one with an
explicit id (``## Title {#p4-generation}``) can be cited the same way,
``[](#p4-generation)`` or ``[](part4.md#p4-generation)``, and reads "Section 4.7".
A display formula with ``\\label{eq-softmax}`` is numbered like a figure, shows "(4.2)"
beside it, and ``[](#eq-softmax)`` reads "Equation 4.2".
Section ids belong to their page (two pages may both have ``{#summary}``). A link to a
numbered page itself, ``[](part4.md)``, reads "Part 4" (the word is the plugin's
``page_label`` option). Numbers need only the parse, not the execution, so references
are checked even when nothing runs.

A long part may be split over several pages that share one ``number``: their sections
and figures are numbered on from page to page in the order the host gives the pages
(the site's navigation), so adding a page after the others never renumbers them.

A page can be *announced* before it is written (the plugin's ``planned`` option gives its
path and number). Until it is published (written and in the nav), ``[](part1.md)`` reads
"Part 1 (coming soon)" as plain text, with no link; once it is, the same reference
becomes a link, with no edit to the prose. A reference to a section or figure of an
announced page is an error: its numbers are not known yet.

A page's figures are numbered after its ``number``, or after its front matter's
``figure_prefix`` ("Figure L.1") on a page that wants its own scheme.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class Resolved:
    """What a reference reads, and whether it links (an announced page is only named)."""

    label: str
    link: bool = True


@dataclass(frozen=True)
class EquationInfo:
    eq_id: str
    src_uri: str
    number: str  # "4.3", shown beside the formula as (4.3)
    line: int

    @property
    def label(self) -> str:
        return f"Equation {self.number}"


@dataclass
class Labels:
    """Everything a reference can point at, numbered."""

    figures: dict[str, FigureInfo]
    sections: dict[tuple[str, str], SectionInfo]  # (src_uri, id) -> info
    pages: dict[str, str | None]  # src_uri -> the page's number, None if it has none
    page_label: str = "Part"
    planned: Mapping[str, str] = field(default_factory=dict)  # announced page -> its number
    published: Collection[str] | None = None  # pages a reader can reach (the nav); None: all
    planned_text: str = "{label} (coming soon)"
    equations: dict[str, EquationInfo] = field(default_factory=dict)

    def is_published(self, src_uri: str) -> bool:
        return src_uri in self.pages and (self.published is None or src_uri in self.published)


def page_heading(heading_format: str, page_label: str, number: str, title: str) -> str:
    """The H1 of a numbered page, from its front matter: "Part 2 · One attention head"."""
    return heading_format.format(label=page_label, number=number, title=title)


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
    """ "Figure 4.3" on a page numbered (or figure-prefixed) 4, "Figure 3" on one without."""
    return f"Figure {page_number}.{k}" if page_number else f"Figure {k}"


def number_figures(
    pages: Mapping[str, tuple[str | None, ParsedPage]], display: Mapping[str, str]
) -> tuple[dict[str, FigureInfo], list[CellError]]:
    """Label every figure of every page; report duplicate ids (both places). A block whose
    options were refused keeps its figure's number: references to it resolve, and fixing
    it renumbers nothing."""
    figures: dict[str, FigureInfo] = {}
    errors: list[CellError] = []
    used: dict[str, int] = {}  # figures numbered so far in each part
    for src_uri, (number, parsed) in pages.items():
        k = used.get(number, 0) if number else 0
        declared = [(c.fence_line, c.options.figure, c.index) for c in parsed.code_cells if c.options.figure]
        declared += [(e.line, e.figure, None) for e in parsed.errors if e.figure]  # refused blocks' too
        for line, fig, index in sorted(declared, key=lambda d: d[0]):
            k += 1
            if fig in figures:
                first = figures[fig]
                errors.append(
                    CellError(
                        display[src_uri],
                        line,
                        f"figure id {fig!r} is already used at {display[first.src_uri]}:{first.line}",
                        cell=index,
                    )
                )
                continue
            figures[fig] = FigureInfo(fig, src_uri, figure_label(number, k), line)
        if number:
            used[number] = k
    return figures, errors


def number_equations(
    pages: Mapping[str, tuple[str | None, ParsedPage]],
    figures: Mapping[str, FigureInfo],
    display: Mapping[str, str],
) -> tuple[dict[str, EquationInfo], list[CellError]]:
    """Number every labelled display formula, "(4.1)", "(4.2)", on from page to page of a
    part like figures ("(1)" on a page without a number); ids are global, like figures'."""
    equations: dict[str, EquationInfo] = {}
    errors: list[CellError] = []
    used: dict[str, int] = {}
    for src_uri, (number, parsed) in pages.items():
        k = used.get(number, 0) if number else 0
        for eq in parsed.equations:
            k += 1
            taken = equations.get(eq.id) or figures.get(eq.id)
            if taken is not None:
                what = "an equation" if eq.id in equations else "a figure"
                errors.append(CellError(
                    display[src_uri], eq.line,
                    f"id {eq.id!r} is already used by {what} at {display[taken.src_uri]}:{taken.line}",
                ))  # no span: a mark inside the formula would break it; the page's summary shows it
                continue
            equations[eq.id] = EquationInfo(eq.id, src_uri, f"{number}.{k}" if number else str(k), eq.line)
        if number:
            used[number] = k
    return equations, errors


def resolve_ref(
    ref: FigRef, src_uri: str, labels: Labels, display: Mapping[str, str]
) -> tuple[Resolved | None, CellError | None]:
    """What a reference reads, or an error saying what is wrong with it."""
    where = display[src_uri]

    def error(reason: str) -> tuple[None, CellError]:
        return None, CellError(where, ref.line, reason, span=(ref.start, ref.end))

    target = src_uri if not ref.target_page else posixpath.normpath(
        posixpath.join(posixpath.dirname(src_uri), ref.target_page)
    )
    announced = target in labels.planned and not labels.is_published(target)
    if not ref.fig_id:  # [](page.md)
        if announced:
            name = f"{labels.page_label} {labels.planned[target]}"
            return Resolved(labels.planned_text.format(label=name), link=False), None
        if target not in labels.pages:
            return error(f"empty link to {ref.target_page!r}, which is not a page of the book")
        if not labels.is_published(target):
            return error(
                f"empty link to {display[target]}, which is not in the nav: add it there, or "
                "announce it with the plugin's `planned` option"
            )
        if labels.pages[target] is None:
            return error(
                f"empty link to {display[target]}, which has no number (front matter `number:`): "
                "write the link text"
            )
        return Resolved(f"{labels.page_label} {labels.pages[target]}"), None
    if announced:
        return error(
            f"{ref.target_page!r} is announced but not published yet, so {ref.fig_id!r} has no "
            f"number: cite the page, []({ref.target_page}), until it is"
        )

    section = labels.sections.get((target, ref.fig_id))
    if section is not None:
        if not section.label:
            return error(
                f"section {ref.fig_id!r} is on {display[target]}, which has no number "
                "(front matter `number:`): write the link text"
            )
        return Resolved(section.label), None

    info = labels.figures.get(ref.fig_id) or labels.equations.get(ref.fig_id)
    if info is None:
        elsewhere = sorted(k for k in labels.sections if k[1] == ref.fig_id)
        if len(elsewhere) == 1:
            return error(
                f"section {ref.fig_id!r} is on {display[elsewhere[0][0]]}: write "
                f"[]({_link(elsewhere[0][0], src_uri)}#{ref.fig_id})"
            )
        if ref.target_page and target not in labels.pages:
            return error(f"reference to {ref.target_page!r}, which is not a page of the book")
        return error(f"reference to unknown figure, section or equation id {ref.fig_id!r}")
    if target != info.src_uri:
        what = "figure" if isinstance(info, FigureInfo) else "equation"
        return error(
            f"{what} {ref.fig_id!r} is on {display[info.src_uri]}: write "
            f"[]({_link(info.src_uri, src_uri)}#{ref.fig_id})"
        )
    return Resolved(info.label), None


def _link(target: str, src_uri: str) -> str:
    """How page ``src_uri`` writes a link to page ``target`` ("" for itself)."""
    if target == src_uri:
        return ""
    return posixpath.relpath(target, posixpath.dirname(src_uri) or ".")


def section_prefix(page_number: str | None, k: int) -> str:
    """The number put in front of the k-th ``##`` heading of a numbered page."""
    return f"{page_number}.{k} "
