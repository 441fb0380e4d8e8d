"""One example of every figure kind, shaped like the book's uses: the figure tests draw and
check each one, `tests/figures/make_previews.py` renders them, and the book's page *The figure
functions* draws `demo(name)` of each function at every build, beside what `describe` says of it.
``python -m bookfigures.catalogue`` prints that page's tables, for an author without a built site.

The numbers are synthetic (seeded) - the point is the shapes: a 10 x 10 causal head,
a 4 x 4 encoder, the 3 x 4 cross-attention of teacher forcing, a single query row, 20
and 5 vocabulary bars, two before/after panels, cost curves, a long loss curve. The wiring
and unit diagrams are drawn from the engine's own toy models.
"""

from __future__ import annotations

import inspect
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
                "self_rows": "after self-attention", "cross_rows": "after cross-attention"}


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


# --- the wiring and unit diagrams, on the book's own models (bookfigures.wiring, .units) ---


def _priya():
    from tinyformer.models import block_parts

    heads = block_parts.load_heads()
    return heads, block_parts.heads_forward(heads)


def _river():
    from tinyformer.models import onehead

    toy = onehead.load_params()
    return toy, onehead.forward(toy, onehead.encode(onehead.RIVER_SENTENCE))


def _twoblock():
    from tinyformer.models import twoblock

    p = twoblock.load_params()
    return p, twoblock.forward(p)


def _encdec_out():
    from tinyformer.models import encdec

    return encdec.forward(encdec.load_params(), encdec.PAIRS[0][0], "<bos> la rive")


def _reads():
    from tinyformer import nn

    n, k, window = 10, 3, 3
    return ({"fixed window": nn.local_mask(n, window), "recurrent": nn.local_mask(n, 2),
             "convolution": nn.local_mask(n, k), "self-attention": nn.causal_mask(n)},
            {"fixed window": 1})


def _wiring_examples() -> dict[str, Example]:
    from tinyformer import cost, nn
    from tinyformer.models import block_parts, encdec, onehead, twoblock

    river_words = list(onehead.RIVER_SENTENCE)
    teaching_q = np.array([1.0, 2.0, 0.0, 1.0])
    teaching_k = np.array([[0.4, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 0.0], [1.0, 0.0, -1.0, 0.0]])
    teaching_w = softmax(teaching_k @ teaching_q / 2.0)
    teaching_v = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    return {
        "wiring_multihead": Example(
            lambda: bf.multihead_diagram(_priya()[1]["E"], _priya()[0]["heads"], _priya()[0]["W_O"],
                                         _priya()[1]["mask"]), 25),
        "wiring_rows_features": Example(
            lambda: bf.rows_and_features(_river()[1]["weights"], river_words, river_words.index("bank"),
                                         block_parts.load_ffn(), mask=_river()[1]["mask"],
                                         coordinates=onehead.COORDINATES), 12),
        "wiring_residual_stream": Example(
            lambda: bf.residual_stream(_twoblock()[0], _twoblock()[1]["ids"]), 15),
        "wiring_norm_pre": Example(lambda: bf.norm_placement(_twoblock()[0], _twoblock()[1]["residual"][0], "pre"), 7),
        "wiring_norm_post": Example(
            lambda: bf.norm_placement(_twoblock()[0], _twoblock()[1]["residual"][0], "post"), 7),
        "wiring_generation_loop": Example(
            lambda: bf.generation_loop(_twoblock()[0], twoblock.encode(twoblock.SENTENCE), 3, twoblock.decode), 3),
        "wiring_sources_self_cross": Example(lambda: bf.attention_sources(_encdec_out()), 8),
        "wiring_sources_three_jobs": Example(lambda: bf.attention_sources(_encdec_out(), ("enc", "dec", "cross")), 12),
        "wiring_two_sequences": Example(
            lambda: bf.two_sequences(encdec.load_params(), encdec.PAIRS[0][0], "<bos> la"), 10),
        "units_score_grids": Example(lambda: bf.score_grids([4, 8], cost.PART2), 2),
        "units_window_inputs": Example(lambda: bf.window_inputs(river_words, 3, cost.PART2), 3),
        "units_prefix_means": Example(lambda: bf.prefix_means(river_words, cost.PART2), 3),
        "units_final_row": Example(
            lambda: bf.final_row(onehead.load_params(), onehead.encode(onehead.RIVER_SENTENCE), onehead.VOCAB,
                                 target="water"), 25),
        "units_reach_window_recurrence": Example(
            lambda: bf.reach({m: _reads()[0][m] for m in ("fixed window", "recurrent")}, _reads()[1]), 2),
        "units_reach_conv_attention": Example(
            lambda: bf.reach({m: _reads()[0][m] for m in ("convolution", "self-attention")}, _reads()[1]), 2),
        "units_allowed_context": Example(
            lambda: bf.allowed_context(onehead.decode(onehead.all_positions_example()[0]),
                                       onehead.decode(onehead.all_positions_example()[1]), nn.causal_mask(10)), 10),
        "units_query_keys": Example(
            lambda: bf.query_against_keys(teaching_q, teaching_k, ["the", "cat", "sleeps"], "le"), 3),
        "units_value_mixture": Example(
            lambda: bf.value_mixture(teaching_w, teaching_v, ["the", "cat", "sleeps"]), 4),
        "units_past_memory": Example(lambda: bf.past_and_memory(_encdec_out()), 21),
        "units_fitted_weights": Example(
            lambda: bf.fitted_cross_weights(encdec.load_checkpoint(), *encdec.PAIRS[0]), 6),
    }


EXAMPLES.update(_wiring_examples())


# --- one demo per figure function: what a reader of the catalogue sees --------------------

#: For each function of `bookfigures` that draws a figure, the example that shows it best.
DEMOS: dict[str, str] = {
    "allowed_context": "units_allowed_context",
    "attention_heatmap": "heatmap_cross_3x4",
    "attention_sources": "wiring_sources_self_cross",
    "bar_sizes": "bar_sizes_log",
    "cost_curves": "cost_curves",
    "dataflow_diagram": "dataflow_block",
    "final_row": "units_final_row",
    "fitted_cross_weights": "units_fitted_weights",
    "generation_loop": "wiring_generation_loop",
    "labelled_points": "labelled_points_27",
    "line_chart": "line_chart",
    "loss_curve": "loss_curve_two_with_references",
    "mask_panels": "mask_panels_families",
    "matrix_view": "matrix_view",
    "multihead_diagram": "wiring_multihead",
    "norm_placement": "wiring_norm_pre",
    "paired_bars": "paired_bars_losses",
    "past_and_memory": "units_past_memory",
    "prefix_means": "units_prefix_means",
    "probability_bars": "probability_bars_logits",
    "query_against_keys": "units_query_keys",
    "reach": "units_reach_window_recurrence",
    "residual_stream": "wiring_residual_stream",
    "row_before_after": "row_before_after",
    "rows_and_features": "wiring_rows_features",
    "score_grids": "units_score_grids",
    "shape_diagram": "shape_diagram",
    "sliding_window": "sliding_window",
    "step_rows": "step_rows",
    "two_sequences": "wiring_two_sequences",
    "value_mixture": "units_value_mixture",
    "window_inputs": "units_window_inputs",
    "work_steps": "work_steps",
}


def _returns_figure(name: str) -> bool:
    annotation = inspect.signature(inspect.unwrap(getattr(bf, name))).return_annotation
    return annotation in (Figure, "Figure")


def figure_functions() -> list[str]:
    """The public functions of `bookfigures` that return a figure, by name."""
    return sorted(name for name in bf.__all__ if _returns_figure(name))


def helper_functions() -> list[str]:
    """The public names of `bookfigures` that draw nothing (text alternatives, labels, the style)."""
    return sorted(name for name in bf.__all__ if not _returns_figure(name))


def summary(name: str) -> str:
    """The first paragraph of the function's docstring, on one line: what it draws or gives."""
    doc = inspect.getdoc(getattr(bf, name)) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


def call(name: str) -> str:
    """How it is called: ``name(required, arguments, …)``, the ellipsis standing for its options."""
    params = inspect.signature(inspect.unwrap(getattr(bf, name))).parameters.values()
    required = [p.name for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    optional = len(required) < len(params)
    return f"{name}({', '.join(required + (['…'] if optional else []))})"


def demo(name: str) -> Figure:
    """The figure function ``name`` drawn from its demo data."""
    return EXAMPLES[DEMOS[name]].build()


def listing() -> str:
    """Every public function of `bookfigures`, as the page's tables list it: its call and,
    indented below, what it draws or gives; the figure functions first."""
    lines = []
    for title, names in (("Figure functions", figure_functions()), ("Helpers (they draw nothing)", helper_functions())):
        lines += [f"{title}:"] + [f"  {call(name)}\n      {summary(name)}" for name in names]
    lines.append("(… stands for the optional arguments: help(bookfigures.NAME) shows them)")
    return "\n".join(lines)


if __name__ == "__main__":
    print(listing())
