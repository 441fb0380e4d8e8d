"""Put a page's outputs into its Markdown.

Rendering is pure text substitution on the Markdown the page was parsed from: each
block, inline value, figure reference and numbered heading is a span of that text
that gets replaced. Everything the page's code produced is escaped unless the author
asked for Markdown (``numbook.api.markdown``); figures and data tables are HTML with
URLs the caller computes (``url_for``), so this module knows nothing about MkDocs.
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .cells import CellError, CellOutput, CodeCell, FigureOutput, InlineCell, ParsedPage, PageRun
from .figures import display_size
from .format import escape_text
from .numbering import Labels, Resolved, resolve_ref, section_prefix
from .parse import find_refs
from .stored import memo_by_digest


@dataclass
class RenderOptions:
    """How the host site renders things (decided once from its Markdown extensions)."""

    enabled: bool = True
    show_errors: bool = False  # `mkdocs serve`: errors become admonitions instead of stopping
    collapsible: str | None = "???"  # "???" (pymdownx.details), "!!!" (admonition) or None (raw HTML)
    attr_list: bool = False  # headings can keep their id with {#id}
    slugify: Callable[[str, str], str] | None = None
    separator: str = "-"
    figure_min_text_px: float = 0.0  # a figure never shows its smallest text below this (0: off)
    md_in_html: bool = False  # neighbouring checks can share one <div markdown> strip
    check_help: str | None = None  # "page.md#anchor" explaining checks, linked from the legend
    source_pages: Mapping[str, str] = field(default_factory=dict)  # package -> page showing its code


@dataclass
class PageContext:
    src_uri: str
    display_path: str
    number: str | None
    parsed: ParsedPage
    run: PageRun | None
    errors: list[CellError] = field(default_factory=list)  # parse and reference errors of this page
    first_section: int = 1  # more than 1 when earlier pages of the same part hold sections
    #: Keeps a finished piece of HTML (and the id it carries) out of the Markdown and returns
    #: what stands in for it (`Book.render` passes one when the host puts the HTML back
    #: after conversion).
    defer_html: Callable[[str, str], str] | None = None
    #: Keeps a figure's data fold out of the page's content until the page is finished
    #: (`Book.finish_output`): search indexes the content, and a table of numbers there
    #: only makes the index larger and every search slower.
    defer_data: Callable[[str], str] | None = None
    title: str | None = None  # the H1 made from the front matter (numbered pages with a title)


def fenced(text: str, lang: str) -> str:
    """A fenced code block that no backtick run inside ``text`` can close."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{lang}\n{body}{fence}"


def _indent(text: str, indent: str) -> str:
    if not indent:
        return text
    return "\n".join(indent + line if line.strip() else line for line in text.split("\n"))


@dataclass(frozen=True)
class ShownProblem:
    """A problem as a preview page shows it (`mkdocs serve`; `mkdocs build` stops instead)."""

    where: str  # "docs/page.md:LINE", what the terminal prints too
    reason: str
    detail: str = ""  # the traceback, or the formula
    anchor: str | None = None  # id of its mark where it happened; None: shown only in the summary
    boxed: bool = False  # its mark is a box that holds the detail (an inline mark cannot)

    @classmethod
    def of(cls, err: CellError, anchor: str | None = None, boxed: bool = False) -> ShownProblem:
        return cls(err.location(), err.reason, err.traceback, anchor, boxed)


def _html_block_text(text: str) -> str:
    """Escaped text that keeps a raw HTML block open: a blank line would end it in Markdown.

    Backticks become ``&#96;``: a reason that quotes the page (`` `{py} 6 *` ``) must not read,
    to whoever scans the Markdown after us, as an inline value that did not run.
    """
    return re.sub(r"(?m)^([ \t]*)\n", r"\1&#10;", html.escape(text)).replace("`", "&#96;")


def _html_inline_text(text: str) -> str:
    """Escaped text that Markdown's inline syntax leaves alone inside raw inline HTML."""
    return html.escape(text).translate({ord(c): f"&#{ord(c)};" for c in "`*_[]\\"})


def problem_box(problem: ShownProblem) -> str:
    """The box shown where a block (or a display formula) failed: page:line, reason, detail."""
    anchor = f' id="{problem.anchor}"' if problem.anchor else ""
    detail = f"<pre><code>{_html_block_text(problem.detail)}</code></pre>\n" if problem.detail else ""
    return (
        f'<div class="admonition failure numbook-error"{anchor}>\n'
        f'<p class="admonition-title">Error at {html.escape(problem.where)}</p>\n'
        f"<p>{_html_block_text(problem.reason)}</p>\n{detail}</div>"
    )


def problem_mark(problem: ShownProblem) -> str:
    """The mark shown inside a sentence where an inline value, link or formula failed."""
    anchor = f' id="{problem.anchor}"' if problem.anchor else ""
    return f'<code class="numbook-error"{anchor}>{_html_inline_text(f"{problem.where}: {problem.reason}")}</code>'


def problems_summary(problems: Sequence[ShownProblem], what: str = "problem") -> str:
    """The box at the top of a page with problems: each one, linked to its mark, so none is missed.

    ``what`` names one problem in the title ("problem", "bad formula"). A detail
    (traceback, formula) that no box in the page holds is written here.
    """
    items = []
    for p in problems:
        where = html.escape(p.where)
        if p.anchor:
            where = f'<a href="#{p.anchor}">{where}</a>'
        item = f"<li>{where}: {_html_block_text(p.reason)}"
        if p.detail and not p.boxed:
            item += f"<pre><code>{_html_block_text(p.detail)}</code></pre>"
        items.append(item + "</li>")
    count = f"{len(problems)} {what}" + ("s" if len(problems) != 1 else "")
    return (
        '<div class="admonition failure numbook-problems" role="alert">\n'
        f'<p class="admonition-title">{count} on this page: <code>mkdocs build</code> stops on '
        f'{"it" if len(problems) == 1 else "them"}, this preview shows where</p>\n'
        "<ul>\n" + "\n".join(items) + "\n</ul>\n</div>"
    )


CHECK_MARK = "\u2713"


def _check_box(claim: str, inner: list[str], code: str, style: str | None) -> str:
    """A check, folded to a small mark: the claim is its accessible name and tooltip.

    Opening it shows the claim and the assertions that guard it. The mark is one
    character, so a page with twenty checks still reads as prose.
    """
    title = f"Checked when this page was built: {escape_text(claim)}"
    tooltip = html.escape(f"Checked when this page was built: {claim}", quote=True)
    summary = (
        f'<span class="numbook-check__mark" aria-hidden="true" title="{tooltip}">{CHECK_MARK}</span>'
        f'<span class="numbook-check__claim">{title}</span>'
    )
    if style == "???":
        body = "\n\n".join(inner)
        return f'??? numbook-check "{summary}"\n\n' + _indent(body, "    ")
    return (
        f'<details class="numbook-check">\n<summary>{summary}</summary>\n'
        f"<pre><code>{html.escape(code)}</code></pre>\n</details>"
    )


@memo_by_digest(maxsize=1024)  # measuring an SVG's text takes regex passes over it; saves repeat them
def _image_size(svg: str, min_text_px: float) -> str:
    """``width``/``height`` (no layout shift while the image loads) and, with a text floor,
    the ``min-width`` below which the figure scrolls sideways instead of shrinking."""
    size = display_size(svg, min_text_px)
    if size is None:
        return ""
    attrs = f' width="{size["width"]}" height="{size["height"]}"'
    if size["min_width"] is not None:
        attrs += f' style="min-width:{size["min_width"]}px"'
    return attrs


#: Below this width a figure with a narrow layout shows it (book.css uses the same width for
#: tables' narrow layouts).
NARROW_MEDIA = "(max-width: 37.49em)"


def figure_html(
    fig: FigureOutput, label: str, url_for: Callable[[str], str], base: str, min_text_px: float = 0.0
) -> str:
    """The figure (light and dark images) and its caption, as HTML."""
    alt = html.escape(fig.alt, quote=True)
    light = url_for(f"{base}{fig.fig_id}.light.svg")
    dark = url_for(f"{base}{fig.fig_id}.dark.svg")
    caption = escape_text(fig.caption)
    variants = ""
    if fig.variants:  # a switch widget can show other versions, listed in this file
        variants = f' data-numbook-variants="{html.escape(url_for(f"{base}{fig.fig_id}.variants.json"))}"'
        caption = f'<span class="numbook-caption">{caption}</span>'
    size = _image_size(fig.svg, min_text_px)
    images = [
        # Lazy: the browser fetches only the variant of the reader's colour scheme, and
        # only when the figure comes near the screen.
        f'<img src="{html.escape(url)}#only-{scheme}" alt="{alt}"{size} loading="lazy" decoding="async">'
        for url, scheme in ((light, "light"), (dark, "dark"))
    ]
    css_class = "numbook-figure"
    if fig.narrow_svg is not None:  # a phone fetches the narrow layout instead (<picture>)
        css_class += " numbook-figure--narrow"
        narrow_size = _image_size(fig.narrow_svg, 0.0)
        images = [
            f'<picture><source media="{NARROW_MEDIA}" srcset="{html.escape(url_for(f"{base}{fig.fig_id}.narrow.{scheme}.svg"))}"'
            f"{narrow_size}>{image}</picture>"
            for image, scheme in zip(images, ("light", "dark"))
        ]
    return (
        f'<figure class="{css_class}" id="{html.escape(fig.fig_id)}"{variants}>\n'
        '<div class="numbook-figure__scroll">\n'
        + "\n".join(images) + "\n"
        "</div>\n"
        f"<figcaption>{html.escape(label)}: {caption} {_self_link(fig.fig_id)}</figcaption>\n"
        "</figure>"
    )


def figure_data_html(fig: FigureOutput, label: str, url_for: Callable[[str], str], base: str) -> str:
    """The data behind a figure: a folded table and a link to the same numbers as CSV."""
    csv_url = url_for(f"{base}{fig.fig_id}.csv")
    head = "".join(f"<th>{escape_text(h)}</th>" for h in fig.header)
    rows = "\n".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in fig.rows)
    return (
        f'<details class="numbook-data">\n<summary>The data behind {html.escape(label)}</summary>\n'
        f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody>\n</table>\n"
        f'<p><a href="{html.escape(csv_url)}" download="{html.escape(fig.fig_id)}.csv">'
        f"Download the data (CSV)</a></p>\n</details>"
    )


def _self_link(target: str, title: str = "Link to this figure") -> str:
    """A link from a figure's caption (an aside's body) to itself, styled like a heading's permalink."""
    return f'<a class="headerlink" href="#{html.escape(target)}" title="{title}">&para;</a>'


def _page_dir(src_uri: str) -> str:
    """The directory of a page's source, with a trailing slash ('' at the top)."""
    return src_uri.rsplit("/", 1)[0] + "/" if "/" in src_uri else ""


def figures_dir(src_uri: str) -> str:
    """Where a page's figure files go: ``<page-dir>/figures/``."""
    return f"{_page_dir(src_uri)}figures/"


def data_dir(src_uri: str) -> str:
    """Where a page's exported data goes: ``<page-dir>/data/``."""
    return f"{_page_dir(src_uri)}data/"


def _reference(text: str, ref, resolved: Resolved) -> str:
    """``[](target)`` filled in: a link with the label, or the bare label for an announced page."""
    if not resolved.link:
        return escape_text(resolved.label)
    return f"[{resolved.label}]" + text[ref.start + 2 : ref.end]


def fill_refs(text: str, ctx: PageContext, labels: Labels, display: Mapping[str, str]) -> str:
    """Fill the references in Markdown a block produced (the build has already checked them)."""
    edits = []
    for ref in find_refs(text, 0):
        resolved, _ = resolve_ref(ref, ctx.src_uri, labels, display)
        if resolved is not None:
            edits.append((ref.start, ref.end, _reference(text, ref, resolved)))
    return _apply(text, edits)


TEACH, PRESENT, SETUP = "teach", "present", "setup"

#: What a folded block's summary says it made, by kind of output.
_MADE = {"table": "this table", "widget": "this widget", "markdown": "the text above"}


def block_kind(cell: CodeCell, out: CellOutput) -> str:
    """How a block is shown: ``teach`` (its code in view, where it stands), ``present`` (its
    code folded after what it made) or ``setup`` (its code in the page's one setup fold).

    The block's ``kind=`` decides; without it, a block that makes a figure, a table, a widget
    or Markdown is presentation, a ``hide`` block that makes none of these joins the setup
    fold (with a note of the section it stood in), and any other block computes what the
    prose is explaining: teaching code.
    """
    if cell.options.kind:
        return cell.options.kind
    makes = out.figure is not None or any(item["type"] in _MADE for item in out.items)
    if makes:
        return PRESENT
    return SETUP if cell.options.hide else TEACH


def _fold_summary(out: CellOutput, figure_label: str | None) -> str:
    """The one line a presentation block's fold shows, tied to what the block made."""
    if figure_label:
        return f"Code for {figure_label}"
    made = [item["type"] for item in out.items if item["type"] in _MADE]
    if made.count("table") > 1:
        return "Code for these tables"
    if made:
        return f"Code for {_MADE[made[0]]}"
    return "Code behind the numbers that follow"


def code_fold(summary: str, blocks: Sequence[tuple[str | None, str]], css_class: str, style: str | None) -> str:
    """A closed fold holding Python code: one line in the page, the code a click away.

    ``blocks`` are ``(note, code)``: a note (where the block stood) is written above its code.
    """
    if style in ("???", "!!!"):
        title = summary.replace('"', "&quot;")
        parts = []
        for note, code in blocks:
            if note:
                parts.append(f'<p class="numbook-code__where">{html.escape(note)}</p>')
            parts.append(fenced(code, "python"))
        return f'{style} {css_class} "{title}"\n\n' + _indent("\n\n".join(parts), "    ")
    codes = "\n".join(
        (f'<p class="numbook-code__where">{html.escape(note)}</p>\n' if note else "")
        + f"<pre><code>{html.escape(code)}</code></pre>"
        for note, code in blocks
    )
    return f'<details class="{css_class}">\n<summary>{html.escape(summary)}</summary>\n{codes}\n</details>'


def source_links(called: Sequence[Mapping[str, str]], ctx: PageContext, opts: RenderOptions) -> str:
    """One line under teaching code: each engine function it calls, linked to its source.

    The links are Markdown, relative to the page's source, so the host checks that every
    target page and anchor exists (MkDocs' link validation).
    """
    links = []
    for call in called:
        target = call["target"]
        page = next((pg for pkg, pg in opts.source_pages.items() if target.startswith(pkg + ".")), None)
        if page is not None:
            rel = posixpath.relpath(page, _page_dir(ctx.src_uri) or ".")
            links.append(f"[`{call['name']}`]({rel}#{target})")
    if not links:
        return ""
    return "Source: " + ", ".join(links) + ("\n{: .numbook-sources }" if opts.attr_list else "")


def check_legend(help_page: str | None, url_for: Callable[[str], str]) -> str:
    """One line, before a page's first check mark, that says what the marks are."""
    text = (
        f'<span class="numbook-check__mark" aria-hidden="true">{CHECK_MARK}</span> '
        "marks a statement about these numbers that the build verified; open a mark to read its test."
    )
    if help_page:
        target, _, anchor = help_page.partition("#")
        href = url_for(target) + (f"#{anchor}" if anchor else "")
        text += f' <a href="{html.escape(href)}">How checks work</a>'
    return f'<p class="numbook-check-legend">{text}</p>'


def _block(
    cell: CodeCell,
    out: CellOutput,
    ctx: PageContext,
    labels: Labels,
    display: Mapping[str, str],
    url_for: Callable[[str], str],
    opts: RenderOptions,
) -> list[str]:
    chunks: list[str] = []
    kind = block_kind(cell, out)
    stdout = fenced(out.stdout, "{.text .numbook-output}") if out.stdout else None
    if cell.options.check:
        if not cell.options.hide:
            shown = [fenced(cell.code, "python")] + ([stdout] if stdout else [])
            chunks.append(_check_box(cell.options.check, shown, cell.code, opts.collapsible))
    else:
        if kind == TEACH:
            chunks.append(fenced(cell.code, "python"))
            links = source_links(out.sources, ctx, opts)
            if links:
                chunks.append(links)
        if stdout:
            chunks.append(stdout)
    for item in out.items:
        if item["type"] == "table":
            table_md = item["markdown"].rstrip("\n")
            if opts.md_in_html:  # marked as computed (a reader's test finds its code fold after it)
                narrow = item.get("narrow")
                if narrow:  # a phone shows the narrow layout instead (book.css)
                    table_md = (
                        '<div class="numbook-table-output numbook-table--two-layouts" markdown="1">\n'
                        f'<div class="numbook-table__wide" markdown="1">\n\n{table_md}\n\n</div>\n'
                        f'<div class="numbook-table__narrow" markdown="1">\n\n{narrow.rstrip()}\n\n</div>\n</div>'
                    )
                else:
                    table_md = f'<div class="numbook-table-output" markdown="1">\n\n{table_md}\n\n</div>'
            chunks.append(table_md)
        elif item["type"] == "markdown":
            chunks.append(fill_refs(item["text"].rstrip("\n"), ctx, labels, display))
        elif item["type"] == "export":
            url = url_for(f"{data_dir(ctx.src_uri)}{item['name']}.json")
            chunks.append(
                f'<div class="numbook-export" data-numbook-export="{html.escape(item["name"])}" '
                f'data-src="{html.escape(url)}" hidden></div>'
            )
        elif item["type"] == "widget":
            url = url_for(f"{data_dir(ctx.src_uri)}{item['name']}.json")
            chunks.append(
                f'<div class="numbook-widget" id="widget-{html.escape(item["name"])}" '
                f'data-numbook-widget="{html.escape(item["kind"])}" data-src="{html.escape(url)}">\n'
                f'{item["fallback"]}\n</div>'
            )
    label = labels.figures[out.figure.fig_id].label if out.figure is not None else None
    fold = None
    if kind == PRESENT and not cell.options.check:
        fold = code_fold(_fold_summary(out, label), [(None, cell.code)], "numbook-code", opts.collapsible)
    if out.figure is not None:
        base = figures_dir(ctx.src_uri)
        shown_figure = figure_html(out.figure, label, url_for, base, opts.figure_min_text_px)
        chunks.append(ctx.defer_html(shown_figure, out.figure.fig_id) if ctx.defer_html else shown_figure)
        if fold:  # directly after the figure, before the data behind it
            chunks.append(fold)
            fold = None
        data = figure_data_html(out.figure, label, url_for, base)
        if ctx.defer_data:
            data = ctx.defer_data(data)
        chunks.append(data)
    if fold:
        chunks.append(fold)
    return chunks


def render_page(
    text: str,
    ctx: PageContext,
    labels: Labels,
    display: Mapping[str, str],
    url_for: Callable[[str], str],
    opts: RenderOptions,
) -> str:
    """The page's Markdown with every cell, reference and ``##`` heading filled in."""
    edits: list[tuple[int, int, str]] = []
    figures = labels.figures
    outputs = {o.index: o for o in ctx.run.outputs} if ctx.run else {}
    run_error = ctx.run.error if ctx.run else None
    problems: list[tuple[int, ShownProblem]] = []  # under `mkdocs serve`: (line, problem), for the summary

    def show(err: CellError, *, boxed: bool, figure: str | None = None) -> str:
        """The page's mark for ``err`` where it happened (a box, or a mark in a sentence).
        The box of a block that declares one of this page's figures takes the figure's id:
        the links to the figure still land (MkDocs warns of a missing anchor, and a strict
        `mkdocs serve` would refuse the rebuild and answer no request until a fix)."""
        marked = sum(p.anchor is not None for _, p in problems)
        own = figure is not None and figure in figures and figures[figure].src_uri == ctx.src_uri
        problem = ShownProblem.of(err, figure if own else f"numbook-problem-{marked + 1}", boxed)
        problems.append((err.line, problem))
        return problem_box(problem) if boxed else problem_mark(problem)

    if opts.show_errors:
        for err in ctx.errors:
            if err.span is None:
                problems.append((err.line, ShownProblem.of(err)))  # no place in the text: the summary holds it
            elif _whole_lines(text, *err.span):  # a block (bad options): the box replaces it
                indent = re.match(r"[ \t]*", text[err.span[0] :]).group()  # type: ignore[union-attr]
                edits.append((*err.span, "\n" + _indent(show(err, boxed=True, figure=err.figure), indent) + "\n\n"))
            else:  # inside a sentence (a link, an empty inline value)
                edits.append((*err.span, show(err, boxed=False)))
        if run_error is not None and run_error.cell not in {c.index for c in ctx.parsed.cells}:
            problems.append((run_error.line, ShownProblem.of(run_error)))  # stopped before its first block

    code_cells = [c for c in ctx.parsed.cells if isinstance(c, CodeCell)]
    setup = [c for c in code_cells if c.index in outputs and block_kind(c, outputs[c.index]) == SETUP
             and not c.options.check]
    strips = _check_strips(text, code_cells)
    legend_due, strip_open = True, False

    for cell in ctx.parsed.cells:
        failed = run_error is not None and run_error.cell == cell.index
        if isinstance(cell, InlineCell):
            out = outputs.get(cell.index)
            if opts.enabled and out is not None and out.value is not None and not failed:
                value = out.value
            elif failed and opts.show_errors:
                value = show(run_error, boxed=False)  # type: ignore[arg-type]
            else:
                value = "`` " + cell.expr + " ``"
            edits.append((cell.start, cell.end, value))
            continue
        out = outputs.get(cell.index)
        if opts.enabled and out is not None and not failed:
            chunks = _block(cell, out, ctx, labels, display, url_for, opts)
            if setup and cell is setup[0]:
                notes = [_where(c, ctx) if c.options.kind != SETUP else None for c in setup]
                fold = code_fold("Code that sets up this page", list(zip(notes, (c.code for c in setup))),
                                 "numbook-code numbook-setup", opts.collapsible)
                chunks.insert(0, fold)
        else:
            chunks = [fenced(cell.code, "python")]
            if failed and opts.show_errors:
                if out is not None and out.stdout:
                    chunks.append(fenced(out.stdout, "{.text .numbook-output}"))
                chunks.append(show(run_error, boxed=True, figure=cell.options.figure))  # type: ignore[arg-type]
            elif cell.options.figure and cell.options.figure in figures:
                # Not run (plugin disabled, or an earlier block failed): keep the anchor and number.
                info = figures[cell.options.figure]
                chunks.append(
                    f'<figure class="numbook-figure" id="{html.escape(info.fig_id)}">'
                    f"<figcaption>{html.escape(info.label)}: {escape_text(cell.options.caption or '')} "
                    f"{_self_link(info.fig_id)}</figcaption></figure>"
                )
        first, last = strips.get(cell.index, (False, False))
        if first and opts.md_in_html and opts.enabled:
            chunks.insert(0, '<div class="numbook-checks" markdown="1">')
            strip_open = True
        if first and legend_due and opts.enabled and ctx.run is not None:
            chunks.insert(1 if strip_open else 0, check_legend(opts.check_help, url_for))
            legend_due = False
        if last and strip_open:
            chunks.append("</div>")
            strip_open = False
        body = "\n\n".join(chunks)
        edits.append((cell.start, cell.end, "\n" + _indent(body, cell.indent) + "\n\n"))

    for eq in ctx.parsed.equations:
        info = labels.equations.get(eq.id)
        if info is not None and info.src_uri == ctx.src_uri:  # the number beside it; the id stays for the maths plugin
            edits.append((eq.start, eq.start, f"\\tag{{{info.number}}}"))

    for aside in ctx.parsed.asides:  # its ¶ opens its body: a link inside <summary> would nest controls
        after = aside.summary_end + len("</summary>")
        link = _self_link(aside.id, "Link to this aside")
        edits.append((after, after, f'\n\n<div class="numbook-aside-link">{link}</div>\n'))

    for ref in ctx.parsed.refs:
        resolved, _ = resolve_ref(ref, ctx.src_uri, labels, display)
        if resolved is not None:  # a broken link is among ctx.errors, shown above under `serve`
            edits.append((ref.start, ref.end, _reference(text, ref, resolved)))

    if ctx.title is not None and ctx.parsed.title is None:
        edits.append((0, 0, f"# {escape_text(ctx.title)}\n\n"))  # before the summary, at 0 too

    if problems:
        title = re.match(r"#[ \t][^\n]*\n", text)  # under the page's title, when it opens the page
        at = title.end() if title else 0
        in_page_order = [p for _, p in sorted(problems, key=lambda lp: lp[0])]
        edits.append((at, at, "\n" + problems_summary(in_page_order) + "\n\n"))

    if ctx.number:
        used: set[str] = set()
        for k, h in enumerate(ctx.parsed.headings, start=ctx.first_section):
            edits.append((h.text_start, h.text_start, section_prefix(ctx.number, k)))
            if opts.attr_list and not h.has_id and opts.slugify is not None:
                slug = base = opts.slugify(_plain(h.text), opts.separator)
                n = 0
                while slug in used:
                    n += 1
                    slug = f"{base}_{n}"
                used.add(slug)
                if h.attr_open is not None:
                    edits.append((h.attr_open, h.attr_open, f" #{slug} "))
                else:
                    edits.append((h.line_end, h.line_end, f" {{ #{slug} }}"))

    return _apply(text, edits)


def _where(cell: CodeCell, ctx: PageContext) -> str | None:
    """Where a block that joined the setup fold stood: "In 3.4 Title" (None before any section)."""
    k, heading = None, None
    for k_, h in enumerate(ctx.parsed.headings, start=ctx.first_section):
        if h.line < cell.fence_line:
            k, heading = k_, h
    if heading is None:
        return None
    number = section_prefix(ctx.number, k) if ctx.number else ""
    return f"For {number}{_plain(heading.text)}"


def _check_strips(text: str, cells: Sequence[CodeCell]) -> dict[int, tuple[bool, bool]]:
    """Shown checks, each marked (first of its strip, last of its strip): checks with nothing
    but blank lines between them stand side by side in one strip."""
    shown = [c for c in cells if c.options.check and not c.options.hide]
    strips: dict[int, tuple[bool, bool]] = {}
    for k, cell in enumerate(shown):
        joins_previous = k > 0 and not text[shown[k - 1].end : cell.start].strip()
        joins_next = k + 1 < len(shown) and not text[cell.end : shown[k + 1].start].strip()
        strips[cell.index] = (not joins_previous, not joins_next)
    return strips


def _whole_lines(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is whole lines (a block), not a piece of a sentence."""
    starts_line = start == 0 or text[start - 1] == "\n"
    ends_line = end == len(text) or text[end - 1] == "\n"
    return starts_line and ends_line


def _plain(md: str) -> str:
    """Heading text roughly as the toc extension sees it (links and markup stripped)."""
    md = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", md)
    return re.sub(r"[`*_]", "", md)


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    edits.sort(key=lambda e: (e[0], e[1]))
    out, pos = [], 0
    for start, end, new in edits:
        if start < pos:
            continue  # overlapping edit (e.g. an error span over a block); the first wins
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)
