"""One example of every figure kind, shaped like the book's uses (used by tests and previews).

The numbers are synthetic (seeded) - the point is the shapes: a 10 x 10 causal head,
a 4 x 4 encoder, the 3 x 4 cross-attention of teacher forcing, a single query row, 20
and 5 vocabulary bars, two before/after panels, cost curves, a long loss curve.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

import bookfigures as bf

SENTENCE = ["The", "fisherman", "sat", "beside", "the", "river", "bank", "near", "the", "the"]
SOURCE = ["the", "river", "bank", "<eos>"]
PREFIX = ["<bos>", "la", "rive"]
FRENCH = ["<eos>", "la", "rive", "banque", "le"]


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def causal_weights(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    mask = np.tril(np.ones((n, n), dtype=bool))
    scores = np.where(mask, rng.normal(0, 1.5, (n, n)), -np.inf)
    return softmax(scores), mask


@dataclass(frozen=True)
class Example:
    """A figure builder and how many rows its data table must have."""

    build: Callable[[], Figure]
    rows: int


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _heat10() -> Figure:
    w, mask = causal_weights(10)
    return bf.attention_heatmap(w, SENTENCE, SENTENCE, title="Causal head, river sentence", mask=mask)


LOGITS5 = np.array([-1.0, 0.2, 2.5, 0.9, -0.3])


def part2_graph():
    """The Part 2 head as the chapter draws it: from the input rows to the probabilities."""
    from tinyformer.models import onehead

    g = onehead.dataflow(onehead.load_params(), onehead.encode(onehead.RIVER_SENTENCE))
    g = g.collapse(["ids", "tok_rows", "pos_rows", "E"], into="E", label="input rows E")
    return g.collapse(["read", "pre", "hidden", "logits", "probs"], into="probs",
                      label="next-token probabilities", op_label="last row → MLP → softmax")


def part4_graph():
    """The encoder-decoder with both self-attention blocks folded, the bridge in full."""
    from tinyformer.models import encdec

    g = encdec.dataflow(encdec.load_params(), encdec.PAIRS[0][0], "<bos> la rive")
    for blk, label in (("enc.", "encoder ΔE"), ("dec.", "decoder ΔE")):
        g = g.collapse_prefix(blk, into=blk + "update", label=label, op_label="self-attention")
    return g.collapse(["cross.scores", "cross.weights"], into="cross.weights", label="A",
                      op_label="softmax(Q Kᵀ / √3)")


# Part 4's short box names: one column of them fits a phone.
PART4_LABELS = {"cross.Q": "Q", "cross.K": "K", "cross.V": "V", "cross.message": "A V", "cross.update": "ΔE",
                "src_ids": "English ids", "tgt_ids": "French ids", "encoded": "encoded rows",
                "self_rows": "French rows′", "cross_rows": "French rows″"}


def decoder_block_graph():
    """One pre-norm block of a small two-head decoder, heads folded."""
    from tinyformer.models import decoder_stack as ds

    cfg = ds.DecoderConfig(vocab_size=7, context=9, d_model=6, n_heads=2, n_layers=2, d_ff=8)
    g = ds.dataflow(ds.init_params(cfg, 0), [1, 2, 3, 4])
    for h in range(cfg.n_heads):
        g = g.collapse_prefix(f"b0.h{h}.", into=f"b0.h{h}", label=f"head {h + 1}",
                              op_label="attention", group="block 1")
    return g.only([n.id for n in g.nodes if n.id.startswith("b0.")])


WORK = [{"encoder": (4, 0), "cross K, V": (4, 0), "self K, V": (0, 0), "query": (0, 0)},
        {"encoder": (0, 0), "cross K, V": (0, 4), "self K, V": (1, 0), "query": (1, 0)},
        {"encoder": (0, 0), "cross K, V": (0, 4), "self K, V": (1, 1), "query": (1, 0)}]
WORK_COLUMNS = {"encoder": ("encoder rows", "p"), "cross K, V": ("cross K, V", "k"),
                "self K, V": ("French K, V", "v"), "query": ("query", "q")}

EXAMPLES: dict[str, Example] = {
    "heatmap_causal_10x10": Example(_heat10, 10),
    "heatmap_encoder_4x4": Example(
        lambda: bf.attention_heatmap(softmax(_rng(1).normal(0, 1, (4, 4))), SOURCE, SOURCE,
                                     title="Encoder self-attention"), 4),
    "heatmap_cross_3x4": Example(
        lambda: bf.attention_heatmap(softmax(_rng(2).normal(0, 1, (3, 4))), PREFIX, SOURCE,
                                     title="Cross-attention, teacher forcing"), 3),
    "heatmap_row_1x4": Example(
        lambda: bf.attention_heatmap(softmax(_rng(3).normal(0, 1, 4)), ["la"], SOURCE, decimals=3,
                                     ylabel="query"), 1),
    "step_rows": Example(
        lambda: bf.step_rows(softmax(_rng(4).normal(0, 1, (3, 4))),
                             ["1: <bos> \u2192 la", "2: la \u2192 rive", "3: rive \u2192 <eos>"], SOURCE,
                             title="Cross-attention row per generated token"), 3),
    "matrix_view": Example(
        lambda: bf.matrix_view(_rng(5).normal(0, 1, (4, 3)), SOURCE, ["c1", "c2", "c3"], role="k",
                               title="Keys K (4 \u00d7 3)"), 4),
    "matrix_view_signed": Example(
        lambda: bf.matrix_view(_rng(7).normal(0, 0.1, (4, 3)), ["r1", "r2", "r3", "r4"],
                               ["c1", "c2", "c3"], signed=True, decimals=3,
                               title="Gradient of W_Q"), 4),
    "probability_bars_20": Example(
        lambda: bf.probability_bars([f"tok{i}" for i in range(19)] + ["water"],
                                    softmax(_rng(6).normal(0, 1.5, 20)), target="water",
                                    title="Next token after \u201cthe\u201d"), 20),
    "probability_bars_logits": Example(
        lambda: bf.probability_bars(FRENCH, softmax(LOGITS5), target="rive", logits=LOGITS5,
                                    title="Vocabulary head at la"), 5),
    "row_before_after": Example(
        lambda: bf.row_before_after([[0.2, -0.1, 0.5, 0.3]] * 2,
                                    [[0.9, -0.05, 0.45, 0.1], [0.1, 0.8, 0.6, 0.35]],
                                    ["water", "money", "verb", "noun"],
                                    titles=["river sentence", "cheque sentence"],
                                    groups=["bank before (e)", "bank after (e\u2032)"]), 8),
    "paired_bars_losses": Example(
        lambda: bf.paired_bars([f"{i + 1} {a} \u2192 {b}" for i, (a, b) in enumerate(zip(SENTENCE, SENTENCE[1:] + ["water"]))],
                               _rng(8).uniform(1, 5, 10), _rng(9).uniform(0.5, 5, 10),
                               names=["loss before the step", "loss after"],
                               title="Loss at every position", xlabel="loss"), 10),
    "bar_sizes_log": Example(
        lambda: bf.bar_sizes(["W_Q", "W_K", "W_V", "W_O", "tokens", "positions"],
                             [0.0147, 0.0103, 0.0193, 2.4e-5, 0.0205, 0.0104], log=True,
                             title="Gradient norm per parameter", xlabel="gradient norm"), 6),
    "cost_curves": Example(
        lambda: bf.cost_curves(np.arange(1, 21), {"concatenation": 80 * np.arange(1, 21),
                                                  "attention": 5 * np.arange(1, 21) ** 2},
                               title="Cost against length"), 20),
    "cost_curves_log": Example(
        lambda: bf.cost_curves(2 ** np.arange(3, 11), {"attention": 5.0 * 4 ** np.arange(3, 11)},
                               logy=True, logx=True), 8),
    "loss_curve": Example(
        lambda: bf.loss_curve(np.arange(0, 2001, 20),
                              3.3 * np.exp(-np.arange(0, 2001, 20) / 400) + 0.9,
                              title="Training loss"), 101),
    "dataflow_part2": Example(lambda: bf.dataflow_diagram(part2_graph()), 13),
    "dataflow_part4": Example(
        lambda: bf.dataflow_diagram(part4_graph(), lanes=False, labels=PART4_LABELS,
                                    op_labels={"src_rows": "token + position", "tgt_rows": "token + position"}),
        20),
    "dataflow_block": Example(lambda: bf.dataflow_diagram(decoder_block_graph(), title="A pre-norm block"), 12),
    "work_steps": Example(
        lambda: bf.work_steps(["before step 1", "step 1", "step 2"], WORK, WORK_COLUMNS), 12),
    "loss_curve_two_with_references": Example(
        lambda: bf.loss_curve(np.arange(0, 16001, 800),
                              {"training names": 3.3 * np.exp(-np.arange(0, 16001, 800) / 300) + 2.0,
                               "held-out names": 3.3 * np.exp(-np.arange(0, 16001, 800) / 300) + 2.06},
                              references={"unigram, held-out": 2.81, "bigram, held-out": 2.35},
                              title="Training and held-out loss"), 21),
    "line_chart": Example(
        lambda: bf.line_chart(np.arange(3, 11), {"observed": np.linspace(0.04, 0.89, 8),
                                                 "model": np.linspace(0.13, 0.62, 8)},
                              xlabel="letters so far", ylabel="probability of the end", ylim=(0, 1)), 8),
    "labelled_points_27": Example(
        lambda: bf.labelled_points(_rng(8).normal(0, 1, (27, 2)), list(".abcdefghijklmnopqrstuvwxyz"),
                                   ["boundary"] + ["vowel" if c in "aeiou" else "consonant"
                                                   for c in "abcdefghijklmnopqrstuvwxyz"],
                                   xlabel="PCA 1", ylabel="PCA 2", title="Character embeddings"), 27),
    "sliding_window": Example(lambda: bf.sliding_window("aabid", 3, title="Pairs of aabid"), 6),
    "mask_panels_families": Example(
        lambda: bf.mask_panels({"encoder-only": np.ones((4, 4), bool), "decoder-only": np.tril(np.ones((4, 4), bool)),
                                "enc-dec: self": np.tril(np.ones((3, 3), bool)),
                                "enc-dec: cross": np.ones((3, 4), bool)}), 14),
    "shape_diagram": Example(
        lambda: bf.shape_diagram([("X", 4, 3, "e"), "@", ("$W_Q$", 3, 3, "q"), "=", ("Q", 4, 3, "q")],
                                 title="Queries from input rows"), 3),
}
