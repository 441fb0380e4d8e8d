"""numbook as a Python-Markdown extension: the book's pages run under any builder, or the build stops.

List it in ``mkdocs.yml`` (it needs no options)::

    markdown_extensions:
      - numbook.extension

It runs wherever the page's Markdown is converted, and does one of three things:

Under every builder it also makes each glossary term (``<abbr title>``) a tab stop and turns
an empty table header cell into a plain cell (`NumbookTreeprocessor`).

* **MkDocs**: otherwise nothing but a check. The numbook plugin is the host there (it runs the pages
  in parallel, caches them, publishes their files, builds the gallery): by the time a page
  reaches Markdown its blocks have become their outputs. If a ``python exec`` block or an
  inline `` `{py} …` `` value reaches the converter, the plugin did not run, and the build
  stops, naming the page, the line and how to enable numbook.
* **Zensical** (which runs no MkDocs plugin): it hosts the book itself
  (`numbook.markdown_host`): the first page converted reads every page, numbers them and
  starts their runs with the numbook plugin's options from ``mkdocs.yml``; each page's
  Markdown gets its outputs, its HTML its figures, and the site directory the files they
  make. A failing block or check stops ``zensical build`` with page, line and reason;
  under ``zensical serve`` the page shows it. What Zensical needs beyond Python-Markdown
  is in `numbook.zensical`.
* **Plain Python-Markdown**: it hosts the book when told which project and page
  (``config_file`` and ``page``); otherwise the unexecuted page stops the conversion.

Options (all optional)::

    - numbook.extension:
        config_file: mkdocs.yml   # whose `plugins: - numbook:` options to use when hosting
        page: part1.md            # plain Python-Markdown: the page being converted
        site_dir: site            # where a hosted build writes its figures (default: the config's)
        zensical: true            # false: do not host under Zensical (its build then stops)

MkDocs' ``enabled: false`` (``NUMBOOK_ENABLED=false``, the quick prose preview) is for
``mkdocs serve`` only: ``mkdocs build`` refuses to publish pages whose blocks did not run
(the numbook plugin stops it) unless ``NUMBOOK_ALLOW_UNEXECUTED=1`` says the site is a
throwaway (the benchmark's "bare" build). Zensical reads the same option.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from markdown import Extension, Markdown
from markdown.postprocessors import Postprocessor
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor

#: Set to 1 to let a build publish pages whose blocks did not run (never for a real site).
ALLOW_UNEXECUTED = "NUMBOOK_ALLOW_UNEXECUTED"


def unexecuted_allowed() -> bool:
    return os.environ.get(ALLOW_UNEXECUTED, "").strip().lower() in ("1", "true", "yes")


class UnexecutedPage(ValueError):
    """A page's blocks reached the Markdown converter without having run."""


def _unexecuted_error(builder: str, message: str) -> Exception:
    """The exception a builder reports best: MkDocs prints a BuildError's message alone."""
    if builder == "MkDocs":
        from mkdocs.exceptions import PluginError

        return type("UnexecutedPageError", (PluginError, UnexecutedPage), {})(message)
    return UnexecutedPage(message)


def builder_of(md: Markdown) -> str:
    """Which program is converting: "MkDocs", "Zensical" or "Python-Markdown"."""
    relpath = md.treeprocessors["relpath"] if "relpath" in md.treeprocessors else None
    if relpath is not None and type(relpath).__module__.startswith("mkdocs."):
        return "MkDocs"
    from . import zensical

    if zensical.page_of(md) is not None:
        return "Zensical"
    return "Python-Markdown"


HOW_TO_ENABLE = {
    "MkDocs": "add the numbook plugin to mkdocs.yml (`plugins: - numbook`)",
    "Zensical": "keep `numbook.extension` in markdown_extensions with `zensical: true` (the default) "
                "and the numbook plugin's options under `plugins:` in mkdocs.yml",
    "Python-Markdown": "build the book with MkDocs or Zensical, or give numbook.extension "
                       "`config_file` (mkdocs.yml) and `page` (the page's path in the docs)",
}


def first_unexecuted(text: str, line_offset: int = 0) -> tuple[int, str] | None:
    """(line, what) of the first block or inline value in Markdown that did not run, or None."""
    from .cells import CodeCell
    from .parse import parse_page

    parsed = parse_page(text, "<page>", line_offset)
    if not parsed.cells:
        return None
    cell = parsed.cells[0]
    if isinstance(cell, CodeCell):
        return cell.fence_line, "a `python exec` block"
    return getattr(cell, "line", 1), "an inline `{py}` value"


# ---------------------------------------------------------------------------------------
# Hosting (a builder without numbook's MkDocs plugin)

_lock = threading.RLock()  # one page at a time: a build is one Book
_hosted: dict[tuple, Any] = {}  # (config file, site dir, builder key) -> HostedBook


def _hosted_book(config_file: str, site_dir: str, serving: bool, builder: str, key: Any) -> Any:
    """The `HostedBook` of this build: made on the first page, made again when the builder
    read its configuration again or a page changed (`serve`)."""
    from .markdown_host import HostedBook

    slot = (os.path.abspath(config_file), os.path.abspath(site_dir))
    current = _hosted.get(slot)
    if current is not None and (current[0] != key or current[1].stale()):
        current[1].close()
        current = None
    if current is None:
        current = (key, HostedBook(config_file, site_dir=site_dir, serving=serving, builder=builder))
        _hosted[slot] = current
    return current[1]


def _say_once(exc: Exception) -> None:
    """Print why a hosted build stops, plainly, before the builder's own traceback."""
    from .markdown_host import HostingError

    if isinstance(exc, HostingError) and not getattr(exc, "said", False):
        exc.said = True
        print(f"{exc}\n", file=sys.stderr, flush=True)


class _Host:
    """What a conversion needs to host the book: which book and which page."""

    def __init__(self, book: Any, src_uri: str) -> None:
        self.book = book
        self.src_uri = src_uri


class NumbookPreprocessor(Preprocessor):
    """Runs first: hosts the page (its Markdown with outputs) or stops an unexecuted one."""

    def __init__(self, md: Markdown, ext: NumbookExtension) -> None:
        super().__init__(md)
        self.ext = ext

    def run(self, lines: list[str]) -> list[str]:
        self.ext.host, self.ext.tree_done = None, False
        builder = builder_of(self.md)
        host = self._host(builder)
        if host is not None:
            with _lock:
                try:
                    text = host.book.markdown(host.src_uri)
                except Exception as exc:
                    _say_once(exc)
                    raise
            self.ext.host = host
            return text.split("\n")
        found = first_unexecuted("\n".join(lines))
        if found is None or unexecuted_allowed():
            return lines
        line, what = found
        path, root = self._source_path(builder)
        if path is not None:  # the line in the file, front matter included
            from .book import split_front_matter

            try:
                with open(path, encoding="utf-8") as fd:
                    body, _, offset = split_front_matter(fd.read().replace("\r\n", "\n"))
                line, what = first_unexecuted(body, offset) or found
            except OSError:
                pass
            where = f"{os.path.relpath(path, root).replace(os.sep, '/')}:{line}"
        else:
            where = f"{self.ext.getConfig('page') or 'a page'} (line {line} of its Markdown)"
        raise _unexecuted_error(builder, (
            f"numbook: {builder} is converting {where}, {what} that did not run: numbook is not "
            f"running in this build, and a page with unexecuted code must not be published. "
            f"To enable numbook, {HOW_TO_ENABLE[builder]}."
        ))

    def _source_path(self, builder: str) -> tuple[str | None, str]:
        """(the page's file, the project's directory), where the builder says which page."""
        if builder == "MkDocs":
            relpath = self.md.treeprocessors["relpath"]
            f, config = getattr(relpath, "file", None), getattr(relpath, "config", None)
            config_file = getattr(config, "config_file_path", None) or "mkdocs.yml"
            return getattr(f, "abs_src_path", None), os.path.dirname(os.path.abspath(config_file))
        if builder == "Zensical":
            from . import zensical

            return zensical.source_path(self.md), zensical.project().root
        return None, os.getcwd()

    def _host(self, builder: str) -> _Host | None:
        """The book and page to host this conversion, or None (MkDocs, or nothing to host)."""
        if builder == "MkDocs":
            return None  # the plugin hosts; if it did not run, the check above stops the build
        config_file = self.ext.getConfig("config_file") or ""
        if builder == "Zensical":
            if not self.ext.getConfig("zensical"):
                return None
            from . import zensical

            project = zensical.project()
            config_file = config_file or project.config_file or ""
            if not config_file:
                return None
            zensical.forget_rendered_pages(project.root)
            site_dir = self.ext.getConfig("site_dir") or project.site_dir
            page = zensical.page_of(self.md)
            with _lock:
                book = _hosted_book(
                    config_file, site_dir, project.serving, f"Zensical {project.version}",
                    (project.config_id, project.serving),
                )
            return _Host(book, page.path)
        page = self.ext.getConfig("page")
        if not (config_file and page):
            return None
        site_dir = self.ext.getConfig("site_dir") or ""
        if not site_dir:
            from .markdown_host import read_raw_config

            raw = read_raw_config(config_file)
            site_dir = os.path.join(os.path.dirname(os.path.abspath(config_file)), raw.get("site_dir") or "site")
        with _lock:
            book = _hosted_book(config_file, site_dir, False, "Python-Markdown", None)
        return _Host(book, page)


#: Elements a tap or a key already does something in: a term inside one is not a tab stop of
#: its own (a control inside a control is announced and reached wrongly).
CONTROLS = frozenset({"a", "button", "summary", "label", "select", "textarea"})


def reachable_terms(root: Any, inside_control: bool = False) -> None:
    """Give each ``<abbr title>`` (a glossary term) outside a control ``tabindex="0"``: a reader
    who cannot hover reaches its definition by tapping or tabbing to it (the site's script shows
    it on focus)."""
    for child in root:
        if child.tag == "abbr" and child.get("title") and not inside_control and child.get("tabindex") is None:
            child.set("tabindex", "0")
        reachable_terms(child, inside_control or child.tag in CONTROLS)


def unnamed_headers_as_cells(root: Any) -> None:
    """An empty header cell (a table's corner, over its row labels) becomes a plain cell: a
    header that names nothing is announced as nothing by a screen reader (axe:
    empty-table-header)."""
    for head in root.iter("thead"):
        for cell in head.iter("th"):
            if not (cell.text or "").strip() and len(cell) == 0:
                cell.tag = "td"


class NumbookTreeprocessor(Treeprocessor):
    """Runs after every other treeprocessor: makes glossary terms reachable and names no empty
    table header (`reachable_terms`, `unnamed_headers_as_cells`, under every builder); from now
    on the postprocessors see the whole page (`toc` runs them on each heading's HTML too,
    earlier)."""

    def __init__(self, md: Markdown, ext: NumbookExtension) -> None:
        super().__init__(md)
        self.ext = ext

    def run(self, root: Any) -> None:
        reachable_terms(root)
        unnamed_headers_as_cells(root)
        self.ext.tree_done = True


class NumbookPostprocessor(Postprocessor):
    """Runs last on the whole page: puts the hosted page's figures into its HTML."""

    def __init__(self, md: Markdown, ext: NumbookExtension) -> None:
        super().__init__(md)
        self.ext = ext

    def run(self, text: str) -> str:
        if self.ext.host is None or not self.ext.tree_done:
            return text
        host, self.ext.host, self.ext.tree_done = self.ext.host, None, False
        with _lock:
            try:
                return host.book.html(host.src_uri, text, getattr(self.md, "toc_tokens", None))
            except Exception as exc:
                _say_once(exc)
                raise


class NumbookExtension(Extension):
    def __init__(self, **kwargs: Any) -> None:
        self.config = {
            "config_file": ["", "mkdocs.yml whose numbook plugin options a hosted build uses "
                                "(default: the builder's own configuration file)"],
            "page": ["", "plain Python-Markdown: the page being converted (its path in the docs)"],
            "site_dir": ["", "where a hosted build writes the files the outputs make "
                             "(default: the configuration's site_dir)"],
            "zensical": [True, "host the book under Zensical (false: an unexecuted page stops its build)"],
        }
        super().__init__(**kwargs)
        self.host: _Host | None = None
        self.tree_done = False

    def extendMarkdown(self, md: Markdown) -> None:
        # Before everything else (whitespace normalising is 30), after everything else.
        md.preprocessors.register(NumbookPreprocessor(md, self), "numbook", 200)
        md.treeprocessors.register(NumbookTreeprocessor(md, self), "numbook", -100)
        md.postprocessors.register(NumbookPostprocessor(md, self), "numbook", -100)
        md.registerExtension(self)

    def reset(self) -> None:
        self.host = None
        self.tree_done = False


def makeExtension(**kwargs: Any) -> NumbookExtension:
    return NumbookExtension(**kwargs)
