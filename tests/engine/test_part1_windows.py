"""The record of Part 1's MLP runs across window lengths and data sizes belongs to today's settings
and names, and its script reproduces a run."""

from __future__ import annotations

import numpy as np
import pytest

from tinyformer import data
from tinyformer.fit import part1, part1_windows
from tinyformer.models import char_mlp


@pytest.fixture(scope="module")
def stored() -> dict:
    return part1_windows.load()


def test_the_record_belongs_to_the_current_settings_and_names(stored):
    assert part1_windows.belongs_to_current_settings(stored)
    assert stored["settings"] == part1.SETTINGS
    changed = {**stored, "settings": {**stored["settings"], "lr": 0.5}}
    assert not part1_windows.belongs_to_current_settings(changed)
    other_names = {**stored, "names": {**stored["names"], "heldout": part1_windows.fingerprint(["ava"])}}
    assert not part1_windows.belongs_to_current_settings(other_names)


def test_every_window_and_data_size_has_one_run(stored):
    train = data.train_heldout_split()[0]
    runs = {(r["window"], r["one_in"]): r for r in stored["runs"]}
    assert set(runs) == {(w, k) for w in part1_windows.WINDOWS for k in part1_windows.ONE_IN}
    assert min(part1_windows.WINDOWS) == 1 and max(part1_windows.WINDOWS) >= 8 and len(part1_windows.ONE_IN) >= 2
    for (w, k), r in runs.items():
        assert r["train_names"] == len(train[::k])
        d, h, v = part1.SETTINGS["embed_dim"], part1.SETTINGS["hidden"], char_mlp.VOCAB_SIZE
        assert r["parameters"] == v * d + w * d * h + h + h * v + v  # rows, W1, b1, W2, b2


def test_the_run_of_the_books_window_is_the_books_checkpoint(stored):
    """Same settings, same names: the window-3 run on all the names ends where the checkpoint does."""
    [run] = [r for r in stored["runs"] if r["window"] == char_mlp.WINDOW and r["one_in"] == 1]
    final = char_mlp.load_checkpoint()["run"]
    assert run["final_heldout_loss"] == pytest.approx(final["final_heldout_loss"], rel=1e-12)
    assert run["final_train_loss"] == pytest.approx(final["final_train_loss"], rel=1e-12)
    curve = char_mlp.load_checkpoint()["loss_curve"]
    assert run["curve"]["step"] == curve["step"]
    assert np.allclose(run["curve"]["heldout"], curve["heldout"], rtol=1e-12, atol=0)
    assert np.allclose(run["curve"]["train"], curve["train"], rtol=1e-12, atol=0)


def test_every_curve_runs_from_the_start_to_the_last_step_and_ends_at_the_final_losses(stored):
    every, steps = part1.SETTINGS["eval_every"], part1.SETTINGS["steps"]
    for r in stored["runs"]:
        assert r["curve"]["step"] == list(range(0, steps + 1, every))
        assert r["curve"]["heldout"][-1] == r["final_heldout_loss"]
        assert r["curve"]["train"][-1] == r["final_train_loss"]


def test_best_heldout_is_the_lowest_point_of_the_curve():
    made_up = {"curve": {"step": [0, 800, 1600, 2400], "train": [3.3, 2.4, 2.2, 2.1],
                         "heldout": [3.3, 2.3, 2.25, 2.27]}}
    assert part1_windows.best_heldout(made_up) == (1600, 2.25)


def test_the_script_reproduces_a_stored_run(stored):
    """The cheapest run again (a window of one, a quarter of the names): a few seconds."""
    [old] = [r for r in stored["runs"] if r["window"] == 1 and r["one_in"] == max(part1_windows.ONE_IN)]
    new = part1_windows.run(1, max(part1_windows.ONE_IN))
    for key in ("final_train_loss", "final_heldout_loss"):
        assert np.isclose(new[key], old[key], rtol=1e-9, atol=0)  # last bits vary by CPU
    assert new["curve"]["step"] == old["curve"]["step"]
    for key in ("train", "heldout"):
        assert np.allclose(new["curve"][key], old["curve"][key], rtol=1e-9, atol=0)
    inexact = ("final_train_loss", "final_heldout_loss", "curve", "cpu_seconds")
    assert {k: v for k, v in new.items() if k not in inexact} == {k: v for k, v in old.items() if k not in inexact}


def test_the_counts_record_is_the_counts_counted_again():
    """Home quotes the interpolated counts from a record; its script makes it again identically."""
    stored = part1_windows.load_counts()
    again = {(r["one_in"], r["window"]): r for r in part1_windows.counts_record()["counts"]}
    assert set(stored) == {(k, w) for w in part1_windows.WINDOWS for k in part1_windows.ONE_IN} == set(again)
    for key, row in again.items():
        assert stored[key]["stored_counts"] == row["stored_counts"]
        assert stored[key]["heldout_loss"] == pytest.approx(row["heldout_loss"], rel=1e-12, abs=0)
