"""Shapes, masks, softmax, LayerNorm, SGD and the context limit, checked against direct computations."""

from __future__ import annotations

import numpy as np
import pytest

import tinyformer.nn as nn
from tinyformer.ops import count_macs, matmul


def test_causal_mask_hides_exactly_the_future():
    n = 7
    m = nn.causal_mask(n)
    assert m.shape == (n, n) and m.dtype == bool
    for i in range(n):
        for j in range(n):
            assert m[i, j] == (j <= i)


def test_causal_attention_ignores_future_rows(rng):
    """Changing row j changes no output row i < j."""
    n, d = 6, 4
    W = [rng.normal(size=s) for s in [(d, 3), (d, 3), (d, 2), (2, d)]]
    x = rng.normal(size=(n, d))
    out, cache = nn.attention_forward(x, x, *W, mask=nn.causal_mask(n))
    assert np.all(cache["weights"][np.triu_indices(n, 1)] == 0.0)
    for j in range(1, n):
        y = x.copy()
        y[j] += 10.0
        out2, _ = nn.attention_forward(y, y, *W, mask=nn.causal_mask(n))
        np.testing.assert_array_equal(out2[:j], out[:j])
        assert not np.allclose(out2[j], out[j])


def test_padding_mask_hides_padded_keys():
    m = nn.padding_mask([True, False, True, False], 3)
    assert m.shape == (3, 4)
    assert np.all(m[:, [0, 2]]) and not np.any(m[:, [1, 3]])


def test_attention_matches_a_loop_over_queries(rng):
    """The vectorized head equals a per-query dot-product loop written from the formula."""
    n_q, m, d = 3, 5, 4
    xq, xkv = rng.normal(size=(n_q, d)), rng.normal(size=(m, d))
    WQ, WK, WV, WO = rng.normal(size=(d, 3)), rng.normal(size=(d, 3)), rng.normal(size=(d, 2)), rng.normal(size=(2, d))
    mask = nn.padding_mask([True, True, False, True, False], n_q)
    update, cache = nn.attention_forward(xq, xkv, WQ, WK, WV, WO, mask)
    assert cache["Q"].shape == (n_q, 3) and cache["K"].shape == (m, 3) and cache["V"].shape == (m, 2)
    assert cache["scores"].shape == cache["weights"].shape == (n_q, m)
    assert cache["message"].shape == (n_q, 2) and update.shape == (n_q, d)
    for i in range(n_q):
        q = xq[i] @ WQ
        s = [(q @ (xkv[j] @ WK)) / np.sqrt(3) for j in range(m) if mask[i, j]]
        w = np.exp(s) / np.sum(np.exp(s))
        msg = sum(wj * (xkv[j] @ WV) for wj, j in zip(w, [j for j in range(m) if mask[i, j]]))
        np.testing.assert_allclose(update[i], msg @ WO, rtol=1e-12, atol=1e-12)
    assert np.all(np.isneginf(cache["masked_scores"][~mask]))


def test_multihead_heads_read_full_row_and_concatenate(rng):
    n, d = 4, 6
    x = rng.normal(size=(n, d))
    heads = [{"W_Q": rng.normal(size=(d, 2)), "W_K": rng.normal(size=(d, 2)), "W_V": rng.normal(size=(d, 3))} for _ in range(2)]
    W_O = rng.normal(size=(6, d))
    mask = nn.causal_mask(n)
    out, cache = nn.multihead_forward(x, x, heads, W_O, mask)
    msgs = [nn.head_forward(x, x, h["W_Q"], h["W_K"], h["W_V"], mask)[0] for h in heads]
    np.testing.assert_allclose(out, np.hstack(msgs) @ W_O, rtol=1e-12)
    assert cache["concat"].shape == (n, 6)


def test_softmax_rows_sum_to_one_and_survive_huge_inputs(rng):
    x = rng.normal(size=(5, 9)) * 3
    p = nn.softmax(x)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(p, np.exp(x) / np.exp(x).sum(axis=1, keepdims=True), rtol=1e-13)
    huge = np.array([[1000.0, 1001.0, 999.0], [-1e308, 0.0, 1e308]])
    ph = nn.softmax(huge)
    assert np.all(np.isfinite(ph))
    np.testing.assert_allclose(ph.sum(axis=1), 1.0, atol=1e-15)
    np.testing.assert_allclose(ph[0], nn.softmax(huge[:1] - 1000.0)[0], rtol=1e-15)  # shift invariance
    assert ph[1, 2] == 1.0
    masked = nn.softmax(np.array([[0.5, -np.inf, 1.0]]))
    assert masked[0, 1] == 0.0 and np.isclose(masked.sum(), 1.0)


def test_cross_entropy_is_stable_with_huge_logits():
    mean, per, _ = nn.cross_entropy_forward(np.array([[1000.0, 0.0], [0.0, 1000.0]]), [0, 0])
    np.testing.assert_allclose(per, [0.0, 1000.0])
    assert np.isclose(mean, 500.0)


def test_layernorm_normalizes_each_row(rng):
    x = rng.normal(size=(4, 6)) * 5 + 3
    y, _ = nn.layernorm_forward(x, np.ones(6), np.zeros(6))
    np.testing.assert_allclose(y.mean(axis=1), 0.0, atol=1e-14)
    var = x.var(axis=1)
    np.testing.assert_allclose(y.var(axis=1), var / (var + 1e-5), rtol=1e-12)
    const, _ = nn.layernorm_forward(np.full((1, 4), 2.5), np.ones(4), np.zeros(4))
    assert np.all(const == 0.0)  # eps keeps a constant row finite
    g, b = rng.normal(size=6), rng.normal(size=6)
    y2, _ = nn.layernorm_forward(x, g, b)
    np.testing.assert_allclose(y2, y * g + b, rtol=1e-12)


def test_ffn_acts_on_each_row_independently(rng):
    x = rng.normal(size=(3, 4))
    W1, b1, W2, b2 = rng.normal(size=(4, 8)), rng.normal(size=8), rng.normal(size=(8, 4)), rng.normal(size=4)
    y, cache = nn.ffn_forward(x, W1, b1, W2, b2)
    for i in range(3):
        np.testing.assert_allclose(y[i], np.maximum(x[i] @ W1 + b1, 0) @ W2 + b2, rtol=1e-12)
    assert cache["hidden"].shape == (3, 8) and np.all(cache["hidden"] >= 0)


def test_sgd_step_returns_new_arrays():
    params = {"a": np.array([1.0, 2.0])}
    new = nn.sgd_step(params, {"a": np.array([0.5, -1.0])}, lr=0.1)
    np.testing.assert_array_equal(params["a"], [1.0, 2.0])
    np.testing.assert_allclose(new["a"], [0.95, 2.1])
    with pytest.raises(KeyError):
        nn.sgd_step(params, {}, lr=0.1)


def test_positions_refuse_to_run_past_the_table():
    P = np.arange(12.0).reshape(6, 2)
    rows, _ = nn.positions_forward(P, 2, start=4)
    np.testing.assert_array_equal(rows, P[4:6])
    with pytest.raises(nn.ContextLimitError, match="only 6 rows"):
        nn.positions_forward(P, 7)
    with pytest.raises(nn.ContextLimitError):
        nn.positions_forward(P, 1, start=6)


def test_matmul_counts_macs_per_tag(rng):
    a, b = rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    with count_macs() as outer:
        matmul(a, b, "x")
        with count_macs() as inner:
            matmul(b.T, a.T, "y")
    assert outer.by_tag == {"x": 24, "y": 24} and outer.total == 48
    assert inner.by_tag == {"y": 24}
