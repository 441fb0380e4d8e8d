"""The core of numbook as a plain library: pages in, outputs and files out.

A host (the MkDocs plugin, or another site generator's adapter) does three things:

1. ``book.prepare(pages)`` once per build with every page's source: all pages are
   parsed, figures numbered, references checked, and pages whose cache entry is stale
   executed in parallel workers. It returns the files to publish (figures, CSV, JSON).
2. if ``book.errors`` is not empty, stop the build with ``NumbookError(book.errors)``
   (or, when previewing, show them: rendering puts them on the page);
3. ``book.render(src_uri, markdown, url_for, options)`` for each page.
"""

from __future__ import annotations

import dataclasses
import html
import logging
import os
import re
import hashlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from .cache import Cache, environment_fingerprint, page_key
from .cells import CellError, PageRun, ParsedPage
from .figures import dark_variant, variant_files
from .numbering import (
    FigureInfo, Labels, first_sections, number_equations, number_figures, number_sections, page_heading, resolve_ref,
)
from .parse import find_refs, parse_page
from .render import PageContext, RenderOptions, data_dir, figures_dir, render_page
from .stored import memo_by_digest

log = logging.getLogger("mkdocs.plugins.numbook")

#: A page's wall-clock backstop when none is set: a page that used almost no CPU time in
#: this many seconds of wall-clock time waits on something and is stopped (`numbook.pool`).
WALL_TIMEOUT = 60.0

# The same front matter rule as MkDocs (mkdocs.utils.meta), so line numbers agree.
_FRONT_MATTER = re.compile(r"^-{3}[ \t]*\n(.*?\n)(?:\.{3}|-{3})[ \t]*\n", re.UNICODE | re.DOTALL)

#: Parsing every page again took a twentieth of a second of each `serve` save (profiled); a page
#: parses to the same result while its text is the same (the result is only read, never changed).
_parse_unchanged_page = memo_by_digest(maxsize=40)(parse_page)


def split_front_matter(source: str) -> tuple[str, dict, int]:
    """(body, meta, number of source lines before the body)."""
    m = _FRONT_MATTER.match(source)
    if m:
        try:
            meta = yaml.safe_load(m.group(1))
        except yaml.YAMLError:
            meta = None
        if isinstance(meta, dict):
            body = source[m.end() :].lstrip("\n")
            return body, meta, source[: len(source) - len(body)].count("\n")
    return source, {}, 0


@dataclass
class Settings:
    """Everything that decides a build's behaviour (the plugin fills it from its config)."""

    root: str  # project root: blocks run there, paths in messages are relative to it
    docs_dir: str
    cache_dir: str
    workers: int
    timeout: float  # seconds of CPU time a page may use
    wall_timeout: float = WALL_TIMEOUT  # seconds of wall-clock time with almost no CPU time: waiting
    decimals: int = 3
    watch: Sequence[str] = ("src",)
    dark_colors: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    page_label: str = "Part"  # "[](part4.md)" reads "Part 4"
    heading_format: str = "{label} {number} · {title}"  # a numbered page's H1, from its front matter
    planned: Mapping[str, str | int] = field(default_factory=dict)  # announced page -> its number
    planned_text: str = "{label} (coming soon)"  # how a reference to an announced page reads
    figure_min_text_px: float = 0.0  # a figure's variants scroll rather than shrink their text below this
    link_packages: Sequence[str] = ()  # teaching code's calls into these link to their source
    figure_check: str | None = None  # "module:function" run on every figure made (`runner.PageJob`)
    env: Sequence[str] = ()  # environment variables the project's code reads: inputs of every page
    outputs: Sequence[str] = ()  # directories the build writes (the site): never inputs


@dataclass(frozen=True)
class SourcePage:
    src_uri: str  # path inside the docs directory, with "/" separators
    source: str  # the whole file, front matter included


@dataclass(frozen=True)
class GeneratedFile:
    src_uri: str
    content: bytes


@dataclass
class _Page:
    src_uri: str
    display_path: str
    body: str
    line_offset: int
    number: str | None
    parsed: ParsedPage
    run: PageRun | None = None
    errors: list[CellError] = field(default_factory=list)
    title: str | None = None  # front matter `title`
    figure_prefix: str | None = None  # front matter `figure_prefix`: "Figure L.1"
    in_gallery: bool = True  # front matter `gallery: false` keeps its figures off the gallery page

    def heading(self, settings: Settings) -> str | None:
        """The H1 this page must show: made from `number` and `title` when it has both."""
        if self.number is None or self.title is None:
            return None
        return page_heading(settings.heading_format, settings.page_label, self.number, self.title)


class Book:
    """One build's worth of pages; create a new one for each build."""

    def __init__(self, settings: Settings, kept: Any = None) -> None:
        self.settings = settings
        self.kept = kept  # numbook.pool.KeptPages under `mkdocs serve`, kept between builds
        self.pages: dict[str, _Page] = {}
        self.figures: dict[str, FigureInfo] = {}
        self.first_section: dict[str, int] = {}  # src_uri -> number of its first ## section
        self.labels = Labels({}, {}, {}, settings.page_label)
        self.errors: list[CellError] = []
        self.executed: list[str] = []  # pages run in this build
        self.from_cache: list[str] = []  # pages served from the cache
        self.timings: dict[str, tuple[float, float]] = {}  # page -> (start, end), time.monotonic()
        self._late_keys: dict[str, str] = {}  # page -> the mark of HTML held back from its Markdown
        self._late: dict[str, dict[str, str]] = {}  # page -> placeholder -> HTML
        self._after_index: dict[str, dict[str, str]] = {}  # page -> comment -> data fold (`finish_output`)
        self._pool: Any = None  # numbook.pool.PagePool while pages run (imported only then)
        self._cache: Cache | None = None
        self._keys: dict[str, str] = {}  # page -> cache key
        self._file_owner: dict[str, str] = {}  # published path -> the page that wrote it

    @property
    def display(self) -> dict[str, str]:
        return {k: p.display_path for k, p in self.pages.items()}

    def _display_path(self, src_uri: str) -> str:
        path = os.path.join(self.settings.docs_dir, *src_uri.split("/"))
        return os.path.relpath(path, self.settings.root).replace(os.sep, "/")

    def prepare(
        self,
        pages: Sequence[SourcePage],
        published: Collection[str] | None = None,
        run_order: Sequence[str] | None = None,
    ) -> list[GeneratedFile]:
        """Parse and number every page, reuse the cached runs and start running the rest;
        returns the files the cached pages publish (`collect` gives the others').

        ``pages`` come in reading order: pages that share a part number are numbered on
        from one to the next in that order. ``published``: the pages a reader can reach
        (the site's navigation); None means all of them. A reference links to a page only
        once it is published. ``run_order``: the order the host will render the pages in
        (pages start running in it, so the first to be needed are the first done).
        """
        s = self.settings
        for page in pages:
            body, meta, offset = split_front_matter(page.source.replace("\r\n", "\n"))
            display = self._display_path(page.src_uri)
            number, title, prefix = (meta.get(k) for k in ("number", "title", "figure_prefix"))
            parsed = _parse_unchanged_page(body, display, offset)
            self.pages[page.src_uri] = _Page(
                page.src_uri, display, body, offset, None if number is None else str(number), parsed,
                errors=list(parsed.errors), title=None if title is None else str(title),
                figure_prefix=None if prefix is None else str(prefix), in_gallery=meta.get("gallery") is not False,
            )
        numbered = {k: (p.number, p.parsed) for k, p in self.pages.items()}
        prefixed = {k: (p.figure_prefix or p.number, p.parsed) for k, p in self.pages.items()}  # figures, equations
        self.figures, dup_errors = number_figures(prefixed, self.display)
        sections, section_errors = number_sections(numbered, self.figures, self.display)
        equations, equation_errors = number_equations(prefixed, self.figures, self.display)
        self.first_section = first_sections(numbered)
        self.labels = Labels(
            self.figures, sections, {k: p.number for k, p in self.pages.items()}, s.page_label,
            planned={k: str(v) for k, v in s.planned.items()},
            published=None if published is None else set(published),
            planned_text=s.planned_text,
            equations=equations,
        )
        for err in dup_errors + section_errors + equation_errors:
            self.pages[_src_of(self.pages, err.page)].errors.append(err)
        for p in self.pages.values():
            p.errors.extend(self._title_errors(p))
            for ref in p.parsed.refs:
                _, err = resolve_ref(ref, p.src_uri, self.labels, self.display)
                if err is not None:
                    p.errors.append(err)
        for p in self.pages.values():
            self.errors.extend(p.errors)
        if not s.enabled:
            return []
        return self._start(run_order or list(self.pages))

    @property
    def running(self) -> bool:
        """Whether some page is still waiting to run or running."""
        return self._pool is not None and self._pool.busy

    def collect(self, src_uri: str | None = None, *, wait: bool = True) -> list[GeneratedFile]:
        """Take in the runs finished so far (with ``wait``, first wait for ``src_uri``'s, or,
        for None, every page's); returns the files they publish, each once."""
        if self._pool is None:
            return []
        if wait:
            self._pool.wait(src_uri)
        else:
            self._pool.poll()
        return self._take_runs()

    def close(self) -> None:
        """Stop the pages still running (the build failed elsewhere)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def _title_errors(self, p: _Page) -> list[CellError]:
        """A numbered page's H1 comes from its front matter; an announced number must agree."""
        errors = []
        expected = p.heading(self.settings)
        found = p.parsed.title
        if expected is not None and found is not None and found.text != expected:
            errors.append(CellError(
                p.display_path, found.line,
                f"this page's H1 is made from its front matter (`# {expected}`): remove this "
                "heading, or make it read exactly that",
            ))
        announced = self.labels.planned.get(p.src_uri)
        if announced is not None and p.number is not None and announced != p.number:
            errors.append(CellError(
                p.display_path, 1,
                f"the plugin's `planned` option announces this page as number {announced}, "
                f"but its front matter says {p.number}",
            ))
        return errors

    def _output_ref_errors(self, p: _Page) -> list[CellError]:
        """References inside Markdown the page's blocks produced must resolve too."""
        if p.run is None:
            return []
        line = {c.index: c.fence_line for c in p.parsed.code_cells}
        errors = []
        for out in p.run.outputs:
            for item in out.items:
                if item["type"] != "markdown":
                    continue
                for ref in find_refs(item["text"], line.get(out.index, 1)):
                    _, err = resolve_ref(ref, p.src_uri, self.labels, self.display)
                    if err is not None:
                        errors.append(dataclasses.replace(err, span=None))
        return errors

    def _start(self, run_order: Sequence[str]) -> list[GeneratedFile]:
        """Reuse the cached runs; start the other pages with code in ``run_order``.
        Returns the files the cached pages publish."""
        s = self.settings
        self._cache = Cache(s.cache_dir, s.root)
        environment = environment_fingerprint(s.env)
        # what changes a page's outputs, or which files its cache entry tracks
        settings = {"decimals": s.decimals, "link_packages": list(s.link_packages), "watch": list(s.watch),
                    "figure_check": s.figure_check}
        watch = tuple(os.path.abspath(os.path.join(s.root, w)) for w in s.watch)
        rank = {src_uri: i for i, src_uri in enumerate(run_order)}
        jobs, files = [], []
        for p in sorted(self.pages.values(), key=lambda p: (rank.get(p.src_uri, len(rank)), p.src_uri)):
            if self.kept is not None:
                self.kept.saw(p.src_uri, p.parsed.cells)  # where the author edits it
            if not p.parsed.cells or p.errors:
                continue  # nothing to run, or the page is already known to be broken
            key = page_key(p.src_uri, p.parsed.cells, environment, settings)
            self._keys[p.src_uri] = key
            cached = self._cache.get(p.src_uri, key)
            if cached is not None:
                self.from_cache.append(p.src_uri)
                files.extend(self._settle(p, cached))
                continue
            from .runner import PageJob  # here: a build served from the cache needs no runner

            limits = [c.options.timeout for c in p.parsed.code_cells if c.options.timeout]
            cpu_limit = max(limits) if limits else float(s.timeout)  # a page may ask for less, too
            source = "\n" * p.line_offset + p.body
            jobs.append(
                PageJob(
                    src_uri=p.src_uri,
                    display_path=p.display_path,
                    source=source,
                    cells=tuple(p.parsed.cells),
                    root=s.root,
                    watch=watch,
                    decimals=s.decimals,
                    timeout=cpu_limit,
                    wall_timeout=s.wall_timeout,
                    link_packages=tuple(s.link_packages),
                    figure_check=s.figure_check,
                    environment=environment,  # a kept page (serve) resumes only under the same
                    outputs=tuple(os.path.abspath(d) for d in [s.cache_dir, *s.outputs]),
                )
            )
        if jobs:
            from .pool import PagePool, preimport  # (nor multiprocessing)

            preimport(s.workers, s.root)
            self._pool = PagePool(jobs, s.workers, self.kept)
        else:
            self._log_runs()
        return files

    def _take_runs(self) -> list[GeneratedFile]:
        """Take the runs the pool has finished: store them in the cache and settle them;
        returns the files they publish."""
        files: list[GeneratedFile] = []
        for src_uri, run in sorted(self._pool.take_finished().items()):
            self.executed.append(src_uri)
            if run.changed:
                log.warning("numbook: %s read %s, which changed while it ran: its outputs are not kept "
                            "(the next build runs it again)", self.display[src_uri], ", ".join(run.changed))
            if run.error is None:
                self.timings[src_uri] = (run.started, run.finished)
                self._cache.put(src_uri, self._keys[src_uri], run)
            files.extend(self._settle(self.pages[src_uri], run))
        if not self._pool.busy:
            self._pool.close()
            self._pool = None
            self._log_runs()
        return files

    def _settle(self, p: _Page, run: PageRun) -> list[GeneratedFile]:
        """Give a page its run: note the run's error and those of the references its outputs
        make; returns the files its outputs publish."""
        p.run = run
        ref_errors = self._output_ref_errors(p)
        p.errors.extend(ref_errors)
        self.errors.extend(ref_errors)
        if run.error is not None:
            self.errors.append(run.error)
        return self._page_files(p, run)

    def _log_runs(self) -> None:
        resumed = []
        if self.kept is not None:
            resumed = [f"{self.display[p]} from block {self.kept.resumed[p] + 1}"
                       for p in self.executed if self.kept.resumed.get(p)]
        log.info("numbook: %d pages executed, %d from cache%s", len(self.executed), len(self.from_cache),
                 f" ({', '.join(resumed)}: the blocks before were kept)" if resumed else "")

    def _page_files(self, p: _Page, run: PageRun) -> list[GeneratedFile]:
        """The files one page's outputs publish (a path another page wrote is an error)."""
        files: list[GeneratedFile] = []

        def add(src_uri: str, content: str) -> None:
            other = self._file_owner.setdefault(src_uri, p.src_uri)
            if other != p.src_uri:
                first, second = sorted((other, p.src_uri))
                self.errors.append(CellError(
                    self.pages[second].display_path, 1, f"{src_uri} is also written by {self.display[first]}"
                ))
                return
            files.append(GeneratedFile(src_uri, content.encode("utf-8")))

        for out in run.outputs:
            if out.figure is not None:
                base = figures_dir(p.src_uri) + out.figure.fig_id
                add(base + ".light.svg", out.figure.svg)
                add(base + ".dark.svg", dark_variant(out.figure.svg, self.settings.dark_colors))
                add(base + ".csv", out.figure.csv)
                if out.figure.narrow_svg is not None:
                    add(base + ".narrow.light.svg", out.figure.narrow_svg)
                    add(base + ".narrow.dark.svg", dark_variant(out.figure.narrow_svg, self.settings.dark_colors))
                if out.figure.variants:
                    for name, text in variant_files(
                            out.figure, self.settings.dark_colors, self.settings.figure_min_text_px
                    ).items():
                        add(figures_dir(p.src_uri) + name, text)
            for item in out.items:
                if item["type"] in ("export", "widget"):
                    add(f"{data_dir(p.src_uri)}{item['name']}.json", item["json"])
        return files

    def inputs(self) -> set[str]:
        """Every project file the pages' runs read (absolute paths): `mkdocs serve` watches them."""
        root = self.settings.root
        return {os.path.join(root, dep) for p in self.pages.values() if p.run is not None for dep in p.run.deps}

    def render(
        self,
        src_uri: str,
        markdown: str,
        url_for: Callable[[str], str],
        options: RenderOptions,
        late_html: bool = False,
    ) -> str:
        """The page's Markdown with its outputs; pages numbook never saw pass through.

        With ``late_html`` each figure (images, caption, data table) stands in the
        Markdown as an empty ``<div>`` with the figure's id (so the host still sees the
        anchor), and `finish` puts the figure in the converted HTML: Markdown would only
        parse and re-stash that finished HTML, most of its work on a page with figures.
        The data table waits longer, as an HTML comment, until `finish_output` puts it in
        the content, after the host's search has indexed it.
        """
        p = self.pages.get(src_uri)
        if p is None:
            return markdown
        parsed = p.parsed
        if markdown != p.body:
            # Another plugin changed the text since we read it: parse again and make sure
            # the cells are the ones that ran.
            parsed = parse_page(markdown, p.display_path, p.line_offset)
            if [_cell_text(c) for c in parsed.cells] != [_cell_text(c) for c in p.parsed.cells]:
                raise RuntimeError(
                    f"{p.display_path}: the page's code changed between reading and rendering "
                    "(another plugin rewrote it?)"
                )
        ctx = PageContext(
            p.src_uri, p.display_path, p.number, parsed, p.run, list(p.errors), self.first_section[src_uri],
            title=p.heading(self.settings),
        )
        if late_html:
            held = self._late[src_uri] = {}
            # A mark no author writes (it hashes the very text it would have to appear in),
            # the same in every build: an unchanged page converts to the same HTML (rendermemo).
            late_key = self._late_keys[src_uri] = hashlib.sha256(markdown.encode()).hexdigest()[:16]

            def defer(html_text: str, anchor: str) -> str:
                name = f"{late_key}-{len(held)}"
                held[name] = html_text
                return f'<div id="{html.escape(anchor)}" data-numbook="{name}"></div>'

            ctx.defer_html = defer
            after = self._after_index[src_uri] = {}

            def defer_data(html_text: str) -> str:
                name = f"<!--numbook-data {late_key}-{len(after)}-->"
                after[name] = html_text
                return name

            ctx.defer_data = defer_data
        return render_page(markdown, ctx, self.labels, self.display, url_for, options)

    def finish(self, src_uri: str, html_text: str) -> str:
        """The page's HTML with what `render` held back put in place of its stand-ins."""
        # md_in_html inside a tab (pymdownx.tabbed) converts a block's Markdown but leaves its
        # markdown="1" on the tag, which is no HTML attribute: numbook's own wrappers drop it
        html_text = _LEFT_MARKDOWN_ATTRIBUTE.sub(r"\1", html_text)
        held = self._late.pop(src_uri, None)
        if not held:
            return html_text
        # At block level a stand-in stays as it is; indented (in an admonition, a tab) it
        # is inline HTML wrapped in a paragraph, which a <figure> must not be left in; inside
        # an HTML block with markdown="1" (an aside), md_in_html writes its attributes back
        # in another order.
        one = rf'<div\b(?=[^>]*\bdata-numbook="({self._late_keys[src_uri]}-\d+)")[^>]*></div>'
        pattern = re.compile(rf"<p>{one}</p>|{one}")
        html_text = pattern.sub(lambda m: held.pop(m.group(1) or m.group(2), m.group(0)), html_text)
        if held:
            raise RuntimeError(
                f"{self.pages[src_uri].display_path}: {len(held)} figure(s) went missing between Markdown "
                "and HTML (another plugin or extension dropped an HTML comment?)"
            )
        return html_text

    def finish_output(self, src_uri: str, page_html: str) -> str:
        """The page's HTML with each figure's data fold in place of its comment (see `render`)."""
        held = self._after_index.pop(src_uri, None)
        if not held:
            return page_html
        page_html = _HELD_DATA.sub(lambda m: held.pop(m.group(0), m.group(0)), page_html)
        if held:
            raise RuntimeError(
                f"{self.pages[src_uri].display_path}: the data behind {len(held)} figure(s) went missing "
                "after the page's content was made (a plugin dropped HTML comments?)"
            )
        return page_html


_HELD_DATA = re.compile(r"<!--numbook-data [0-9a-f]+-\d+-->")
_LEFT_MARKDOWN_ATTRIBUTE = re.compile(r'(<div class="numbook-[^"<>]*") markdown="1"')


def _cell_text(cell) -> str:
    return getattr(cell, "code", None) or getattr(cell, "expr", "")


def _src_of(pages: Mapping[str, _Page], display_path: str) -> str:
    for k, p in pages.items():
        if p.display_path == display_path:
            return k
    raise KeyError(display_path)
