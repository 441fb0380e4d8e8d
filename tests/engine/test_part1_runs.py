"""The record of Part 1's training runs (minibatch losses, learning-rate sweep, a longer run) is
reproduced by its script."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tinyformer.fit import part1, part1_runs
from tinyformer.models import char_mlp


@pytest.fixture(scope="module")
def rerun() -> dict:
    """A fresh record, through the same JSON round trip the script writes."""
    return json.loads(json.dumps(part1_runs.record()))


def test_script_reproduces_the_stored_record(rerun):
    stored = part1_runs.load()
    assert rerun["settings"] == stored["settings"] == part1.SETTINGS
    assert len(stored["minibatch_loss"]) == part1.SETTINGS["steps"]
    assert np.allclose(rerun["minibatch_loss"], stored["minibatch_loss"], rtol=0, atol=1e-9)
    assert [r["lr"] for r in stored["sweep"]["runs"]] == list(part1_runs.SWEEP_RATES)
    for new, old in zip(rerun["sweep"]["runs"], stored["sweep"]["runs"], strict=True):
        assert new["diverged_at"] == old["diverged_at"] and new["step"] == old["step"]
        for curve in ("train", "heldout"):
            assert np.allclose(new[curve], old[curve], rtol=0, atol=1e-9)
    for new, old in zip(rerun["longer"], stored["longer"], strict=True):
        assert new == pytest.approx(old, abs=1e-9)


def test_minibatch_losses_belong_to_the_checkpoints_run():
    """Step 0's minibatch loss is the starting point's loss on the first minibatch."""
    stored = part1_runs.load()
    train, _ = char_mlp.train_heldout_split()
    x, y = char_mlp.pairs_to_ids(train)
    order = part1.minibatch_order(len(y), 1, 128, np.random.default_rng(part1.SETTINGS["seed"]))
    first = char_mlp.loss(char_mlp.init_params(part1.SETTINGS["seed"]), x[order[0]], y[order[0]])
    assert stored["minibatch_loss"][0] == pytest.approx(first, rel=1e-12)


def test_sweep_shows_slow_good_and_diverging_rates():
    runs = {r["lr"]: r for r in part1_runs.load()["sweep"]["runs"]}
    finals = {lr: r["train"][-1] for lr, r in runs.items() if r["diverged_at"] is None}
    assert runs[4.0]["diverged_at"] is not None and len(finals) == len(runs) - 1
    assert min(finals, key=finals.get) == 1.0
    assert finals[0.01] > finals[0.04] > finals[0.1] > finals[0.4] > finals[1.0] < finals[2.0]


def test_step_losses_do_not_change_the_fit():
    settings = {**part1.SETTINGS, "steps": 30, "eval_every": 10, "lr_drop_step": 20, "batch_size": 4}
    names = ["emma", "zoe", "luke", "ava"]
    losses: list[float] = []
    with_record = part1.fit(settings, train=names, heldout=["ida"], step_losses=losses)
    plain = part1.fit(settings, train=names, heldout=["ida"])
    assert len(losses) == 30 and with_record["params"] == plain["params"]
    assert with_record["loss_curve"]["train"] == plain["loss_curve"]["train"]
