"""Dataflow graphs: derived from the real forward pass, checked op by op, simplified without lying."""

from __future__ import annotations

import numpy as np
import pytest

import tinyformer.nn as nn
from tinyformer.graph import DataflowBuilder, GraphMismatch
from tinyformer.models import decoder_stack as ds
from tinyformer.models import encdec, onehead

SMALL = ds.DecoderConfig(vocab_size=7, context=9, d_model=6, n_heads=2, n_layers=2, d_ff=8)


def inputs_of(graph, node_id: str) -> set[str]:
    op = graph.producer(node_id)
    return set(op.inputs) if op else set()


# --- Part 2: one head -----------------------------------------------------------------


@pytest.fixture(scope="module")
def part2():
    params = onehead.load_params()
    ids = onehead.encode(onehead.RIVER_SENTENCE)
    graph = onehead.dataflow(params, ids, targets=onehead.encode([onehead.RIVER_NEXT]))
    return params, onehead.forward(params, ids), graph


def test_part2_graph_shapes_are_the_forward_pass_shapes(part2):
    _, out, graph = part2
    same = {"E": "E", "Q": "Q", "K": "K", "V": "V", "scores": "scores", "masked": "masked_scores",
            "weights": "weights", "message": "message", "update": "update", "E_prime": "E_prime",
            "hidden": "hidden", "logits": "logits", "probs": "probs", "tok_rows": "tok_rows"}
    for node_id, key in same.items():
        assert graph.node(node_id).shape == out[key].shape, node_id
    assert graph.node("read").shape == (1, out["E"].shape[1])
    assert graph.node("loss").shape == ()


def test_part2_graph_wiring_is_the_one_part3_backpropagates_through(part2):
    _, _, graph = part2
    # E feeds the three projections and the residual path
    assert {op.output for op in graph.consumers("E")} == {"Q", "K", "V", "E_prime"}
    # the two joins: weights meet values at A V; the row meets its update at E + ΔE
    assert inputs_of(graph, "message") == {"weights", "V"}
    assert inputs_of(graph, "E_prime") == {"E", "update"}
    assert inputs_of(graph, "scores") == {"Q", "K"}
    assert [n.id for n in graph.sources] == ["ids"]
    assert {n.id for n in graph.sinks} == {"probs", "loss"}
    assert [op.kind for op in graph.consumers("scores")] == ["mask"]


def test_part2_graph_reads_every_parameter_with_its_real_shape(part2):
    params, _, graph = part2
    assert {p.name: p.shape for p in graph.params()} == {k: params[k].shape for k in onehead.PARAM_NAMES}


def test_part2_roles_follow_the_legend(part2):
    _, _, graph = part2
    roles = {n.id: n.role for n in graph.nodes}
    assert (roles["E"], roles["Q"], roles["K"], roles["V"]) == ("e", "q", "k", "v")
    assert (roles["weights"], roles["update"], roles["E_prime"]) == ("a", "d", "p")
    assert roles["ids"] is None and roles["probs"] is None
    # Notation: raw scores and messages have no colour in the legend
    assert roles["scores"] is None and roles["masked"] is None and roles["message"] is None


def test_a_graph_that_disagrees_with_the_forward_pass_cannot_be_built(part2):
    params, out, _ = part2
    g = DataflowBuilder("a wrong wiring")
    g.array("E", out["E"], "input rows", "e")
    g.array("Q", out["Q"], "queries", "q")
    g.op("matmul", ["E"], "Q", "× W_K", {"W_K": params["W_K"]})  # the queries do not come from W_K
    with pytest.raises(GraphMismatch, match="× W_K"):
        g.build()
    g = DataflowBuilder("a wrong shape")
    g.array("E", out["E"], "input rows", "e")
    g.array("V", out["V"][:, :1], "values", "v")
    g.op("matmul", ["E"], "V", "× W_V", {"W_V": params["W_V"]})
    with pytest.raises(GraphMismatch, match="shape"):
        g.build()


def test_builder_refuses_unknown_roles_kinds_and_nodes(part2):
    _, out, _ = part2
    g = DataflowBuilder("bad")
    with pytest.raises(ValueError, match="role"):
        g.array("E", out["E"], "rows", role="x")
    g.array("E", out["E"], "rows", "e")
    with pytest.raises(ValueError, match="unknown op kind"):
        g.op("convolve", ["E"], "E", "?")
    with pytest.raises(KeyError, match="Q"):
        g.op("softmax", ["E"], "Q", "softmax")


def test_collapse_keeps_the_arrows_into_and_out_of_the_merged_nodes(part2):
    _, out, graph = part2
    small = graph.collapse(["scores", "masked", "weights"], into="weights", label="weights A",
                           op_label="softmax(mask(Q Kᵀ / √3))")
    assert inputs_of(small, "weights") == {"Q", "K"}
    assert small.node("weights").shape == out["weights"].shape
    assert small.node("weights").role == "a"
    assert inputs_of(small, "message") == {"weights", "V"}
    assert len(small.nodes) == len(graph.nodes) - 2
    assert small.producer("weights").label == "softmax(mask(Q Kᵀ / √3))"
    with pytest.raises(ValueError, match="several arrays"):
        graph.collapse(["Q", "K"], into="QK", label="both")  # Q and K are both read outside


# --- Part 4: encoder, masked decoder, cross-attention ---------------------------------------


@pytest.fixture(scope="module")
def part4():
    params = encdec.load_params()
    source, target = encdec.PAIRS[0]
    dec_in, _ = encdec.split_target(target)
    graph = encdec.dataflow(params, source, dec_in, target=target.split()[1:])
    return params, encdec.forward(params, source, dec_in), graph


def test_part4_graph_has_the_model_parameters_and_shapes(part4):
    _, out, graph = part4
    assert {p.name: p.shape for p in graph.params()} == encdec.PARAM_SHAPES
    assert graph.node("encoded").shape == out["encoded"].shape
    assert graph.node("cross.weights").shape == out["cross"]["weights"].shape == (3, 4)
    assert graph.node("dec.weights").shape == out["decoder_self"]["weights"].shape == (3, 3)


def test_part4_bridge_reads_keys_and_values_from_the_encoder(part4):
    _, _, graph = part4
    assert inputs_of(graph, "cross.K") == inputs_of(graph, "cross.V") == {"encoded"}
    assert inputs_of(graph, "cross.Q") == {"self_rows"}
    lanes = {n.id: n.lane for n in graph.nodes}
    assert lanes["encoded"] == "English" and lanes["cross.K"] == lanes["self_rows"] == "French"
    masked = {n.group for n in graph.nodes if n.id.endswith(".masked")}
    assert masked == {"masked self-attention"}  # only the decoder's own attention is masked


# --- Part 3: the pre-norm decoder stack ---------------------------------------------------


@pytest.fixture(scope="module")
def part3():
    params = ds.init_params(SMALL, seed=5)
    ids = [1, 2, 3, 4, 5]
    return params, ds.forward(params, ids), ds.dataflow(params, ids, targets=[2, 3, 4, 5, 6])


def test_decoder_graph_reads_every_parameter_once_with_its_shape(part3):
    params, _, graph = part3
    assert {p.name: p.shape for p in graph.params()} == {k: v.shape for k, v in params.items()}


def test_decoder_graph_blocks_are_pre_norm(part3):
    params, out, graph = part3
    for l in range(SMALL.n_layers):
        b = f"b{l}."
        before = "x0" if l == 0 else f"b{l - 1}.out"
        assert graph.producer(b + "a").kind == "layernorm" and inputs_of(graph, b + "a") == {before}
        for h in range(SMALL.n_heads):
            assert inputs_of(graph, f"{b}h{h}.Q") == {b + "a"}  # the heads read the normalised rows
        assert inputs_of(graph, b + "mid") == {before, b + "attn"}  # the residual skips the norm
        assert inputs_of(graph, b + "out") == {b + "mid", b + "ffn"}
        assert graph.node(b + "out").shape == out["residual"][l + 1].shape
        assert graph.node(b + "concat").shape == (5, SMALL.n_heads * SMALL.head_width)


def test_decoder_graph_collapses_to_the_whole_model(part3):
    _, out, graph = part3
    model = graph
    for l in range(SMALL.n_layers):
        model = model.collapse_prefix(f"b{l}.", into=f"block{l}", label=f"block {l + 1}", op_label="pre-norm block")
    chain = ["x0", "block0", "block1", "final", "read", "logits", "probs"]
    for a, b in zip(chain, chain[1:]):
        assert inputs_of(model, b) == {a}, b
    assert model.node("block1").shape == out["residual"][-1].shape
    block = graph.only([n.id for n in graph.nodes if n.id.startswith("b0.")], title="one block")
    assert [n.id for n in block.sources] == ["x0"]
    assert {n.id for n in block.sinks} == {"b0.out"}
    assert all(n.group and n.group.startswith("block 1") for n in block.nodes if n.id != "x0")


def test_block_graph_sets_the_two_arrangements_side_by_side(part3):
    params, out, _ = part3
    x = out["residual"][0]
    graph = ds.block_dataflow(params, x, arrangements=("pre", "post"))  # building re-runs every op
    assert {n.lane for n in graph.nodes} == {"pre-norm", "post-norm"}
    assert {n.id for n in graph.sources} == {"pre.x", "post.x"}
    # pre-norm: the heads read normalised rows, the residual sums skip the norms
    assert inputs_of(graph, "pre.b0.h0.Q") == {"pre.b0.a"}
    assert inputs_of(graph, "pre.b0.mid") == {"pre.x", "pre.b0.attn"}
    assert graph.producer("pre.b0.out").kind == "add"
    # post-norm: the heads read the raw rows, every sum is normalised, the block ends in a LayerNorm
    assert inputs_of(graph, "post.b0.h0.Q") == {"post.x"}
    assert graph.producer("post.b0.mid").kind == "layernorm" and inputs_of(graph, "post.b0.mid") == {"post.b0.sum1"}
    assert graph.producer("post.b0.out").kind == "layernorm" and inputs_of(graph, "post.b0.out") == {"post.b0.sum2"}
    pre_out, _ = ds.block_forward(params, 0, SMALL.n_heads, x, nn.causal_mask(len(x)))
    assert graph.node("pre.b0.out").shape == pre_out.shape
    np.testing.assert_allclose(pre_out, out["residual"][1], rtol=0, atol=1e-15)
