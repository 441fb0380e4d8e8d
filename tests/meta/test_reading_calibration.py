"""Home's reading times rest on counts of old pages: recount them from the commits they name.

`docs/includes/reading-calibration.yml` stores, for each set of pages readers timed, what
`numbook.reading` counted in their main lines at the commit of that round. If the counting rules change,
the stored counts no longer describe those pages, and the allowances fitted to them (on Home)
need fitting again: this test says so.
"""

from __future__ import annotations

import datetime
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


PASSES = [(r["commit"], timed) for r in CALIBRATION["rounds"] for timed in r["passes"]]


@pytest.mark.parametrize(("commit", "timed"), PASSES, ids=lambda x: x if isinstance(x, str) else "+".join(x["pages"]))
def test_the_stored_counts_are_what_the_counter_finds_in_the_timed_pages(commit, timed):
    counted = Tally()
    for page in timed["pages"]:
        counted += reading_length(_at_commit(commit, page)).main
    assert counted == Tally(**timed["main"]), "the counting rules changed: refit Home's allowances"


def test_each_timed_pass_is_a_range_of_minutes_and_each_round_is_dated():
    for _, timed in PASSES:
        low, high = timed["minutes"]
        assert 0 < low <= high
    assert all(isinstance(r["date"], datetime.date) for r in CALIBRATION["rounds"])


def test_each_lesson_has_a_count_and_a_timing():
    for lesson in CALIBRATION["lessons"].values():
        Tally(**lesson["counted"])  # only the fields a tally has
        assert lesson["timed"] and all(m > 0 for m in lesson["timed"])
