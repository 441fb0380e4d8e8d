"""The book, run from inside a Markdown conversion, for a builder that runs no MkDocs plugin.

A builder such as Zensical reads ``mkdocs.yml`` and converts each page with Python-Markdown
and the site's `markdown_extensions`, but runs none of numbook's plugins. `numbook.extension`
then hosts the book itself through a `HostedBook`: one build's worth of the numbook plugin,
driven with MkDocs' own configuration, file and page objects, so that every page is read,
numbered, run, cached and rendered by exactly the code (and in exactly the steps) of a
MkDocs build: `Book.prepare` and the pages' runs when the first page is converted, then for
each page `Book.render` on its Markdown and `Book.finish` / `finish_output` on its HTML.
The files the outputs make (figures, their data, widget data) are written into the site
directory as soon as they exist. The project's plugins that work on one page's content run
too, with the same hooks (numbook-katex: build-time maths and equation anchors; numbook-cite:
each figure's citation; numbook-lean: the lean content); what works on the theme's output or
the whole site stays MkDocs-only, and the log says so once per build (`HOSTED_PLUGINS`,
`MKDOCS_ONLY`). Zensical reads only the stylesheets and scripts that ``mkdocs.yml`` names,
so the book names the ones these plugins add (MkDocs does not add a name twice).

MkDocs is used as a library (its config schema for numbook's options, its URL rules); it
builds nothing here.
"""

from __future__ import annotations

import logging
import os
import posixpath
import re
from collections.abc import Mapping
from typing import Any

#: The MkDocs plugins of this project that a hosted build runs.
HOSTED_PLUGINS = ("numbook", "numbook-cite", "numbook-katex", "numbook-lean")
#: What a hosted build leaves out, and why (its log says so once per build).
MKDOCS_ONLY = {
    "numbook-cite": "no citation box or citation_* meta tags (its templates need MkDocs' page context)",
    "numbook-notebooks": "workbook pages are not made (and no engine wheel)",
    "numbook-lean": "the theme's scripts are not deferred (the page's content is made lean as under MkDocs)",
    "mkdocs-jupyter": "workbook pages are not made",
    "mike": "no edition menu",
    "numbook-pdf": "no PDF links (the PDF edition is typeset from a MkDocs build: python -m bookpdf)",
    "redirects": "no redirect pages",
}

log = logging.getLogger("mkdocs.plugins.numbook")


class HostingError(RuntimeError):
    """The book cannot be hosted here (no numbook plugin in the configuration, ...)."""


def plugin_entries(plugins: Any) -> dict[str, dict]:
    """``plugins:`` of a raw mkdocs.yml (a list of names and one-key mappings, or a mapping)
    as {name: options}."""
    entries: dict[str, dict] = {}
    if isinstance(plugins, Mapping):
        items = list(plugins.items())
    else:
        items = []
        for item in plugins or []:
            if isinstance(item, str):
                items.append((item, {}))
            elif isinstance(item, Mapping):
                items.extend(item.items())
    for name, options in items:
        entries[str(name)] = dict(options or {})
    return entries


def read_raw_config(config_file: str) -> dict:
    """mkdocs.yml as MkDocs reads it (``!ENV``, ``!relative``, Python tags), not validated."""
    from mkdocs.utils.yaml import yaml_load

    with open(config_file, encoding="utf-8") as fd:
        return yaml_load(fd) or {}


def snapshot(docs_dir: str) -> dict[str, tuple[int, int]]:
    """(mtime in ns, size) of every Markdown file of the docs: a changed one means a new build."""
    seen: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(docs_dir):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            if name.endswith(".md"):
                st = os.stat(os.path.join(dirpath, name))
                seen[os.path.join(dirpath, name)] = (st.st_mtime_ns, st.st_size)
    return seen


class _SourceRelative:
    """A file whose URL, from a page, is its path from that page's source file."""

    def __init__(self, file: Any) -> None:
        self.file = file

    def __getattr__(self, name: str) -> Any:
        return getattr(self.file, name)

    def url_relative_to(self, other: Any) -> str:
        start = posixpath.dirname(getattr(other, "src_uri", other)) or "."
        return posixpath.relpath(self.file.src_uri, start)


_DATA_URL = re.compile(r'(\sdata-[\w-]+=")([^"#?:<>]+)(")')


class SourceLinks:
    """The site's files, for a builder that rewrites links itself (Zensical): a page's
    outputs then link to ``part2.md`` and ``figures/x.svg`` as the page's source would, and
    the builder turns them into its own URLs (and checks them), as it does the prose's."""

    def __init__(self, files: Any) -> None:
        self._files = files

    def __getattr__(self, name: str) -> Any:
        return getattr(self._files, name)

    def __iter__(self):
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)

    def __contains__(self, item: Any) -> bool:
        return item in self._files

    def get_file_from_path(self, path: str) -> Any:
        f = self._files.get_file_from_path(path)
        return None if f is None else _SourceRelative(f)

    def site_urls_in_data(self, html_text: str, page: Any) -> str:
        """The builder rewrites ``href`` and ``src``, not ``data-*`` attributes (a widget's
        data, a figure's variants): those get the site's URL, as MkDocs writes it."""
        start = posixpath.dirname(page.file.src_uri)

        def site_url(m: re.Match) -> str:
            f = self._files.get_file_from_path(posixpath.normpath(posixpath.join(start, m.group(2))))
            return m.group(0) if f is None else f"{m.group(1)}{f.url_relative_to(page.file)}{m.group(3)}"

        return _DATA_URL.sub(site_url, html_text)


class HostedBook:
    """One build of the book, hosted by a builder that only converts Markdown (see above).

    ``markdown(src_uri)`` gives a page's Markdown with its outputs (its source is read from
    the docs directory, front matter and all, as MkDocs reads it), and ``html(src_uri, html)``
    the converted HTML with the figures put in. A problem that stops a MkDocs build raises
    `HostingError` with the same message (page, line, reason); serving, pages show them.
    """

    def __init__(
        self, config_file: str, *, site_dir: str, serving: bool, builder: str, source_links: bool = True
    ) -> None:
        from mkdocs.config import load_config
        from mkdocs.exceptions import ConfigurationError
        from mkdocs.structure.files import get_files, set_exclusions
        from mkdocs.structure.nav import get_navigation

        self.builder = builder
        self.serving = serving
        self.site_dir = site_dir
        self._written: dict[str, bytes] = {}
        raw = read_raw_config(config_file)
        entries = plugin_entries(raw.get("plugins"))
        if "numbook" not in entries:
            raise HostingError(
                f"{os.path.relpath(config_file)} lists the numbook extension but not the numbook plugin, "
                "whose options (`plugins: - numbook: ...`) say how to run the pages: add it"
            )
        self.left_out = {name: why for name, why in MKDOCS_ONLY.items() if name in entries}
        try:
            self.config = load_config(
                config_file, plugins=[{name: options} for name, options in entries.items() if name in HOSTED_PLUGINS],
                site_dir=site_dir,
            )
        except ConfigurationError as exc:
            raise HostingError(f"numbook: {config_file}: {exc}") from exc
        config = self.config
        self.plugin = config.plugins["numbook"]
        # the address manifest is checked against the pages MkDocs writes; this host's builder
        # writes its own, after the last page converted
        self.plugin.config["permalinks"] = None
        config.plugins.on_startup(command="serve" if serving else "build", dirty=False)
        try:
            self.config = config = config.plugins.on_config(config)
            config.plugins.on_pre_build(config=config)
            files = get_files(config)
            self.files = files = config.plugins.on_files(files, config=config)
            set_exclusions(files, config)
            self.nav = config.plugins.on_nav(get_navigation(files, config), config=config, files=files)
            self.links = SourceLinks(files) if source_links else files
        except Exception as exc:
            self._failed(exc)
        from mkdocs.structure.pages import Page

        self.pages = {}
        for f in files.documentation_pages():
            if f.page is None:
                Page(None, f, config)
            self.pages[f.src_uri] = f.page
        self.docs = snapshot(config.docs_dir)
        self._converted: set[str] = set()
        self.finished = False
        self._write_files()
        if self.left_out:
            log.warning(
                "numbook: %s runs numbook's blocks, figures, references and checks; it leaves out %s",
                builder, "; ".join(f"{name}: {why}" for name, why in self.left_out.items()),
            )

    @property
    def book(self):
        return self.plugin.book

    def stale(self) -> bool:
        """Whether a page of the docs changed since this build read them (`serve`)."""
        return snapshot(self.config.docs_dir) != self.docs

    def _failed(self, exc: Exception) -> None:
        from mkdocs.exceptions import PluginError

        self.close(failed=True)
        if isinstance(exc, PluginError):
            raise HostingError(str(exc)) from None
        raise exc

    def markdown(self, src_uri: str) -> str:
        """The page's Markdown with its outputs in place (MkDocs' `on_page_markdown`)."""
        page = self.pages[src_uri]
        config = self.config
        try:
            page.read_source(config)
            text = config.plugins.on_page_markdown(page.markdown, page=page, config=config, files=self.links)
        except Exception as exc:
            self._failed(exc)
        self._write_files()
        return text

    def html(self, src_uri: str, html_text: str, toc_tokens: list | None = None) -> str:
        """The page's HTML with what `markdown` held back put in (MkDocs' `on_page_content`,
        then `on_page_context`, which MkDocs runs after the search plugin read the page)."""
        from mkdocs.structure.toc import get_toc

        page = self.pages[src_uri]
        config = self.config
        page.toc = get_toc(toc_tokens or [])  # as MkDocs' Page.render sets it
        try:
            page.content = config.plugins.on_page_content(html_text, page=page, config=config, files=self.links)
            config.plugins.on_page_context({}, page=page, config=config, nav=self.nav)
        except Exception as exc:
            self._failed(exc)
        if isinstance(self.links, SourceLinks):
            page.content = self.links.site_urls_in_data(page.content, page)
        self._converted.add(src_uri)
        self._write_files()
        if not self.finished and self._converted >= set(self.pages):
            self.finish()
        return page.content

    def finish(self) -> None:
        """Every page was converted: MkDocs' `on_env` and `on_post_build` (a bad formula
        stops the build here, once, for every page)."""
        from mkdocs.exceptions import PluginError

        self.finished = True
        config = self.config
        try:
            config.plugins.on_env(object(), config=config, files=self.files)  # (no Jinja environment here)
            self._write_files()
            config.plugins.on_post_build(config=config)
        except PluginError as exc:
            raise HostingError(str(exc)) from None

    def _write_files(self) -> None:
        """Write the files the outputs made so far into the site (each once, if it changed)."""
        for f in self.files:
            if f.generated_by is None or not f.generated_by.startswith("numbook"):
                continue
            content = f.content_bytes
            if self._written.get(f.dest_uri) == content:
                continue
            path = os.path.join(self.site_dir, *f.dest_uri.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.numbook-tmp"
            with open(tmp, "wb") as out:
                out.write(content)
            os.replace(tmp, path)
            self._written[f.dest_uri] = content

    def close(self, failed: bool = False) -> None:
        """The build is over: stop any page still running, take back the pinned build date."""
        plugins = getattr(self.config, "plugins", None) if hasattr(self, "config") else None
        if plugins is None or getattr(self, "finished", False):
            return
        self.finished = True
        if failed:
            plugins.on_build_error(error=RuntimeError("hosted build failed"))
        else:
            plugins.on_post_build(config=self.config)
