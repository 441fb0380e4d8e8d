"""The staleness matrix: whatever input changes, a warm build writes the site a cold build writes.

One small project uses every kind of input a book has: an engine module under ``src/``, a
style sheet outside it (``figures/``) that a figure helper reads, a data file (``data/``), an
environment variable named in the ``env`` option, the glossary appended to every page and
another snippet, options of ``mkdocs.yml``, a stylesheet, a script and a theme template, and a numbered section
that a link points to. It is built once (the warm cache). Then, for each kind, a copy of it
(cache included) has that input changed and is built again, warm; a second copy, changed the
same way and without a cache, is built cold; the two sites must be the same, byte for byte.
The change must show in the site, or the comparison would prove nothing (a file touched
without a change must show nothing, and run nothing). The same holds for a rebuild under
`mkdocs serve`, after an edited block has left the page's state kept.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from .conftest import Site
from .test_determinism import tree

CONFIG = {
    "site_name": "Matrix",
    "theme": {"name": "mkdocs", "custom_dir": "overrides"},
    "extra_css": ["stylesheets/extra.css"],
    "extra_javascript": ["js/extra.js"],
    "exclude_docs": "includes/\n",
    "plugins": [{"numbook": {"workers": 2, "timeout": 30, "env": ["MATRIX_STYLE"]}}],
    "markdown_extensions": [
        "abbr", "attr_list", {"toc": {"permalink": True}},
        {"pymdownx.snippets": {"auto_append": ["includes/terms.md"], "base_path": ["docs"], "check_paths": True}},
    ],
}

FILES = {
    "docs/index.md": """\
        # Home

        The term MLP. See [](results.md#results) and [the results](results.md#results).

        ```python exec
        import engine
        print("engine", engine.VALUE)
        ```

        ```python exec
        import json
        with open("data/params.json") as f:
            params = json.load(f)
        print("params", params)
        ```

        ```python exec figure="fig-line" caption="A line" alt="A line"
        import figs
        figs.line()
        ```

        A third is `{py} 1 / 3`.
        """,
    "docs/results.md": """\
        ---
        number: 2
        ---

        # Results

        ## Results {#results}

        --8<-- "includes/note.md"
        """,
    "docs/includes/terms.md": "*[MLP]: multilayer perceptron\n",
    "docs/includes/note.md": "A note kept in a snippet.\n",
    "docs/stylesheets/extra.css": "body { color: #111; }\n",
    "docs/js/extra.js": "console.log('one');\n",
    "src/engine.py": "VALUE = 1\n",
    "src/figs.py": """\
        import os

        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        HERE = os.path.dirname(os.path.abspath(__file__))


        def line():
            path = os.environ.get("MATRIX_STYLE") or os.path.join(HERE, "..", "figures", "matrix.mplstyle")
            with plt.rc_context(matplotlib.rc_params_from_file(path, use_default_template=False)):
                fig, ax = plt.subplots(figsize=(2, 2))
                ax.plot([0, 1], [0, 1])
            fig.data_table = (["x", "y"], [[0, 0], [1, 1]])
            return fig
        """,
    "figures/matrix.mplstyle": "lines.linewidth: 2\nsvg.hashsalt: matrix\n",
    "figures/alt.mplstyle": "lines.linewidth: 5\nsvg.hashsalt: matrix\n",
    "data/params.json": "[1, 2, 3]\n",
    "overrides/main.html": '{% extends "base.html" %}{% block footer %}<p>Footer one</p>{{ super() }}{% endblock %}\n',
}


def write(root: Path, rel: str, text: str) -> None:
    import textwrap

    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


def edit(rel: str, old: str, new: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        text = (root / rel).read_text(encoding="utf-8")
        assert old in text, f"{old!r} not in {rel}"
        (root / rel).write_text(text.replace(old, new), encoding="utf-8")
    return change


def option(change_config: Callable[[dict], None]) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        config = yaml.safe_load((root / "mkdocs.yml").read_text())
        change_config(config)
        (root / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    return change


def set_env(root: Path) -> None:
    os.environ["MATRIX_STYLE"] = str(root / "figures" / "alt.mplstyle")


def touch(root: Path) -> None:
    path = root / "src" / "engine.py"
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns + 5 * 10**9, stat.st_mtime_ns + 5 * 10**9))


def _decimals(config: dict) -> None:
    config["plugins"][0]["numbook"]["decimals"] = 5


def _permalink(config: dict) -> None:
    config["markdown_extensions"][2] = {"toc": {"permalink": "#"}}


#: kind -> how to change a project of it
CHANGES: dict[str, Callable[[Path], None]] = {
    "engine module under src/": edit("src/engine.py", "VALUE = 1", "VALUE = 2"),
    "style sheet": edit("figures/matrix.mplstyle", "linewidth: 2", "linewidth: 3"),
    "data file": edit("data/params.json", "[1, 2, 3]", "[1, 2, 4]"),
    "environment variable": set_env,
    "glossary": edit("docs/includes/terms.md", "multilayer", "many-layer"),
    "snippet": edit("docs/includes/note.md", "kept in", "taken from"),
    "numbook option": option(_decimals),
    "Markdown extension option": option(_permalink),
    "stylesheet": edit("docs/stylesheets/extra.css", "#111", "#222"),
    "script": edit("docs/js/extra.js", "'one'", "'two'"),
    "theme template": edit("overrides/main.html", "Footer one", "Footer two"),
    "heading a link points to": edit("docs/results.md", "## Results {#results}",
                                     "## First things {#first}\n\nText.\n\n## Results {#results}"),
    "file touched without change": touch,
}
#: what a serve rebuild sees without a restart (it keeps its environment: a variable is set before serve)
SERVE_CHANGES = [k for k in CHANGES if k != "numbook option"]


@pytest.fixture(scope="module")
def warm_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, built once: its cache is warm."""
    root = tmp_path_factory.mktemp("matrix") / "project"
    write(root, "mkdocs.yml", yaml.safe_dump(CONFIG, sort_keys=False))
    for rel, text in FILES.items():
        write(root, rel, text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", "1700000000")
        patch.delenv("MATRIX_STYLE", raising=False)
        Project(root).build(strict=True, site_dir=root.parent / "before")
    return root


@pytest.fixture(autouse=True)
def _fixed_environment(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    monkeypatch.delenv("MATRIX_STYLE", raising=False)


class Project(Site):
    """A copy of the project, built from its own directory (pymdownx.snippets' base_path is relative)."""

    def build(self, **kwargs):
        here = os.getcwd()
        os.chdir(self.root)
        try:
            return super().build(**kwargs)
        finally:
            os.chdir(here)


def copy(project: Path, dest: Path, *, cache: bool) -> Project:
    ignore = None if cache else shutil.ignore_patterns(".cache")
    shutil.copytree(project, dest, ignore=ignore)
    return Project(dest)


def cold_site(warm_project: Path, tmp_path: Path, change: Callable[[Path], None]) -> dict[str, bytes]:
    cold = copy(warm_project, tmp_path / "cold", cache=False)
    change(cold.root)
    cold.build(strict=True, site_dir=tmp_path / "cold-site")
    return tree(tmp_path / "cold-site")


def differing(one: dict[str, bytes], two: dict[str, bytes]) -> list[str]:
    return sorted(name for name in one.keys() | two.keys() if one.get(name) != two.get(name))


@pytest.mark.parametrize("kind", list(CHANGES))
def test_a_warm_build_after_a_change_is_the_cold_build(kind, warm_project, tmp_path):
    change = CHANGES[kind]
    warm = copy(warm_project, tmp_path / "warm", cache=True)
    change(warm.root)
    plugin = warm.build(strict=True, site_dir=tmp_path / "warm-site")
    executed, converted = list(plugin.book.executed), plugin.memo.misses  # (MkDocs reuses the plugin)
    cold = cold_site(warm_project, tmp_path, change)
    assert differing(tree(tmp_path / "warm-site"), cold) == []
    before = tree(warm_project.parent / "before")
    if kind == "file touched without change":
        assert executed == [] and converted == 0
        assert differing(before, cold) == []
    else:
        assert differing(before, cold) != [], "the change must show in the site"


@pytest.mark.parametrize("kind", SERVE_CHANGES)
def test_a_serve_rebuild_after_a_change_is_the_cold_build(kind, warm_project, tmp_path):
    """Under `mkdocs serve` (one plugin from build to build), after an edit of the page's last
    block has run it again (and, where pages are kept, left its state kept)."""
    change = CHANGES[kind]
    served = copy(warm_project, tmp_path / "served", cache=True)
    plugins = [served.build(serve=True, site_dir=tmp_path / "served-site")]
    try:
        edited = edit("docs/index.md", "figs.line()", 'print("edited")\nfigs.line()')
        edited(served.root)
        plugins.append(served.build(serve=True, startup=False, site_dir=tmp_path / "served-site"))
        change(served.root)
        plugins.append(served.build(serve=True, startup=False, site_dir=tmp_path / "served-site"))
    finally:
        plugins[-1].on_shutdown()

    def both(root: Path) -> None:
        edited(root)
        change(root)

    assert differing(tree(tmp_path / "served-site"), cold_site(warm_project, tmp_path, both)) == []


def test_serve_watches_every_file_a_page_read(warm_project, tmp_path):
    """The style sheet and the data file lie outside the watched directories: serve watches them."""
    served = copy(warm_project, tmp_path / "served", cache=True)
    plugin = served.build(serve=True, site_dir=tmp_path / "served-site")

    class Server:
        watched: list[str] = []

        def watch(self, path: str, recursive: bool = True) -> None:
            self.watched.append(path)

    from mkdocs.config import load_config

    config = load_config(str(served.root / "mkdocs.yml"))
    try:
        plugin.on_serve(Server(), config=config, builder=None)
    finally:
        plugin.on_shutdown()
    root = str(served.root)
    assert sorted(os.path.relpath(p, root) for p in Server.watched) == ["data/params.json", "figures/matrix.mplstyle", "src"]
