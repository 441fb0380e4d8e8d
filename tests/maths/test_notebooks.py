"""Notebook pages (mkdocs-jupyter) made self-contained by the numbook-notebooks plugin."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import nbformat
import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort, PluginError

from booksite.notebooks import stylesheet_name, wrap_math

ARITHMATEX_INLINE = '<span class="arithmatex">\\({}\\)</span>'


def test_inline_and_display_maths_are_marked_for_katex():
    out = wrap_math("<p>A row $q_i$ and</p><p>$$\\sum_j a_j = 1$$</p>")
    assert ARITHMATEX_INLINE.format("q_i") in out
    assert '<span class="arithmatex">\\[\\sum_j a_j = 1\\]</span>' in out


@pytest.mark.parametrize(
    "text",
    [
        "<pre>cost = f'$x$'</pre>",
        "<p>Use <code>$x$</code> in a cell.</p>",
        "<script>let s = '$a$';</script>",
        "<p>It costs $5 and $6.</p>",
        "<p>An escaped \\$x\\$ stays text.</p>",
        "<p>A lone $ sign.</p>",
    ],
)
def test_dollars_in_code_prices_and_escapes_are_left_alone(text):
    assert wrap_math(text) == text


def test_stylesheet_name_follows_the_content():
    assert stylesheet_name("a{}") == stylesheet_name("a{}")
    assert stylesheet_name("a{}") != stylesheet_name("b{}")


def _notebook(markdown: list[str], code: list[str]) -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(m, id=f"m{i}") for i, m in enumerate(markdown)]
    nb.cells += [nbformat.v4.new_code_cell(c, id=f"c{i}") for i, c in enumerate(code)]
    return nbformat.writes(nb)


def make_site(tmp_path: Path, notebook: str) -> Path:
    docs = tmp_path / "docs"
    (docs / "workbooks").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n\nSee [the workbook](workbooks/one.ipynb).\n", encoding="utf-8")
    (docs / "workbooks" / "one.ipynb").write_text(notebook, encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        textwrap.dedent(
            f"""
            site_name: notebooks
            theme:
              name: mkdocs
              highlightjs: false  # the theme's own CDN script; the page content is under test
            plugins:
              - mkdocs-jupyter:
                  include: ["workbooks/*.ipynb"]
                  include_source: true
                  cache_dir: {tmp_path / "nbcache"}
              - numbook-notebooks
              - numbook-katex
            markdown_extensions:
              - pymdownx.arithmatex:
                  generic: true
            """
        ),
        encoding="utf-8",
    )
    return tmp_path


def build_site(root: Path, *, strict: bool = False) -> Path:
    config = load_config(str(root / "mkdocs.yml"), site_dir=str(root / "site"), strict=strict)
    config.plugins.on_startup(command="build", dirty=False)
    build(config)
    return root / "site"


def test_notebook_page_is_self_contained(tmp_path):
    notebook = _notebook(
        ["# Workbook\n\nThe weights $\\alpha_{ij}$ sum to one:\n\n$$\\sum_j \\alpha_{ij} = 1$$"],
        ["price = '$5'\nprint(price)"],
    )
    site = build_site(make_site(tmp_path, notebook))
    page = (site / "workbooks" / "one" / "index.html").read_text(encoding="utf-8")

    # maths typeset at build time, none left for a browser to do
    assert page.count('class="katex-display"') == 1  # the display formula
    assert page.count('class="katex"') == 2  # it, and the inline one
    assert "\\alpha_{ij}$" not in page and "arithmatex" not in page
    # code cells that scroll sideways can be reached by keyboard
    assert '<div tabindex="0" class="highlight-ipynb' in page
    # a dollar inside code is untouched
    assert re.search(r"price.*?\$5", page)
    # no loader of other hosts' scripts, no empty script, no MathJax configuration
    assert "cdnjs" not in page and '<script src="">' not in page and "x-mathjax-config" not in page
    # JupyterLab's CSS lives in one shared file the page links to: no <style> is left, and
    # the highlighting rules the template printed as a Python list are CSS there
    assert "<style" not in page
    # the copy buttons carry no stray attribute named "," (the template writes one)
    assert page.count("<clipboard-copy ") >= 1 and ',=""' not in page
    links = re.findall(r'<link rel="stylesheet" href="([^"]*jupyter-[0-9a-f]{12}\.css)">', page)
    assert len(links) == 1
    css = (site / "workbooks" / "one" / links[0]).resolve()
    assert css.is_file() and css.stat().st_size > 100_000
    assert "['pre {" not in css.read_text(encoding="utf-8") and ".highlight-ipynb .k {" in css.read_text(encoding="utf-8")
    # the .ipynb is published and linked under the title
    download = re.search(r'class="numbook-download"><a class="md-button" href="([^"]+)" download>', page)
    assert download and (site / "workbooks" / "one" / download[1]).is_file()
    assert page.index("numbook-download") > page.index("</h1>")


def test_bad_tex_in_a_notebook_stops_the_build(tmp_path, caplog):
    notebook = _notebook(["# Workbook\n\nBroken: $\\frac{1}{$ here."], [])
    with pytest.raises((PluginError, Abort)):
        build_site(make_site(tmp_path, notebook))
    assert "bad TeX stops the build" in caplog.text
    assert re.search(r"docs/workbooks/one\.ipynb:\d+: bad TeX", caplog.text)


# --- repeated headings -----------------------------------------------------------------


def test_repeated_headings_get_the_ids_the_contents_link_to(tmp_path):
    notebook = _notebook(["# Workbook", "## One\n\n### Hint", "## Two\n\n### Hint", "## Three\n\n### Hint"], [])
    site = build_site(make_site(tmp_path, notebook))
    page = (site / "workbooks" / "one" / "index.html").read_text(encoding="utf-8")
    ids = re.findall(r'<h3 id="([^"]+)"', page)
    assert ids == ["hint", "hint_1", "hint_2"]
    # each heading's own ¶ link and each entry of the table of contents lead to its heading
    for name in ids:
        assert f'<a class="anchor-link" href="#{name}">' in page
    contents = set(re.findall(r'href="#(hint[^"]*)"', page))
    assert contents == set(ids)


def test_a_cell_whose_source_is_hidden_is_folded(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Workbook", id="title"),
        nbformat.v4.new_code_cell("shown = 1", id="shown"),
        nbformat.v4.new_code_cell("assert secret == 2", id="secret", metadata={"jupyter": {"source_hidden": True}}),
        nbformat.v4.new_code_cell("after = 3", id="after"),
    ]
    page = (build_site(make_site(tmp_path, nbformat.writes(nb))) / "workbooks" / "one" / "index.html").read_text(encoding="utf-8")
    folds = re.findall(r'<details class="success numbook-fold">\n<summary>Hidden code</summary>\n(.*?)\n</details>', page, re.S)
    assert len(folds) == 1
    # the whole cell, and only it, is inside the fold
    assert folds[0].startswith("<div") and 'id="cell-id=secret"' in folds[0] and "secret" in folds[0]
    assert folds[0].count("<div") == folds[0].count("</div>")
    assert "cell-id=shown" not in folds[0] and "cell-id=after" not in folds[0]


# --- mkdocs-jupyter's cache ------------------------------------------------------------


def cache_entries(root: Path) -> list[Path]:
    return sorted((root / "nbcache").glob("*.json"))


@pytest.mark.parametrize("damage", ["truncated", "empty", "binary", "not a page", "rewritten"])
def test_a_damaged_cache_entry_is_dropped_and_rebuilt(tmp_path, caplog, damage):
    root = make_site(tmp_path, _notebook(["# Workbook\n\n## Part\n\nText $x$."], ["print(1)"]))
    first = (build_site(root) / "workbooks" / "one" / "index.html").read_text(encoding="utf-8")
    [entry] = cache_entries(root)
    good = entry.read_bytes()
    assert b"Part" in good
    entry.write_bytes({  # "rewritten": a valid entry that would publish what the notebook does not say
        "truncated": good[: len(good) // 2], "empty": b"", "binary": b"\x00\xff\xfe", "not a page": b'{"toc_tokens": 3}',
        "rewritten": good.replace(b"Part", b"Injected"),
    }[damage])
    caplog.clear()
    # strict, as the book builds: the build repairs the cache by itself, so it does not stop
    second = (build_site(root, strict=True) / "workbooks" / "one" / "index.html").read_text(encoding="utf-8")
    assert second == first and "Injected" not in second
    warnings = [r for r in caplog.records if "damaged mkdocs-jupyter cache entry" in r.getMessage()]
    assert [r.levelname for r in warnings] == ["WARNING"]
    assert entry.name in warnings[0].getMessage() and "\n" not in warnings[0].getMessage()
    # the entry was written again, whole, and the next build reads it without a word
    assert cache_entries(root) == [entry] and entry.read_bytes() == good
    caplog.clear()
    with caplog.at_level("INFO", logger="mkdocs"):
        build_site(root)
    assert "damaged mkdocs-jupyter cache entry" not in caplog.text


# --- the wheel a downloaded notebook installs --------------------------------------------

INSTALL_CELL = 'SITE_WHEEL = ""  # filled in by the build\ntry:\n    import mini\nexcept ModuleNotFoundError:\n    %pip install {SITE_WHEEL}'


def make_wheel_site(tmp_path: Path, notebook: str, *, site_url: str | None = None) -> Path:
    root = make_site(tmp_path, notebook)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "whole-book"\nversion = "1.2.3"\nrequires-python = ">=3.11"\nlicense = "MIT"\n'
        'dependencies = ["numpy>=1.26", "matplotlib>=3.8"]\n',
        encoding="utf-8",
    )
    package = root / "src" / "mini"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text('"""A tiny package."""\nANSWER = 42\n', encoding="utf-8")
    (package / "data" / "table.json").write_text("[1, 2]\n", encoding="utf-8")
    (root / "src" / "other").mkdir()
    (root / "src" / "other" / "__init__.py").write_text("", encoding="utf-8")
    config = (root / "mkdocs.yml").read_text(encoding="utf-8")
    config = config.replace(
        "  - numbook-notebooks\n",
        "  - numbook-notebooks:\n      wheel:\n        name: mini\n        packages: [src/mini]\n"
        "        requires: [numpy]\n        url_variable: SITE_WHEEL\n",
    )
    if site_url:
        config = f"site_url: {site_url}\n" + config
    (root / "mkdocs.yml").write_text(config, encoding="utf-8")
    return root


def published_install_line(site: Path) -> str:
    nb = nbformat.read(site / "workbooks" / "one" / "one.ipynb", as_version=4)
    return next(c for c in nb.cells if c.cell_type == "code").source.splitlines()[0]


def test_the_wheel_holds_the_named_package_and_its_dependencies_only(tmp_path):
    import email
    import zipfile

    site = build_site(make_wheel_site(tmp_path, _notebook(["# Workbook"], [INSTALL_CELL])))
    wheel = site / "wheels" / "mini-1.2.3-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = email.message_from_bytes(archive.read("mini-1.2.3.dist-info/METADATA"))
    assert sorted(n for n in names if not n.startswith("mini-1.2.3.dist-info/")) == ["mini/__init__.py", "mini/data/table.json"]
    # the project's version, Python and licence; of its dependencies only the one named, as pinned there
    assert metadata["Version"] == "1.2.3" and metadata["Requires-Python"] == ">=3.11"
    assert metadata.get_all("Requires-Dist") == ["numpy>=1.26"]
    # the page offers both files
    page = (site / "workbooks" / "one" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../wheels/mini-1.2.3-py3-none-any.whl"' in page
    assert (site / "assets" / "notebooks" / "notebook-download.js").is_file()


def test_the_published_notebook_gets_the_wheel_address_pinned_by_its_hash(tmp_path):
    import hashlib

    notebook = _notebook(["# Workbook", "Back to [the first page](../../index.md), or [the top](#workbook)."],
                         [INSTALL_CELL, "import mini\nprint(mini.ANSWER)"])
    site = build_site(make_wheel_site(tmp_path / "a", notebook))
    wheel = site / "wheels" / "mini-1.2.3-py3-none-any.whl"
    pin = f"#sha256={hashlib.sha256(wheel.read_bytes()).hexdigest()}"
    assert published_install_line(site) == f'SITE_WHEEL = "../../wheels/mini-1.2.3-py3-none-any.whl{pin}"  # filled in by the build'
    site = build_site(make_wheel_site(tmp_path / "b", notebook, site_url="https://example.org/book/"))
    assert published_install_line(site) == f'SITE_WHEEL = "https://example.org/book/wheels/mini-1.2.3-py3-none-any.whl{pin}"  # filled in by the build'
    # with an address, the notebook's relative links lead to that site too; in-page ones stay
    published = nbformat.read(site / "workbooks" / "one" / "one.ipynb", as_version=4)
    text = next(c for c in published.cells if c.cell_type == "markdown" and "first page" in c.source).source
    assert "[the first page](https://example.org/book/index.md)" in text and "[the top](#workbook)" in text
    # the download button's address carries the same pin
    page = (site / "workbooks" / "one" / "index.html").read_text(encoding="utf-8")
    assert f'data-numbook-wheel="../../wheels/mini-1.2.3-py3-none-any.whl{pin}"' in page
    # the source notebook is left as it was
    assert (tmp_path / "b" / "docs" / "workbooks" / "one.ipynb").read_text(encoding="utf-8") == notebook


def test_a_notebook_that_imports_the_package_without_an_install_cell_stops_the_build(tmp_path, caplog):
    notebook = _notebook(["# Workbook"], ["from mini import ANSWER"])
    with pytest.raises((PluginError, Abort)):
        build_site(make_wheel_site(tmp_path, notebook))
    assert re.search(r"docs/workbooks/one\.ipynb: imports mini but has no install cell", caplog.text)


def test_the_wheel_is_the_same_bytes_whatever_the_files_dates(tmp_path, monkeypatch):
    import os

    from booksite.wheel import build_wheel

    root = make_wheel_site(tmp_path, _notebook(["# Workbook"], []))
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    first = build_wheel(root, name="mini", packages=["src/mini"], requires=["numpy"])
    for path in (root / "src" / "mini").rglob("*"):
        os.utime(path, (1_000_000_000, 1_000_000_000))
    second = build_wheel(root, name="mini", packages=["src/mini"], requires=["numpy"])
    assert first.content == second.content and first.filename == second.filename


def test_a_package_file_changed_between_two_builds_is_in_the_next_wheel(tmp_path, monkeypatch):
    """`serve` builds the wheel at each save in one process: a change to the package reaches it."""
    import io
    import zipfile

    from booksite.wheel import build_wheel

    root = make_wheel_site(tmp_path, _notebook(["# Workbook"], []))
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    module = next((root / "src" / "mini").glob("*.py"))

    def packed() -> str:
        wheel = build_wheel(root, name="mini", packages=["src/mini"], requires=["numpy"])
        with zipfile.ZipFile(io.BytesIO(wheel.content)) as z:
            return z.read(f"mini/{module.name}").decode()

    assert "CHANGED = 1" not in packed()
    module.write_text(module.read_text() + "\nCHANGED = 1\n")
    assert "CHANGED = 1" in packed()


def test_under_serve_a_missing_install_cell_is_shown_on_the_page(tmp_path, caplog):
    root = make_wheel_site(tmp_path, _notebook(["# Workbook"], ["from mini import ANSWER"]))
    config = load_config(str(root / "mkdocs.yml"), site_dir=str(root / "site"), strict=True)
    config.plugins.on_startup(command="serve", dirty=False)
    build(config)  # the strict preview rebuild completes
    page = (root / "site" / "workbooks" / "one" / "index.html").read_text(encoding="utf-8")
    assert 'class="admonition failure numbook-problems"' in page and "has no install cell" in page
    assert re.search(r"docs/workbooks/one\.ipynb: imports mini but has no install cell", caplog.text)
