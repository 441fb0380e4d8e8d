"""Engine pieces of Part 3 sections 15-17: masks of the families and of packed sequences, path lengths
of local layers, Adam, FlashAttention-style tiled attention, the packed decoder pass."""

from __future__ import annotations

import numpy as np
import pytest

import tinyformer.nn as nn
from tests.engine.conftest import assert_gradients
from tinyformer.models import decoder_stack as ds
from tinyformer.ops import count_macs


def test_family_masks():
    assert nn.full_mask(3).shape == (3, 3) and nn.full_mask(3).all()
    assert nn.full_mask(2, 5).shape == (2, 5) and nn.full_mask(2, 5).all()
    assert np.array_equal(nn.full_mask(2, 4), nn.padding_mask([True] * 4, 2))


def test_segment_causal_mask_is_block_diagonal_causal():
    m = nn.segment_causal_mask([2, 3])
    expected = np.zeros((5, 5), dtype=bool)
    expected[:2, :2] = nn.causal_mask(2)
    expected[2:, 2:] = nn.causal_mask(3)
    assert np.array_equal(m, expected)
    assert nn.segment_positions([2, 3]).tolist() == [0, 1, 0, 1, 2]
    with pytest.raises(ValueError, match="at least one position"):
        nn.segment_causal_mask([2, 0])


@pytest.mark.parametrize("width", [1, 2, 3, 5])
def test_local_mask_and_hops_by_brute_force(width):
    n = 9
    m = nn.local_mask(n, width)
    for i in range(n):
        for j in range(n):
            assert m[i, j] == (0 <= i - j < width)
    h = nn.hops(m)
    for i in range(n):
        for j in range(n):
            if j > i or (width == 1 and i != j):
                assert h[i, j] == -1  # never reached: the future, or no link back at all
            else:
                assert h[i, j] == -(-(i - j) // (width - 1)) if width > 1 else h[i, j] == 0
    assert np.array_equal(nn.hops(nn.causal_mask(n)), np.where(nn.causal_mask(n), 1, -1) - np.eye(n, dtype=int))


def test_hops_respect_a_layer_limit():
    one_layer = nn.hops(nn.local_mask(6, 3), max_layers=1)
    assert one_layer[5, 4] == 1 and one_layer[5, 3] == 1 and one_layer[5, 2] == -1


def test_adam_matches_the_formula_and_leaves_its_inputs_alone():
    p = {"w": np.array([1.0, -2.0]), "b": np.array([0.5])}
    g1 = {"w": np.array([0.1, -0.3]), "b": np.array([2.0])}
    g2 = {"w": np.array([-0.2, 0.1]), "b": np.array([1.0])}
    copy = {k: v.copy() for k, v in p.items()}
    p1, s1 = nn.adam_step(p, g1, nn.AdamState(), lr=0.1)
    assert all(np.array_equal(p[k], copy[k]) for k in p) and s1.step == 1
    # first step: the bias-corrected m/sqrt(v) is the gradient's sign
    for k in p:
        np.testing.assert_allclose(p1[k], p[k] - 0.1 * np.sign(g1[k]), rtol=1e-7)
    p2, s2 = nn.adam_step(p1, g2, s1, lr=0.1)
    for k in p:
        m = 0.9 * 0.1 * g1[k] + 0.1 * g2[k]
        v = 0.999 * 0.001 * g1[k] ** 2 + 0.001 * g2[k] ** 2
        step = 0.1 * (m / (1 - 0.9**2)) / (np.sqrt(v / (1 - 0.999**2)) + 1e-8)
        np.testing.assert_allclose(p2[k], p1[k] - step, rtol=1e-12)
    assert s1.step == 1 and s2.step == 2
    with pytest.raises(KeyError, match="no gradient"):
        nn.adam_step(p, {"w": g1["w"]}, nn.AdamState(), lr=0.1)


def test_adam_minimises_a_badly_scaled_quadratic_where_sgd_crawls():
    """Adam's point: each coordinate moves at its own scale."""
    scales = np.array([100.0, 0.01])
    loss = lambda w: 0.5 * float(np.sum(scales * w**2))  # noqa: E731
    adam, sgd, state = {"w": np.ones(2)}, {"w": np.ones(2)}, nn.AdamState()
    for _ in range(300):
        adam, state = nn.adam_step(adam, {"w": scales * adam["w"]}, state, lr=0.05)
        sgd = nn.sgd_step(sgd, {"w": scales * sgd["w"]}, lr=0.019)  # just under the stability limit 2/100
    assert loss(adam["w"]) < 1e-3 < loss(sgd["w"])


@pytest.mark.parametrize("n_q,n_kv,block", [(7, 7, 3), (8, 8, 2), (5, 9, 4), (6, 6, 6), (4, 4, 1)])
def test_tiled_attention_equals_full_attention_and_holds_one_tile(rng, n_q, n_kv, block):
    Q, K, V = rng.normal(size=(n_q, 3)), rng.normal(size=(n_kv, 3)), rng.normal(size=(n_kv, 2))
    masks = [None, nn.padding_mask(rng.random(n_kv) < 0.7, n_q)]
    if n_q == n_kv:
        masks.append(nn.causal_mask(n_q))
    for mask in masks:
        if mask is not None and not mask.any(axis=1).all():
            continue
        full = mask if mask is not None else nn.full_mask(n_q, n_kv)
        reference = nn.softmax(np.where(full, Q @ K.T / np.sqrt(3), -np.inf)) @ V
        with count_macs() as counter:
            out, stats = nn.tiled_attention_forward(Q, K, V, mask, block=block)
        np.testing.assert_allclose(out, reference, rtol=0, atol=1e-14)
        assert stats["tile_numbers"] == min(block, n_q) * min(block, n_kv)
        assert stats["tiles"] == -(-n_q // block) * -(-n_kv // block)
        assert dict(counter.by_tag) == {"scores": n_q * n_kv * 3, "mix": n_q * n_kv * 2}


CFG = ds.DecoderConfig(vocab_size=6, context=5, d_model=4, n_heads=2, n_layers=2, d_ff=6)


def test_packed_pass_equals_separate_passes():
    p = ds.init_params(CFG, 3)
    seqs = [np.array([1, 2, 3]), np.array([4]), np.array([5, 0, 2, 1, 3])]
    ids, lengths = np.concatenate(seqs), [len(s) for s in seqs]
    packed = ds.forward(p, ids, segments=lengths)
    start = 0
    for s in seqs:
        alone = ds.forward(p, s)
        np.testing.assert_allclose(packed["probs"][start:start + len(s)], alone["probs"], rtol=0, atol=1e-14)
        start += len(s)
    with pytest.raises(ValueError, match="do not add up"):
        ds.forward(p, ids, segments=[3, 1])
    with pytest.raises(nn.ContextLimitError):
        ds.forward(p, np.arange(6) % 6, segments=[6])


def test_packed_loss_is_the_prediction_weighted_mean_and_its_gradients_check():
    p = ds.init_params(CFG, 4)
    rng = np.random.default_rng(4)
    seqs = [rng.integers(0, 6, size=k) for k in (4, 2, 5)]
    ids = np.concatenate([s[:-1] for s in seqs])
    targets = np.concatenate([s[1:] for s in seqs])
    lengths = [len(s) - 1 for s in seqs]
    loss, per, grads, _ = ds.loss_and_grads(p, ids, targets, segments=lengths)
    separate = [ds.loss_and_grads(p, s[:-1], s[1:]) for s in seqs]
    weights = np.array(lengths) / sum(lengths)
    assert loss == pytest.approx(sum(w * r[0] for w, r in zip(weights, separate)), rel=1e-12)
    for name in p:
        mixed = sum(w * r[2][name] for w, r in zip(weights, separate))
        np.testing.assert_allclose(grads[name], mixed, rtol=1e-9, atol=1e-13)
    assert_gradients("decoder packed", lambda q: ds.loss_and_grads(q, ids, targets, segments=lengths)[0], p, grads)
