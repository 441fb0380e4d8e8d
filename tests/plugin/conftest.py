"""Throwaway MkDocs sites for the numbook plugin tests.

`site(...)` writes a tiny project under tmp_path (mkdocs.yml, docs/, src/) and returns a
`Site` whose `build()` runs a real MkDocs build in this process and returns the plugin,
so a test can read its counters (`plugin.book.executed`, `.from_cache`, `.timings`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")


class Site:
    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def docs(self) -> Path:
        return self.root / "docs"

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    def page(self, rel: str, text: str) -> Path:
        return self.write(f"docs/{rel}", text)

    def build(
        self, *, serve: bool = False, strict: bool = False, site_dir: Path | None = None, startup: bool = True,
        **overrides: Any,
    ) -> Any:
        """Build the site (as `mkdocs serve` would when ``serve``); return the numbook plugin instance.

        ``startup=False``: a later build of the same command, as `mkdocs serve` rebuilds (MkDocs
        keeps the plugins, which hear ``on_startup`` once per command)."""
        from mkdocs.commands.build import build
        from mkdocs.config import load_config

        kwargs: dict[str, Any] = {"strict": strict}
        if site_dir is not None:
            kwargs["site_dir"] = str(site_dir)
        config = load_config(str(self.root / "mkdocs.yml"), **kwargs)
        plugin = config.plugins["numbook"]
        for key, value in overrides.items():
            plugin.config[key] = value
        if startup:
            config.plugins.on_startup(command="serve" if serve else "build", dirty=False)
        build(config)
        return plugin

    def html(self, page: str = "index") -> str:
        path = self.root / "site" / ("index.html" if page == "index" else f"{page}/index.html")
        return path.read_text(encoding="utf-8")

    def main(self, page: str = "index") -> str:
        """Only the page's content (no theme navigation, search dialog or footer)."""
        text = self.html(page)
        start = text.find('role="main"')
        if start < 0:
            start = text.find("<article")
        end = text.find("<footer", start)
        return text[start:end]

    def site_file(self, rel: str) -> Path:
        return self.root / "site" / rel


@pytest.fixture
def make_site(tmp_path: Path) -> Callable[..., Site]:
    def make(
        pages: dict[str, str],
        *,
        theme: str = "mkdocs",
        plugin: dict[str, Any] | None = None,
        extensions: list[Any] | None = None,
        name: str = "site",
        nav: list[Any] | None = None,
    ) -> Site:
        root = tmp_path / name
        root.mkdir()
        options = {"workers": 2, "timeout": 30, **(plugin or {})}
        config: dict[str, Any] = {
            "site_name": "Throwaway",
            "theme": {"name": theme},
            "plugins": [{"numbook": options}],
        }
        if extensions:
            config["markdown_extensions"] = extensions
        if nav:
            config["nav"] = nav
        (root / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        site = Site(root)
        for rel, text in pages.items():
            site.page(rel, text)
        return site

    return make


@contextlib.contextmanager
def logged(level: int = logging.ERROR) -> Iterator[list[str]]:
    """The messages MkDocs' loggers log at ``level`` or above while the block runs."""
    messages: list[str] = []
    handler = logging.Handler(level)
    handler.emit = lambda record: messages.append(record.getMessage())
    logger = logging.getLogger("mkdocs")
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)


def build_error(site: Site, *, prefix: str = "numbook:", **kwargs: Any) -> str:
    """Build a site that must fail with numbook's PluginError; return its message.

    MkDocs logs a BuildError's message and raises Abort; we read the logged message.
    """
    from mkdocs.exceptions import Abort

    with logged() as messages, pytest.raises(Abort):
        site.build(**kwargs)
    numbook = [m for m in messages if m.startswith(prefix)]
    assert numbook, f"the build failed, but not with a numbook error: {messages}"
    return "\n".join(numbook)
