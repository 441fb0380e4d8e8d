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

from numbook.notebooks import stylesheet_name, wrap_math

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


def build_site(root: Path) -> Path:
    config = load_config(str(root / "mkdocs.yml"), site_dir=str(root / "site"))
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
    # JupyterLab's CSS lives in one shared file the page links to
    assert '<style type="text/css">' not in page
    links = re.findall(r'<link rel="stylesheet" href="([^"]*jupyter-[0-9a-f]{12}\.css)">', page)
    assert len(links) == 1
    css = (site / "workbooks" / "one" / links[0]).resolve()
    assert css.is_file() and css.stat().st_size > 100_000
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
