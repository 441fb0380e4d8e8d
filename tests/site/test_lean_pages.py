"""The built pages carry no code-token spans that the theme paints like plain code text."""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.config import load_config

from .conftest import ROOT


def test_unwrapped_token_classes_are_drawn_as_plain_code_text(built_site: Path):
    # numbook-lean drops these spans: that is invisible only while the theme's CSS agrees
    classes = load_config(str(ROOT / "mkdocs.yml")).plugins["numbook-lean"].config.plain_classes
    # (Material's stylesheets, JupyterLab's on notebook pages, and the book's own)
    sheets = [*(built_site / "assets" / "stylesheets").glob("*.css"), *(built_site / "assets" / "notebooks").glob("*.css")]
    css = "\n".join(p.read_text(encoding="utf-8") for p in sheets)
    book = (ROOT / "docs" / "stylesheets" / "book.css").read_text(encoding="utf-8")
    css += book
    plain = {"var(--md-code-hl-name-color)", "var(--jp-mirror-editor-variable-color)"}
    for name in classes:
        rules = re.findall(rf"\.highlight(?:-ipynb)? \.{name}(?![\w-])[^{{]*{{([^}}]*)}}", css)
        colours = {value.strip() for rule in rules for value in re.findall(r"color:([^;}]+)", rule)}
        assert colours <= plain, f".{name}: {colours}"
    # Material's name colour is its code colour; the book's stylesheet makes JupyterLab's the same
    for variable, sheet in (("--md-code-hl-name-color", css), ("--jp-mirror-editor-variable-color", book)):
        values = {v.strip() for v in re.findall(rf"{variable}:([^;}}]+)", sheet)}
        assert values == {"var(--md-code-fg-color)"}, f"{variable}: {values}"


def test_no_page_keeps_a_plain_token_span(built_site: Path):
    classes = load_config(str(ROOT / "mkdocs.yml")).plugins["numbook-lean"].config.plain_classes
    span = re.compile(rf'<span class="(?:{"|".join(classes)})">')
    offenders = [str(p.relative_to(built_site)) for p in built_site.rglob("*.html") if span.search(p.read_text(encoding="utf-8"))]
    assert not offenders
    # and code is still highlighted
    part = (built_site / "part2-one-head" / "index.html").read_text(encoding="utf-8")
    assert '<span class="o">' in part and '<span class="s2">' in part
