"""Plain data that flows through numbook: parsed cells, their outputs, errors.

Everything here is a dataclass of strings, numbers, lists and dicts, so that a page's run
goes from its worker to the host, and into the cache, as plain JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class BlockOptions:
    """Options from a block's info string (`python exec hide check="..."`)."""

    hide: bool = False
    check: str | None = None
    kind: str | None = None  # "teach", "present" or "setup"; None: follows from what the block makes
    figure: str | None = None
    caption: str | None = None
    alt: str | None = None
    timeout: float | None = None


@dataclass(frozen=True)
class CodeCell:
    """A fenced `python exec` block.

    Offsets index the Markdown text the page was parsed from; lines are lines of the
    source file (front matter included), so messages point at what the author sees.
    """

    index: int
    code: str
    options: BlockOptions
    info: str  # the raw info string, kept to display the block as plain code when disabled
    fence_line: int  # line of the opening fence
    first_line: int  # line of the first code line
    indent: str
    start: int  # offset of the opening fence line
    end: int  # offset just after the closing fence line (or end of text)


@dataclass(frozen=True)
class InlineCell:
    """An inline value `` `{py} expression` `` in prose."""

    index: int
    expr: str
    line: int
    start: int  # offset of the opening backtick
    end: int  # offset just after the closing backtick


Cell = CodeCell | InlineCell


@dataclass(frozen=True)
class FigRef:
    """An empty-text link filled with a number.

    ``[](#id)`` or ``[](page.md#id)``: a figure ("Figure 4.3") or a numbered section
    ("Section 4.7"); ``[](page.md)``: a numbered page ("Part 4").
    """

    target_page: str  # as written, "" for the same page
    fig_id: str  # the id after "#"; "" for a link to a whole page
    line: int
    start: int
    end: int


@dataclass(frozen=True)
class Heading:
    """A level-2 ATX heading, numbered "N.k" on numbered pages."""

    line: int
    text_start: int  # offset where the number is inserted
    line_end: int  # offset of the end of the heading line (before the newline)
    text: str  # heading text without the attribute list
    has_id: bool  # an explicit {#id} is present
    attr_open: int | None  # offset just inside "{" or "{:" of a trailing attribute list without id
    id: str | None = None  # the explicit id, when there is one


@dataclass
class CellError:
    """One reason a page failed: where, why, and the trimmed traceback."""

    page: str  # display path, e.g. "docs/part1/attention.md"
    line: int
    reason: str
    traceback: str = ""
    cell: int | None = None  # index of the failing cell, None for page-level problems
    span: tuple[int, int] | None = None  # text replaced by the error under `mkdocs serve`
    figure: str | None = None  # the figure id of a refused block: still numbered, its box takes the anchor

    def location(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True)
class EquationLabel:
    """``\\label{id}`` in a display formula: the formula is numbered and citable by ``id``."""

    id: str
    line: int
    start: int  # offsets of the ``\\label{…}`` text
    end: int


@dataclass(frozen=True)
class Aside:
    """``<details class="aside" id="…">``: a section's depth, closed until the reader opens it.

    ``summary_end`` is the offset of its ``</summary>``; the link to it goes after it.
    """

    id: str
    line: int
    summary_end: int


@dataclass
class ParsedPage:
    """The result of parsing one page: its cells, plus what the renderer needs."""

    cells: list[Cell] = field(default_factory=list)
    errors: list[CellError] = field(default_factory=list)
    refs: list[FigRef] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    equations: list[EquationLabel] = field(default_factory=list)
    asides: list[Aside] = field(default_factory=list)
    title: Heading | None = None  # the first level-1 ATX heading, if any

    @property
    def code_cells(self) -> list[CodeCell]:
        return [c for c in self.cells if isinstance(c, CodeCell)]


@dataclass
class FigureOutput:
    """A figure a block made: the light SVG text and the data behind it."""

    fig_id: str
    caption: str
    alt: str
    svg: str
    header: list[str]
    rows: list[list[str]]  # formatted for display
    csv: str  # full precision, for download
    # Versions a widget can switch to: dicts with key, svg, alt, caption (or None), header, rows, csv,
    # and narrow_svg (or None).
    variants: list[dict] = field(default_factory=list)
    #: The same figure laid out for a narrow screen (`numbook.api.narrow`); None: it has none.
    narrow_svg: str | None = None


@dataclass
class CellOutput:
    """What one cell produced. `items` keep the order of api calls.

    item shapes: {"type": "markdown", "text": str}, {"type": "table", "markdown": str},
    {"type": "export", "name": str, "json": str},
    {"type": "widget", "name": str, "json": str, "kind": str, "fallback": str}.
    """

    index: int
    stdout: str = ""
    items: list[dict[str, str]] = field(default_factory=list)
    figure: FigureOutput | None = None
    value: str | None = None  # inline cells: the formatted, escaped value
    #: Functions and classes of the linked packages the block calls ("pkg.module.name"), in
    #: the order they first appear: the reader's "source" links.
    sources: list[dict[str, str]] = field(default_factory=list)


@dataclass
class PageRun:
    """The outcome of executing one page, as sent back by the worker and cached."""

    outputs: list[CellOutput] = field(default_factory=list)
    error: CellError | None = None
    deps: dict[str, str] = field(default_factory=dict)  # project file (relative to root) -> sha256 when read
    changed: list[str] = field(default_factory=list)  # deps whose bytes changed before the run ended
    started: float = 0.0  # time.monotonic() in the worker; not cached
    finished: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PageRun:
        outputs = []
        for o in data["outputs"]:
            fig = FigureOutput(**o["figure"]) if o.get("figure") else None
            outputs.append(
                CellOutput(
                    index=o["index"],
                    stdout=o["stdout"],
                    items=[dict(i) for i in o["items"]],
                    figure=fig,
                    value=o["value"],
                    sources=[dict(x) for x in o.get("sources", [])],
                )
            )
        err = None
        if data.get("error"):
            err = CellError(**{**data["error"], "span": None})
        return cls(
            outputs=outputs,
            error=err,
            deps=dict(data["deps"]),
            changed=list(data.get("changed", [])),
            started=data.get("started", 0.0),
            finished=data.get("finished", 0.0),
        )
