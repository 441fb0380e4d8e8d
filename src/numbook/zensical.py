"""Everything numbook knows about Zensical's insides, in one place (written against 0.1.2).

Zensical runs no MkDocs plugin of ours, but it converts every page with Python-Markdown and
the `markdown_extensions` of `mkdocs.yml`, one `Markdown` instance per page, in one process.
`numbook.extension` hosts the book there; this module tells it, for Zensical only:

* which page a `Markdown` instance converts (`page_of`: the ``ContextPreprocessor`` that
  Zensical registers on each instance carries the page's path and URL);
* where the project and the site are, and whether this is `zensical serve` (`project`);
* how to keep its page cache from hiding our files (`forget_rendered_pages`).

That last point is the one real difference from MkDocs. Zensical (0.0.73 to 0.1.2) keeps each rendered
page in ``.cache/`` (files named by a number) and converts a page again only when its
Markdown, the configuration, the templates or a ``watch`` path change; and each build first
empties the site directory of files it did not make itself. The files numbook makes (figures,
their data, widget data) would then vanish from every build that found its pages cached. So
when the process ends the adapter drops Zensical's cached pages (never numbook's own cache,
``.cache/numbook``): every `zensical build` converts every page again, as MkDocs does, and
numbook's cache keeps that cheap. `zensical build --clean` empties the whole of ``.cache``,
numbook's cache included: it works, but runs every page again.

Nothing here is imported unless Zensical is the builder, and nothing imports Zensical
unless it is already loaded.
"""

from __future__ import annotations

import atexit
import os
import re
import sys
from dataclasses import dataclass
from typing import Any

_CACHED_PAGE = re.compile(r"^[0-9]+$")  # Zensical's rendered-page entries in .cache/
_purge_registered: set[str] = set()


@dataclass(frozen=True)
class ZensicalPage:
    path: str  # inside docs_dir, "/" separators ("part1.md")
    url: str  # "part1/", "" for the home page


@dataclass(frozen=True)
class ZensicalProject:
    root: str  # the directory of the configuration file
    config_file: str | None  # mkdocs.yml (None: a zensical.toml project, which numbook cannot read)
    site_dir: str  # absolute
    serving: bool
    config_id: int  # changes whenever Zensical reads its configuration again (`serve` reloads)
    version: str


def loaded() -> bool:
    """Whether this process is running Zensical (it is imported by then)."""
    return "zensical.markdown.render" in sys.modules


def page_of(md: Any) -> ZensicalPage | None:
    """The page a Zensical `Markdown` instance is converting, or None (not Zensical's)."""
    if not loaded():
        return None
    from zensical.extensions.context import ContextPreprocessor

    context = ContextPreprocessor.from_markdown(md)
    if context is None or getattr(context, "page", None) is None:
        return None
    return ZensicalPage(str(context.page.path).replace(os.sep, "/"), str(context.page.url))


def source_path(md: Any) -> str | None:
    """The file of the page a Zensical `Markdown` instance converts, or None."""
    page = page_of(md)
    if page is None:
        return None
    from zensical.config import get_config

    config = get_config()
    docs_dir = config.get("docs_dir") or "docs"
    if not os.path.isabs(docs_dir):
        docs_dir = os.path.join(project().root, docs_dir)
    return os.path.join(docs_dir, *page.path.split("/"))


def _command() -> tuple[str | None, str | None]:
    """(the zensical subcommand, its --config-file), from click's context or the arguments."""
    try:
        import click

        ctx = click.get_current_context(silent=True)
    except ImportError:  # pragma: no cover - Zensical depends on click
        ctx = None
    if ctx is not None and ctx.info_name in ("build", "serve"):
        return ctx.info_name, ctx.params.get("config_file")
    args = sys.argv[1:]
    command = next((a for a in args if a in ("build", "serve")), None)
    config_file = None
    for flag in ("-f", "--config-file"):
        if flag in args and args.index(flag) + 1 < len(args):
            config_file = args[args.index(flag) + 1]
    return command, config_file


def project() -> ZensicalProject:
    """Where Zensical builds, read from its own configuration (`zensical.config.get_config`)."""
    import zensical
    from zensical.config import get_config

    config = get_config()
    command, config_file = _command()
    if config_file is None:  # the order `zensical build` looks for one (zensical.main)
        config_file = next((f for f in ("zensical.toml", "mkdocs.yml", "mkdocs.yaml") if os.path.exists(f)), None)
    config_file = os.path.abspath(config_file) if config_file else None
    root = os.path.dirname(config_file) if config_file else os.getcwd()
    site_dir = config.get("site_dir") or "site"
    if not os.path.isabs(site_dir):
        site_dir = os.path.join(root, site_dir)
    if config_file is not None and config_file.endswith(".toml"):
        config_file = None
    return ZensicalProject(
        root=root,
        config_file=config_file,
        site_dir=os.path.abspath(site_dir),
        serving=command == "serve",
        config_id=id(config),
        version=str(zensical.version()),
    )


def forget_rendered_pages(root: str) -> None:
    """When this process ends, drop Zensical's cached pages under ``root/.cache`` (see above)."""
    cache = os.path.join(root, ".cache")
    if cache in _purge_registered:
        return
    _purge_registered.add(cache)

    def purge() -> None:
        try:
            names = os.listdir(cache)
        except OSError:
            return
        for name in names:
            path = os.path.join(cache, name)
            if _CACHED_PAGE.match(name) and os.path.isfile(path):
                try:
                    os.remove(path)
                except OSError:
                    pass

    atexit.register(purge)
