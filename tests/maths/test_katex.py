"""The build-time maths plugin: formulas become KaTeX HTML, bad TeX stops the build."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort, PluginError

from booksite.katex import load_macros, macro_preamble
from tests.markup import mathml_problems

MACROS = {r"\vq": r"\textcolor{#d55e00}{\boldsymbol{#1}}"}
SHADES = {"#d55e00": {"light": "#a04500", "dark": "#f08a3c"}}


def make_site(tmp_path: Path, pages: dict[str, str]) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in pages.items():
        (docs / name).write_text(textwrap.dedent(text), encoding="utf-8")
    (tmp_path / "macros_for_test.py").write_text(f"MACROS = {MACROS!r}\nSHADES = {SHADES!r}\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        textwrap.dedent(
            """
            site_name: maths
            plugins:
              - numbook-katex:
                  macros: macros_for_test:MACROS
                  colors: macros_for_test:SHADES
            markdown_extensions:
              - pymdownx.arithmatex:
                  generic: true
            """
        ),
        encoding="utf-8",
    )
    return tmp_path


def build_site(root: Path, monkeypatch, *, command: str = "build", strict: bool = False) -> Path:
    monkeypatch.syspath_prepend(str(root))
    config = load_config(str(root / "mkdocs.yml"), site_dir=str(root / "site"), strict=strict)
    config.plugins.on_startup(command=command, dirty=False)
    build(config)
    return root / "site"


def test_formulas_render_to_katex_with_shared_macros(tmp_path, monkeypatch):
    root = make_site(tmp_path, {"index.md": r"""
        # Page
        The query $\vq{q}_2$ and the fraction

        $$
        \frac{1}{\sqrt{d_k}} < 1
        $$
        """})
    html = (build_site(root, monkeypatch) / "index.html").read_text()
    assert 'class="arithmatex"' not in html
    assert html.count('class="katex"') == 2
    assert 'class="katex-display"' in html
    # the macro's colour reached the output as a variable whose shade follows the colour scheme
    assert "color:var(--katex-color-0)" in html and "color:#d55e00" not in html
    assert "\\vq" not in html.split("<annotation", 1)[0]  # no raw macro in the visible HTML
    site = root / "site"
    assert (site / "assets/katex/katex.min.css").exists()
    assert list((site / "assets/katex/fonts").glob("*.woff2"))
    assert "assets/katex/katex.min.css" in html
    colors = (site / "assets/katex/colors.css").read_text()
    assert ":root{--katex-color-0:#a04500;}" in colors
    assert '[data-md-color-scheme="slate"]{--katex-color-0:#f08a3c;}' in colors


def test_formulas_stay_out_of_the_search_index_and_its_parser(tmp_path, monkeypatch):
    """The search plugin never reads a formula (it waits as a comment until search has read
    the page), so none of KaTeX's text reaches the index, while the page shows it."""
    import json

    root = make_site(tmp_path, {"index.md": r"""
        # Page
        The width $d_k$ of the keys, and a sum:

        $$\sum_j w_j = 1$$

        Words after.
        """})
    yml = root / "mkdocs.yml"
    yml.write_text(yml.read_text().replace("plugins:\n", "plugins:\n  - search\n"), encoding="utf-8")
    site = build_site(root, monkeypatch)
    html = (site / "index.html").read_text()
    assert html.count('class="katex"') == 2 and "numbook-katex" not in html
    index = json.loads((site / "search/search_index.json").read_text())
    text = " ".join(doc["text"] for doc in index["docs"])
    assert "The width" in text and "Words after." in text
    assert "\u200b" not in text and "d_k" not in text and "∑" not in text


def test_a_labelled_formula_carries_its_id_and_a_link_to_itself(tmp_path, monkeypatch):
    root = make_site(tmp_path, {"index.md": r"""
        # Page
        $$\tag{2.1}\label{eq-scale} \frac{1}{\sqrt{d_k}} < 1$$

        $$x + 1$$
        """, "other.md": "# Other\n\nSee [the bound](index.md#eq-scale).\n"})
    # strict: MkDocs checks the link to the formula's id, which the plugin registered
    html = (build_site(root, monkeypatch, strict=True) / "index.html").read_text()
    labelled = re.search(r'<div class="numbook-equation" id="eq-scale">(.*?)</div>', html, re.S).group(1)
    assert 'class="katex-display"' in labelled and '<span class="tag">' in labelled  # KaTeX shows (2.1)
    assert labelled.endswith('<a class="headerlink" href="#eq-scale" title="Link to this equation">&para;</a>')
    assert "\\label" not in html.split("<annotation", 1)[0]
    assert html.count('class="numbook-equation"') == 1  # the unlabelled formula has no id


def test_every_bad_formula_of_every_page_stops_the_build(tmp_path, monkeypatch, caplog):
    root = make_site(tmp_path, {
        "index.md": "# One\n\nfine $x$\n\nbroken $\\frac{a$ here\n",
        "two.md": "# Two\n\n\n$\\undefinedmacro{y}$\n",
    })
    with pytest.raises(Abort):
        build_site(root, monkeypatch)
    message = caplog.text
    assert "bad TeX stops the build" in message
    assert "docs/index.md:5" in message
    assert "docs/two.md:4" in message
    assert "Undefined control sequence: \\undefinedmacro at character 1 of the formula" in message
    assert "boldsymbol" not in message  # the shared macros never leak into the author's error


def test_serve_shows_bad_formulas_on_the_page_and_keeps_going(tmp_path, monkeypatch, caplog):
    root = make_site(tmp_path, {"index.md": "# One\n\nfine $x$, broken $\\frac{a_b$ here\n\n$$\n\\sqrt{x\n$$\n"})
    html = (build_site(root, monkeypatch, command="serve", strict=True) / "index.html").read_text()
    # Each bad formula is marked where it was: in the sentence, and as a box for display maths.
    assert ('<code class="numbook-error" id="numbook-tex-problem-1">docs/index.md:3: bad TeX: '
            "Unexpected end of input") in html
    assert '<div class="admonition failure numbook-error" id="numbook-tex-problem-2">' in html
    assert '<p class="admonition-title">Error at docs/index.md:6</p>' in html
    # The summary under the title lists both, with the formula whose box is not on the page.
    summary = html.split('<div class="admonition failure numbook-problems" role="alert">', 1)[1]
    assert html.index("</h1>") < html.index("numbook-problems") < html.index("numbook-tex-problem-1")
    assert "2 bad formulas on this page" in summary
    assert '<a href="#numbook-tex-problem-1">docs/index.md:3</a>' in summary
    assert "<pre><code>\\frac{a_b</code></pre>" in summary
    assert html.count('class="katex"') == 1  # the good formula still renders
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("docs/index.md:3: bad TeX" in m for m in errors)
    assert any("docs/index.md:6: bad TeX" in m for m in errors)


def test_hex_colours_are_escaped_but_arguments_kept():
    preamble = macro_preamble(MACROS)
    assert preamble == r"\def\vq#1{\textcolor{##d55e00}{\boldsymbol{#1}}}"


def test_missing_macro_table_is_a_clear_error():
    with pytest.raises(PluginError, match="cannot load macros"):
        load_macros("no_such_module_anywhere:MACROS")


def test_coloured_bold_symbols_give_valid_mathml_and_the_formulas_own_tex(tmp_path, monkeypatch):
    root = make_site(tmp_path, {"index.md": r"""
        # Page
        The query $\vq{q_i}$ and $\vq{\alpha_{ij}}$, against the plain $q_i$.
        """})
    html = (build_site(root, monkeypatch) / "index.html").read_text()
    assert mathml_problems(html) == []
    assert "<mrow><msub><mi mathvariant=\"bold-italic\">q</mi>" in html
    annotations = re.findall(r'<annotation encoding="application/x-tex">(.*?)</annotation>', html, re.S)
    assert annotations == [r"\vq{q_i}", r"\vq{\alpha_{ij}}", "q_i"]  # no macro preamble


def test_the_problem_finder_sees_what_katex_writes():
    from booksite.katex import render

    raw = render(r"\boldsymbol{e_i}", False, "")
    assert mathml_problems(raw) and "<mi> holds <msub>" in mathml_problems(raw)[0]
