"""Section 3.19's decoder on the names: its data, the stored fit (reproduced in part) and its record."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tinyformer import data
from tinyformer.fit import part3
from tinyformer.models import char_decoder as m
from tinyformer.models import char_mlp, decoder_stack


@pytest.fixture(scope="module")
def fitted() -> dict:
    return m.load_params()


@pytest.fixture(scope="module")
def stored() -> dict:
    return m.load_checkpoint()


def test_a_name_gives_the_same_predictions_as_the_mlp_pairs():
    ids, targets = m.sequence("aabid")
    assert char_mlp.decode(ids) == ".aabid" and char_mlp.decode(targets) == "aabid."
    mlp_targets = char_mlp.pairs_to_ids(["aabid"])[1]
    assert np.array_equal(targets, mlp_targets)  # same predictions, in the same order
    packed_ids, packed_targets, lengths = m.pack(["ava", "aabid"])
    assert lengths == [4, 6] and char_mlp.decode(packed_ids) == ".ava.aabid"
    assert char_mlp.decode(packed_targets) == "ava.aabid."


def test_per_prediction_losses_equal_one_pass_per_name(fitted):
    names = ["emma", "zoe", "aabid", "christopher"]
    losses, letters = m.per_prediction_losses(fitted, names, chunk=3)
    expected = []
    for name in names:
        ids, targets = m.sequence(name)
        probs = decoder_stack.forward(fitted, ids)["probs"]
        expected.extend(-np.log(probs[np.arange(ids.size), targets]))
    np.testing.assert_allclose(losses, expected, rtol=1e-12)
    assert letters.tolist() == [i for name in names for i in range(len(name) + 1)]


def test_config_and_context_fit_every_shipped_name(fitted):
    assert decoder_stack.config_from_params(fitted) == m.CONFIG == part3.config()
    assert max(len(n) for n in data.load_names()) + 1 == m.CONTEXT


def test_checkpoint_records_the_shipped_split_and_the_mlp_s(stored):
    record = stored["data"]
    train, heldout = data.train_heldout_split()
    mlp = char_mlp.load_checkpoint()["data"]
    assert record["split_rule"] == data.SPLIT_RULE == mlp["split_rule"]
    assert (record["train_names"], record["heldout_names"]) == (len(train), len(heldout))
    assert record["heldout_predictions"] == mlp["heldout_pairs"] == len(char_mlp.pairs_to_ids(heldout)[1])
    assert record["train_predictions"] == mlp["train_pairs"]


def test_recorded_final_losses_are_those_of_the_stored_parameters(fitted, stored):
    train, heldout = data.train_heldout_split()
    run, curve = stored["run"], stored["loss_curve"]
    assert curve["train"][-1] == run["final_train_loss"] == pytest.approx(m.mean_loss(fitted, train), abs=1e-12)
    assert curve["heldout"][-1] == run["final_heldout_loss"] == pytest.approx(m.mean_loss(fitted, heldout), abs=1e-12)
    assert curve["step"][-1] == run["steps"] == stored["settings"]["steps"]
    assert curve["step"] == list(range(0, run["steps"] + 1, stored["settings"]["eval_every"]))
    assert stored["settings"] == json.loads(json.dumps(part3.SETTINGS))
    assert run["cpu_seconds"] > 0 and run["wall_seconds"] > 0


@pytest.fixture(scope="module")
def first_steps(stored) -> dict:
    """The first two evaluation intervals of the stored run's own schedule, run again."""
    return json.loads(json.dumps(part3.fit(stop_after=2 * stored["settings"]["eval_every"])))


def test_fit_script_reproduces_the_start_of_the_stored_run(first_steps, stored):
    """The full fit takes about twenty seconds; its first steps, under the same schedule, must match."""
    k = len(first_steps["loss_curve"]["step"])
    assert k == 3 and first_steps["loss_curve"]["step"] == stored["loss_curve"]["step"][:k]
    for curve in ("train", "heldout"):
        np.testing.assert_allclose(first_steps["loss_curve"][curve], stored["loss_curve"][curve][:k], rtol=0, atol=1e-9)
    assert first_steps["data"] == stored["data"] and first_steps["settings"] == stored["settings"]


def test_the_fit_is_deterministic_and_a_small_fit_learns():
    names = ["emma", "ella", "ava", "anna", "eva", "olivia", "amelia", "mia"] * 2
    settings = {**part3.SETTINGS, "steps": 30, "batch_size": 4, "eval_every": 10, "lr": 0.01}
    a, b = part3.fit(settings, train=names, heldout=["ada"]), part3.fit(settings, train=names, heldout=["ada"])
    assert a["loss_curve"]["train"] == b["loss_curve"]["train"]
    assert all(a["params"][k] == b["params"][k] for k in a["params"])
    assert a["loss_curve"]["train"][-1] < a["loss_curve"]["train"][0]
    assert a["data"]["file"] is None and a["data"]["train_names"] == 16


def test_sampling_is_seeded_and_well_formed(fitted):
    first, again = m.sample(fitted, 6, seed=3), m.sample(fitted, 6, seed=3)
    assert first == again and m.sample(fitted, 6, seed=4) != first
    assert all(set(name) <= set(char_mlp.ALPHABET[1:]) and len(name) < m.CONTEXT for name in first)


def test_the_decoder_beats_the_count_baselines_on_held_out_names(fitted, stored):
    """A fitted model should at least beat the bigram counts the MLP is measured against."""
    from tinyformer.models import baselines

    train, heldout = data.train_heldout_split()
    contexts, targets = char_mlp.pairs_to_ids(train)
    table = baselines.ngram_table(contexts, targets, 1, char_mlp.VOCAB_SIZE)
    bigram = baselines.ngram_loss(table, *char_mlp.pairs_to_ids(heldout), 1)
    assert stored["run"]["final_heldout_loss"] < bigram


def test_gap_interval_resamples_whole_names_with_a_seed():
    names = ["ab", "c", "def"]                       # 3 + 2 + 4 = 9 predictions
    assert m.name_of_prediction(names).tolist() == [0, 0, 0, 1, 1, 2, 2, 2, 2]
    a = np.array([1.0, 1, 1, 2, 2, 0.5, 0.5, 0.5, 0.5])
    b = np.zeros(9)
    gap, low, high = m.gap_interval(a, b, names, n_resamples=2000, seed=1)
    assert gap == pytest.approx(a.mean())
    assert (gap, low, high) == m.gap_interval(a, b, names, n_resamples=2000, seed=1)  # deterministic
    # every resample's gap is a mean of whole names' summed differences: between the names' own means
    assert 0.5 <= low <= gap <= high <= 2.0
    # one name's constant gap has no spread
    assert m.gap_interval(np.full(3, 0.2), np.zeros(3), ["ab"], n_resamples=50)[1:] == pytest.approx((0.2, 0.2))
    with pytest.raises(ValueError):
        m.gap_interval(a[:-1], b[:-1], names)


def test_gap_interval_by_brute_force_on_a_small_case():
    names = ["a", "bc"]
    a, b = np.array([1.0, 2.0, 0.0, 3.0, 3.0]), np.zeros(5)
    gap, low, high = m.gap_interval(a, b, names, n_resamples=500, seed=0, level=1.0)
    # resamples: both "a" (3/2 = 1.5 per prediction), both "bc" (6/3 = 2.0), or one of each (9/5 = 1.8)
    assert gap == pytest.approx(9 / 5) and low == pytest.approx(1.5) and high == pytest.approx(2.0)


def test_largest_weight_targets_count_every_row_from_the_second_letter(fitted):
    names = ["aabid", "zoe"]
    counts = m.largest_weight_targets(fitted, names)
    cfg = m.CONFIG
    assert counts.shape == (cfg.n_layers, cfg.n_heads, len(m.WEIGHT_TARGETS))
    rows = sum(len(name) + 1 - 2 for name in names)  # positions 2, 3, ... of each name's inputs
    assert (counts.sum(axis=2) == rows).all()
    # brute force for one head on one name
    ids, _ = m.sequence("aabid")
    w = decoder_stack.forward(fitted, ids)["blocks"][1]["mh"]["heads"][0]["weights"]
    kinds = [0 if j == i else 1 if j == i - 1 else 2 if j == 0 else 3
             for i, j in ((i, int(w[i].argmax())) for i in range(2, ids.size))]
    assert m.largest_weight_targets(fitted, ["aabid"])[1, 0].tolist() == np.bincount(kinds, minlength=4).tolist()


def test_largest_weight_kinds_keep_every_row_of_every_head(fitted):
    names = ["aabid", "zoe"]
    kinds = m.largest_weight_kinds(fitted, names)
    cfg = m.CONFIG
    assert kinds.shape == (sum(len(name) - 1 for name in names), cfg.n_layers, cfg.n_heads)
    ids, _ = m.sequence("zoe")  # rows of "zoe" come after the 4 rows of "aabid"
    out = decoder_stack.forward(fitted, ids)
    for layer in range(cfg.n_layers):
        for h in range(cfg.n_heads):
            w = out["blocks"][layer]["mh"]["heads"][h]["weights"]
            for row, i in enumerate(range(2, ids.size)):
                j = int(w[i].argmax())
                kind = 0 if j == i else 1 if j == i - 1 else 2 if j == 0 else 3
                assert kinds[4 + row, layer, h] == kind
    assert m.largest_weight_kinds(fitted, []).shape == (0, cfg.n_layers, cfg.n_heads)
