"""numbook under more than one builder, and never a published page whose blocks did not run.

* The Markdown extension (`numbook.extension`) changes nothing in a MkDocs build and stops
  one in which the numbook plugin did not run; a disabled plugin previews under `serve`
  only; plain Python-Markdown either hosts the book (told which project and page) or stops.
* Zensical (the optional dependency group `zensical`) builds a small book with every
  number, figure, equation and check of the MkDocs build, again and again (its page cache
  must not lose our files); a failing check stops it with page, line and reason; without
  the adapter, or without the plugin's options, it stops too; `zensical serve` re-runs a
  page when the engine it imports changes. Skipped where Zensical is not installed,
  except in CI, where `.ci/run` installs the group and a missing Zensical fails.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import markdown
import pytest
import yaml

from numbook.compare import compare_sites
from numbook.extension import ALLOW_UNEXECUTED, UnexecutedPage, makeExtension

from ..builders import require_zensical
from .conftest import build_error, logged

os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")

PAGE = """
    ```python exec
    print(6 * 7)
    ```

    The answer is `{py} 6 * 7`.
"""

ENGINE = """
    SCALE = 2


    def value(x):
        return SCALE * x
"""

INDEX = """
    ---
    number: 1
    title: One page
    ---

    ## Values

    ```python exec
    from eng import value
    v = value(21)
    print(v)
    ```

    The value is `{py} v` and its half is `{py} v / 2`, so $v = 2 \\cdot 21$.

    ```python exec check="the value is even"
    assert v % 2 == 0
    ```

    ```python exec figure="fig-line" caption="A line through {py:v}" alt="A rising line"
    import matplotlib.pyplot as plt
    from numbook.api import figure_data
    figure_data(["x", "y"], [[0, 0], [1, v], [2, 2 * v]])
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], [0, v, 2 * v])
    ```

    See [](#fig-line).
"""

TWO = """
    # Two

    The line is [](index.md#fig-line), on [](index.md).

    ```python exec
    from numbook.api import table
    table([[1, 2.5], [3, 4.25]], header=["n", "x"])
    ```
"""


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def small_book(root: Path, *, plugin: bool = True, extension: object = "numbook.extension") -> Path:
    """A two-page book with an engine module, a figure, a check, maths and references."""
    root.mkdir(parents=True, exist_ok=True)
    write(root, "src/eng/__init__.py", ENGINE)
    write(root, "docs/index.md", INDEX)
    write(root, "docs/two.md", TWO)
    config = {
        "site_name": "Small book",
        "site_url": "https://example.org/",
        "strict": True,
        "watch": ["src"],
        "theme": {"name": "material"},
        "plugins": ["search"] + ([{"numbook": {"watch": ["src"], "workers": 2}}] if plugin else []),
        "markdown_extensions": [
            "admonition", "attr_list", "md_in_html", "pymdownx.details", "pymdownx.superfences",
            {"pymdownx.arithmatex": {"generic": True}}, extension,
        ],
        "nav": [{"Home": "index.md"}, {"Two": "two.md"}],
    }
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return root


def mkdocs_build(root: Path, site_dir: Path, command: str = "build") -> None:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    config = load_config(str(root / "mkdocs.yml"), site_dir=str(site_dir))
    config.plugins.on_startup(command=command, dirty=False)
    try:
        build(config)
    finally:
        config.plugins.on_shutdown()


def mkdocs_error(root: Path) -> str:
    """Build a site that must stop; the message MkDocs logged."""
    from mkdocs.exceptions import Abort

    with logged() as messages, pytest.raises(Abort):
        mkdocs_build(root, root / "site")
    return "\n".join(messages)


# --- MkDocs and plain Python-Markdown -----------------------------------------------------


def test_the_extension_changes_nothing_in_a_mkdocs_build(tmp_path):
    with_ext = small_book(tmp_path / "with")
    without = small_book(tmp_path / "without", extension="toc")
    mkdocs_build(with_ext, with_ext / "site")
    mkdocs_build(without, without / "site")
    pages = sorted(p.relative_to(with_ext / "site") for p in (with_ext / "site").rglob("*.html"))
    assert pages
    for rel in pages:
        assert (with_ext / "site" / rel).read_bytes() == (without / "site" / rel).read_bytes(), rel
    figures = sorted((with_ext / "site" / "figures").iterdir())
    assert [f.name for f in figures] == ["fig-line.csv", "fig-line.dark.svg", "fig-line.light.svg"]


def test_mkdocs_without_the_plugin_stops_at_the_first_unexecuted_page(tmp_path):
    root = small_book(tmp_path / "book", plugin=False)
    message = mkdocs_error(root)
    assert "numbook: MkDocs is converting docs/index.md:8, a `python exec` block that did not run" in message
    assert "add the numbook plugin to mkdocs.yml" in message


def test_a_disabled_plugin_previews_under_serve_but_does_not_build(make_site, monkeypatch):
    site = make_site({"index.md": PAGE}, plugin={"enabled": False})
    message = build_error(site)
    assert "the plugin is disabled" in message and "docs/index.md" in message
    assert ALLOW_UNEXECUTED in message and "mkdocs serve" in message
    plugin = site.build(serve=True)  # the prose preview
    assert plugin.book.executed == []
    assert "<code>6 * 7</code>" in site.html()
    monkeypatch.setenv(ALLOW_UNEXECUTED, "1")  # a throwaway build (the benchmark's bare build)
    site.build()


def test_plain_markdown_without_a_host_stops_and_prose_passes():
    with pytest.raises(UnexecutedPage, match=r"Python-Markdown is converting .*`python exec` block"):
        markdown.markdown(textwrap.dedent(PAGE), extensions=["numbook.extension"])
    with pytest.raises(UnexecutedPage, match=r"inline `\{py\}` value"):
        markdown.markdown("Value `{py} 1 + 1`.", extensions=["numbook.extension"])
    assert markdown.markdown("Just `code` and prose.", extensions=["numbook.extension"]) == (
        "<p>Just <code>code</code> and prose.</p>"
    )


def test_plain_markdown_hosts_the_book_when_told_the_project_and_page(tmp_path):
    root = small_book(tmp_path / "book")
    site = tmp_path / "plain"
    ext = makeExtension(config_file=str(root / "mkdocs.yml"), page="index.md", site_dir=str(site))
    md = markdown.Markdown(extensions=["attr_list", "md_in_html", "pymdownx.superfences", ext])
    out = md.convert("(the page is read from the docs)")
    assert "The value is 42 and its half is 21" in out
    assert '<img src="figures/fig-line.light.svg#only-light"' in out
    assert sorted(p.name for p in (site / "figures").iterdir()) == [
        "fig-line.csv", "fig-line.dark.svg", "fig-line.light.svg"
    ]


# --- Zensical ------------------------------------------------------------------------------


def zensical(root: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "zensical", *args], cwd=root, env=env, capture_output=True, text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_zensical_builds_the_small_book_as_mkdocs_does_and_again(tmp_path):
    require_zensical()
    root = small_book(tmp_path / "book")
    mkdocs_build(root, tmp_path / "mkdocs-site")
    for attempt in ("cold", "warm"):  # the second finds Zensical's page cache: files must stay
        done = zensical(root, "build")
        assert done.returncode == 0, f"{attempt}:\n{done.stdout}\n{done.stderr}"
        c = compare_sites(tmp_path / "mkdocs-site", root / "site")
        assert c.same and not c.only_a and not c.only_b, f"{attempt}: {c}"
        assert c.numbers >= 30 and c.identical_numbers == c.numbers
        assert c.files == 3 and not c.files_differ
        assert sum(p.checks for p in c.pages) == 1 and sum(p.figures for p in c.pages) == 1
        assert all(p.same_content for p in c.pages), [p.url for p in c.pages if not p.same_content]
    assert not [p for p in (root / ".cache").iterdir() if p.name.isdigit()]  # no cached page left
    assert (root / ".cache" / "numbook").is_dir()  # numbook's own cache stays


@pytest.mark.slow
def test_a_failing_check_stops_zensical_with_page_line_and_reason(tmp_path):
    require_zensical()
    root = small_book(tmp_path / "book")
    page = root / "docs" / "index.md"
    page.write_text(page.read_text().replace("assert v % 2 == 0", 'assert v % 2 == 1, "v is even"'))
    done = zensical(root, "build")
    assert done.returncode != 0
    assert 'docs/index.md:17: check failed for the claim "the value is even": AssertionError: v is even' in (
        done.stderr
    )


@pytest.mark.slow
def test_zensical_without_the_adapter_or_the_plugin_options_stops(tmp_path):
    require_zensical()
    root = small_book(tmp_path / "off", extension={"numbook.extension": {"zensical": False}})
    done = zensical(root, "build")
    assert done.returncode != 0
    assert "numbook: Zensical is converting docs/" in done.stderr
    assert "a `python exec` block that did not run" in done.stderr
    assert not (root / "site" / "figures").exists()
    root = small_book(tmp_path / "bare", plugin=False)
    done = zensical(root, "build")
    assert done.returncode != 0
    assert "lists the numbook extension but not the numbook plugin" in done.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.3)
    return False


@pytest.mark.slow
def test_zensical_serve_runs_a_page_again_when_its_engine_changes(tmp_path):
    require_zensical()
    root = small_book(tmp_path / "book")
    page = root / "site" / "index.html"

    def shows(text: str) -> bool:
        try:
            return text in page.read_text(encoding="utf-8")
        except OSError:
            return False

    server = subprocess.Popen(
        [sys.executable, "-m", "zensical", "serve", "-a", f"127.0.0.1:{free_port()}"],
        cwd=root, env=dict(os.environ, NO_COLOR="1"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        assert wait_for(lambda: shows("The value is 42"), 60), "the first build never came"
        assert (root / "site" / "figures" / "fig-line.light.svg").exists()
        engine = root / "src" / "eng" / "__init__.py"
        engine.write_text(engine.read_text().replace("SCALE = 2", "SCALE = 4"))
        assert wait_for(lambda: shows("The value is 84"), 60), "the engine's edit did not run the page again"
        assert shows("A line through 84")
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
