"""A workbook downloaded from the served site runs in a fresh environment, outside the checkout.

This is what a reader does: open the workbook's page, press the download button, and run the
notebook in a Python that has never seen the book (here: a new virtual environment in a
temporary folder with only NumPy, ipykernel and pip). The engine is not importable there; the
workbook's first code cell must install it, from the site that served the page, and every
exercise's checks must then pass.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from .conftest import ROOT, require_chromium

WORKBOOKS = sorted(p.stem for p in (ROOT / "docs" / "workbooks").glob("*.ipynb"))
KERNEL = "outside-the-checkout"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def uv(*args: str) -> None:
    """Run uv, from its cache when it can (no network needed on a machine that ran `uv sync`)."""
    for extra in (["--offline"], []):
        done = subprocess.run(["uv", *args, *extra], capture_output=True, text=True)
        if done.returncode == 0:
            return
    raise AssertionError(f"uv {' '.join(args)} failed:\n{done.stderr}")


def python_can_import(python: Path, module: str, cwd: Path) -> bool:
    return subprocess.run([str(python), "-c", f"import {module}"], cwd=cwd, capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment outside the checkout with NumPy, ipykernel and pip, and a kernel for it."""
    if shutil.which("uv") is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but uv is not on PATH")
        pytest.skip("needs uv")
    home = tmp_path_factory.mktemp("outside")
    assert ROOT not in home.parents
    venv = home / "venv"
    # pip (--seed) because the install cell uses %pip, as JupyterLab, VS Code and Colab provide it;
    # NumPy and ipykernel at the versions the book is tested with, so uv's cache has them.
    uv("venv", "--quiet", "--clear", "--seed", "--python", sys.executable, str(venv))  # --clear: a failed --offline try may leave one
    python = venv / "bin" / "python"
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in ("numpy", "ipykernel")]
    uv("pip", "install", "--quiet", "--python", str(python), *pins)
    kernels = home / "jupyter" / "kernels" / KERNEL
    kernels.mkdir(parents=True)
    spec = {"argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": KERNEL, "language": "python"}
    (kernels / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    return python


def download(browser, url: str, into: Path) -> Path:
    """Press the page's download button, as a reader would, and keep the file."""
    page = browser.new_page()
    try:
        page.goto(url)
        with page.expect_download() as pressed:
            page.click(".numbook-download a[data-numbook-wheel]")
        path = into / pressed.value.suggested_filename
        pressed.value.save_as(path)
        return path
    finally:
        page.close()


@pytest.mark.parametrize("workbook", WORKBOOKS)
def test_downloaded_workbook_installs_the_engine_and_runs(workbook, served_site, browser, fresh_python, tmp_path, monkeypatch):
    require_chromium()
    work = tmp_path / "work"  # the reader's folder, nowhere near the checkout
    work.mkdir()
    subprocess.run(["uv", "pip", "uninstall", "--quiet", "--python", str(fresh_python), "tinyformer"], capture_output=True)
    assert not python_can_import(fresh_python, "tinyformer", work), "the fresh environment must start without the engine"

    path = download(browser, f"{served_site}/workbooks/{workbook}/", work)
    assert path.name == f"{workbook}.ipynb"
    nb = nbformat.read(path, as_version=4)
    install = next(c for c in nb.cells if c.cell_type == "code")
    # the download wrote in the wheel's address as the serving site sees it
    assert f'ENGINE_WHEEL = "{served_site}/wheels/tinyformer-' in install.source

    monkeypatch.setenv("JUPYTER_PATH", str(fresh_python.parents[2] / "jupyter"))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # the engine comes from the served site, nothing from an index
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    client = NotebookClient(nb, timeout=300, kernel_name=KERNEL, resources={"metadata": {"path": str(work)}})
    client.execute()

    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    assert python_can_import(fresh_python, "tinyformer", work)
    where = subprocess.run(
        [str(fresh_python), "-c", "import tinyformer; print(tinyformer.__file__)"], cwd=work, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert Path(where).is_relative_to(fresh_python.parents[1]), f"tinyformer was imported from {where}"
