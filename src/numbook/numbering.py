"""Figure and section numbers, and the cross-references that use them.

A page's number comes from its front matter (``number: 4``). Its figures are numbered
in order, "Figure 4.1", "Figure 4.2"; on a page without a number they are "Figure 1",
"Figure 2". Figure ids are global, so prose anywhere can write ``[](#fig-id)`` (same
page) or ``[](other.md#fig-id)`` and get "Figure 4.3". Figure numbers need only the
parse, not the execution, so references are checked even when nothing runs.
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


def figure_label(page_number: str | None, k: int) -> str:
    return f"Figure {page_number}.{k}" if page_number else f"Figure {k}"


def number_figures(
    pages: Mapping[str, tuple[str | None, ParsedPage]], display: Mapping[str, str]
) -> tuple[dict[str, FigureInfo], list[CellError]]:
    """Label every figure of every page; report duplicate ids (both places)."""
    figures: dict[str, FigureInfo] = {}
    errors: list[CellError] = []
    for src_uri in sorted(pages):
        number, parsed = pages[src_uri]
        k = 0
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
    return figures, errors


def resolve_ref(
    ref: FigRef, src_uri: str, figures: Mapping[str, FigureInfo], display: Mapping[str, str]
) -> tuple[str | None, CellError | None]:
    """The label for a reference, or an error saying what is wrong with it."""
    where = display[src_uri]
    info = figures.get(ref.fig_id)
    if info is None:
        return None, CellError(
            where, ref.line, f"reference to unknown figure id {ref.fig_id!r}", span=(ref.start, ref.end)
        )
    target = src_uri if not ref.target_page else posixpath.normpath(
        posixpath.join(posixpath.dirname(src_uri), ref.target_page)
    )
    if target != info.src_uri:
        rel = posixpath.relpath(info.src_uri, posixpath.dirname(src_uri) or ".")
        return None, CellError(
            where,
            ref.line,
            f"figure {ref.fig_id!r} is on {display[info.src_uri]}: write [](" + (
                "" if info.src_uri == src_uri else rel
            ) + f"#{ref.fig_id})",
            span=(ref.start, ref.end),
        )
    return info.label, None


def section_prefix(page_number: str | None, k: int) -> str:
    """The number put in front of the k-th ``##`` heading of a numbered page."""
    return f"{page_number}.{k} "
