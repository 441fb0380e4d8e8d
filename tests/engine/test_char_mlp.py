"""Part 1 character MLP: data, shapes, gradients, the stored fit and what training achieved."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.engine.conftest import GRAD_TOL, MEASURED
from tinyformer import data
from tinyformer.fit import part1
from tinyformer.gradcheck import gradient_errors
from tinyformer.models import baselines
from tinyformer.models import char_mlp as m

# Central differences of this model are roundoff-limited below eps ~ 1e-4 (see
# _kink_margin for why 1e-4 is still safe across ReLU's kink).
EPS = 1e-4


@pytest.fixture(scope="module")
def fitted() -> dict:
    """The stored checkpoint's parameters."""
    return m.load_params()


def test_aabid_training_pairs():
    assert m.training_pairs("aabid") == [
        ("...", "a"), ("..a", "a"), (".aa", "b"), ("aab", "i"), ("abi", "d"), ("bid", ".")]


def test_alphabet_and_ids_round_trip():
    assert m.VOCAB_SIZE == 27 and m.ALPHABET[0] == "."
    assert m.decode(m.encode(".aabid.")) == ".aabid."
    contexts, targets = m.pairs_to_ids(["aabid"])
    assert contexts.tolist()[3] == m.encode("aab") and m.ALPHABET[targets[3]] == "i"
    with pytest.raises(ValueError, match="outside the model's 27 symbols.*'A', 'é'"):
        m.encode("Aébc")


def test_shipped_names_are_clean_lowercase():
    names = m.load_names()
    assert 1000 < len(names) < 10000 and len(set(names)) == len(names)
    assert all(n.isascii() and n.isalpha() and n.islower() for n in names)


def test_forward_shapes_and_probabilities(fitted):
    contexts, _ = m.pairs_to_ids(["aabid", "emma"])  # 6 + 5 windows
    out = m.forward(fitted, contexts)
    d, h = m.EMBED_DIM, m.HIDDEN
    assert out["rows"].shape == (11, 3, d) and out["concat"].shape == (11, 3 * d)
    assert out["hidden"].shape == (11, h) and out["logits"].shape == (11, 27)
    assert np.allclose(out["probs"].sum(axis=1), 1.0) and np.all(out["hidden"] >= 0)


def test_concatenation_keeps_window_slots_apart(fitted):
    """Zeroing the newest slot's rows of W1 must make the prediction blind to the newest character."""
    blind = {**fitted, "W1": fitted["W1"].copy()}
    blind["W1"][2 * m.EMBED_DIM:] = 0.0  # rows read by slot 3 (the newest character)
    p_a, p_z = m.next_char_probs(blind, "aba"), m.next_char_probs(blind, "abz")
    assert np.array_equal(p_a, p_z)
    assert not np.allclose(m.next_char_probs(fitted, "aba"), m.next_char_probs(fitted, "abz"))


def test_per_example_losses_are_minus_log_target_probability(fitted):
    contexts, targets = m.pairs_to_ids(["aabid"])
    mean, per_example, _, _ = m.loss_and_grads(fitted, contexts, targets)
    assert np.allclose(per_example, -np.log(m.target_probs(fitted, "aabid")), rtol=1e-12)
    assert mean == pytest.approx(per_example.mean(), rel=1e-12)


def _kink_margin(params: dict, out: dict) -> float:
    """Smallest |pre-activation| / (largest change one eps-sized nudge can cause), per unit of eps.

    Nudging W1[i, j] moves pre[n, j] by eps * concat[n, i]; nudging C[a, k] moves it by at most
    eps * sum over slots |W1[slot*d + k, j]|; nudging b1[j] by eps. The fourth-order stencil nudges
    by up to 2 eps, so if the margin exceeds 2 eps no finite difference straddles ReLU's kink and
    the finite differences are true derivatives.
    """
    d = params["C"].shape[1]
    slot_sum = np.abs(params["W1"].reshape(m.WINDOW, d, -1)).sum(axis=0).max(axis=0)  # (h,)
    reach = np.maximum(np.abs(out["concat"]).max(axis=1, keepdims=True), slot_sum[None, :])  # (N, h)
    return float((np.abs(out["pre_activation"]) / np.maximum(reach, 1.0)).min())


@pytest.mark.parametrize("which", ["init", "fitted"])
def test_gradients_match_finite_differences(which, fitted):
    params = m.init_params(0) if which == "init" else fitted
    # windows chosen to keep clear of ReLU's kink at both points ("..a" of aabid does not: one of
    # its fitted pre-activations is -2.4e-4, within reach of the 2 eps stencil)
    contexts, targets = m.pairs_to_ids(["emma", "zoe", "bid"])
    _, _, grads, out = m.loss_and_grads(params, contexts, targets)
    assert _kink_margin(params, out) > 2 * EPS, "a finite difference would cross a ReLU kink"
    errors = gradient_errors(lambda p: m.loss(p, contexts, targets), params, grads, eps=EPS)
    MEASURED[f"char_mlp ({which}, eps={EPS:g})"] = max(errors.values())
    assert set(errors) == set(m.PARAM_NAMES)
    assert max(errors.values()) < GRAD_TOL, errors


@pytest.fixture(scope="module")
def refit() -> dict:
    """A fresh run of the fit script, through the same JSON round trip the script writes."""
    return json.loads(json.dumps(part1.fit()))


def test_fit_script_reproduces_the_stored_checkpoint(refit):
    stored = m.load_checkpoint()
    assert refit["settings"] == stored["settings"] and refit["data"] == stored["data"]
    for curve in ("step", "train", "heldout"):
        assert np.allclose(refit["loss_curve"][curve], stored["loss_curve"][curve], rtol=0, atol=1e-9), curve
    for name in m.PARAM_NAMES:
        assert np.allclose(refit["params"][name], stored["params"][name], rtol=0, atol=1e-9), name
    timing = {"cpu_seconds", "wall_seconds", "numpy"}  # what may differ between two runs
    assert set(stored["run"]) > timing
    for key in set(stored["run"]) - timing:
        assert refit["run"][key] == pytest.approx(stored["run"][key], abs=1e-9), key


def test_checkpoint_records_the_shipped_split():
    """Section 3.19 trains on the same names: the checkpoint's held-out list is the engine's split."""
    record = m.load_checkpoint()["data"]
    train, heldout = m.train_heldout_split()
    assert record["heldout"] == heldout and record["split_rule"] == data.SPLIT_RULE
    assert record["train_names"] == len(train) and record["heldout_names"] == len(heldout)
    assert record["train_pairs"] == len(m.pairs_to_ids(train)[1])
    assert record["heldout_pairs"] == len(m.pairs_to_ids(heldout)[1])


def test_recorded_final_losses_are_those_of_the_stored_parameters(fitted):
    record = m.load_checkpoint()
    train, heldout = m.train_heldout_split()
    trained, held = m.loss(fitted, *m.pairs_to_ids(train)), m.loss(fitted, *m.pairs_to_ids(heldout))
    assert record["loss_curve"]["train"][-1] == record["run"]["final_train_loss"] == pytest.approx(trained, abs=1e-12)
    assert record["loss_curve"]["heldout"][-1] == record["run"]["final_heldout_loss"] == pytest.approx(held, abs=1e-12)
    assert record["loss_curve"]["step"][-1] == record["run"]["steps"] == record["settings"]["steps"]


def test_checkpoint_floats_round_trip_exactly(fitted):
    assert all(np.array_equal(m.params_from_json(m.params_to_json(fitted))[k], fitted[k]) for k in fitted)


def test_training_beats_the_count_baselines_on_held_out_names(fitted):
    """Trained MLP < bigram < unigram on the held-out names, each fitted to the same training names."""
    train, heldout = m.train_heldout_split()
    (x, y), (hx, hy) = m.pairs_to_ids(train), m.pairs_to_ids(heldout)
    held = {k: baselines.ngram_loss(baselines.ngram_table(x, y, k, m.VOCAB_SIZE), hx, hy, k) for k in (0, 1)}
    mlp = m.loss(fitted, hx, hy)
    assert mlp < held[1] < held[0] < m.loss(m.init_params(0), hx, hy)
    assert m.loss(fitted, x, y) < mlp  # the usual gap: names it trained on are easier


def test_aabid_targets_gain_probability_on_average(fitted):
    before, after = m.target_probs(m.init_params(0), "aabid"), m.target_probs(fitted, "aabid")
    assert after.mean() > before.mean()


def test_first_letter_distribution_moves_towards_the_data(fitted):
    names, _ = m.train_heldout_split()
    data = np.bincount(m.encode("".join(n[0] for n in names)), minlength=27) / len(names)  # (27,)
    tv_before = 0.5 * np.abs(m.next_char_probs(m.init_params(0), "...") - data).sum()
    tv_after = 0.5 * np.abs(m.next_char_probs(fitted, "...") - data).sum()
    assert tv_after < 0.5 * tv_before


def test_sampling_is_seeded_and_well_formed(fitted):
    names = m.sample(fitted, 8, seed=3)
    assert names == m.sample(fitted, 8, seed=3) and names != m.sample(fitted, 8, seed=4)
    assert all(set(n) <= set(m.ALPHABET[1:]) and len(n) <= m.SAMPLE_MAX_LEN for n in names)


def test_sampling_stops_at_the_cap(fitted):
    """Part 1 says a sampled name stops at SAMPLE_MAX_LEN letters if the boundary has not come."""
    assert m.SAMPLE_MAX_LEN == 20
    never_ends = {k: v.copy() for k, v in fitted.items()}
    never_ends["b2"][m.ALPHABET.index(m.BOUNDARY)] = -1e9  # the boundary mark can never be drawn
    assert [len(n) for n in m.sample(never_ends, 3, seed=0)] == [m.SAMPLE_MAX_LEN] * 3
    assert [len(n) for n in m.sample(never_ends, 2, seed=0, max_len=5)] == [5, 5]


def test_window_width_is_a_setting(fitted):
    """Workbook 1 changes the window: pairs, parameters and sampling follow the chosen width."""
    assert m.training_pairs("ab", window=1) == [(".", "a"), ("a", "b"), ("b", ".")]
    contexts, targets = m.pairs_to_ids(["emma", "zoe"], window=5)
    assert contexts.shape == (len(targets), 5) and m.decode(contexts[2]) == "...em"
    wide = m.init_params(1, embed_dim=2, hidden=7, window=5)
    assert m.window_of(wide) == 5 and m.forward(wide, contexts)["concat"].shape == (len(targets), 10)
    assert len(m.target_probs(wide, "emma")) == 5 and all(len(n) <= 20 for n in m.sample(wide, 3))
    with pytest.raises(ValueError, match="windows of 5 characters"):
        m.forward(fitted, contexts)


def test_end_probability_by_length_matches_a_direct_count(fitted):
    names = ["ann", "anna", "bo", "joann"]
    stats = m.end_probability_by_length(fitted, names)
    assert stats["count"].sum() == sum(len(n) + 1 for n in names)
    for length in (2, 3, 4):
        reached = [n for n in names if len(n) >= length]
        assert stats["count"][length] == len(reached)
        assert stats["observed"][length] == sum(len(n) == length for n in reached) / len(reached)
        p_end = [m.next_char_probs(fitted, (m.BOUNDARY * 3 + n)[length : length + 3])[0] for n in reached]
        assert stats["predicted"][length] == pytest.approx(np.mean(p_end), rel=1e-12)


def test_a_diverging_run_stops_with_its_step():
    """Workbook 1 sets the learning rate too high: the fit must say so, not crash inside softmax."""
    settings = {**part1.SETTINGS, "lr": 50.0, "steps": 60, "eval_every": 60, "lr_drop_step": 60, "batch_size": 4}
    with pytest.raises(part1.TrainingDiverged, match=r"diverged at step \d+.*learning rate 50.0") as failure:
        part1.fit(settings, train=["emma", "zoe", "aaron", "luke"], heldout=["ava"])
    assert 0 < failure.value.step < 60


def test_fit_on_given_names_records_them_and_its_settings():
    settings = {**part1.SETTINGS, "steps": 40, "eval_every": 20, "lr_drop_step": 30, "window": 2, "embed_dim": 2,
                "batch_size": 4}
    checkpoint = part1.fit(settings, train=["emma", "zoe", "luke"], heldout=["ava"])
    assert checkpoint["data"]["heldout"] == ["ava"] and checkpoint["data"]["train_pairs"] == 5 + 4 + 5
    assert checkpoint["loss_curve"]["step"] == [0, 20, 40] and len(checkpoint["loss_curve"]["heldout"]) == 3
    assert m.window_of(m.params_from_json(checkpoint["params"])) == 2
    with pytest.raises(ValueError, match="minibatch of 128 pairs is larger than the 14 training pairs"):
        part1.fit({**settings, "batch_size": 128}, train=["emma", "zoe", "luke"], heldout=[])
