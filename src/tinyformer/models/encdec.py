"""Part 4: a width-3 encoder-decoder that translates "the river bank" into "la rive".

    source_rows  = src_embed[source] + src_pos[:4]                       (4, 3)
    encoded      = source_rows + Attn(source_rows, source_rows)          (4, 3)  no mask
    target_rows  = tgt_embed[prefix] + tgt_pos[:n]                       (n, 3)
    self_rows    = target_rows + Attn(target_rows, target_rows, causal)  (n, 3)
    cross_rows   = self_rows + Attn(query=self_rows, keys/values=encoded) (n, 3)
    logits       = cross_rows @ W_vocab + b_vocab                        (n, 5)

Each Attn block has its own W_Q, W_K, W_V, W_O (3x3) and divides scores by sqrt(3).
No feed-forward sublayer and no LayerNorm (Vaswani et al. 2017, sections 3.1, 3.2.3,
without the parts Part 3 covers).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tinyformer import paramio
from tinyformer.graph import Dataflow, DataflowBuilder
from tinyformer.nn import (
    attention_backward,
    attention_forward,
    causal_mask,
    cross_entropy_backward,
    cross_entropy_forward,
    embedding_backward,
    embedding_forward,
    linear_backward,
    linear_forward,
    positions_forward,
    softmax,
)
from tinyformer.ops import matmul

SRC_VOCAB = ("the", "river", "financial", "bank", "<eos>")
TGT_VOCAB = ("<bos>", "la", "rive", "banque", "<eos>")
BOS, EOS = TGT_VOCAB.index("<bos>"), TGT_VOCAB.index("<eos>")
D_MODEL = 3
SRC_LEN = 4  # rows of the source position table
TGT_LEN = 3  # rows of the target position table: the longest decoder input, "<bos> la rive"
PAIRS = (
    ("the river bank <eos>", "<bos> la rive <eos>"),
    ("the financial bank <eos>", "<bos> la banque <eos>"),
)
BLOCKS = ("enc", "dec", "cross")
PROJ = ("W_Q", "W_K", "W_V", "W_O")
PARAM_SHAPES = {
    "src_embed": (len(SRC_VOCAB), D_MODEL),
    "src_pos": (SRC_LEN, D_MODEL),
    "tgt_embed": (len(TGT_VOCAB), D_MODEL),
    "tgt_pos": (TGT_LEN, D_MODEL),
    **{f"{blk}_{w}": (D_MODEL, D_MODEL) for blk in BLOCKS for w in PROJ},
    "W_vocab": (D_MODEL, len(TGT_VOCAB)),
    "b_vocab": (len(TGT_VOCAB),),
}
Tokens = str | Sequence[str | int] | np.ndarray  # "the river bank <eos>", words, or ids
PARAMS_FILE = "part4_encdec.json"
PARAMS_PATH = paramio.PARAMS_DIR / PARAMS_FILE
_VIEW_KEYS = ("Q", "K", "V", "scores", "masked_scores", "weights", "message", "update")


def source_ids(tokens: Tokens) -> np.ndarray:
    """Source token ids from a space-separated string, a list of words, or ids."""
    return _ids(tokens, SRC_VOCAB)


def target_ids(tokens: Tokens) -> np.ndarray:
    """Target token ids from a space-separated string, a list of words, or ids."""
    return _ids(tokens, TGT_VOCAB)


def _ids(tokens: Tokens, vocab: tuple[str, ...]) -> np.ndarray:
    """Accept the readable forms the chapters use and return an int array."""
    if isinstance(tokens, str):
        tokens = tokens.split()
    return np.array([vocab.index(t) if isinstance(t, str) else int(t) for t in tokens], dtype=np.int64)


def config() -> dict:
    """The model's sizes and vocabularies, e.g. for the notation page's shapes table."""
    return {"d_model": D_MODEL, "d_k": D_MODEL, "src_len": SRC_LEN, "tgt_len": TGT_LEN,
            "src_vocab": SRC_VOCAB, "tgt_vocab": TGT_VOCAB, "shapes": dict(PARAM_SHAPES)}


def init_params(seed: int = 0, scale: float = 0.5) -> dict[str, np.ndarray]:
    """A reproducible random starting point for the fitting script."""
    rng = np.random.default_rng(seed)
    params = {name: rng.normal(0.0, scale, shape) for name, shape in PARAM_SHAPES.items()}
    params["b_vocab"] = np.zeros(len(TGT_VOCAB))
    return params


def _block(params: dict, blk: str) -> tuple[np.ndarray, ...]:
    """The four projections of one attention block, in attention_forward's order."""
    return tuple(params[f"{blk}_{w}"] for w in PROJ)


def _view(cache: dict) -> dict[str, np.ndarray]:
    """The intermediates of one attention block that the chapter displays."""
    return {key: cache[key] for key in _VIEW_KEYS}


def _embed(table: np.ndarray, pos_table: np.ndarray, ids: np.ndarray):
    """Token row plus position row for each id; returns rows and both lookup caches."""
    tok, tok_cache = embedding_forward(table, ids)  # (n, 3)
    pos, pos_cache = positions_forward(pos_table, len(ids))  # (n, 3); refuses past the table
    return tok + pos, tok_cache, pos_cache


def encode(params: dict[str, np.ndarray], source: Tokens) -> dict:
    """Source rows and the encoder's self-attention (no mask): computed once per source."""
    ids = source_ids(source)
    rows, tok_cache, pos_cache = _embed(params["src_embed"], params["src_pos"], ids)  # (4, 3)
    update, cache = attention_forward(rows, rows, *_block(params, "enc"))  # (4, 3)
    return {"source_ids": ids, "source_rows": rows, "encoder": _view(cache), "encoded": rows + update,
            "_caches": (tok_cache, pos_cache, cache)}


def forward(params: dict[str, np.ndarray], source: Tokens, decoder_input: Tokens) -> dict:
    """Full pass for one source and one decoder input; every intermediate the chapter shows."""
    enc = encode(params, source)
    ids = target_ids(decoder_input)
    n = len(ids)
    tgt, tok_cache, pos_cache = _embed(params["tgt_embed"], params["tgt_pos"], ids)  # (n, 3)
    self_upd, self_cache = attention_forward(tgt, tgt, *_block(params, "dec"), mask=causal_mask(n))  # (n, 3)
    self_rows = tgt + self_upd  # (n, 3)
    cross_upd, cross_cache = attention_forward(self_rows, enc["encoded"], *_block(params, "cross"))  # (n, 3)
    cross_rows = self_rows + cross_upd  # (n, 3)
    logits, vocab_cache = linear_forward(cross_rows, params["W_vocab"], params["b_vocab"], tag="vocab")  # (n, 5)
    caches = (*enc.pop("_caches"), tok_cache, pos_cache, self_cache, cross_cache, vocab_cache)
    return {**enc, "decoder_ids": ids, "target_rows": tgt, "decoder_self": _view(self_cache),
            "self_rows": self_rows, "cross": _view(cross_cache), "cross_rows": cross_rows,
            "logits": logits, "probs": softmax(logits, axis=-1), "_caches": caches}


def split_target(target: Tokens) -> tuple[np.ndarray, np.ndarray]:
    """Teacher forcing: decoder inputs drop the last token, labels drop <bos>."""
    ids = target_ids(target)
    return ids[:-1], ids[1:]


def loss(params: dict[str, np.ndarray], source: Tokens, target: Tokens) -> float:
    """Teacher-forced mean loss of one pair, for finite differences."""
    dec_in, labels = split_target(target)
    mean, _, _ = cross_entropy_forward(forward(params, source, dec_in)["logits"], labels)
    return float(mean)


def loss_and_grads(params: dict[str, np.ndarray], source: Tokens, target: Tokens) -> tuple:
    """Teacher-forced mean loss, per-position losses, every parameter's gradient, intermediates."""
    dec_in, labels = split_target(target)
    out = forward(params, source, dec_in)
    mean, per_position, ce_cache = cross_entropy_forward(out["logits"], labels)
    grads = _backward(cross_entropy_backward(ce_cache), out["_caches"])
    return float(mean), per_position, grads, out


def _backward(dlogits: np.ndarray, caches: tuple) -> dict[str, np.ndarray]:
    """Walk the graph backwards; gradients add where the residual and attention paths meet."""
    src_tok, src_pos, enc_c, tgt_tok, tgt_pos, self_c, cross_c, vocab_c = caches
    d_cross_rows, dW_vocab, db_vocab = linear_backward(dlogits, vocab_c)  # (n, 3)
    g_cross = attention_backward(d_cross_rows, cross_c)
    d_self_rows = d_cross_rows + g_cross["x_q"]  # residual + query path, (n, 3)
    g_self = attention_backward(d_self_rows, self_c)
    d_tgt = d_self_rows + g_self["x_q"] + g_self["x_kv"]  # (n, 3)
    d_encoded = g_cross["x_kv"]  # keys and values read the encoded source, (4, 3)
    g_enc = attention_backward(d_encoded, enc_c)
    d_src = d_encoded + g_enc["x_q"] + g_enc["x_kv"]  # (4, 3)
    grads = {"src_embed": embedding_backward(d_src, src_tok), "src_pos": embedding_backward(d_src, src_pos),
             "tgt_embed": embedding_backward(d_tgt, tgt_tok), "tgt_pos": embedding_backward(d_tgt, tgt_pos)}
    for blk, g in (("enc", g_enc), ("dec", g_self), ("cross", g_cross)):
        grads.update({f"{blk}_{w}": g[w] for w in PROJ})
    grads.update(W_vocab=dW_vocab, b_vocab=db_vocab)
    return grads


def _attend_row(q: np.ndarray, K: np.ndarray, V: np.ndarray, W_O: np.ndarray) -> dict:
    """One query row against cached keys and values: scores, weights, message, update."""
    scores = matmul(q, K.T, tag="scores") / np.sqrt(K.shape[-1])  # (1, m)
    weights = softmax(scores, axis=-1)  # (1, m)
    message = matmul(weights, V, tag="mix")  # (1, 3)
    return {"scores": scores[0], "weights": weights[0], "message": message[0],
            "update": matmul(message, W_O, tag="out_proj")[0]}


def _decoder_step(params: dict, token: int, pos: int, self_kv: list, cross_kv: tuple) -> dict:
    """Process the newest prefix token only, reading cached self and cross keys/values."""
    x = embedding_forward(params["tgt_embed"], [token])[0] + positions_forward(params["tgt_pos"], 1, pos)[0]  # (1, 3)
    row = x[0]  # (3,)
    cached = sum(k.shape[0] for k, _ in self_kv)  # French key/value rows kept from earlier steps
    self_kv.append((matmul(x, params["dec_W_K"], tag="qkv"), matmul(x, params["dec_W_V"], tag="qkv")))
    K, V = (np.concatenate(part, axis=0) for part in zip(*self_kv))  # (t+1, 3) each, grown by one row
    self_step = _attend_row(matmul(x, params["dec_W_Q"], tag="qkv"), K, V, params["dec_W_O"])
    self_row = row + self_step["update"]  # (3,)
    q = matmul(self_row[None, :], params["cross_W_Q"], tag="qkv")  # (1, 3)
    cross_step = _attend_row(q, *cross_kv, params["cross_W_O"])
    cross_row = self_row + cross_step["update"]  # (3,)
    logits = matmul(cross_row[None, :], params["W_vocab"], tag="vocab")[0] + params["b_vocab"]  # (5,)
    work = {"encoder": (0, 0), "cross K, V": (0, cross_kv[0].shape[0]), "self K, V": (x.shape[0], cached),
            "query": (x.shape[0], 0)}
    return {"self": self_step, "cross": cross_step, "logits": logits, "probs": softmax(logits), "work": work}


def generate(params: dict[str, np.ndarray], source: Tokens, max_new: int = TGT_LEN,
             rng: np.random.Generator | None = None) -> dict:
    """Decoding that encodes the source and projects its cross K, V once, then reuses them.

    Greedy (the most probable token at each step) by default; with `rng`, each token is
    sampled from the step's probabilities instead. Either way it stops at <eos> or after
    `max_new` tokens, and never feeds the decoder more tokens than its position table has
    rows (TGT_LEN): the last chosen token is output, not read.
    """
    enc = encode(params, source)
    cross_kv = (matmul(enc["encoded"], params["cross_W_K"], tag="qkv"),  # (4, 3)
                matmul(enc["encoded"], params["cross_W_V"], tag="qkv"))  # (4, 3)
    prefix, self_kv, steps = [BOS], [], []
    before = {"encoder": (enc["encoded"].shape[0], 0), "cross K, V": (cross_kv[0].shape[0], 0),
              "self K, V": (0, 0), "query": (0, 0)}
    for pos in range(min(max_new, TGT_LEN)):
        step = _decoder_step(params, prefix[-1], pos, self_kv, cross_kv)
        steps.append(step)
        probs = step["probs"]
        prefix.append(int(np.argmax(probs)) if rng is None else int(rng.choice(probs.size, p=probs)))
        if prefix[-1] == EOS:
            break
    return {**_generation_result(prefix, steps, enc, cross_kv), "work_before": before}


def evaluate_pairs(params: dict[str, np.ndarray]) -> list[dict]:
    """For each fitted pair: its teacher-forced mean and per-position losses, and what greedy
    decoding writes (without <bos> and <eos>); the before/after table of one training step."""
    report = []
    for source, target in PAIRS:
        mean, per_position, _, _ = loss_and_grads(params, source, target)
        words = generate(params, source)["tokens"][1:]
        report.append({"source": source, "target": target, "loss": mean, "per_position": per_position,
                       "greedy": " ".join(w for w in words if w != "<eos>")})
    return report


def output_probability(params: dict[str, np.ndarray], source: Tokens, output: Tokens) -> float:
    """The model's probability of writing `output` (the tokens after <bos>), step by step:
    the product, over its tokens, of each token's probability given the tokens before it."""
    ids = [BOS, *target_ids(output)]
    if len(ids) - 2 >= TGT_LEN:  # the last token is written, never read back
        raise ValueError(f"an output of {len(ids) - 1} tokens needs more than {TGT_LEN} positions")
    probs = forward(params, source, ids[:-1])["probs"]  # (n, 5): row k predicts token k + 1
    return float(np.prod(probs[np.arange(len(ids) - 1), ids[1:]]))


def output_distribution(params: dict[str, np.ndarray], source: Tokens, max_new: int = TGT_LEN) -> dict[str, float]:
    """Every output the decoding loop can write for `source` (it stops at <eos> or after
    `max_new` tokens, as `generate` does), with the model's probability of it; they sum to 1."""
    max_new = min(max_new, TGT_LEN)
    found: dict[str, float] = {}

    def extend(prefix: list[int], prob: float) -> None:
        probs = forward(params, source, prefix)["probs"][-1]  # (5,): the next token
        for tok, p in enumerate(probs):
            out = [*prefix[1:], tok]
            if tok == EOS or len(out) == max_new:
                found[" ".join(TGT_VOCAB[i] for i in out)] = prob * float(p)
            else:
                extend([*prefix, tok], prob * float(p))

    extend([BOS], 1.0)
    return found


def beam_search(params: dict[str, np.ndarray], source: Tokens, beam: int = 4, max_new: int = TGT_LEN) -> list[dict]:
    """Beam search: keep the `beam` most probable prefixes at each step instead of one.

    Each live prefix is extended by every token; of all those candidates the `beam` with the
    largest summed log-probability are kept. A kept candidate that ends in <eos> is finished
    and leaves the beam; the others are extended at the next step. Stops when none is left or
    after `max_new` tokens (those still live are returned as cut off). Returns the finished
    and cut-off outputs, most probable first: {"tokens": without <bos>, "logprob", "finished"}.
    With beam=1 it is greedy decoding. (Vaswani et al. 2017 used a beam of 4 and also divided
    the summed log-probabilities by a length penalty; this toy does not.)
    """
    if beam < 1:
        raise ValueError("beam must be at least 1")
    live, done = [([BOS], 0.0)], []
    for _ in range(min(max_new, TGT_LEN)):
        candidates = []
        for prefix, logp in live:
            probs = forward(params, source, prefix)["probs"][-1]  # (5,)
            candidates += [([*prefix, tok], logp + float(np.log(p))) for tok, p in enumerate(probs)]
        candidates.sort(key=lambda c: -c[1])
        kept = candidates[:beam]
        done += [(ids, logp, True) for ids, logp in kept if ids[-1] == EOS]
        live = [(ids, logp) for ids, logp in kept if ids[-1] != EOS]
        if not live:
            break
    done += [(ids, logp, False) for ids, logp in live]
    done.sort(key=lambda d: -d[1])
    return [{"tokens": [TGT_VOCAB[i] for i in ids[1:]], "logprob": logp, "finished": fin}
            for ids, logp, fin in done]


def generate_uncached(params: dict[str, np.ndarray], source: Tokens, max_new: int = TGT_LEN) -> dict:
    """Reference greedy decoding that recomputes the whole forward pass at every step."""
    prefix, steps = [BOS], []
    for _ in range(min(max_new, TGT_LEN)):
        out = forward(params, source, prefix)
        n_src, n = out["encoded"].shape[0], len(prefix)
        steps.append({"self": {"weights": out["decoder_self"]["weights"][-1]},  # last row only
                      "cross": {"weights": out["cross"]["weights"][-1]},
                      "logits": out["logits"][-1], "probs": out["probs"][-1],
                      "work": {"encoder": (n_src, 0), "cross K, V": (out["cross"]["K"].shape[0], 0),
                               "self K, V": (out["decoder_self"]["K"].shape[0], 0),
                               "query": (out["cross"]["Q"].shape[0], 0)}})
        prefix.append(int(np.argmax(out["probs"][-1])))
        if prefix[-1] == EOS:
            break
    return {**_generation_result(prefix, steps, out, None),  # the last pass holds the encoded rows
            "work_before": {"encoder": (0, 0), "cross K, V": (0, 0), "self K, V": (0, 0), "query": (0, 0)}}


def _generation_result(prefix: list[int], steps: list[dict], enc: dict, cross_kv) -> dict:
    """Collect the generated tokens and each step's rows into arrays the chapter can show.

    Each step's "work" (and "work_before", the set-up before the first step) gives, for
    the encoder's rows, the cross-attention keys and values, the French self-attention
    keys and values, and the query rows, a pair (rows computed, cached rows reused).
    """
    return {"ids": prefix, "tokens": [TGT_VOCAB[i] for i in prefix], "steps": steps,
            "cross_weights": np.array([s["cross"]["weights"] for s in steps]),  # (steps, 4)
            "probs": np.array([s["probs"] for s in steps]),  # (steps, 5)
            "encoded": enc["encoded"], "cross_K": None if cross_kv is None else cross_kv[0],
            "cross_V": None if cross_kv is None else cross_kv[1]}


def params_to_json(params: dict[str, np.ndarray]) -> dict:
    """Nested lists of Python floats: json writes them with repr, so they round-trip exactly."""
    return paramio.arrays_to_json(params, PARAM_SHAPES)


def params_from_json(data: dict) -> dict[str, np.ndarray]:
    """Rebuild float64 arrays from the JSON checkpoint."""
    return paramio.arrays_from_json(data, PARAM_SHAPES)


def load_checkpoint(path: Path = PARAMS_PATH) -> dict:
    """The whole stored checkpoint: parameters, loss curve and fitting settings."""
    return paramio.read_json(path)


def load_params(path: Path = PARAMS_PATH) -> dict[str, np.ndarray]:
    """The fitted parameters the chapter uses."""
    return paramio.load_arrays(path, PARAM_SHAPES)


# ---- the forward pass as a graph (for diagrams; see tinyformer.graph) ----


def dataflow(params: dict[str, np.ndarray], source: Tokens, decoder_input: Tokens,
             target: Tokens | None = None) -> Dataflow:
    """Encoder, masked decoder and the cross-attention bridge as one checked graph.

    English arrays sit in lane "English", French ones (cross-attention included) in lane
    "French"; each attention block is a group. With `target` the graph ends in the loss.
    """
    out = forward(params, source, decoder_input)
    g = DataflowBuilder("encoder-decoder with cross-attention")
    with g.grouped(lane="English"):
        _graph_rows(g, params, "src", out["source_ids"], out["source_rows"], "English", "x", "j")
        _graph_block(g, params, "enc", "src_rows", "src_rows", out["encoder"],
                     ("encoded", out["encoded"], "encoded English rows"))
    with g.grouped(lane="French"):
        _graph_rows(g, params, "tgt", out["decoder_ids"], out["target_rows"], "French", "y", "i")
        _graph_block(g, params, "dec", "tgt_rows", "tgt_rows", out["decoder_self"],
                     ("self_rows", out["self_rows"], "French rows after self-attention"),
                     mask=causal_mask(len(out["decoder_ids"])))
        _graph_block(g, params, "cross", "self_rows", "encoded", out["cross"],
                     ("cross_rows", out["cross_rows"], "French rows after cross-attention"))
        g.array("logits", out["logits"], "logits")
        g.op("linear", ["cross_rows"], "logits", "× W_vocab + b_vocab",
             {"W_vocab": params["W_vocab"], "b_vocab": params["b_vocab"]})
        g.array("probs", out["probs"], "probabilities")
        g.op("softmax", ["logits"], "probs", "softmax")
        if target is not None:
            labels = target_ids(target)
            g.array("loss", cross_entropy_forward(out["logits"], labels)[0], "loss")
            g.op("cross_entropy", ["logits"], "loss", "−log p(label)", targets=labels)
    return g.build()


def _graph_rows(g: DataflowBuilder, params: dict, side: str, ids: np.ndarray, rows: np.ndarray,
                language: str, token: str, pos: str) -> None:
    """One language's token ids and input rows (token row plus position row)."""
    g.array(f"{side}_ids", ids, f"{language} token ids")
    g.array(f"{side}_rows", rows, f"{language} rows", "e")
    g.op("embed", [f"{side}_ids"], f"{side}_rows", f"{side}_embed[{token}] + {side}_pos[{pos}]",
         {f"{side}_embed": params[f"{side}_embed"], f"{side}_pos": params[f"{side}_pos"]})


BLOCK_NAMES = {"enc": "encoder self-attention", "dec": "masked self-attention", "cross": "cross-attention"}


def _graph_block(g: DataflowBuilder, params: dict, blk: str, x_q: str, x_kv: str, view: dict,
                 result: tuple[str, np.ndarray, str], mask: np.ndarray | None = None) -> None:
    """One attention block in the graph: the head, its W_O update, and the residual sum `result`."""
    with g.grouped(BLOCK_NAMES[blk]):
        projections = {w: params[f"{blk}_{w}"] for w in ("W_Q", "W_K", "W_V")}
        msg = g.attention(f"{blk}.", x_q, x_kv, view, projections, param_prefix=f"{blk}_",
                          mask=mask, mask_label="causal mask")
        g.array(f"{blk}.update", view["update"], "update ΔE", "d")
        g.op("matmul", [msg], f"{blk}.update", "× W_O", {f"{blk}_W_O": params[f"{blk}_W_O"]})
    rows_id, rows, label = result
    g.array(rows_id, rows, label, "p")
    g.op("add", [x_q, f"{blk}.update"], rows_id, "residual +")
