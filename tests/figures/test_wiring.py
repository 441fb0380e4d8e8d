"""The wiring and unit diagrams take every shape from the engine, never from a typed number.

Each diagram is built twice, from models (or inputs) of different sizes, and the labels it
writes must follow: a diagram that drifts from the model cannot pass. The pre/post-norm
selector must show, for each arrangement, the row variances the engine's own blocks give.
(Legibility, colours and determinism of every diagram are covered by `test_figures.py`
through `bookfigures/catalogue.py`.)
"""

from __future__ import annotations


import numpy as np
import pytest
from matplotlib.colors import to_hex
from matplotlib.patches import Circle, FancyBboxPatch, Rectangle

import bookfigures as bf
from tinyformer import cost, nn
from bookfigures.palette import INK_MUTED, NO_ROLE, ROLE_COLORS
from tinyformer.models import decoder_stack, encdec

CONFIGS = [
    decoder_stack.DecoderConfig(vocab_size=7, context=9, d_model=6, n_heads=2, n_layers=2, d_ff=8),
    decoder_stack.DecoderConfig(vocab_size=5, context=6, d_model=4, n_heads=1, n_layers=3, d_ff=3),
]


def _text(fig) -> str:
    """Every text of the figure, one per line (a label with a lowered subscript is several texts)."""
    return "\n".join(t.get_text() for ax in fig.axes for t in ax.texts)


def _prose(fig) -> str:
    """The figure's texts joined with single spaces, so a sentence wrapped over lines reads whole."""
    return " ".join(_text(fig).split())


def _table_shapes(fig) -> dict[str, str]:
    header, rows = fig.data_table
    return {str(r[0]): str(r[1]) for r in rows}


def _heads(d: int, d_head: int, n_heads: int, seed: int):
    rng = np.random.default_rng(seed)
    heads = [{w: rng.normal(size=(d, d_head)) for w in ("W_Q", "W_K", "W_V")} for _ in range(n_heads)]
    return heads, rng.normal(size=(n_heads * d_head, d))


@pytest.mark.parametrize("n, d, d_head, n_heads", [(5, 6, 3, 2), (7, 8, 2, 3), (4, 8, 2, 4)])
def test_multihead_shapes_are_the_engines(n, d, d_head, n_heads):
    heads, W_O = _heads(d, d_head, n_heads, seed=n)
    x = np.random.default_rng(0).normal(size=(n, d))
    fig = bf.multihead_diagram(x, heads, W_O, nn.causal_mask(n))
    update, cache = nn.multihead_forward(x, x, heads, W_O, nn.causal_mask(n))
    shapes = _table_shapes(fig)
    assert shapes["input rows E"] == f"{n} × {d}"
    assert shapes["messages side by side"] == " × ".join(map(str, cache["concat"].shape)) == f"{n} × {n_heads * d_head}"
    assert shapes["update ΔE"] == " × ".join(map(str, update.shape))
    assert shapes["head 1: W_Q"] == f"{d} × {d_head}" and shapes[f"head {n_heads}: message"] == f"{n} × {d_head}"
    text = _text(fig)
    assert f"Q, K, V: {n} × {d_head}" in text and f"({n_heads * d_head} × {d})" in text
    assert f"{d}-number row" in text
    assert (f"head {n_heads}" in text) and (("…" in text) == (n_heads > 3))
    alt = bf.multihead_alt(x, heads, W_O, nn.causal_mask(n))
    assert f"feed {n_heads} heads" in alt and f"{n} × {d}" in alt


@pytest.mark.parametrize("d, d_ff", [(4, 8), (3, 5)])
def test_rows_and_features_reads_the_ffn_widths_and_the_weights(d, d_ff):
    rng = np.random.default_rng(d)
    ffn = {"W1": rng.normal(size=(d, d_ff)), "b1": np.zeros(d_ff), "W2": rng.normal(size=(d_ff, d)), "b2": np.zeros(d)}
    n, row = 6, 3
    weights = nn.softmax(np.where(nn.causal_mask(n), rng.normal(size=(n, n)), -np.inf))
    tokens = [f"t{i}" for i in range(n)]
    fig = bf.rows_and_features(weights, tokens, row, ffn, mask=nn.causal_mask(n))
    text = _text(fig)
    assert f"hidden ({d_ff})" in text and f"W₁ᶠᶠ {d} × {d_ff}, ReLU" in text and f"W₂ᶠᶠ {d_ff} × {d}" in text
    assert f"{d * d_ff} + {d_ff * d}" in text
    for j in range(row + 1):  # the weights the receiving row gives, as the engine's softmax made them
        assert f"{weights[row, j]:.2f}" in text.split("\n")
    assert text.split("\n").count("—") == n - row - 1
    squares = [p for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_width() < 0.2]
    assert len(squares) >= 2 * d + d_ff


@pytest.mark.parametrize("cfg", CONFIGS)
def test_residual_stream_follows_the_config(cfg):
    params = decoder_stack.init_params(cfg, 0)
    ids = np.arange(cfg.context - 2) % cfg.vocab_size
    n = len(ids)
    fig = bf.residual_stream(params, ids)
    text = _text(fig).split("\n")
    assert text.count(f"attention, {cfg.n_heads} head" + ("s" if cfg.n_heads > 1 else "")) == cfg.n_layers
    assert text.count(f"FFN {cfg.d_model} → {cfg.d_ff} → {cfg.d_model}") == cfg.n_layers
    assert text.count(f"{n} × {cfg.d_model}") >= 4 * cfg.n_layers + 2
    assert f"{n} × {cfg.vocab_size}" in text
    assert [f"block {l + 1}" in text for l in range(cfg.n_layers + 1)] == [True] * cfg.n_layers + [False]
    pluses = [p for p in fig.axes[0].patches if isinstance(p, Circle) and p.get_radius() > 0.05]
    assert len(pluses) == 2 * cfg.n_layers  # one residual sum per branch
    alt = bf.residual_stream_alt(params, ids)
    assert f"through {2 * cfg.n_layers} branches" in alt and f"{n} × {cfg.vocab_size}" in alt


@pytest.mark.parametrize("cfg", CONFIGS)
def test_norm_placement_reads_where_layernorm_sits_from_the_graph(cfg):
    from bookfigures.wiring import _branches

    params = decoder_stack.init_params(cfg, 1)
    x = np.random.default_rng(2).normal(size=(5, cfg.d_model)) * 2
    for arrangement in ("pre", "post"):
        graph = decoder_stack.block_dataflow(params, x, 0, (arrangement,))
        steps = _branches(graph, f"{arrangement}.x", f"{arrangement}.b0.out")
        on_stream = [s for s in steps if s["kind"] == "ln"]
        in_branch = [s for s in steps if s["kind"] == "add" and s["ln"] is not None]
        if arrangement == "pre":
            assert not on_stream and len(in_branch) == 2
        else:
            assert len(on_stream) == 2 and not in_branch
        text = _prose(bf.norm_placement(params, x, arrangement))
        assert text.count(f"5 × {cfg.d_model}") >= 5
        assert f"FFN {cfg.d_model} → {cfg.d_ff} → {cfg.d_model}" in text
        var = bf.norm_variances(params, x)[arrangement]["out"]
        assert f"{var.min():.3f} to" in text and f"{var.max():.3f}." in text


@pytest.mark.parametrize("cfg", CONFIGS)
def test_the_selector_rows_are_the_engines_variances_for_each_arrangement(cfg):
    params = decoder_stack.init_params(cfg, 3)
    x = np.random.default_rng(4).normal(size=(6, cfg.d_model)) * 1.5
    labels = [f"{i + 1} t" for i in range(6)]
    header, table = bf.prepost_rows(params, x, labels)
    assert header[0] == "row" and sorted(table) == ["post", "pre"]
    mask = nn.causal_mask(len(x))
    engine = {"pre": decoder_stack.block_forward(params, 0, cfg.n_heads, x, mask),
              "post": decoder_stack.postnorm_block_forward(params, 0, cfg.n_heads, x, mask)}
    for arrangement, (rows_out, cache) in engine.items():
        read = nn.layernorm_forward(x, params["block0.ln1.gamma"], params["block0.ln1.beta"])[0] \
            if arrangement == "pre" else x  # what the attention branch reads
        shown = table[arrangement]
        assert [r[0] for r in shown] == labels
        assert np.allclose([r[1] for r in shown], read.var(axis=1), rtol=0, atol=1e-12)
        assert np.allclose([r[2] for r in shown], rows_out.var(axis=1), rtol=0, atol=1e-12)
    assert all(abs(r[2] - 1) < 1e-3 for r in table["post"])  # post-norm leaves every row at variance 1


@pytest.mark.parametrize("cfg", CONFIGS)
def test_generation_loop_counts_come_from_the_engines_loop(cfg):
    params = decoder_stack.init_params(cfg, 5)
    prompt = np.arange(3) % cfg.vocab_size
    words = lambda ids: [f"w{int(i)}" for i in ids]  # noqa: E731
    fig = bf.generation_loop(params, prompt, 3, words)
    result = decoder_stack.generate(params, prompt, 3)
    text = _text(fig)
    assert f"{cfg.vocab_size} probabilities" in text
    assert f"+{2 * cfg.n_layers * cfg.n_heads * cfg.head_width} numbers per new token:" in text
    assert [r[2] for r in fig.data_table[1]] == words(result["new_ids"])
    assert [r[4] for r in fig.data_table[1]] == [s["keys_per_head"] for s in result["cache_sizes"]]
    squares = [p for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_width() < 0.17]
    legend_marks = 3
    assert len(squares) - legend_marks == sum(len(prompt) + s for s in range(3))


@pytest.mark.parametrize("source, prefix", [("the river bank <eos>", "<bos> la rive"), ("the bank <eos>", "<bos>")])
def test_attention_sources_and_two_sequences_follow_the_pass(source, prefix):
    params = encdec.load_params()
    out = encdec.forward(params, source, prefix)
    m, n = len(source.split()), len(prefix.split())
    text = _text(bf.attention_sources(out, ("enc", "dec", "cross")))
    for shape in (f"{m} × {m}", f"{n} × {n}", f"{n} × {m}", f"{m} × 3", f"{n} × 3"):
        assert shape in text
    assert text.count("causal mask") == 1 and text.count("no mask") == 2
    alt = bf.attention_sources_alt(out)
    assert f"weights {n} × {m}, no mask" in alt and f"weights {n} × {n}, causal mask" in alt
    two = _text(bf.two_sequences(params, source, prefix)).split("\n")
    assert f"{m} × {m} weights" in two and f"{n} × {m} weights" in two and f"{m} × 3 rows" in two
    nxt = encdec.TGT_VOCAB[int(out["probs"][-1].argmax())]
    assert f"next: {nxt}" in two and all(t in two for t in source.split() + prefix.split())


@pytest.mark.parametrize("d_k, ns", [(3, (4, 8)), (5, (3, 6))])
def test_score_grids_use_the_cost_model(d_k, ns):
    w = cost.Widths(d_k=d_k)
    fig = bf.score_grids(ns, w)
    text = _text(fig)
    cells = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert len(cells) == sum(n * n for n in ns)
    for n in ns:
        assert f"{n * n} scores" in text and f"{cost.onehead_full(n, w)['scores']} MACs" in text
        assert cost.onehead_full(n, w)["scores"] == n * n * d_k


@pytest.mark.parametrize("widths, window", [(cost.PART2, 3), (cost.Widths(d=5, d_k=2, d_v=3, h=6, C=7), 2)])
def test_window_and_mean_diagrams_count_what_the_engine_counts(widths, window):
    from tinyformer.models import baselines

    tokens = [f"t{i}" for i in range(8)]
    fig = bf.window_inputs(tokens, window, widths)
    text = _text(fig)
    counts = cost.concat_predictor(1, window, widths)
    assert f"{window} slots × {widths.d} = {window * widths.d} separate inputs:" in text
    assert f"{counts['mlp']} MACs" in text and f"{counts['vocab']} MACs" in text
    units = [p for p in fig.axes[0].patches if isinstance(p, Circle)]
    assert len(units) == window * widths.d + widths.h + widths.C
    params = cost.stand_in_onehead(widths, context=len(tokens))
    params["W1"] = np.zeros((window * widths.d, widths.h))
    counted = cost.counted(lambda: baselines.window_concat_forward(params, np.arange(1), window, 0))
    assert counted == counts  # the counts drawn are the engine's counted products
    fig = bf.prefix_means(tokens, widths)
    text = _text(fig)
    assert f"{cost.prefix_mean_additions(len(tokens), widths)} additions" in text
    means = cost.prefix_mean_predictor(1, widths)
    lines = text.split("\n")  # the layer's label stands in lines left of its mesh: operation, shape, MACs
    assert f"{means['mlp']} MACs" in lines and "× W₁" in lines and f"({widths.d} × {widths.h})" in lines
    assert lines.index(f"({widths.d} × {widths.h})") == lines.index("× W₁") + 1


@pytest.mark.parametrize("widths, n", [(cost.PART2, 10), (cost.Widths(d=5, d_k=2, d_v=3, h=6, C=7), 6)])
def test_final_row_reads_the_pass(widths, n):
    from tinyformer.models import onehead

    params = cost.stand_in_onehead(widths, context=n + 2)
    ids = np.arange(n) % widths.C
    vocab = [f"v{i}" for i in range(widths.C)]
    fig = bf.final_row(params, ids, vocab, target="v1")
    out = onehead.forward(params, ids, "last")
    text = _text(fig)
    assert f"updated rows E′, {n} × {widths.d}" in text
    assert f"p(v1) = {out['probs'][0, 1]:.3f}" in text
    counts = cost.onehead_full(n, widths, readout_rows=1)
    assert f"{counts['mlp']} MACs" in text and f"{counts['vocab']} MACs" in text
    shapes = _table_shapes(fig)
    assert shapes["hidden units"] == f"1 × {widths.h}" and shapes["probabilities"] == f"1 × {widths.C}"


@pytest.mark.parametrize("n", [6, 10])
def test_reach_and_allowed_context_come_from_the_masks(n):
    reads = {"recurrent": nn.local_mask(n, 2), "self-attention": nn.causal_mask(n), "window": nn.local_mask(n, 3)}
    text = _prose(bf.reach(reads, {"window": 1}))
    assert f"position 1 reaches position {n} in {n - 1} steps" in text
    assert f"position 1 reaches position {n} in 1 layer" in text
    assert f"position 1 never reaches position {n}" in text
    assert f"One layer reads {n} positions" in text
    tokens = [f"t{i}" for i in range(n)]
    fig = bf.allowed_context(tokens, tokens[1:] + ["end"], nn.causal_mask(n))
    cells = [p for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_width() > 0.16]
    filled = [p for p in cells if p.get_facecolor()[3] == 1]
    assert len(filled) == int(nn.causal_mask(n).sum()) == n * (n + 1) // 2
    assert fig.data_table[1][-1][3] == " ".join(tokens)


def test_teaching_diagrams_write_the_numbers_they_are_given():
    rng = np.random.default_rng(7)
    q, K = rng.normal(size=3), rng.normal(size=(4, 3))
    text = _text(bf.query_against_keys(q, K, list("abcd"), "z")).split("\n")
    for s in K @ q / np.sqrt(3):
        assert f"{s:.1f}" in text
    w, V = nn.softmax(rng.normal(size=4)), rng.normal(size=(4, 3))
    text = _text(bf.value_mixture(w, V, list("abcd")))
    assert "[" + ", ".join(f"{x:.3f}" for x in w @ V) + "]" in text


@pytest.mark.parametrize("prefix", ["<bos> la", "<bos> la rive"])
def test_past_and_memory_and_fitted_weights_write_the_engines_weights(prefix):
    params = encdec.load_params()
    out = encdec.forward(params, encdec.PAIRS[0][0], prefix)
    n = len(prefix.split())
    fig = bf.past_and_memory(out)
    hatched = [p for p in fig.axes[0].patches if p.get_hatch() and p.get_width() > 0.2]
    assert len(hatched) == n * (n - 1) // 2
    text = _text(fig)
    assert f"{n} × {n}, causal" in text and f"{n} × 4, all read" in text
    checkpoint = encdec.load_checkpoint()
    fig = bf.fitted_cross_weights(checkpoint, *encdec.PAIRS[0])
    start = encdec.init_params(checkpoint["settings"]["seed"], checkpoint["settings"]["init_scale"])
    before = encdec.forward(start, encdec.PAIRS[0][0], "<bos> la rive")["cross"]["weights"]
    after = encdec.forward(params, encdec.PAIRS[0][0], "<bos> la rive")["cross"]["weights"]
    rows = fig.data_table[1]
    assert np.allclose([r[2:] for r in rows[0::2]], before) and np.allclose([r[2:] for r in rows[1::2]], after)
    assert f"after {checkpoint['steps']} steps" in _text(fig)


DIAGRAMS = sorted(name for name in __import__("bookfigures.catalogue", fromlist=["EXAMPLES"]).EXAMPLES
                  if name.startswith(("wiring_", "units_")))


@pytest.mark.parametrize("name", DIAGRAMS)
def test_every_shape_of_a_diagram_lies_inside_it(name):
    """The layout is computed in inches: no box, cell or arrow may run off the figure's edge."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from bookfigures.catalogue import EXAMPLES

    fig = EXAMPLES[name].build()
    renderer = FigureCanvasAgg(fig).get_renderer()
    frame = fig.bbox.padded(1.5)
    for patch in fig.axes[0].patches:
        box = patch.get_window_extent(renderer)
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, \
            f"{type(patch).__name__} at {box} leaves {fig.bbox}"


def test_the_figures_know_nothing_of_the_plugin():
    """bookfigures draws from the engine; the page's blocks hand its drawings and data to numbook."""
    import ast
    from pathlib import Path

    package = Path(bf.__file__).parent
    imports = []
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imports.append((path.name, node.module))
            elif isinstance(node, ast.Import):
                imports += [(path.name, alias.name) for alias in node.names]
    assert [(f, m) for f, m in imports if m.split(".")[0] == "numbook"] == []


def _edge_around(ax, x: float, y: float) -> str:
    """The outline colour of the box that holds the point (x, y)."""
    boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch)
             and p.get_x() <= x <= p.get_x() + p.get_width() and p.get_y() <= y <= p.get_y() + p.get_height()]
    return to_hex(min(boxes, key=lambda p: p.get_width() * p.get_height()).get_edgecolor())


def test_a_message_wears_no_role_colour_and_the_legend_says_so():
    """The legend has no colour for a message (Notation): its box is ink, not the values' green."""
    params = encdec.load_params()
    source, target = encdec.PAIRS[0]
    out = encdec.forward(params, source, encdec.split_target(target)[0])
    fig = bf.attention_sources(out)
    ax = fig.axes[0]
    messages = [t for t in ax.texts if t.get_text() == "message"]
    assert len(messages) == 2  # one per block
    for m in messages:  # the values' box stands right above the message's
        v = next(t for t in ax.texts if t.get_text() == "V" and t.get_position()[0] == m.get_position()[0])
        assert _edge_around(ax, *m.get_position()) == INK_MUTED
        assert _edge_around(ax, *v.get_position()) == ROLE_COLORS["v"]
    assert NO_ROLE in _text(fig)
    graph = encdec.dataflow(params, source, encdec.split_target(target)[0])
    legend = [t.get_text() for t in bf.dataflow_diagram(graph, lanes=False).legends[0].get_texts()]
    assert graph.node("cross.message").role is None and NO_ROLE in legend
