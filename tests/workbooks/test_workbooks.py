"""Every workbook runs top to bottom against the current engine, and is stored clean.

The notebooks' own `assert` cells check what each exercise claims, so running them is a
test of the claims, not only of the code.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from mkdocs.config import load_config
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
WORKBOOKS = sorted((ROOT / "docs" / "workbooks").glob("*.ipynb"))
EXERCISE = re.compile(r"^#{2,3} Exercise \d+", re.M)
# A workbook shared by several pages of one part groups its exercises under "## Sections …" headings.
GROUP = re.compile(r"^## Sections ", re.M)


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def test_there_is_a_workbook_per_written_part():
    names = {p.name for p in WORKBOOKS}
    assert {"part1-workbook.ipynb", "part2-workbook.ipynb", "part3-workbook.ipynb", "part4-workbook.ipynb"} <= names


def test_every_workbook_is_in_the_navigation():
    config = load_config(str(ROOT / "mkdocs.yml"))
    listed = set(re.findall(r"workbooks/[\w.-]+\.ipynb", repr(config["nav"])))
    assert listed == {f"workbooks/{p.name}" for p in WORKBOOKS}


@pytest.mark.parametrize("path", WORKBOOKS, ids=lambda p: p.stem)
def test_workbook_is_stored_without_outputs(path):
    nb = read(path)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    for cell in nb.cells:
        assert cell.get("id"), "every cell has a stable id"
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"cell {cell.id} holds output"


@pytest.mark.parametrize("path", WORKBOOKS, ids=lambda p: p.stem)
def test_workbook_has_one_title_and_checked_exercises(path):
    nb = read(path)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert len(re.findall(r"^# ", markdown, re.M)) == 1
    # cells between one exercise heading and the next
    sections: list[list[nbformat.NotebookNode]] = []
    for cell in nb.cells:
        if cell.cell_type == "markdown" and EXERCISE.search(cell.source):
            sections.append([])
        elif sections:
            sections[-1].append(cell)
    groups = max(1, len(GROUP.findall(markdown)))
    assert 3 <= len(sections) <= 5 * groups
    for k, cells in enumerate(sections, start=1):
        code = "\n".join(c.source for c in cells if c.cell_type == "code")
        assert re.search(r"^\s*assert ", code, re.M), f"exercise {k} checks nothing"


@pytest.mark.parametrize("path", WORKBOOKS, ids=lambda p: p.stem)
def test_workbook_runs_top_to_bottom(path, tmp_path):
    nb = read(path)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    printed = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "stream"]
    assert printed, "the exercises print what they compute"
