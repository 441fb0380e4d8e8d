"""Part 3: a pre-norm decoder-only Transformer (GPT-2 arrangement), with greedy KV-cache generation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import nn
from ..generation import greedy_generate
from ..graph import Dataflow, DataflowBuilder
from ..ops import matmul


@dataclass(frozen=True)
class DecoderConfig:
    """Sizes of the stack; d_head defaults to d_model // n_heads (queries, keys and values alike)."""

    vocab_size: int
    context: int
    d_model: int
    n_heads: int
    n_layers: int
    d_ff: int
    d_head: int | None = None

    @property
    def head_width(self) -> int:
        """Width of one head's query, key and value rows."""
        return self.d_head if self.d_head is not None else self.d_model // self.n_heads


def init_params(config: DecoderConfig, seed: int = 0) -> dict[str, np.ndarray]:
    """Deterministic Gaussian init; projections scaled by 1/sqrt(fan_in), LayerNorm at gamma=1, beta=0."""
    rng = np.random.default_rng(seed)
    d, dh, V = config.d_model, config.head_width, config.vocab_size
    p = {"tok": rng.normal(0.0, 0.5, (V, d)), "pos": rng.normal(0.0, 0.1, (config.context, d))}
    for l in range(config.n_layers):
        b = f"block{l}."
        p[b + "ln1.gamma"], p[b + "ln1.beta"] = np.ones(d), np.zeros(d)
        for h in range(config.n_heads):
            for w in ("W_Q", "W_K", "W_V"):
                p[f"{b}head{h}.{w}"] = rng.normal(0.0, d**-0.5, (d, dh))
        p[b + "W_O"] = rng.normal(0.0, (config.n_heads * dh) ** -0.5, (config.n_heads * dh, d))
        p[b + "ln2.gamma"], p[b + "ln2.beta"] = np.ones(d), np.zeros(d)
        p[b + "ffn.W1"] = rng.normal(0.0, d**-0.5, (d, config.d_ff))
        p[b + "ffn.b1"] = np.zeros(config.d_ff)
        p[b + "ffn.W2"] = rng.normal(0.0, config.d_ff**-0.5, (config.d_ff, d))
        p[b + "ffn.b2"] = np.zeros(d)
    p["lnf.gamma"], p["lnf.beta"] = np.ones(d), np.zeros(d)
    return p


def config_from_params(params: dict) -> DecoderConfig:
    """Read the sizes back from the parameter shapes, so functions need only the parameters."""
    V, d = params["tok"].shape
    d_head = params["block0.head0.W_Q"].shape[1]
    n_layers = len({k.split(".")[0] for k in params if k.startswith("block")})
    n_heads = len({k.split(".")[1] for k in params if k.startswith("block0.head")})
    return DecoderConfig(
        vocab_size=V, context=params["pos"].shape[0], d_model=d, n_heads=n_heads, n_layers=n_layers,
        d_ff=params["block0.ffn.W1"].shape[1], d_head=None if d_head == d // n_heads else d_head,
    )


def _heads(params: dict, l: int, n_heads: int) -> list[dict]:
    """The per-head projection matrices of block l."""
    return [{w: params[f"block{l}.head{h}.{w}"] for w in ("W_Q", "W_K", "W_V")} for h in range(n_heads)]


def block_forward(params: dict, l: int, n_heads: int, x: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, dict]:
    """x + MHA(LN1(x)), then + FFN(LN2(.)): two residual updates, each branch reading a normalized row."""
    b = f"block{l}."
    a, c_ln1 = nn.layernorm_forward(x, params[b + "ln1.gamma"], params[b + "ln1.beta"])  # (n, d)
    att, c_mh = nn.multihead_forward(a, a, _heads(params, l, n_heads), params[b + "W_O"], mask)  # (n, d)
    x1 = x + att  # (n, d)
    f, c_ln2 = nn.layernorm_forward(x1, params[b + "ln2.gamma"], params[b + "ln2.beta"])  # (n, d)
    ff, c_ffn = nn.ffn_forward(f, params[b + "ffn.W1"], params[b + "ffn.b1"], params[b + "ffn.W2"], params[b + "ffn.b2"])  # (n, d)
    x2 = x1 + ff  # (n, d)
    return x2, {"ln1": c_ln1, "mh": c_mh, "ln2": c_ln2, "ffn": c_ffn, "x": x, "attn_update": att, "x_mid": x1, "ffn_update": ff, "out": x2}


def block_backward(dx2: np.ndarray, cache: dict, l: int) -> tuple[np.ndarray, dict]:
    """Gradient to the block input (the residual path adds to each branch's) and to its parameters."""
    g_ffn = nn.ffn_backward(dx2, cache["ffn"])
    df, dg2, db2 = nn.layernorm_backward(g_ffn["x"], cache["ln2"])  # (n, d)
    dx1 = dx2 + df  # (n, d)
    g_mh = nn.multihead_backward(dx1, cache["mh"])
    da, dg1, db1 = nn.layernorm_backward(g_mh["x_q"] + g_mh["x_kv"], cache["ln1"])  # (n, d)
    dx = dx1 + da  # (n, d)
    return dx, _block_grads(l, g_mh, g_ffn, (dg1, db1), (dg2, db2))


def _block_grads(l: int, g_mh: dict, g_ffn: dict, ln1: tuple, ln2: tuple) -> dict:
    """Block l's parameter gradients under their parameter names (either arrangement)."""
    b = f"block{l}."
    grads = {b + "ln1.gamma": ln1[0], b + "ln1.beta": ln1[1], b + "W_O": g_mh["W_O"],
             b + "ln2.gamma": ln2[0], b + "ln2.beta": ln2[1]}
    for h, gh in enumerate(g_mh["heads"]):
        for w in ("W_Q", "W_K", "W_V"):
            grads[f"{b}head{h}.{w}"] = gh[w]
    for w in ("W1", "b1", "W2", "b2"):
        grads[f"{b}ffn.{w}"] = g_ffn[w]
    return grads


def postnorm_block_forward(params: dict, l: int, n_heads: int, x: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, dict]:
    """The 2017 arrangement, for comparison: LN1(x + MHA(x)), then LN2(. + FFN(.)); the stream itself is normalised."""
    b = f"block{l}."
    att, c_mh = nn.multihead_forward(x, x, _heads(params, l, n_heads), params[b + "W_O"], mask)  # (n, d)
    x1, c_ln1 = nn.layernorm_forward(x + att, params[b + "ln1.gamma"], params[b + "ln1.beta"])  # (n, d)
    ff, c_ffn = nn.ffn_forward(x1, params[b + "ffn.W1"], params[b + "ffn.b1"], params[b + "ffn.W2"], params[b + "ffn.b2"])  # (n, d)
    x2, c_ln2 = nn.layernorm_forward(x1 + ff, params[b + "ln2.gamma"], params[b + "ln2.beta"])  # (n, d)
    return x2, {"ln1": c_ln1, "mh": c_mh, "ln2": c_ln2, "ffn": c_ffn, "x": x, "attn_update": att, "x_mid": x1, "ffn_update": ff, "out": x2}


def postnorm_block_backward(dx2: np.ndarray, cache: dict, l: int) -> tuple[np.ndarray, dict]:
    """Gradient of the post-norm block: each LayerNorm sits on the residual path, so every gradient crosses it."""
    ds2, dg2, db2 = nn.layernorm_backward(dx2, cache["ln2"])  # (n, d)
    g_ffn = nn.ffn_backward(ds2, cache["ffn"])
    dx1 = ds2 + g_ffn["x"]  # (n, d)
    ds1, dg1, db1 = nn.layernorm_backward(dx1, cache["ln1"])  # (n, d)
    g_mh = nn.multihead_backward(ds1, cache["mh"])
    dx = ds1 + g_mh["x_q"] + g_mh["x_kv"]  # (n, d)
    return dx, _block_grads(l, g_mh, g_ffn, (dg1, db1), (dg2, db2))


def forward(params: dict, ids, readout: str = "all", segments=None) -> dict:
    """Embeddings + positions, the causal blocks, final LayerNorm, tied readout (all rows or the last).

    `segments` (lengths summing to len(ids)) packs several sequences into one pass: each starts
    again at position 1 and reads only its own past (`nn.segment_causal_mask`), so every row is
    what a pass over its own sequence would give. Training on many short names uses it.
    """
    cfg = config_from_params(params)
    ids = np.asarray(ids, dtype=int)
    n = ids.size
    tok_rows, c_tok = nn.embedding_forward(params["tok"], ids)  # (n, d)
    if segments is None:
        pos_rows, c_pos = nn.positions_forward(params["pos"], n)  # (n, d)
        mask = nn.causal_mask(n)  # (n, n)
    else:
        pos_rows, c_pos, mask = _packed_positions(params["pos"], segments, n)
    x = tok_rows + pos_rows  # (n, d)
    residual = [x]
    blocks = []
    for l in range(cfg.n_layers):
        x, c = block_forward(params, l, cfg.n_heads, x, mask)  # (n, d)
        residual.append(x)
        blocks.append(c)
    xf, c_lnf = nn.layernorm_forward(x, params["lnf.gamma"], params["lnf.beta"])  # (n, d)
    rows = {"all": np.arange(n), "last": np.array([n - 1])}[readout]
    logits, c_out = nn.readout_forward(xf[rows], params["tok"], tied=True)  # (m, V), no output bias
    return {
        "ids": ids, "residual": residual, "final_rows": xf, "readout_rows": rows, "logits": logits,
        "probs": nn.softmax(logits), "blocks": blocks,
        "_caches": {"tok": c_tok, "pos": c_pos, "lnf": c_lnf, "out": c_out},
    }


def _packed_positions(table: np.ndarray, segments, n: int) -> tuple[np.ndarray, dict, np.ndarray]:
    """Position rows restarting at each packed sequence, and the block-diagonal causal mask."""
    if sum(int(s) for s in segments) != n:
        raise ValueError(f"segments of lengths {list(segments)} do not add up to the {n} ids")
    longest = max(int(s) for s in segments)
    if longest > table.shape[0]:
        raise nn.ContextLimitError(f"a packed sequence of {longest} positions, but the position table has only "
                                   f"{table.shape[0]} rows (the context limit)")
    rows, cache = nn.embedding_forward(table, nn.segment_positions(segments))  # (n, d)
    return rows, cache, nn.segment_causal_mask(segments)  # (n, n)


def predictions_by_depth(params: dict, out: dict) -> np.ndarray:
    """(n_layers + 1, n, V) next-token probabilities if the stack ended after 0, 1, ... blocks.

    The final LayerNorm and the tied readout applied to each stage of the residual stream
    (a "logit lens"): the last stage is the model's own prediction.
    """
    stages = []
    for x in out["residual"]:
        xf, _ = nn.layernorm_forward(x, params["lnf.gamma"], params["lnf.beta"])  # (n, d)
        stages.append(nn.softmax(nn.readout_forward(xf, params["tok"], tied=True)[0]))  # (n, V)
    return np.stack(stages)


def loss_and_grads(params: dict, ids, targets, readout: str = "all", segments=None
                   ) -> tuple[float, np.ndarray, dict, dict]:
    """Mean next-token cross-entropy, per-position losses, every parameter's gradient, intermediates.

    With `segments`, the mean is over every position of every packed sequence (see `forward`).
    """
    cfg = config_from_params(params)
    out = forward(params, ids, readout, segments)
    loss, per_position, c_ce = nn.cross_entropy_forward(out["logits"], targets)
    caches = out["_caches"]
    dx_rows, dtok_out, _ = nn.readout_backward(nn.cross_entropy_backward(c_ce), caches["out"])  # (m, d), (V, d)
    dxf = np.zeros_like(out["final_rows"])  # (n, d)
    dxf[out["readout_rows"]] = dx_rows
    dx, dgf, dbf = nn.layernorm_backward(dxf, caches["lnf"])  # (n, d)
    grads = {"lnf.gamma": dgf, "lnf.beta": dbf}
    for l in reversed(range(cfg.n_layers)):
        dx, g = block_backward(dx, out["blocks"][l], l)
        grads.update(g)
    grads["tok"] = nn.embedding_backward(dx, caches["tok"]) + dtok_out  # tied: lookup and readout add
    grads["pos"] = nn.embedding_backward(dx, caches["pos"])
    out.update(loss=loss, per_position=per_position)
    return loss, per_position, grads, out


# ---- greedy generation: recompute everything, or keep one key and one value per layer per step ----


def prefill(params: dict, ids) -> tuple[np.ndarray, dict]:
    """Full pass over the prompt (every layer needs every row), keeping each head's keys and values."""
    out = forward(params, ids, readout="last")
    cache = {
        "K": [[c["K"] for c in blk["mh"]["heads"]] for blk in out["blocks"]],  # layers x heads x (n, d_head)
        "V": [[c["V"] for c in blk["mh"]["heads"]] for blk in out["blocks"]],
    }
    return out["logits"][0], cache


def step(params: dict, cache: dict, token_id: int) -> np.ndarray:
    """One new position: its own q, k, v in each layer; attention over cached keys; one logits row."""
    cfg = config_from_params(params)
    t = cache["K"][0][0].shape[0]  # the new token's position index
    x = params["tok"][[token_id]] + nn.positions_forward(params["pos"], 1, start=t)[0]  # (1, d)
    for l in range(cfg.n_layers):
        b = f"block{l}."
        a, _ = nn.layernorm_forward(x, params[b + "ln1.gamma"], params[b + "ln1.beta"])  # (1, d)
        messages = []
        for h, hp in enumerate(_heads(params, l, cfg.n_heads)):
            q = matmul(a, hp["W_Q"], "qkv")  # (1, d_head)
            cache["K"][l][h] = np.vstack([cache["K"][l][h], matmul(a, hp["W_K"], "qkv")])  # (t+1, d_head)
            cache["V"][l][h] = np.vstack([cache["V"][l][h], matmul(a, hp["W_V"], "qkv")])  # (t+1, d_head)
            scores = matmul(q, cache["K"][l][h].T, "scores") / np.sqrt(q.shape[1])  # (1, t+1), all in the past
            messages.append(matmul(nn.softmax(scores), cache["V"][l][h], "mix"))  # (1, d_head)
        x = x + matmul(np.concatenate(messages, axis=1), params[b + "W_O"], "out_proj")  # (1, d)
        f, _ = nn.layernorm_forward(x, params[b + "ln2.gamma"], params[b + "ln2.beta"])  # (1, d)
        x = x + nn.ffn_forward(f, params[b + "ffn.W1"], params[b + "ffn.b1"], params[b + "ffn.W2"], params[b + "ffn.b2"])[0]
    xf, _ = nn.layernorm_forward(x, params["lnf.gamma"], params["lnf.beta"])  # (1, d)
    return nn.readout_forward(xf, params["tok"], tied=True)[0][0]  # (V,)


def cache_size(cache: dict) -> dict:
    """Rows held per layer and head, and the total count of cached numbers."""
    return {
        "layers": len(cache["K"]),
        "keys_per_head": cache["K"][0][0].shape[0],
        "values_per_head": cache["V"][0][0].shape[0],
        "numbers": int(sum(k.size for layer in cache["K"] for k in layer) + sum(v.size for layer in cache["V"] for v in layer)),
    }


def generate(params: dict, prompt_ids, n_new: int, use_cache: bool = True) -> dict:
    """Greedy decoding; returns ids, new_ids, per-step logits and per-step cache sizes (empty without cache)."""
    return greedy_generate(
        prompt_ids, n_new, params["pos"].shape[0],
        full_logits=lambda ids: forward(params, ids, readout="last")["logits"][0],
        prefill=(lambda ids: prefill(params, ids)) if use_cache else None,
        step=lambda cache, tid: step(params, cache, tid),
        cache_size=cache_size,
    )


# ---- the forward pass as a graph (for diagrams; see tinyformer.graph) ----


def dataflow(params: dict, ids, readout: str = "all", targets=None) -> Dataflow:
    """The stack's causal pass as a checked graph; block l's node ids start with "b{l}.", head h's with "b{l}.h{h}.".

    Each block is a group, so a picture can show the whole model (collapse each block)
    or one pre-norm block (keep one block, collapse its heads).
    """
    cfg = config_from_params(params)
    out = forward(params, ids, readout)
    g = DataflowBuilder(f"pre-norm decoder, {cfg.n_layers} blocks of {cfg.n_heads} heads")
    g.array("ids", out["ids"], "token ids")
    g.array("tok_rows", params["tok"][out["ids"]], "token rows", "e")
    g.op("lookup", ["ids"], "tok_rows", "tok[t]", {"tok": params["tok"]})
    g.array("pos_rows", params["pos"][: len(out["ids"])], "position rows", "e")
    g.op("positions", ["ids"], "pos_rows", "pos[i]", {"pos": params["pos"]})
    g.array("x0", out["residual"][0], "input rows", "e")
    g.op("add", ["tok_rows", "pos_rows"], "x0", "+")
    x = "x0"
    for l, cache in enumerate(out["blocks"]):
        x = _graph_block(g, params, l, x, cache)
    g.array("final", out["final_rows"], "normalised rows", "e")
    g.op("layernorm", [x], "final", "LayerNorm", {"lnf.gamma": params["lnf.gamma"], "lnf.beta": params["lnf.beta"]})
    g.array("read", out["final_rows"][out["readout_rows"]], "final row" if readout == "last" else "every row", "e")
    g.op("rows", ["final"], "read", "last row" if readout == "last" else "all rows", rows=out["readout_rows"])
    g.array("logits", out["logits"], "logits")
    g.op("readout_tied", ["read"], "logits", "× tokᵀ (tied)", {"tok": params["tok"]})
    g.array("probs", out["probs"], "probabilities")
    g.op("softmax", ["logits"], "probs", "softmax")
    if targets is not None:
        g.array("loss", nn.cross_entropy_forward(out["logits"], targets)[0], "loss")
        g.op("cross_entropy", ["logits"], "loss", "−log p(target)", targets=np.asarray(targets))
    return g.build()


def block_dataflow(params: dict, x: np.ndarray, l: int = 0, arrangements=("pre",)) -> Dataflow:
    """Block l on the rows x as a checked graph, once per arrangement ("pre", "post"), each in a lane of its own.

    Node ids start with the arrangement ("pre.b0.attn"); a picture can set the two
    arrangements side by side, or show one block of the pre-norm stack alone.
    """
    cfg = config_from_params(params)
    mask = nn.causal_mask(len(x))
    g = DataflowBuilder(f"one decoder block, {' and '.join(a + '-norm' for a in arrangements)}")
    for arrangement in arrangements:
        forward_block = {"pre": block_forward, "post": postnorm_block_forward}[arrangement]
        _, cache = forward_block(params, l, cfg.n_heads, x, mask)
        with g.grouped(lane=f"{arrangement}-norm"):
            g.array(f"{arrangement}.x", x, "input rows", "e")
            _graph_block(g, params, l, f"{arrangement}.x", cache, arrangement, prefix=f"{arrangement}.")
    return g.build()


def _graph_block(g: DataflowBuilder, params: dict, l: int, x: str, cache: dict, arrangement: str = "pre",
                 prefix: str = "") -> str:
    """Block l: pre-norm x + MHA(LN1(x)), then + FFN(LN2(.)); or post-norm LN1(x + MHA(x)), then LN2(. + FFN(.)).

    Returns the id of its output rows; node ids start with prefix + "b{l}.".
    """
    b, p = f"{prefix}b{l}.", f"block{l}."
    heads = cache["mh"]["heads"]
    ln = {k: {f"{p}{k}.gamma": params[f"{p}{k}.gamma"], f"{p}{k}.beta": params[f"{p}{k}.beta"]} for k in ("ln1", "ln2")}
    with g.grouped(f"block {l + 1}" + (f", {arrangement}-norm" if prefix else "")):
        if arrangement == "pre":
            g.array(b + "a", heads[0]["x_q"], "normalised rows", "e")
            g.op("layernorm", [x], b + "a", "LayerNorm 1", ln["ln1"])
            read = b + "a"
        else:
            read = x
        messages = []
        for h, head in enumerate(heads):
            with g.grouped(f"block {l + 1}, head {h + 1}" + (f", {arrangement}-norm" if prefix else "")):
                w = {k: params[f"{p}head{h}.{k}"] for k in ("W_Q", "W_K", "W_V")}
                messages.append(g.attention(f"{b}h{h}.", read, read, head, w, param_prefix=f"{p}head{h}.",
                                            mask=head["mask"], mask_label="causal mask"))
        if len(messages) > 1:
            g.array(b + "concat", cache["mh"]["concat"], "messages side by side")
            g.op("concat", messages, b + "concat", "concatenate")
            messages = [b + "concat"]
        g.array(b + "attn", cache["attn_update"], "attention update", "d")
        g.op("matmul", messages, b + "attn", "× W_O", {p + "W_O": params[p + "W_O"]})
        ffn_params = {p + f"ffn.{k}": params[p + f"ffn.{k}"] for k in ("W1", "b1", "W2", "b2")}
        if arrangement == "pre":
            g.array(b + "mid", cache["x_mid"], "rows after attention", "p")
            g.op("add", [x, b + "attn"], b + "mid", "residual +")
            g.array(b + "f", cache["ffn"]["c1"]["x"], "normalised rows", "e")
            g.op("layernorm", [b + "mid"], b + "f", "LayerNorm 2", ln["ln2"])
            g.array(b + "ffn", cache["ffn_update"], "feed-forward update", "d")
            g.op("ffn", [b + "f"], b + "ffn", "FFN", ffn_params)
            g.array(b + "out", cache["out"], f"rows after block {l + 1}", "p")
            g.op("add", [b + "mid", b + "ffn"], b + "out", "residual +")
        else:
            g.array(b + "sum1", cache["x"] + cache["attn_update"], "rows + attention", "p")
            g.op("add", [x, b + "attn"], b + "sum1", "residual +")
            g.array(b + "mid", cache["x_mid"], "normalised rows", "e")
            g.op("layernorm", [b + "sum1"], b + "mid", "LayerNorm 1", ln["ln1"])
            g.array(b + "ffn", cache["ffn_update"], "feed-forward update", "d")
            g.op("ffn", [b + "mid"], b + "ffn", "FFN", ffn_params)
            g.array(b + "sum2", cache["x_mid"] + cache["ffn_update"], "rows + feed-forward", "p")
            g.op("add", [b + "mid", b + "ffn"], b + "sum2", "residual +")
            g.array(b + "out", cache["out"], f"rows after block {l + 1}", "e")
            g.op("layernorm", [b + "sum2"], b + "out", "LayerNorm 2", ln["ln2"])
    return b + "out"
