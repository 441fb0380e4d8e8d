"""Multiply-accumulate (MAC) counts of the book's models, per operation group (tag).

A product [a x k][k x b] costs a*k*b MACs. Tags match `tinyformer.ops.matmul`:
qkv, scores, mix, out_proj, mlp (hidden layer of the prediction MLP), ffn (block FFN),
vocab (vocabulary head). Backward products carry the suffixes ":GWt" (G W^T, to the input)
and ":XtG" (X^T G, to the weight).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .models.decoder_stack import DecoderConfig
from .ops import count_macs


@dataclass(frozen=True)
class Widths:
    """Widths of the one-head toy: model d, query/key d_k, value d_v, MLP hidden h, vocabulary C."""

    d: int = 4
    d_k: int = 3
    d_v: int = 2
    h: int = 8
    C: int = 20


PART2 = Widths()


def matmul_macs(a: int, k: int, b: int) -> int:
    """[a x k][k x b]: a*b output cells, k products each."""
    return a * k * b


def causal_pairs(n: int) -> int:
    """Allowed (query, key) pairs under a causal mask: 1 + 2 + ... + n."""
    return n * (n + 1) // 2


def generation_visits(n0: int, m: int) -> int:
    """Source positions read by the queries of m cached steps after a prompt of n0: m n0 + m(m-1)/2."""
    return m * n0 + m * (m - 1) // 2


def score_matrix_numbers(n: int) -> int:
    """Entries of the full n x n score (or weight) matrix of one head."""
    return n * n


def total(counts: dict[str, int]) -> int:
    """Sum over operation groups."""
    return sum(counts.values())


# How Part 3 section 17 gathers the tags into the groups it plots: what grows with n, what with n^2.
GROUPS: dict[str, tuple[str, ...]] = {
    "projections (Q, K, V, W_O)": ("qkv", "out_proj"),
    "scores Q Kᵀ": ("scores",),
    "mixing A V": ("mix",),
    "prediction MLP": ("mlp", "vocab"),
}


def grouped(counts: dict[str, int], groups: dict[str, tuple[str, ...]] = GROUPS) -> dict[str, int]:
    """MACs per group of tags; refuses counts with a tag that no group names, so nothing is dropped."""
    named = {tag for tags in groups.values() for tag in tags}
    stray = set(counts) - named
    if stray:
        raise ValueError(f"tags {sorted(stray)} belong to no group")
    return {name: sum(counts.get(tag, 0) for tag in tags) for name, tags in groups.items()}


def counted(run: Callable[[], object]) -> dict[str, int]:
    """The MACs the engine's instrumented `matmul` performs while `run()` runs, by tag."""
    with count_macs() as counter:
        run()
    return dict(counter.by_tag)


def stand_in_onehead(w: Widths, context: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Random parameters with the one-head toy's shapes and `context` position rows, for counting only.

    A pass's MAC count depends on the shapes alone, so a stand-in with a longer position table
    lets the instrumented engine count sequences longer than the toy's 20 positions.
    """
    rng = np.random.default_rng(seed)
    shapes = {"E_tok": (w.C, w.d), "P": (context, w.d), "W_Q": (w.d, w.d_k), "W_K": (w.d, w.d_k),
              "W_V": (w.d, w.d_v), "W_O": (w.d_v, w.d), "W1": (w.d, w.h), "b1": (w.h,), "W2": (w.h, w.C),
              "b2": (w.C,)}
    return {name: rng.normal(size=shape) for name, shape in shapes.items()}


# ---- one layer of each sequence model of Part 3 section 16, d numbers in and out per position ----


def rnn_layer(n: int, d: int) -> dict[str, int]:
    """n sequential steps, each x_t W_x and h_(t-1) W_h: 2 n d^2."""
    return {"rnn": 2 * n * matmul_macs(1, d, d)}


def causal_conv_layer(n: int, d: int, k: int) -> dict[str, int]:
    """Every row mixes k rows (zeros before the start count too): n k d^2."""
    return {"conv": matmul_macs(n, k * d, d)}


def attention_layer(n: int, d: int) -> dict[str, int]:
    """One head with d_k = d_v = d, and W_O: 4 n d^2 for the projections, 2 n^2 d for scores and mixing."""
    return {"qkv": 3 * matmul_macs(n, d, d), "scores": matmul_macs(n, d, n), "mix": matmul_macs(n, n, d),
            "out_proj": matmul_macs(n, d, d)}


def backward(forward_counts: dict[str, int]) -> dict[str, int]:
    """Backward of every product Z = X W: G W^T and X^T G, each as many MACs as the forward product."""
    out: dict[str, int] = {}
    for tag, macs in forward_counts.items():
        out[f"{tag}:GWt"] = macs
        out[f"{tag}:XtG"] = macs
    return out


# ---- the one-head toy (Part 2) ----


def onehead_full(n: int, w: Widths = PART2, readout_rows: int | None = None) -> dict[str, int]:
    """All n rows through the head; the prediction MLP on readout_rows rows (default all n)."""
    r = n if readout_rows is None else readout_rows
    return {
        "qkv": matmul_macs(n, w.d, w.d_k) * 2 + matmul_macs(n, w.d, w.d_v),
        "scores": matmul_macs(n, w.d_k, n),
        "mix": matmul_macs(n, n, w.d_v),
        "out_proj": matmul_macs(n, w.d_v, w.d),
        "mlp": matmul_macs(r, w.d, w.h),
        "vocab": matmul_macs(r, w.h, w.C),
    }


def onehead_final_row(n: int, w: Widths = PART2) -> dict[str, int]:
    """Final-row-only prefill: keys and values of n rows, one query, one score-and-mix row, one prediction."""
    return {
        "qkv": matmul_macs(n, w.d, w.d_k + w.d_v) + matmul_macs(1, w.d, w.d_k),
        "scores": matmul_macs(1, w.d_k, n),
        "mix": matmul_macs(1, n, w.d_v),
        "out_proj": matmul_macs(1, w.d_v, w.d),
        "mlp": matmul_macs(1, w.d, w.h),
        "vocab": matmul_macs(1, w.h, w.C),
    }


def onehead_cached_step(n: int, w: Widths = PART2) -> dict[str, int]:
    """The step that adds position n to a cache of n - 1 keys and values: 2 d d_k + d d_v, n(d_k + d_v), ..."""
    return {
        "qkv": 2 * w.d * w.d_k + w.d * w.d_v,
        "scores": n * w.d_k,
        "mix": n * w.d_v,
        "out_proj": w.d_v * w.d,
        "mlp": w.d * w.h,
        "vocab": w.h * w.C,
    }


# ---- the three predictors of Part 3 section 17, all n predictions of one sequence ----


def concat_predictor(n: int, window: int, w: Widths = PART2) -> dict[str, int]:
    """Fixed window of `window` concatenated rows per prediction: n (w d h + h C)."""
    return {"mlp": matmul_macs(n, window * w.d, w.h), "vocab": matmul_macs(n, w.h, w.C)}


def prefix_mean_predictor(n: int, w: Widths = PART2) -> dict[str, int]:
    """Running mean of the prefix, then the MLP: n (d h + h C) MACs (plus (n - 1) d additions
    and n d divisions for the n means, not MACs: `prefix_mean_additions`, `prefix_mean_divisions`)."""
    return {"mlp": matmul_macs(n, w.d, w.h), "vocab": matmul_macs(n, w.h, w.C)}


def prefix_mean_additions(n: int, w: Widths = PART2) -> int:
    """Additions that sum n rows of d numbers column by column: (n - 1) d.

    The same count gives the one sum of a prefix of n rows and, kept as running sums, the sums of
    all n prefixes (each new row is added once to the sum before it). No multiply-accumulates.
    """
    return (n - 1) * w.d


def prefix_mean_divisions(means: int, w: Widths = PART2) -> int:
    """Divisions that turn `means` column sums into means: d per mean (d for one prediction from
    scratch, n d for the running means of all n prefixes)."""
    return means * w.d


def attention_predictor(n: int, w: Widths = PART2) -> dict[str, int]:
    """The one-head toy predicting at every position: n d (2 d_k + d_v) + n^2 (d_k + d_v) + ..."""
    return onehead_full(n, w)


# ---- the pre-norm decoder stack ----


def decoder_full(n: int, cfg: DecoderConfig, readout_rows: int | None = None) -> dict[str, int]:
    """All n rows through every block; the tied readout on readout_rows rows (default all n)."""
    r = n if readout_rows is None else readout_rows
    d, dh, H, L = cfg.d_model, cfg.head_width, cfg.n_heads, cfg.n_layers
    return {
        "qkv": L * H * 3 * matmul_macs(n, d, dh),
        "scores": L * H * matmul_macs(n, dh, n),
        "mix": L * H * matmul_macs(n, n, dh),
        "out_proj": L * matmul_macs(n, H * dh, d),
        "ffn": L * (matmul_macs(n, d, cfg.d_ff) + matmul_macs(n, cfg.d_ff, d)),
        "vocab": matmul_macs(r, d, cfg.vocab_size),
    }


def decoder_prefill(n: int, cfg: DecoderConfig) -> dict[str, int]:
    """Prompt pass before cached generation: every row in every layer, logits of the last row only."""
    return decoder_full(n, cfg, readout_rows=1)


def decoder_cached_step(n: int, cfg: DecoderConfig) -> dict[str, int]:
    """The step that adds position n: one new row per layer, its query against n cached keys."""
    d, dh, H, L = cfg.d_model, cfg.head_width, cfg.n_heads, cfg.n_layers
    return {
        "qkv": L * H * 3 * d * dh,
        "scores": L * H * n * dh,
        "mix": L * H * n * dh,
        "out_proj": L * H * dh * d,
        "ffn": L * 2 * d * cfg.d_ff,
        "vocab": d * cfg.vocab_size,
    }


def kv_cache_numbers(n: int, cfg: DecoderConfig) -> int:
    """Numbers held by a cache of n positions: one key and one value row per head per layer."""
    return cfg.n_layers * cfg.n_heads * n * 2 * cfg.head_width


def _add(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in a.keys() | b.keys()}


def decoder_generation(n0: int, m: int, cfg: DecoderConfig, use_cache: bool = True) -> dict[str, int]:
    """m greedy tokens after a prompt of n0: prefill + (m-1) cached steps, or m full recomputations."""
    if use_cache:
        counts = decoder_prefill(n0, cfg)
        for n in range(n0 + 1, n0 + m):
            counts = _add(counts, decoder_cached_step(n, cfg))
        return counts
    counts: dict[str, int] = {}
    for n in range(n0, n0 + m):
        counts = _add(counts, decoder_full(n, cfg, readout_rows=1))
    return counts


def onehead_generation(n0: int, m: int, w: Widths = PART2, use_cache: bool = True) -> dict[str, int]:
    """The same for the one-head toy (its prefill is the final-row-only pass)."""
    if use_cache:
        counts = onehead_final_row(n0, w)
        for n in range(n0 + 1, n0 + m):
            counts = _add(counts, onehead_cached_step(n, w))
        return counts
    counts = {}
    for n in range(n0, n0 + m):
        counts = _add(counts, onehead_full(n, w, readout_rows=1))
    return counts
