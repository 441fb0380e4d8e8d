"""The Part 2/3 one-head toy: the behaviour the chapters state, its gradients, its generation."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tinyformer.nn as nn
from tinyformer.gradcheck import numerical_gradient, relative_errors
from tinyformer.models import onehead as m
from tinyformer.paramio import PARAMS_DIR
from tests.engine.conftest import assert_gradients

WATER, FINANCE = m.COORDINATES.index("water"), m.COORDINATES.index("finance")


@pytest.fixture(scope="module")
def params():
    return m.load_params()


def test_vocabulary_sentences_and_shapes(params):
    assert len(m.VOCAB) == len(set(m.VOCAB)) == 20
    assert len(m.COORDINATES) == 4 and "water" in m.COORDINATES and "finance" in m.COORDINATES
    assert len(m.RIVER_SENTENCE) == len(m.CHEQUE_SENTENCE) == 10
    assert m.RIVER_SENTENCE[:4] == ("The", "fisherman", "sat", "beside") and "bank" in m.RIVER_SENTENCE
    assert m.RIVER_SENTENCE[-1] == "the" and m.RIVER_NEXT == "water"
    assert "bank" in m.CHEQUE_SENTENCE and "cheque" in m.CHEQUE_SENTENCE
    assert set(m.RIVER_SENTENCE + m.CHEQUE_SENTENCE + ("water",)) <= set(m.VOCAB)
    shapes = {"E_tok": (20, 4), "P": (20, 4), "W_Q": (4, 3), "W_K": (4, 3), "W_V": (4, 2), "W_O": (2, 4),
              "W1": (4, 8), "b1": (8,), "W2": (8, 20), "b2": (20,)}
    assert {k: v.shape for k, v in params.items()} == shapes
    assert all(v.dtype == np.float64 for v in params.values())


def test_parameters_file_round_trips_exactly(params):
    doc = json.loads((PARAMS_DIR / m.PARAMS_FILE).read_text())
    assert doc["coordinates"] == list(m.COORDINATES) and doc["vocab"] == list(m.VOCAB)
    np.testing.assert_array_equal(params["W_Q"], np.array(doc["W_Q"]))
    assert np.array_equal(params["E_tok"][m.TOKEN_ID["bank"]], doc["token_rows"]["bank"])


def test_positions_are_learned_style(params):
    P = params["P"]
    assert len({tuple(r) for r in P}) == 20  # every position has its own row
    assert np.abs(P).max() < 0.5 * np.abs(params["E_tok"]).max()  # small next to the token rows


def test_forward_matches_the_formulas(params):
    ids = m.encode(m.RIVER_SENTENCE)
    out = m.forward(params, ids)
    E = params["E_tok"][ids] + params["P"][:10]
    Q, K, V = E @ params["W_Q"], E @ params["W_K"], E @ params["W_V"]
    S = Q @ K.T / np.sqrt(3)
    S[np.triu_indices(10, 1)] = -np.inf
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    E2 = E + A @ V @ params["W_O"]
    logits = np.maximum(E2[-1] @ params["W1"] + params["b1"], 0) @ params["W2"] + params["b2"]
    np.testing.assert_allclose(out["E_prime"], E2, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(out["logits"][0], logits, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(out["weights"].sum(axis=1), 1.0, atol=1e-15)


def test_water_is_the_top_prediction_after_the_river_sentence(params):
    probs = m.forward(params, m.encode(m.RIVER_SENTENCE))["probs"][0]
    assert m.VOCAB[int(np.argmax(probs))] == "water"
    assert np.isclose(probs.sum(), 1.0)


def _bank(sentence, params):
    out = m.forward(params, m.encode(sentence))
    i = sentence.index("bank")
    return out, i


def test_bank_starts_from_the_same_token_row_in_both_sentences(params):
    river, i = _bank(m.RIVER_SENTENCE, params)
    cheque, j = _bank(m.CHEQUE_SENTENCE, params)
    np.testing.assert_array_equal(river["tok_rows"][i], cheque["tok_rows"][j])
    np.testing.assert_array_equal(river["tok_rows"][i], params["E_tok"][m.TOKEN_ID["bank"]])


def test_bank_gains_water_in_the_river_sentence_and_finance_in_the_cheque_sentence(params):
    """Claim: in the river sentence the update of the bank row raises its water coordinate, by more than
    it raises its finance coordinate; in the cheque sentence it raises finance, by more than water.
    Across sentences, the updated bank row has more water in the river sentence and more finance in
    the cheque sentence."""
    river, i = _bank(m.RIVER_SENTENCE, params)
    cheque, j = _bank(m.CHEQUE_SENTENCE, params)
    dr, dc = river["update"][i], cheque["update"][j]
    assert river["E_prime"][i, WATER] > river["E"][i, WATER]
    assert dr[WATER] > 0 and dr[WATER] > dr[FINANCE]
    assert cheque["E_prime"][j, FINANCE] > cheque["E"][j, FINANCE]
    assert dc[FINANCE] > 0 and dc[FINANCE] > dc[WATER]
    assert river["E_prime"][i, WATER] > cheque["E_prime"][j, WATER]
    assert cheque["E_prime"][j, FINANCE] > river["E_prime"][i, FINANCE]
    # the bank row reads river most in one sentence and cheque most in the other
    assert m.RIVER_SENTENCE[int(np.argmax(river["weights"][i]))] == "river"
    assert m.CHEQUE_SENTENCE[int(np.argmax(cheque["weights"][j]))] == "cheque"


def _relu_margin(params, ids, readout):
    return np.abs(m.forward(params, ids, readout)["pre"]).min()


def test_gradients_final_position(params):
    ids, targets = m.final_position_example()
    assert _relu_margin(params, ids, "last") > 1e-2  # finite differences stay off the ReLU kinks

    def loss(p):
        return m.loss_and_grads(p, ids, targets, "last")[0]

    value, per, grads, out = m.loss_and_grads(params, ids, targets, "last")
    assert np.isclose(value, -np.log(out["probs"][0, m.TOKEN_ID["water"]]))
    assert per.shape == (1,)
    assert np.all(grads["P"][10:] == 0)  # positions the sentence does not reach get no gradient
    assert_gradients("onehead_final_position", loss, params, grads)


def test_gradients_every_position(params):
    ids, targets = m.all_positions_example()
    assert m.decode(targets)[0] == "fisherman" and m.decode(targets)[-1] == "water"
    assert _relu_margin(params, ids, "all") > 1e-2

    def loss(p):
        return m.loss_and_grads(p, ids, targets, "all")[0]

    value, per, grads, out = m.loss_and_grads(params, ids, targets, "all")
    probs = out["probs"][np.arange(10), targets]
    np.testing.assert_allclose(per, -np.log(probs), rtol=1e-12)
    assert np.isclose(value, per.mean())
    assert_gradients("onehead_every_position", loss, params, grads)


def test_last_row_of_all_positions_equals_final_position_pass(params):
    ids = m.encode(m.RIVER_SENTENCE)
    a = m.forward(params, ids, "all")["logits"][-1]
    b = m.forward(params, ids, "last")["logits"][0]
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)


def test_small_sgd_step_lowers_the_loss(params):
    ids, targets = m.final_position_example()
    loss, _, grads, _ = m.loss_and_grads(params, ids, targets)
    lr = 1e-4
    new = nn.sgd_step(params, grads, lr=lr)
    loss2 = m.loss_and_grads(new, ids, targets)[0]
    slope = sum(float((g * g).sum()) for g in grads.values())
    assert loss2 < loss
    # first order: the loss falls by lr * |grad|^2, up to a second-order remainder
    assert abs((loss - loss2) - lr * slope) < 0.05 * lr * slope


def test_cached_generation_equals_recomputation(params):
    prompt = m.encode(m.RIVER_SENTENCE)
    cached = m.generate(params, prompt, 10, use_cache=True)
    full = m.generate(params, prompt, 10, use_cache=False)
    np.testing.assert_array_equal(cached["ids"], full["ids"])
    assert np.abs(cached["logits"] - full["logits"]).max() <= 1e-12
    assert m.VOCAB[int(cached["new_ids"][0])] == "water"
    assert [s["keys"] for s in cached["cache_sizes"]] == list(range(10, 20))
    assert full["cache_sizes"] == []


def test_generation_stops_at_the_context_limit(params):
    prompt = m.encode(m.RIVER_SENTENCE)
    m.generate(params, prompt, 11)  # needs positions 1..20: allowed
    for use_cache in (True, False):
        with pytest.raises(nn.ContextLimitError, match="needs 21 positions"):
            m.generate(params, prompt, 12, use_cache=use_cache)
    with pytest.raises(nn.ContextLimitError):
        m.forward(params, np.zeros(21, dtype=int))


@pytest.mark.parametrize("readout", ["last", "all"])
def test_gradient_reaching_E_is_the_sum_of_its_four_paths(params, readout):
    """Each path's share of dE, against finite differences on a copy of E that only that path reads."""
    ids, targets = m.final_position_example() if readout == "last" else m.all_positions_example()
    _, _, grads, out = m.loss_and_grads(params, ids, targets, readout)
    shares = out["dE_by_path"]
    assert tuple(shares) == m.PATHS
    np.testing.assert_allclose(sum(shares.values()), out["dE"], rtol=0, atol=1e-15)
    for path in m.PATHS:
        def loss_of_rows(rows, path=path):
            return m.loss(params, ids, targets, readout, path_rows={path: rows["E"]})

        numeric = numerical_gradient(loss_of_rows, {"E": out["E"]}, "E")
        assert relative_errors(shares[path], numeric).max() < 1e-6, path
    # all four paths read the same E: perturbing E itself moves the loss by their sum
    numeric_total = numerical_gradient(lambda rows: m.loss(params, ids, targets, readout,
                                                           path_rows=dict.fromkeys(m.PATHS, rows["E"])),
                                       {"E": out["E"]}, "E")
    assert relative_errors(out["dE"], numeric_total).max() < 1e-6


def test_paths_that_reach_only_the_read_out_row(params):
    """With only the final row read out, the residual and query paths carry gradient to that row alone;
    keys and values carry it to every row the final row may read."""
    ids, targets = m.final_position_example()
    shares = m.loss_and_grads(params, ids, targets)[3]["dE_by_path"]
    for path in ("residual", "query"):
        assert np.all(shares[path][:-1] == 0) and np.any(shares[path][-1] != 0), path
    for path in ("key", "value"):
        assert np.all(np.abs(shares[path]).sum(axis=1) > 0), path


def test_forward_refuses_an_unknown_path(params):
    with pytest.raises(ValueError, match="unknown paths"):
        m.forward(params, m.encode(m.RIVER_SENTENCE), path_rows={"keys": np.zeros((10, 4))})


def test_repeated_token_rows_add_their_gradients(params):
    """'the' appears twice in the river sentence: its token-table gradient is the sum of both rows' dE;
    each position row gets its own row's dE."""
    ids, targets = m.final_position_example()
    _, _, grads, out = m.loss_and_grads(params, ids, targets)
    where = np.flatnonzero(ids == m.TOKEN_ID["the"])
    assert where.size == 2
    np.testing.assert_allclose(grads["E_tok"][m.TOKEN_ID["the"]], out["dE"][where].sum(axis=0), atol=1e-15)
    np.testing.assert_array_equal(grads["P"][: ids.size], out["dE"])
