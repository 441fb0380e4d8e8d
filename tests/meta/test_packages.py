"""The packages depend one way: numbook (the block-running core and its hosts) imports none of
the book's other packages, and booksite's plugins use numbook only for its problem boxes and
signed stored files, never the machinery that runs blocks."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def imports(package: str) -> list[tuple[str, str]]:
    """(file, imported module) for every import in the package, relative ones resolved."""
    found = []
    for path in sorted((SRC / package).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.append((path.name, f"{package}.{node.module}" if node.level else node.module))
            elif isinstance(node, ast.Import):
                found += [(path.name, alias.name) for alias in node.names]
    return found


def test_numbook_imports_none_of_the_books_other_packages():
    others = {"booksite", "bookpdf", "bookfigures", "tinyformer"}
    assert [(f, m) for f, m in imports("numbook") if m.split(".")[0] in others] == []


def test_the_site_plugins_use_no_block_running_machinery():
    used = {m for _, m in imports("booksite") if m.split(".")[0] == "numbook"}
    assert used <= {"numbook.preview", "numbook.render", "numbook.stored"}, used
