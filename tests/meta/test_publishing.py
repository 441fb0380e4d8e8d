"""The release machinery: the GitHub Pages workflow and the Read the Docs configuration
point at what exists, and the version check the workflow runs works."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_the_workflow_tests_then_deploys_the_tagged_edition_with_mike():
    workflow = yaml.safe_load((ROOT / ".github/workflows/publish.yml").read_text(encoding="utf-8"))
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as true
    assert triggers == {"push": {"tags": ["v*"]}}
    assert workflow["permissions"] == {"contents": "write"}
    steps = [s.get("run", "") for s in workflow["jobs"]["edition"]["steps"]]
    test_step = next(k for k, run in enumerate(steps) if "bash .ci/run" in run)
    deploy_step = next(k for k, run in enumerate(steps) if "mike deploy --push --update-aliases" in run)
    assert test_step < deploy_step
    assert '"$VERSION" latest' in steps[deploy_step] and "mike set-default --push latest" in steps[deploy_step]
    assert any("python -m booksite.cite --version" in run for run in steps[:test_step])


def test_the_version_check_prints_the_edition_named_in_the_citation_file():
    done = subprocess.run([sys.executable, "-m", "booksite.cite", "--version"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert done.stdout.strip() == str(cff["version"])


def test_read_the_docs_builds_the_locked_site():
    config = yaml.safe_load((ROOT / ".readthedocs.yaml").read_text(encoding="utf-8"))
    assert config["version"] == 2
    assert (ROOT / config["mkdocs"]["configuration"]).is_file()
    install = " ".join(config["build"]["jobs"]["install"])
    assert "uv sync --frozen" in install and "READTHEDOCS_VIRTUALENV_PATH" in install
