"""The thin MkDocs layer over `numbook.book` (the core knows nothing of MkDocs).

Hooks: ``on_startup`` learns whether we are serving, ``on_config`` reads which Markdown
extensions the site has and pins the build date (`pin_build_date`; ``on_post_build``
and ``on_build_error`` take it back), ``on_files`` runs every page up front (in
parallel, cached) and adds the generated figures and data files, ``on_page_markdown``
renders each page, and ``on_serve`` (then ``on_post_build``) watches the project's module
directories and every other file a page read (`Book.inputs`, the stored conversions' reads).
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import jinja2
from markdown.extensions.toc import slugify as default_slugify
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page

from .book import Book, GeneratedFile, Settings, SourcePage
from .config import NumbookConfig
from .errors import format_errors
from .figures import DEFAULT_DARK_COLORS
from .preview import log_shown_on_page
from .render import RenderOptions
from .rendermemo import RenderMemo, TemplateCodeMemo

log = logging.getLogger("mkdocs.plugins.numbook")


def load_object(spec: str) -> Any:
    """Import ``"module:attribute"`` afresh (so `mkdocs serve` sees edits)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise PluginError(f"numbook: dark_colors must look like 'module:attribute', got {spec!r}")
    try:
        module = sys.modules.get(module_name)
        module = importlib.reload(module) if module is not None else importlib.import_module(module_name)
        return getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise PluginError(f"numbook: cannot load dark_colors {spec!r}: {exc}") from exc


def last_commit_time(directory: str) -> str | None:
    """Seconds since the epoch of the last git commit of ``directory``'s repository, or None."""
    try:
        result = subprocess.run(
            ["git", "log", "-1", "--format=%ct"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    value = result.stdout.strip()
    return value if result.returncode == 0 and value.isdigit() else None


def pin_build_date(directory: str) -> str | None:
    """Make MkDocs stamp the last commit's time instead of "now" (sitemap.xml, its .gz).

    MkDocs reads ``SOURCE_DATE_EPOCH`` when it is set; when it is not, we set it to the
    time of the project's last git commit, so two builds of one commit are identical.
    An explicit value is left alone; outside git nothing is set. Returns the value set.
    """
    if "SOURCE_DATE_EPOCH" in os.environ:
        return None
    value = last_commit_time(directory)
    if value is not None:
        os.environ["SOURCE_DATE_EPOCH"] = value
    return value


def nav_paths(nav: Any) -> list[str]:
    """The page paths of a ``nav:`` setting, in reading order (links to other sites left out)."""
    if isinstance(nav, str):
        return [] if "://" in nav else [nav.lstrip("/")]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in nav_paths(value)]
    if isinstance(nav, list):
        return [p for item in nav for p in nav_paths(item)]
    return []


def reading_order(nav: Any) -> Callable[[File], tuple[int, str]]:
    """Sort key for pages: their place in the nav, then pages outside it by path.

    Pages of one part split over several files are numbered on in this order.
    """
    place = {path: k for k, path in enumerate(nav_paths(nav or []))}
    return lambda f: (place.get(f.src_uri, len(place)), f.src_uri)


class NumbookPlugin(BasePlugin[NumbookConfig]):
    """Run each page's ``python exec`` blocks at build time and put their outputs in the page."""

    def __init__(self) -> None:
        self.serving = False
        self.book: Book | None = None
        self.render_options = RenderOptions()
        self._pinned_date: str | None = None  # the SOURCE_DATE_EPOCH this build set
        self.nav_titles: dict[str, str] = {}  # src_uri -> title in the navigation, in nav order
        self.memo: RenderMemo | None = None
        self.template_code = TemplateCodeMemo()
        self.kept: Any = None  # numbook.pool.KeptPages while serving
        self.server: Any = None  # `mkdocs serve`'s live-reload server
        self._watched: set[str] = set()

    @property
    def pages_executed(self) -> int:
        """Pages whose blocks ran in the last build (0 means: no block executed)."""
        return len(self.book.executed) if self.book else 0

    @property
    def pages_from_cache(self) -> int:
        """Pages whose outputs the last build took from the cache."""
        return len(self.book.from_cache) if self.book else 0

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.serving = command == "serve"
        self.on_shutdown()  # a new command (MkDocs keeps a plugin from one command to the next in a process)

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        self._unpin_date()
        root = os.path.dirname(os.path.abspath(config.config_file_path or "mkdocs.yml"))
        self._pinned_date = pin_build_date(root)
        exts = set(config.markdown_extensions)
        toc = config.mdx_configs.get("toc", {})
        self.render_options = RenderOptions(
            enabled=self.config.enabled,
            show_errors=self.serving,
            collapsible="???" if "pymdownx.details" in exts else "!!!" if "admonition" in exts else None,
            attr_list="attr_list" in exts,
            slugify=toc.get("slugify", default_slugify),
            separator=toc.get("separator", "-"),
            figure_min_text_px=float(self.config.figure_min_text_px),
            md_in_html="md_in_html" in exts,
            check_help=self.config.check_help,
            source_pages=dict(self.config.source_links),
        )
        return config

    def _settings(self, config: MkDocsConfig) -> Settings:
        root = os.path.dirname(os.path.abspath(config.config_file_path or "mkdocs.yml"))
        colors = DEFAULT_DARK_COLORS
        if self.config.dark_colors:
            colors = load_object(self.config.dark_colors)
            if not isinstance(colors, dict):
                raise PluginError("numbook: dark_colors must name a dict {'#rrggbb': '#rrggbb'}")
        return Settings(
            root=root,
            docs_dir=config.docs_dir,
            cache_dir=os.path.join(root, self.config.cache_dir),
            workers=self.config.workers or os.cpu_count() or 1,  # (numbook.pool loads only if a page runs)
            timeout=float(self.config.timeout),
            wall_timeout=float(self.config.wall_timeout),
            decimals=self.config.decimals,
            watch=tuple(self.config.watch),
            dark_colors=colors,
            enabled=self.config.enabled,
            page_label=self.config.page_label,
            heading_format=self.config.heading_format,
            planned=dict(self.config.planned),
            planned_text=self.config.planned_text,
            figure_min_text_px=float(self.config.figure_min_text_px),
            link_packages=tuple(self.config.source_links),
            figure_check=self._figure_check(),
            env=tuple(self.config.env),
            outputs=(config.site_dir,),
        )

    def _figure_check(self) -> str | None:
        """The ``figure_check`` option, checked for its form only: it is imported where pages run."""
        spec = self.config.figure_check
        if spec is None:
            return None
        module, _, attr = spec.partition(":")
        if not module or not attr:
            raise PluginError(f"numbook: figure_check must look like 'module:function', got {spec!r}")
        return spec

    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files | None:
        gallery = self.config.figure_gallery
        if gallery and files.get_file_from_path(gallery) is None:
            raise PluginError(f"numbook: figure_gallery is {gallery!r}, which is not a page of the docs directory")
        settings = self._settings(config)
        self.book = Book(settings, self._kept_pages())
        self.memo = None
        if self.config.enabled and self.config.markdown_cache:
            self.memo = RenderMemo(os.path.join(settings.cache_dir, "markdown"), settings.root,
                                   [config.site_dir, settings.cache_dir], list(settings.env))
        docs = sorted(files.documentation_pages(), key=reading_order(config.nav))
        pages = [SourcePage(f.src_uri, f.content_string) for f in docs]
        # with a nav, only the pages in it are published: references link to no other
        published = None if config.nav is None else set(nav_paths(config.nav))
        # MkDocs reads the pages in the order of `files`: they run in it, the first needed first
        run_order = [f.src_uri for f in files.documentation_pages()]
        generated = self.book.prepare(pages, published=published, run_order=run_order)
        if not self.config.enabled and not self.serving:
            self._refuse_unexecuted()
        self._publish(generated, files, config)
        return files

    def _kept_pages(self) -> Any:
        """The states of the pages being edited while serving (kept from build to build), else None."""
        if self.kept is None and self.serving and self.config.enabled and self.config.keep_pages:
            from .pool import KeptPages, kept_pages_supported

            if kept_pages_supported():
                self.kept = KeptPages()
        return self.kept

    def on_shutdown(self) -> None:
        if self.kept is not None:
            self.kept.close()
            self.kept = None
        self.server, self._watched = None, set()

    def _refuse_unexecuted(self) -> None:
        """A disabled plugin is a prose preview for `mkdocs serve`: a build would publish
        pages whose blocks did not run, so it stops (unless told the site is a throwaway)."""
        from .extension import ALLOW_UNEXECUTED, unexecuted_allowed

        pages = sorted(p.display_path for p in self.book.pages.values() if p.parsed.cells)
        if pages and not unexecuted_allowed():
            raise PluginError(
                f"numbook: the plugin is disabled (`enabled: false`; the book's mkdocs.yml reads "
                f"NUMBOOK_ENABLED), so this build would publish {len(pages)} page(s) whose blocks did not "
                f"run: {', '.join(pages)}. A disabled plugin is a prose preview for `mkdocs serve`; "
                f"enable it to build, or set {ALLOW_UNEXECUTED}=1 for a site that is never published."
            )

    def _publish(
        self, generated: list[GeneratedFile], files: Files, config: MkDocsConfig, *, reading: str | None = None
    ) -> None:
        """Add the files the pages' outputs make to the site; stop a build at an error.

        Building, an error stops the build once every page has run (one message for all);
        serving, each page shows its own, and `on_env` logs them all once. While MkDocs
        reads page ``reading`` it heads any error with "Error reading page '<reading>'", so
        the build stops there only when that page is one with a problem (the gallery waits
        for every page's figures: it must not announce their problems as its own); the
        others stop it at their own page, or in `on_env`.
        """
        for g in generated:
            if files.get_file_from_path(g.src_uri) is not None:
                raise PluginError(f"numbook: {g.src_uri} would overwrite a file of the docs directory")
            files.append(File.generated(config, g.src_uri, content=g.content))
        book = self.book
        if book is None or not book.errors or not self.config.enabled or self.serving:
            return
        shown_as = None if reading is None else book.display.get(reading)
        if reading is None or any(e.page == shown_as for e in book.errors):
            book.collect()  # the pages still running finish: one message for all the problems
            book.close()
            raise PluginError(format_errors(book.errors))

    def on_nav(self, nav: Navigation, *, config: MkDocsConfig, files: Files) -> Navigation | None:
        """Remember the pages' order and titles in the navigation (the gallery follows them)."""
        self.nav_titles = {p.file.src_uri: p.title or p.file.src_uri for p in nav.pages}
        return nav

    def on_pre_page(self, page: Page, *, config: MkDocsConfig, files: Files) -> Page | None:
        """A Markdown page converts once and is reused while nothing it was made from changed."""
        own_render = getattr(page.render, "__func__", None) is type(page).render  # not a notebook's
        if self.memo is not None and page.file.src_uri.endswith(".md") and own_render:
            self.memo.install(page)
        return page

    def on_page_markdown(self, markdown: str, *, page: Page, config: MkDocsConfig, files: Files) -> str | None:
        if self.book is None:
            return markdown
        # this page's outputs (the gallery shows every page's figures)
        wanted = None if page.file.src_uri == self.config.figure_gallery else page.file.src_uri
        self._publish(self.book.collect(wanted), files, config, reading=page.file.src_uri)

        def url_for(src_uri: str) -> str:
            f = files.get_file_from_path(src_uri)
            return f.url_relative_to(page.file) if f is not None else src_uri

        try:
            markdown = self.book.render(page.file.src_uri, markdown, url_for, self.render_options, late_html=True)
        except RuntimeError as exc:
            raise PluginError(f"numbook: {exc}") from exc
        if page.file.src_uri == self.config.figure_gallery and self.config.enabled:
            from .gallery import figure_entries, gallery_html  # only a book with a gallery needs it

            entries = figure_entries(self.book, list(self.nav_titles))
            markdown = markdown.rstrip("\n") + "\n\n" + gallery_html(entries, url_for, self.nav_titles) + "\n"
        return markdown

    def on_page_content(self, html: str, *, page: Page, config: MkDocsConfig, files: Files) -> str | None:
        if self.book is None:
            return html
        if self.book.running:  # start the next waiting pages as soon as workers are free
            self._publish(self.book.collect(wait=False), files, config, reading=page.file.src_uri)
        try:
            return self.book.finish(page.file.src_uri, html)
        except RuntimeError as exc:
            raise PluginError(f"numbook: {exc}") from exc

    # After the plugins that index the content for search (priority 0), before numbook-lean (-100).
    @event_priority(-50)
    def on_page_context(
        self, context: dict[str, Any], *, page: Page, config: MkDocsConfig, nav: Navigation
    ) -> dict[str, Any] | None:
        """Put each figure's data fold in place, once search has indexed the content: a table
        of numbers there only makes the index larger and every build's indexing slower."""
        if self.book is None or page.content is None:
            return context
        try:
            page.content = self.book.finish_output(page.file.src_uri, page.content)
        except RuntimeError as exc:
            raise PluginError(f"numbook: {exc}") from exc
        return context

    def _unpin_date(self) -> None:
        """Take back the SOURCE_DATE_EPOCH we set (the next build, or `serve` after a
        commit, reads the date again; a host process keeps its environment)."""
        if self._pinned_date is not None and os.environ.get("SOURCE_DATE_EPOCH") == self._pinned_date:
            del os.environ["SOURCE_DATE_EPOCH"]
        self._pinned_date = None

    def on_env(self, env: Any, *, config: MkDocsConfig, files: Files) -> Any:
        """Every page has been read: take the runs of any page MkDocs did not read (and so
        did not wait for) before MkDocs writes the site's files."""
        if isinstance(env, jinja2.Environment):  # (a Python-Markdown host has no theme)
            env.bytecode_cache = self.template_code
        if self.book is not None:
            self._publish(self.book.collect(), files, config)
            if self.book.errors and self.config.enabled:
                log_shown_on_page(log, format_errors(self.book.errors))  # serving: once per build
        return env

    @event_priority(-100)  # after every plugin that writes pages (mkdocs-redirects' redirects too)
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        self._unpin_date()
        self._watch_inputs(config)
        if self.config.permalinks and self.config.enabled and not self.serving:
            self._check_permalinks(config)
        if self.serving:
            _collect_garbage_soon()

    def _check_permalinks(self, config: MkDocsConfig) -> None:
        """Warn (a strict build then fails) where the built site and the address manifest differ."""
        from .permalinks import build_problems, update_command

        root = os.path.dirname(os.path.abspath(config.config_file_path or "mkdocs.yml"))
        command = update_command(self.config.permalinks, config.config_file_path or "mkdocs.yml")
        for problem in build_problems(os.path.join(root, self.config.permalinks), config.site_dir, command):
            log.warning(f"numbook: {problem}")

    def on_build_error(self, *, error: Exception) -> None:
        if self.book is not None:
            self.book.close()
        self._unpin_date()

    def on_serve(self, server: Any, *, config: MkDocsConfig, builder: Any) -> Any:
        root = os.path.dirname(os.path.abspath(config.config_file_path or "mkdocs.yml"))
        for w in self.config.watch:
            path = os.path.join(root, w)
            if os.path.isdir(path):
                server.watch(path)
        self.server = server
        self._watch_inputs(config)
        return server

    def _watch_inputs(self, config: MkDocsConfig) -> None:
        """`serve` rebuilds when any file a page's run or conversion read changes: each one
        outside the directories it watches already (the docs, ``watch``) is watched too."""
        if self.server is None or self.book is None:
            return
        root = os.path.dirname(os.path.abspath(config.config_file_path or "mkdocs.yml"))
        watched = [config.docs_dir, *(os.path.join(root, w) for w in [*self.config.watch, *config.watch])]
        files = self.book.inputs() | (self.memo.read if self.memo is not None else set())
        for path in sorted(files - self._watched):
            inside = any(path.startswith(os.path.abspath(d).rstrip(os.sep) + os.sep) for d in watched)
            if not inside and os.path.isfile(path):
                self.server.watch(path, recursive=False)
            self._watched.add(path)


#: Seconds after a `serve` build before its garbage is collected: time for the browser to reload.
COLLECT_AFTER = 0.5


def _collect_garbage_soon() -> None:
    """A build leaves some 7,000 objects in reference cycles (MkDocs' pages, files and
    navigation point at each other), 18 MiB, which CPython (up to 3.13) frees only once the old
    generation has grown by a quarter: under `serve` they piled up from save to save, and each
    build ran slower (1.30 s, then 1.47 s by the eighth prose save; measured). A full collection
    takes a tenth of a second, so it runs half a second after the build (a save within that
    half second has its build share the time)."""
    timer = threading.Timer(COLLECT_AFTER, gc.collect)
    timer.daemon = True
    timer.start()
