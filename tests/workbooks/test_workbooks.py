"""Every workbook runs top to bottom against the current engine, and is stored clean.

The notebooks' own `assert` cells check what each exercise claims, so running them is a
test of the claims, not only of the code. Two conventions hold for every workbook, so that
a new one cannot forget them:

* its first code cell is the install cell (copy it unchanged from any workbook): outside a
  checkout it installs the engine from the site, whose build writes the wheel's address in;
* each exercise's answer, *What to look for*, is folded (a ``<details>`` block with that
  summary) and comes after the exercise's code, so a reader predicts before reading it; its
  cell of checks, which would give the answer away too, has its source hidden
  (``jupyter.source_hidden``: collapsed in JupyterLab, folded on the site).
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
ANSWER = re.compile(r"\A<details>\n<summary>What to look for</summary>\n\n(?P<body>.+)\n\n</details>\Z", re.S)


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def exercises(nb: nbformat.NotebookNode) -> list[list[nbformat.NotebookNode]]:
    """The cells of each exercise, its heading first, up to the next ``##`` or ``###`` heading."""
    sections: list[list[nbformat.NotebookNode]] = []
    inside = False
    for cell in nb.cells:
        if cell.cell_type == "markdown" and re.match(r"#{2,3} ", cell.source):
            inside = bool(EXERCISE.match(cell.source))
            if inside:
                sections.append([cell])
        elif inside:
            sections[-1].append(cell)
    return sections


def install_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if c.cell_type == "code")


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
    sections = exercises(nb)
    groups = max(1, len(GROUP.findall(markdown)))
    assert 3 <= len(sections) <= 5 * groups
    for k, cells in enumerate(sections, start=1):
        code = "\n".join(c.source for c in cells if c.cell_type == "code")
        assert re.search(r"^\s*assert ", code, re.M), f"exercise {k} checks nothing"


@pytest.mark.parametrize("path", WORKBOOKS, ids=lambda p: p.stem)
def test_first_code_cell_installs_the_engine_when_it_is_missing(path):
    wheel = load_config(str(ROOT / "mkdocs.yml")).plugins["numbook-notebooks"].config.wheel
    package = Path(wheel.packages[0]).name
    code = [line.split("#")[0].rstrip() for line in install_cell(read(path)).source.splitlines()]
    code = [line for line in code if line]
    # the line the site's build fills in with the wheel's address: empty in the source
    assert code[0] == f'{wheel.url_variable} = ""'
    # import; only if that fails, install from that address with %pip (the kernel's own pip)
    assert code[1:4] == ["try:", f"    import {package}", "except ModuleNotFoundError:"]
    assert code[4] == f"    %pip install --quiet {{{wheel.url_variable}}}"
    assert code[-1] == f"    import {package}"


def test_every_workbook_has_the_same_install_cell():
    cells = {install_cell(read(path)).source for path in WORKBOOKS}
    assert len(cells) == 1, "copy the install cell of an existing workbook unchanged"


@pytest.mark.parametrize("path", WORKBOOKS, ids=lambda p: p.stem)
def test_each_answer_is_folded_after_the_prediction(path):
    nb = read(path)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert not re.search(r"^#+ *What to look for", markdown, re.M | re.I), "an answer is a heading, not folded"
    for cells in exercises(nb):
        heading = cells[0].source.splitlines()[0]
        assert "**Predict first:**" in cells[0].source, f"{heading}: no prediction is asked for"
        answers = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and "What to look for" in c.source]
        assert len(answers) == 1, f"{heading}: one folded answer per exercise"
        match = ANSWER.match(cells[answers[0]].source)
        # blank lines around the text: Jupyter and nbconvert render Markdown inside <details> only then
        assert match, f"{heading}: write the answer as <details>, <summary>What to look for</summary>, a blank line, the text, a blank line, </details>"
        assert not re.search(r"^#", match["body"], re.M), f"{heading}: no heading inside the fold (the contents would link to it)"
        assert any(c.cell_type == "code" for c in cells[: answers[0]]), f"{heading}: the answer comes after the code it explains"
        for k, cell in enumerate(cells):
            if cell.cell_type == "code" and re.search(r"^\s*assert ", cell.source, re.M):
                assert k > answers[0], f"{heading}: cell {cell.id}: the checks come after the answer"
                assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, f"{heading}: cell {cell.id}: hide the checks' source"


@pytest.mark.parametrize("path", WORKBOOKS, ids=lambda p: p.stem)
def test_workbook_runs_top_to_bottom(path, tmp_path):
    nb = read(path)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    printed = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "stream"]
    assert printed, "the exercises print what they compute"
