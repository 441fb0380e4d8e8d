"""Every environment variable the book's code reads is named in one place.

A variable a page's code reads changes its outputs as surely as a file it opens does, but no
audit hook sees it: so the project names them in numbook's ``env`` option (mkdocs.yml), whose
values are inputs of every page, and numbook names its own (`numbook.inputs.NUMBOOK_VARIABLES`,
none of which shapes a page's outputs). This test reads every Python file under ``src/`` and
every ``python exec`` block under ``docs/`` and fails on a variable read that neither names,
or on a read whose name it cannot tell (a name built at run time).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from numbook.inputs import NUMBOOK_VARIABLES, Reads
from numbook.parse import parse_page

ROOT = Path(__file__).resolve().parents[2]


def declared_env() -> set[str]:
    from mkdocs.utils.yaml import yaml_load

    config = yaml_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "numbook" in plugin:
            return set(plugin["numbook"].get("env", []))
    raise AssertionError("mkdocs.yml has no numbook plugin")


def _strings(node: ast.AST, constants: dict[str, list[str]]) -> list[str] | None:
    """The string(s) an expression stands for: a literal, a tuple of them, or a name bound to one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List)):
        parts = [_strings(e, constants) for e in node.elts]
        return None if any(p is None for p in parts) else [s for p in parts for s in p]
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ")


def environment_reads(source: str, where: str) -> list[tuple[str, str | None]]:
    """(where, variable) for each read of ``os.environ`` / ``os.getenv`` in ``source``; the
    variable is None when the code does not say which."""
    tree = ast.parse(source)
    constants: dict[str, list[str]] = {}
    for node in ast.walk(tree):  # names bound to strings, and loop variables over them
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found = _strings(node.value, constants)
            if found is not None:
                constants[node.targets[0].id] = found
        elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            found = _strings(node.iter, constants)
            if found is not None:
                constants[node.target.id] = found
    reads: list[tuple[str, str | None]] = []

    def note(node: ast.AST, name: ast.AST | None) -> None:
        names = _strings(name, constants) if name is not None else None
        for n in names or [None]:
            reads.append((f"{where}:{node.lineno}", n))

    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_environ(node.value):
            note(node, node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if _is_environ(f.value) and f.attr in ("get", "setdefault", "pop"):
                note(node, node.args[0] if node.args else None)
            elif f.attr == "getenv" and isinstance(f.value, ast.Name) and f.value.id == "os":
                note(node, node.args[0] if node.args else None)
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            note(node, node.left)
    return reads


def project_reads() -> list[tuple[str, str | None]]:
    reads = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        reads += environment_reads(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    for path in sorted((ROOT / "docs").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        for cell in parse_page(text, str(path), 0).code_cells:
            where = f"{path.relative_to(ROOT)}:{cell.fence_line}"
            reads += [(where, name) for _, name in environment_reads(cell.code, where)]
    return reads


def _declared_reader() -> set[str]:
    """The lines of `numbook.inputs.environment_values`, which reads the declared variables."""
    import inspect

    from numbook import inputs

    lines, first = inspect.getsourcelines(inputs.environment_values)
    return {f"src/numbook/inputs.py:{n}" for n in range(first, first + len(lines))}


def test_every_variable_the_code_reads_is_named_in_one_place():
    from bookpdf.plugin import VARIABLES as BOOKPDF_VARIABLES
    from booksite import VARIABLES as BOOKSITE_VARIABLES

    declared = declared_env()
    undeclared = []
    exempt = _declared_reader()
    for where, name in project_reads():
        if where in exempt:
            continue
        if where.startswith("src/numbook/"):
            named = NUMBOOK_VARIABLES
        elif where.startswith("src/bookpdf/"):  # a host plugin's own, read where pages are themed
            named = BOOKPDF_VARIABLES
        elif where.startswith("src/booksite/"):
            named = BOOKSITE_VARIABLES
        else:
            named = declared
        if name is None or name not in named:
            undeclared.append(f"{where}: {name or 'a variable whose name the code builds'}")
    assert undeclared == [], (
        "environment variables read but not named in numbook's `env` option of mkdocs.yml "
        "(numbook's own: numbook.inputs.NUMBOOK_VARIABLES; bookpdf's: bookpdf.plugin.VARIABLES; "
        "booksite's: booksite.VARIABLES):\n"
        + "\n".join(undeclared))


def test_every_named_variable_is_read():
    read = {name for _, name in project_reads()}
    assert declared_env() - read == set()
    assert set(NUMBOOK_VARIABLES) - read == set()
    from bookpdf.plugin import VARIABLES as BOOKPDF_VARIABLES

    assert set(BOOKPDF_VARIABLES) - read == set()
    from booksite import VARIABLES as BOOKSITE_VARIABLES

    assert set(BOOKSITE_VARIABLES) - read == set()
    assert "BOOK_MPLSTYLE" in declared_env()  # the figures' style sheet (bookfigures/style.py)


@pytest.mark.parametrize("code, expected", [
    ('import os\nos.environ.get("A")', ["A"]),
    ('import os\nos.environ["B"]', ["B"]),
    ('import os\nos.getenv("C", "x")', ["C"]),
    ('import os\n"D" in os.environ', ["D"]),
    ('import os\nNAME = "E"\nos.environ.get(NAME)', ["E"]),
    ('import os\nVARS = ("F", "G")\nfor v in VARS:\n    os.environ.setdefault(v, "1")', ["F", "G"]),
    ('from os import environ\nenviron.get("H")', ["H"]),
    ('import os\nos.environ.get("I" + str(1))', [None]),
])
def test_the_scanner_finds_each_form_of_read(code, expected):
    assert [name for _, name in environment_reads(code, "x.py")] == expected


def test_a_file_is_hashed_when_it_is_read_and_a_later_change_is_seen(tmp_path):
    from numbook.inputs import recording

    (tmp_path / "data.txt").write_text("one")
    (tmp_path / "out").mkdir()
    with recording(Reads(str(tmp_path), [str(tmp_path / "out")])) as reads:
        (tmp_path / "data.txt").read_text()
        (tmp_path / "written.txt").write_text("an output, not an input")
        (tmp_path / "out" / "skipped.txt").write_text("x")
        (tmp_path / "out" / "skipped.txt").read_text()
    assert list(reads.relative()) == ["data.txt"]
    assert reads.changed() == []
    (tmp_path / "data.txt").write_text("two")
    assert reads.changed() == ["data.txt"]
