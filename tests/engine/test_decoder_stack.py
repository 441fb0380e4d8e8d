"""The Part 3 pre-norm decoder stack: shapes, causality, gradients, KV cache, context limit."""

from __future__ import annotations

import numpy as np
import pytest

import tinyformer.nn as nn
from tinyformer.models import decoder_stack as ds
from tests.engine.conftest import assert_gradients

SMALL = ds.DecoderConfig(vocab_size=7, context=9, d_model=6, n_heads=2, n_layers=2, d_ff=8)


def _params(cfg, seed):
    """Seeded init, with LayerNorm gains and biases moved off 1 and 0 so their gradients are exercised."""
    p = ds.init_params(cfg, seed)
    rng = np.random.default_rng(seed + 1000)
    for k in p:
        if k.endswith(("gamma", "beta", "b1", "b2")):
            p[k] = p[k] + 0.3 * rng.normal(size=p[k].shape)
    return p


def _min_ffn_preactivation(out):
    return min(np.abs(b["ffn"]["pre"]).min() for b in out["blocks"])


def test_init_is_deterministic_and_shaped():
    a, b, c = ds.init_params(SMALL, 3), ds.init_params(SMALL, 3), ds.init_params(SMALL, 4)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert any(not np.array_equal(a[k], c[k]) for k in a)
    assert a["tok"].shape == (7, 6) and a["pos"].shape == (9, 6)
    assert a["block1.head1.W_Q"].shape == (6, 3) and a["block0.W_O"].shape == (6, 6)
    assert a["block0.ffn.W1"].shape == (6, 8) and a["block0.ffn.W2"].shape == (8, 6)
    assert "vocab.W" not in a and not any("readout" in k for k in a)  # readout tied to "tok", no bias
    assert ds.config_from_params(a) == SMALL


def test_forward_shapes_and_tied_readout():
    p = _params(SMALL, 0)
    out = ds.forward(p, [1, 2, 3, 4])
    assert out["logits"].shape == (4, 7) and len(out["residual"]) == SMALL.n_layers + 1
    np.testing.assert_allclose(out["logits"], out["final_rows"] @ p["tok"].T, rtol=1e-13)
    np.testing.assert_allclose(out["probs"].sum(axis=1), 1.0, atol=1e-15)


def test_one_block_matches_the_prenorm_formula():
    cfg = ds.DecoderConfig(vocab_size=5, context=4, d_model=4, n_heads=1, n_layers=1, d_ff=8)
    p = _params(cfg, 1)
    ids = np.array([0, 3, 1])
    x = p["tok"][ids] + p["pos"][:3]

    def ln(z, g, b):
        return (z - z.mean(1, keepdims=True)) / np.sqrt(z.var(1, keepdims=True) + 1e-5) * g + b

    a = ln(x, p["block0.ln1.gamma"], p["block0.ln1.beta"])
    Q, K, V = (a @ p[f"block0.head0.{w}"] for w in ("W_Q", "W_K", "W_V"))
    S = np.where(np.tril(np.ones((3, 3))) > 0, Q @ K.T / np.sqrt(4), -np.inf)
    A = np.exp(S - S.max(1, keepdims=True))
    A /= A.sum(1, keepdims=True)
    x1 = x + A @ V @ p["block0.W_O"]
    f = ln(x1, p["block0.ln2.gamma"], p["block0.ln2.beta"])
    x2 = x1 + np.maximum(f @ p["block0.ffn.W1"] + p["block0.ffn.b1"], 0) @ p["block0.ffn.W2"] + p["block0.ffn.b2"]
    logits = ln(x2, p["lnf.gamma"], p["lnf.beta"]) @ p["tok"].T
    np.testing.assert_allclose(ds.forward(p, ids)["logits"], logits, rtol=1e-12, atol=1e-13)


def test_earlier_predictions_ignore_later_tokens():
    p = _params(SMALL, 0)
    a = ds.forward(p, [1, 2, 3, 4, 5])["logits"]
    b = ds.forward(p, [1, 2, 3, 0, 6])["logits"]
    np.testing.assert_allclose(a[:3], b[:3], rtol=0, atol=1e-13)
    assert not np.allclose(a[3], b[3])


@pytest.mark.parametrize("cfg,seed", [(SMALL, 0), (ds.DecoderConfig(5, 6, 4, 1, 1, 8), 2), (ds.DecoderConfig(6, 7, 6, 3, 1, 4, d_head=3), 5)])
def test_gradients(cfg, seed):
    p = _params(cfg, seed)
    rng = np.random.default_rng(seed)
    seq = rng.integers(0, cfg.vocab_size, size=min(cfg.context, 7))
    ids, targets = seq[:-1], seq[1:]
    value, per, grads, out = ds.loss_and_grads(p, ids, targets)
    assert _min_ffn_preactivation(out) > 5e-3, "a ReLU sits on its kink; pick another seed"
    np.testing.assert_allclose(per, -np.log(out["probs"][np.arange(ids.size), targets]), rtol=1e-12)

    def loss(q):
        return ds.loss_and_grads(q, ids, targets)[0]

    label = f"decoder_L{cfg.n_layers}_H{cfg.n_heads}_d{cfg.d_model}"
    assert_gradients(label, loss, p, grads)


def test_kv_cache_generation_equals_recomputation():
    p = _params(SMALL, 0)
    prompt = [3, 1, 4]
    cached = ds.generate(p, prompt, 7, use_cache=True)
    full = ds.generate(p, prompt, 7, use_cache=False)
    np.testing.assert_array_equal(cached["ids"], full["ids"])
    assert np.abs(cached["logits"] - full["logits"]).max() <= 1e-12
    sizes = cached["cache_sizes"]
    assert [s["keys_per_head"] for s in sizes] == list(range(3, 10))  # one more key per step
    d_head = SMALL.d_model // SMALL.n_heads
    assert [s["numbers"] for s in sizes] == [SMALL.n_layers * SMALL.n_heads * 2 * d_head * t for t in range(3, 10)]
    # each cached step's logits equal the last row of a full pass over the sequence so far
    for s in range(7):
        seq = cached["ids"][: 3 + s]
        np.testing.assert_allclose(cached["logits"][s], ds.forward(p, seq)["logits"][-1], rtol=0, atol=1e-12)


def test_context_limit_is_explicit():
    p = _params(SMALL, 0)
    ds.generate(p, [1, 2], 8)  # uses positions 1..9 = the whole table
    for use_cache in (True, False):
        with pytest.raises(nn.ContextLimitError, match="needs 10 positions"):
            ds.generate(p, [1, 2], 9, use_cache=use_cache)
    with pytest.raises(nn.ContextLimitError):
        ds.forward(p, np.zeros(10, dtype=int))
    cache = ds.prefill(p, np.arange(9) % 7)[1]
    with pytest.raises(nn.ContextLimitError):
        ds.step(p, cache, 0)
