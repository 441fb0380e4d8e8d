"""The cost model against brute-force counts of the engine's own matrix products."""

from __future__ import annotations

import numpy as np
import pytest

from tinyformer import cost
from tinyformer.models import baselines, decoder_stack as ds, onehead as m
from tinyformer.nn import causal_mask
from tinyformer.ops import count_macs


def _onehead_params(w: cost.Widths, context: int = 24, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    shapes = {"E_tok": (w.C, w.d), "P": (context, w.d), "W_Q": (w.d, w.d_k), "W_K": (w.d, w.d_k),
              "W_V": (w.d, w.d_v), "W_O": (w.d_v, w.d), "W1": (w.d, w.h), "b1": (w.h,), "W2": (w.h, w.C), "b2": (w.C,)}
    return {k: rng.normal(size=s) for k, s in shapes.items()}


WIDTHS = [cost.PART2, cost.Widths(d=5, d_k=2, d_v=3, h=6, C=7), cost.Widths(d=3, d_k=4, d_v=1, h=2, C=9)]
STACKS = [
    ds.DecoderConfig(vocab_size=7, context=12, d_model=6, n_heads=2, n_layers=2, d_ff=8),
    ds.DecoderConfig(vocab_size=5, context=12, d_model=4, n_heads=1, n_layers=1, d_ff=3),
    ds.DecoderConfig(vocab_size=9, context=12, d_model=6, n_heads=3, n_layers=3, d_ff=5, d_head=4),
]


def _counted(fn):
    with count_macs() as c:
        fn()
    return dict(c.by_tag)


def _split(counts):
    fwd = {k: v for k, v in counts.items() if ":" not in k}
    bwd = {k: v for k, v in counts.items() if ":" in k}
    return fwd, bwd


def test_part2_params_have_the_part2_widths():
    p = m.load_params()
    w = cost.PART2
    assert (w.d, w.d_k, w.d_v, w.h, w.C) == (4, 3, 2, 8, 20)
    assert p["W_Q"].shape == (w.d, w.d_k) and p["W_V"].shape == (w.d, w.d_v) and p["W2"].shape == (w.h, w.C)


@pytest.mark.parametrize("w", WIDTHS)
@pytest.mark.parametrize("n", [1, 4, 10, 11])
def test_onehead_full_pass_and_backward(w, n):
    p = _onehead_params(w)
    ids = np.arange(n) % w.C
    for readout, rows in (("all", n), ("last", 1)):
        targets = ids[:rows]
        fwd, bwd = _split(_counted(lambda: m.loss_and_grads(p, ids, targets, readout)))
        expected = cost.onehead_full(n, w, readout_rows=rows)
        assert fwd == expected
        assert bwd == cost.backward(expected)
        assert sum(bwd.values()) == 2 * cost.total(expected)


@pytest.mark.parametrize("w", WIDTHS)
@pytest.mark.parametrize("n", [1, 5, 10])
def test_onehead_final_row_prefill_and_cached_step(w, n):
    p = _onehead_params(w)
    ids = np.arange(n) % w.C
    cache = {}

    def run_prefill():
        cache.update(m.prefill(p, ids)[1])

    assert _counted(run_prefill) == cost.onehead_final_row(n, w)
    assert _counted(lambda: m.step(p, cache, 0)) == cost.onehead_cached_step(n + 1, w)


@pytest.mark.parametrize("n0,n_new", [(1, 5), (10, 10), (3, 1)])
def test_onehead_generation_and_query_source_visits(n0, n_new):
    p = m.load_params()
    prompt = m.encode(m.RIVER_SENTENCE)[:n0]
    for use_cache in (True, False):
        counted = _counted(lambda: m.generate(p, prompt, n_new, use_cache=use_cache))
        assert counted == cost.onehead_generation(n0, n_new, use_cache=use_cache)
    cached = _counted(lambda: m.generate(p, prompt, n_new))
    visits = sum(n0 + s for s in range(n_new))  # brute force: the query of step s reads n0 + s sources
    assert cost.generation_visits(n0, n_new) == visits
    assert cached["scores"] == cost.PART2.d_k * visits and cached["mix"] == cost.PART2.d_v * visits


@pytest.mark.parametrize("cfg", STACKS)
@pytest.mark.parametrize("n", [1, 3, 8])
def test_decoder_full_pass_and_backward(cfg, n):
    p = ds.init_params(cfg, 1)
    ids = np.arange(n) % cfg.vocab_size
    fwd, bwd = _split(_counted(lambda: ds.loss_and_grads(p, ids, ids)))
    expected = cost.decoder_full(n, cfg)
    assert fwd == expected and bwd == cost.backward(expected)


@pytest.mark.parametrize("cfg", STACKS)
@pytest.mark.parametrize("n0,n_new", [(1, 4), (5, 6)])
def test_decoder_prefill_steps_and_generation(cfg, n0, n_new):
    p = ds.init_params(cfg, 2)
    prompt = np.arange(n0) % cfg.vocab_size
    cache = {}

    def run_prefill():
        cache.update(ds.prefill(p, prompt)[1])

    assert _counted(run_prefill) == cost.decoder_prefill(n0, cfg)
    assert _counted(lambda: ds.step(p, cache, 0)) == cost.decoder_cached_step(n0 + 1, cfg)
    for use_cache in (True, False):
        counted = _counted(lambda: ds.generate(p, prompt, n_new, use_cache=use_cache))
        assert counted == cost.decoder_generation(n0, n_new, cfg, use_cache=use_cache)
    sizes = ds.generate(p, prompt, n_new)["cache_sizes"]
    assert [s["numbers"] for s in sizes] == [cost.kv_cache_numbers(n0 + s, cfg) for s in range(n_new)]


@pytest.mark.parametrize("w", WIDTHS)
@pytest.mark.parametrize("n,window", [(1, 3), (10, 3), (7, 5)])
def test_concat_and_prefix_mean_predictors(w, n, window):
    p = _onehead_params(w)
    ids = np.arange(n) % w.C
    p_window = {**p, "W1": np.ones((window * w.d, w.h))}
    assert _counted(lambda: baselines.window_concat_forward(p_window, ids, window, pad_id=0)) == cost.concat_predictor(n, window, w)
    assert _counted(lambda: baselines.prefix_mean_forward(p, ids)) == cost.prefix_mean_predictor(n, w)
    assert cost.attention_predictor(n, w) == cost.onehead_full(n, w)


def test_prefix_mean_predictor_reads_running_means():
    w = cost.PART2
    p = _onehead_params(w)
    ids = np.array([3, 1, 4, 1, 5])
    E = p["E_tok"][ids] + p["P"][:5]
    i = 3
    mean = E[: i + 1].mean(axis=0)
    expected = np.maximum(mean @ p["W1"] + p["b1"], 0) @ p["W2"] + p["b2"]
    np.testing.assert_allclose(baselines.prefix_mean_forward(p, ids)[i], expected, rtol=1e-12)


@pytest.mark.parametrize("w", WIDTHS)
@pytest.mark.parametrize("n", [1, 2, 10])
def test_prefix_mean_additions_and_divisions(w, n):
    """Summing n rows of d numbers takes (n - 1) d additions, one per number of every row after
    the first, whether one sum or all n running sums; each mean then takes d divisions."""
    rows = np.arange(n * w.d, dtype=float).reshape(n, w.d)
    additions, running = 0, rows[0].copy()
    for row in rows[1:]:
        running, additions = running + row, additions + row.size
    np.testing.assert_array_equal(running, rows.sum(axis=0))
    assert cost.prefix_mean_additions(n, w) == additions == (n - 1) * w.d
    assert cost.prefix_mean_divisions(1, w) == w.d and cost.prefix_mean_divisions(n, w) == n * w.d
    assert cost.prefix_mean_additions(10) == 36 and cost.prefix_mean_divisions(1) == 4  # the toy, n = 10


def test_causal_pairs_count_the_allowed_cells():
    for n in range(1, 30):
        assert cost.causal_pairs(n) == int(causal_mask(n).sum())
        assert cost.score_matrix_numbers(n) == causal_mask(n).size


def test_mac_rule_example():
    with count_macs() as c:
        from tinyformer.ops import matmul

        matmul(np.ones((4, 3)), np.ones((3, 2)), "x")
    assert c.total == cost.matmul_macs(4, 3, 2) == 4 * 2 * 3


@pytest.mark.parametrize("n,d,k", [(1, 4, 3), (10, 4, 3), (7, 3, 5)])
def test_sequence_model_layers_against_their_counted_passes(n, d, k):
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, d))
    rnn = {"W_x": rng.normal(size=(d, d)), "W_h": rng.normal(size=(d, d)), "b": np.zeros(d)}
    conv = {"W": rng.normal(size=(k * d, d)), "b": np.zeros(d)}
    attn = [rng.normal(size=(d, d)) for _ in range(4)]
    assert _counted(lambda: baselines.rnn_layer_forward(rnn, X)) == cost.rnn_layer(n, d)
    assert _counted(lambda: baselines.causal_conv_forward(conv, X)) == cost.causal_conv_layer(n, d, k)
    from tinyformer.nn import attention_forward

    assert _counted(lambda: attention_forward(X, X, *attn, causal_mask(n))) == cost.attention_layer(n, d)


def test_rnn_and_conv_layers_compute_what_they_say():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 2))
    rnn = {"W_x": rng.normal(size=(2, 2)), "W_h": rng.normal(size=(2, 2)), "b": rng.normal(size=2)}
    h, states = np.zeros(2), []
    for x in X:
        h = np.tanh(x @ rnn["W_x"] + h @ rnn["W_h"] + rnn["b"])
        states.append(h)
    np.testing.assert_allclose(baselines.rnn_layer_forward(rnn, X), np.array(states), rtol=1e-12)
    conv = {"W": rng.normal(size=(3 * 2, 2)), "b": rng.normal(size=2)}
    out = baselines.causal_conv_forward(conv, X)
    for t in range(6):
        expected = conv["b"].copy()
        for slot in range(3):  # slot 0 is the oldest row, t - 2
            j = t - 2 + slot
            if j >= 0:
                expected += X[j] @ conv["W"][2 * slot:2 * slot + 2]
        np.testing.assert_allclose(out[t], expected, rtol=1e-12)


def test_groups_cover_every_tag_once():
    counts = cost.onehead_full(12)
    grouped = cost.grouped(counts)
    assert sum(grouped.values()) == cost.total(counts)
    assert grouped["scores Q Kᵀ"] == counts["scores"] and grouped["prediction MLP"] == counts["mlp"] + counts["vocab"]
    with pytest.raises(ValueError, match="belong to no group"):
        cost.grouped({"ffn": 3})


@pytest.mark.parametrize("n", [1, 21, 64])
def test_stand_in_counts_like_the_toy_beyond_its_context(n):
    stand_in = cost.stand_in_onehead(cost.PART2, context=n)
    ids = np.arange(n) % cost.PART2.C
    assert cost.counted(lambda: m.forward(stand_in, ids, readout="all")) == cost.onehead_full(n)
    if n <= 20:
        real = m.load_params()
        assert cost.counted(lambda: m.forward(real, ids, readout="all")) == cost.onehead_full(n)
