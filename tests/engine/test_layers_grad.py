"""Every layer's backward against central finite differences."""

from __future__ import annotations

import numpy as np

import tinyformer.nn as nn
from tests.engine.conftest import assert_gradients


def _probe(rng, shape):
    """A fixed random direction, so that sum(out * R) is a scalar loss that reads every output cell."""
    return rng.normal(size=shape)


def test_linear_gradients(rng):
    p = {"x": rng.normal(size=(5, 4)), "W": rng.normal(size=(4, 3)), "b": rng.normal(size=3)}
    R = _probe(rng, (5, 3))

    def loss(q):
        return float((nn.linear_forward(q["x"], q["W"], q["b"])[0] * R).sum())

    _, cache = nn.linear_forward(p["x"], p["W"], p["b"])
    dx, dW, db = nn.linear_backward(R, cache)
    assert_gradients("linear", loss, p, {"x": dx, "W": dW, "b": db})


def test_linear_without_bias_has_no_bias_gradient(rng):
    _, cache = nn.linear_forward(rng.normal(size=(2, 3)), rng.normal(size=(3, 4)))
    assert nn.linear_backward(np.ones((2, 4)), cache)[2] is None


def test_tied_readout_gradients(rng):
    p = {"x": rng.normal(size=(4, 3)), "table": rng.normal(size=(7, 3))}
    R = _probe(rng, (4, 7))

    def loss(q):
        return float((nn.readout_forward(q["x"], q["table"], tied=True)[0] * R).sum())

    logits, cache = nn.readout_forward(p["x"], p["table"], tied=True)
    np.testing.assert_allclose(logits, p["x"] @ p["table"].T, rtol=0, atol=1e-14)
    dx, dtable, db = nn.readout_backward(R, cache)
    assert db is None
    assert_gradients("readout_tied", loss, p, {"x": dx, "table": dtable})


def test_embedding_gradients_accumulate_repeated_ids(rng):
    ids = [2, 0, 2, 5, 2]
    p = {"table": rng.normal(size=(6, 4))}
    R = _probe(rng, (5, 4))

    def loss(q):
        return float((nn.embedding_forward(q["table"], ids)[0] * R).sum())

    _, cache = nn.embedding_forward(p["table"], ids)
    d = nn.embedding_backward(R, cache)
    np.testing.assert_allclose(d[2], R[0] + R[2] + R[4], atol=1e-15)
    assert np.all(d[[1, 3, 4]] == 0)
    assert_gradients("embedding", loss, p, {"table": d})


def test_softmax_gradients(rng):
    p = {"x": rng.normal(size=(3, 6))}
    R = _probe(rng, (3, 6))

    def loss(q):
        return float((nn.softmax(q["x"]) * R).sum())

    s = nn.softmax(p["x"])
    assert_gradients("softmax", loss, p, {"x": nn.softmax_backward(R, s)})


def test_layernorm_gradients(rng):
    p = {"x": rng.normal(size=(4, 5)), "gamma": rng.normal(size=5), "beta": rng.normal(size=5)}
    R = _probe(rng, (4, 5))

    def loss(q):
        return float((nn.layernorm_forward(q["x"], q["gamma"], q["beta"])[0] * R).sum())

    _, cache = nn.layernorm_forward(p["x"], p["gamma"], p["beta"])
    dx, dg, db = nn.layernorm_backward(R, cache)
    assert_gradients("layernorm", loss, p, {"x": dx, "gamma": dg, "beta": db})


def test_relu_gradients(rng):
    x = rng.normal(size=(4, 6))
    x[np.abs(x) < 1e-3] = 0.5  # keep finite differences away from the kink
    R = _probe(rng, (4, 6))

    def loss(q):
        return float((nn.relu_forward(q["x"])[0] * R).sum())

    _, cache = nn.relu_forward(x)
    assert_gradients("relu", loss, {"x": x}, {"x": nn.relu_backward(R, cache)})


def _two_layer_case(rng, forward, backward, label, d_out):
    p = {
        "x": rng.normal(size=(5, 4)),
        "W1": rng.normal(size=(4, 8)),
        "b1": rng.normal(size=8),
        "W2": rng.normal(size=(8, d_out)),
        "b2": rng.normal(size=d_out),
    }
    R = _probe(rng, (5, d_out))

    def loss(q):
        return float((forward(q["x"], q["W1"], q["b1"], q["W2"], q["b2"])[0] * R).sum())

    _, cache = forward(p["x"], p["W1"], p["b1"], p["W2"], p["b2"])
    assert np.abs(cache["pre"]).min() > 1e-4, "test case sits on a ReLU kink; change the seed"
    assert_gradients(label, loss, p, backward(R, cache))


def test_ffn_gradients(rng):
    _two_layer_case(rng, nn.ffn_forward, nn.ffn_backward, "ffn", 4)


def test_mlp_gradients(rng):
    _two_layer_case(rng, nn.mlp_forward, nn.mlp_backward, "prediction_mlp", 20)


def test_cross_entropy_gradients(rng):
    targets = np.array([3, 0, 6, 6])
    p = {"logits": rng.normal(size=(4, 7))}

    def loss(q):
        return nn.cross_entropy_forward(q["logits"], targets)[0]

    mean, per, cache = nn.cross_entropy_forward(p["logits"], targets)
    # independent: -log of the softmax probability of each target
    probs = np.exp(p["logits"]) / np.exp(p["logits"]).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(per, -np.log(probs[np.arange(4), targets]), rtol=1e-13)
    assert np.isclose(mean, per.mean())
    assert_gradients("cross_entropy", loss, p, {"logits": nn.cross_entropy_backward(cache)})


def _attention_params(rng, d=4, d_k=3, d_v=2):
    return {
        "W_Q": rng.normal(size=(d, d_k)),
        "W_K": rng.normal(size=(d, d_k)),
        "W_V": rng.normal(size=(d, d_v)),
        "W_O": rng.normal(size=(d_v, d)),
    }


def test_self_attention_gradients(rng):
    n = 6
    p = {"x": rng.normal(size=(n, 4)), **_attention_params(rng)}
    mask = nn.causal_mask(n)
    R = _probe(rng, (n, 4))

    def loss(q):
        out, _ = nn.attention_forward(q["x"], q["x"], q["W_Q"], q["W_K"], q["W_V"], q["W_O"], mask)
        return float((out * R).sum())

    _, cache = nn.attention_forward(p["x"], p["x"], p["W_Q"], p["W_K"], p["W_V"], p["W_O"], mask)
    g = nn.attention_backward(R, cache)
    grads = {"x": g["x_q"] + g["x_kv"], **{k: g[k] for k in ("W_Q", "W_K", "W_V", "W_O")}}
    assert_gradients("attention_self_causal", loss, p, grads)


def test_cross_attention_gradients_with_padding(rng):
    n_q, m = 3, 5
    p = {"x_q": rng.normal(size=(n_q, 4)), "x_kv": rng.normal(size=(m, 4)), **_attention_params(rng)}
    mask = nn.padding_mask([True, True, True, False, False], n_q)
    R = _probe(rng, (n_q, 4))

    def loss(q):
        out, _ = nn.attention_forward(q["x_q"], q["x_kv"], q["W_Q"], q["W_K"], q["W_V"], q["W_O"], mask)
        return float((out * R).sum())

    _, cache = nn.attention_forward(p["x_q"], p["x_kv"], p["W_Q"], p["W_K"], p["W_V"], p["W_O"], mask)
    g = nn.attention_backward(R, cache)
    assert np.all(g["x_kv"][3:] == 0), "padded source rows must receive no gradient"
    np.testing.assert_array_equal(g["x_kv"], g["x_k"] + g["x_v"])
    assert_gradients("attention_cross_padded", loss, p, {name: g[name] for name in p})


def test_attention_gradients_with_separate_key_and_value_rows(rng):
    """Keys and values may read different rows (x_v): each gets its own gradient, x_k and x_v."""
    n_q, m = 3, 4
    p = {"x_q": rng.normal(size=(n_q, 4)), "x_k": rng.normal(size=(m, 4)), "x_v": rng.normal(size=(m, 4)),
         **_attention_params(rng)}
    R = _probe(rng, (n_q, 4))

    def run(q):
        return nn.attention_forward(q["x_q"], q["x_k"], q["W_Q"], q["W_K"], q["W_V"], q["W_O"], x_v=q["x_v"])

    def loss(q):
        return float((run(q)[0] * R).sum())

    out, cache = run(p)
    np.testing.assert_allclose(cache["V"], p["x_v"] @ p["W_V"])
    np.testing.assert_allclose(cache["K"], p["x_k"] @ p["W_K"])
    g = nn.attention_backward(R, cache)
    assert_gradients("attention_separate_values", loss, p, {name: g[name] for name in p})


def test_multihead_gradients(rng):
    n, d, H = 5, 6, 3
    p = {"x": rng.normal(size=(n, d)), "W_O": rng.normal(size=(H * 2, d))}
    for h in range(H):
        p[f"Q{h}"] = rng.normal(size=(d, 2))
        p[f"K{h}"] = rng.normal(size=(d, 2))
        p[f"V{h}"] = rng.normal(size=(d, 2))
    mask = nn.causal_mask(n)
    R = _probe(rng, (n, d))

    def heads(q):
        return [{"W_Q": q[f"Q{h}"], "W_K": q[f"K{h}"], "W_V": q[f"V{h}"]} for h in range(H)]

    def loss(q):
        return float((nn.multihead_forward(q["x"], q["x"], heads(q), q["W_O"], mask)[0] * R).sum())

    _, cache = nn.multihead_forward(p["x"], p["x"], heads(p), p["W_O"], mask)
    g = nn.multihead_backward(R, cache)
    grads = {"x": g["x_q"] + g["x_kv"], "W_O": g["W_O"]}
    for h, gh in enumerate(g["heads"]):
        grads.update({f"Q{h}": gh["W_Q"], f"K{h}": gh["W_K"], f"V{h}": gh["W_V"]})
    assert_gradients("multihead", loss, p, grads)
