"""Part 1 character MLP: data, shapes, gradients, the stored fit and what training achieved."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.engine.conftest import GRAD_TOL, MEASURED
from tinyformer.fit import part1
from tinyformer.gradcheck import gradient_errors
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
    eps * sum over slots |W1[slot*d + k, j]|; nudging b1[j] by eps. If the margin exceeds EPS, no
    central difference straddles ReLU's kink, so the finite differences are true derivatives.
    """
    d = params["C"].shape[1]
    slot_sum = np.abs(params["W1"].reshape(m.WINDOW, d, -1)).sum(axis=0).max(axis=0)  # (h,)
    reach = np.maximum(np.abs(out["concat"]).max(axis=1, keepdims=True), slot_sum[None, :])  # (N, h)
    return float((np.abs(out["pre_activation"]) / np.maximum(reach, 1.0)).min())


@pytest.mark.parametrize("which", ["init", "fitted"])
def test_gradients_match_finite_differences(which, fitted):
    params = m.init_params(0) if which == "init" else fitted
    contexts, targets = m.pairs_to_ids(["aabid", "zoe"])
    _, _, grads, out = m.loss_and_grads(params, contexts, targets)
    assert _kink_margin(params, out) > EPS, "a finite difference would cross a ReLU kink"
    errors = gradient_errors(lambda p: m.loss(p, contexts, targets), params, grads, eps=EPS)
    MEASURED[f"char_mlp ({which}, eps={EPS:g})"] = max(errors.values())
    assert set(errors) == set(m.PARAM_NAMES)
    assert max(errors.values()) < GRAD_TOL, errors


def test_fit_script_reproduces_the_stored_checkpoint():
    stored = m.load_checkpoint()
    fresh = json.loads(json.dumps(part1.fit()))  # the same JSON round trip the script writes
    assert fresh["settings"] == stored["settings"] and fresh["data"] == stored["data"]
    assert np.allclose(fresh["loss_curve"]["loss"], stored["loss_curve"]["loss"], rtol=0, atol=1e-9)
    assert np.allclose(fresh["minibatch_loss"], stored["minibatch_loss"], rtol=0, atol=1e-9)
    for name in m.PARAM_NAMES:
        assert np.allclose(fresh["params"][name], stored["params"][name], rtol=0, atol=1e-9), name


def test_checkpoint_floats_round_trip_exactly(fitted):
    assert all(np.array_equal(m.params_from_json(m.params_to_json(fitted))[k], fitted[k]) for k in fitted)


def test_training_lowers_the_loss_below_a_context_free_model(fitted):
    """Trained loss < initial loss, and < the entropy of next-character frequencies (what no context could beat)."""
    contexts, targets = m.pairs_to_ids(m.load_names())
    freq = np.bincount(targets, minlength=27) / len(targets)  # (27,)
    unigram = -np.sum(freq[freq > 0] * np.log(freq[freq > 0]))
    trained = m.loss(fitted, contexts, targets)
    assert trained < unigram < m.loss(m.init_params(0), contexts, targets)
    assert m.load_checkpoint()["loss_curve"]["loss"][-1] == pytest.approx(trained, abs=1e-12)


def test_aabid_targets_gain_probability_on_average(fitted):
    before, after = m.target_probs(m.init_params(0), "aabid"), m.target_probs(fitted, "aabid")
    assert after.mean() > before.mean()


def test_first_letter_distribution_moves_towards_the_data(fitted):
    names = m.load_names()
    data = np.bincount(m.encode("".join(n[0] for n in names)), minlength=27) / len(names)  # (27,)
    tv_before = 0.5 * np.abs(m.next_char_probs(m.init_params(0), "...") - data).sum()
    tv_after = 0.5 * np.abs(m.next_char_probs(fitted, "...") - data).sum()
    assert tv_after < 0.5 * tv_before


def test_sampling_is_seeded_and_well_formed(fitted):
    names = m.sample(fitted, 8, seed=3)
    assert names == m.sample(fitted, 8, seed=3) and names != m.sample(fitted, 8, seed=4)
    assert all(set(n) <= set(m.ALPHABET[1:]) and len(n) <= 20 for n in names)
