"""Home's reading times rest on counts of old pages: recount them from the commit they name.

`docs/includes/reading-calibration.yml` stores, for each set of pages readers timed, what
`numbook.reading` counted in their main lines at that commit. If the counting rules change,
the stored counts no longer describe those pages, and the allowances fitted to them (on Home)
need fitting again: this test says so.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from numbook.reading import Tally, reading_length

ROOT = Path(__file__).resolve().parents[2]
CALIBRATION = yaml.safe_load((ROOT / "docs" / "includes" / "reading-calibration.yml").read_text(encoding="utf-8"))


def _at_commit(commit: str, page: str) -> str:
    try:
        return subprocess.run(["git", "show", f"{commit}:docs/{page}"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"commit {commit} is not in this clone (a shallow clone?)")


@pytest.mark.parametrize("timed", CALIBRATION["passes"], ids=lambda t: "+".join(t["pages"]))
def test_the_stored_counts_are_what_the_counter_finds_in_the_timed_pages(timed):
    counted = Tally()
    for page in timed["pages"]:
        counted += reading_length(_at_commit(CALIBRATION["commit"], page)).main
    assert counted == Tally(**timed["main"]), "the counting rules changed: refit Home's allowances"


def test_each_timed_pass_is_a_range_of_minutes():
    for timed in CALIBRATION["passes"]:
        low, high = timed["minutes"]
        assert 0 < low <= high
