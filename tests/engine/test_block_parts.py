"""Part 3's illustrative block parts: three heads for one pronoun, a 4 -> 8 -> 4 FFN, post-norm."""

from __future__ import annotations

import numpy as np
import pytest

import tinyformer.nn as nn
from tinyformer.models import block_parts as bp
from tinyformer.models import decoder_stack as ds
from tinyformer.models import onehead
from tests.engine.conftest import assert_gradients

SHE = bp.PRIYA_SENTENCE.index("she")


@pytest.fixture(scope="module")
def heads():
    return bp.load_heads()


def test_each_head_finds_its_own_source_for_she(heads):
    out = bp.heads_forward(heads)
    targets = ["Priya", "opened", ";"]
    for cache, word in zip(out["heads"], targets, strict=True):
        assert bp.PRIYA_SENTENCE[int(cache["weights"][SHE].argmax())] == word
        assert cache["weights"][SHE].max() > 0.5
    tops = {int(c["weights"][SHE].argmax()) for c in out["heads"]}
    assert len(tops) == 3


def test_every_head_reads_the_full_row_and_shares_one_mask(heads):
    out = bp.heads_forward(heads)
    d = len(heads["coordinates"])
    for h, cache in zip(heads["heads"], out["heads"]):
        assert h["W_Q"].shape[0] == h["W_K"].shape[0] == h["W_V"].shape[0] == d
        np.testing.assert_array_equal(cache["x_q"], out["E"])
        np.testing.assert_array_equal(cache["mask"], out["mask"])
        assert np.all(cache["weights"][~out["mask"]] == 0)


def test_concatenation_by_columns_then_W_O(heads):
    out = bp.heads_forward(heads)
    width = heads["heads"][0]["W_V"].shape[1]
    for h, cache in enumerate(out["heads"]):
        np.testing.assert_array_equal(out["concat"][:, h * width:(h + 1) * width], cache["message"])
    np.testing.assert_allclose(out["update"], out["concat"] @ heads["W_O"], rtol=0, atol=1e-15)
    assert out["concat"].shape[1] == len(heads["coordinates"])  # 3 heads x 2 = model width


def test_ffn_has_one_decimal_weights_and_treats_rows_alike():
    f = bp.load_ffn()
    assert f["W1"].shape == (4, 8) and f["W2"].shape == (8, 4) and len(f["hidden_units"]) == 8
    for w in ("W1", "b1", "W2", "b2"):
        assert np.array_equal(np.round(f[w] * 10), f[w] * 10)
    rows = onehead.forward(onehead.load_params(), onehead.encode(onehead.RIVER_SENTENCE))["E_prime"]
    together = bp.ffn_forward(f, rows)["update"]
    for i, row in enumerate(rows):
        np.testing.assert_allclose(bp.ffn_forward(f, row)["update"][0], together[i], rtol=0, atol=1e-15)
    bank = bp.ffn_forward(f, rows[onehead.RIVER_SENTENCE.index("bank")])
    assert 0 < (bank["pre"] > 0).sum() < 8  # ReLU keeps some units and zeroes others


def _block_params(seed):
    cfg = ds.DecoderConfig(vocab_size=5, context=6, d_model=4, n_heads=2, n_layers=1, d_ff=6)
    p = ds.init_params(cfg, seed)
    rng = np.random.default_rng(seed + 7)
    for k in p:
        if k.endswith(("gamma", "beta", "b1", "b2")):
            p[k] = p[k] + 0.3 * rng.normal(size=p[k].shape)
    return {k: v for k, v in p.items() if k.startswith("block0.")}, cfg


@pytest.mark.parametrize("arrangement", ["pre", "post"])
def test_block_gradients_in_both_arrangements(arrangement):
    p, cfg = _block_params(4)
    rng = np.random.default_rng(11)
    x = rng.normal(size=(5, 4))
    weights = rng.normal(size=(5, 4))
    mask = nn.causal_mask(5)
    fwd, bwd = {"pre": (ds.block_forward, ds.block_backward),
                "post": (ds.postnorm_block_forward, ds.postnorm_block_backward)}[arrangement]

    def loss(q):
        return float((fwd(q, 0, cfg.n_heads, x, mask)[0] * weights).sum())

    y, cache = fwd(p, 0, cfg.n_heads, x, mask)
    assert np.abs(cache["ffn"]["pre"]).min() > 5e-3
    dx, grads = bwd(weights, cache, 0)
    assert_gradients(f"{arrangement}norm_block", loss, p, grads)
    eps = 1e-6
    numeric = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        numeric[i] = ((fwd(p, 0, cfg.n_heads, xp, mask)[0] * weights).sum()
                      - (fwd(p, 0, cfg.n_heads, xm, mask)[0] * weights).sum()) / (2 * eps)
    np.testing.assert_allclose(dx, numeric, rtol=1e-6, atol=1e-8)


def test_postnorm_normalises_the_stream_and_prenorm_does_not():
    p, cfg = _block_params(3)
    for k in p:
        if "gamma" in k:
            p[k] = np.ones_like(p[k])
        if "beta" in k:
            p[k] = np.zeros_like(p[k])
    x = 3.0 * np.random.default_rng(5).normal(size=(5, 4))
    mask = nn.causal_mask(5)
    post, _ = ds.postnorm_block_forward(p, 0, cfg.n_heads, x, mask)
    pre, _ = ds.block_forward(p, 0, cfg.n_heads, x, mask)
    np.testing.assert_allclose(post.mean(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(post.var(axis=1), 1, atol=1e-4)
    assert np.abs(pre.var(axis=1) - 1).max() > 0.5
