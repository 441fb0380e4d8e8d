"""Part 2/3 toy: one causal attention head and a 4 -> 8 -> 20 prediction MLP, hand-chosen weights."""

from __future__ import annotations

import numpy as np

from .. import nn
from ..generation import greedy_generate
from ..graph import Dataflow, DataflowBuilder
from ..ops import matmul
from ..paramio import arrays_from_json, read_json

PARAMS_FILE = "onehead.json"
_DOC = read_json(PARAMS_FILE)

COORDINATES: tuple[str, ...] = tuple(_DOC["coordinates"])  # names of the 4 model-width coordinates
VOCAB: tuple[str, ...] = tuple(_DOC["vocab"])  # 20 tokens
TOKEN_ID: dict[str, int] = {t: i for i, t in enumerate(VOCAB)}
HIDDEN_UNITS: tuple[str, ...] = tuple(_DOC["hidden_units"])

RIVER_SENTENCE: tuple[str, ...] = (
    "The", "fisherman", "sat", "beside", "the", "river", "bank", "and", "watched", "the",
)
RIVER_NEXT = "water"
CHEQUE_SENTENCE: tuple[str, ...] = (
    "The", "fisherman", "took", "his", "cheque", "to", "the", "bank", "and", "waited",
)

PARAM_NAMES = ("E_tok", "P", "W_Q", "W_K", "W_V", "W_O", "W1", "b1", "W2", "b2")
#: How the book's notation writes the parameters whose names here are shorter.
PARAM_SYMBOLS = {"P": "E_pos", "W1": "W_1", "b1": "b_1", "W2": "W_2", "b2": "b_2"}
# The four paths by which the input rows E reach the loss: the residual sum E' = E + update, and the
# head's queries, keys and values. Their gradients add up to the gradient of E (Part 3 section 4).
PATHS = ("residual", "query", "key", "value")


def encode(tokens) -> np.ndarray:
    """Token strings to ids."""
    return np.array([TOKEN_ID[t] for t in tokens], dtype=int)


def decode(ids) -> list[str]:
    """Ids to token strings."""
    return [VOCAB[int(i)] for i in ids]


def load_params() -> dict[str, np.ndarray]:
    """The hand-chosen parameters from params/onehead.json, as float64 arrays."""
    doc = read_json(PARAMS_FILE)
    p = {"E_tok": np.array([doc["token_rows"][t] for t in VOCAB], dtype=float)}  # (20, 4)
    p["P"] = np.array(doc["positions"], dtype=float)  # (20, 4)
    p.update(arrays_from_json(doc, PARAM_NAMES[2:]))  # W_Q ... b2, stored under their own names
    return p


def next_token_pairs(tokens) -> tuple[np.ndarray, np.ndarray]:
    """Inputs tokens[:-1] and targets tokens[1:]: each position predicts the token after it."""
    ids = encode(tokens)
    return ids[:-1], ids[1:]


def final_position_example() -> tuple[np.ndarray, np.ndarray]:
    """Part 3 section 2: the river sentence, one target (water) for its final row."""
    return encode(RIVER_SENTENCE), encode([RIVER_NEXT])


def all_positions_example() -> tuple[np.ndarray, np.ndarray]:
    """Part 3 section 7: the river sentence with water appended, every position's next token."""
    return next_token_pairs(RIVER_SENTENCE + (RIVER_NEXT,))


def forward(params: dict, ids, readout: str = "last", path_rows: dict | None = None) -> dict:
    """Every intermediate of one causal pass; the MLP reads the final row ("last") or every row ("all").

    `path_rows` maps some of PATHS to rows that this path reads in place of E (the others still read
    E): with E perturbed on one path only, finite differences measure that path's share of dE.
    """
    ids = np.asarray(ids, dtype=int)
    n = ids.size
    tok_rows, c_tok = nn.embedding_forward(params["E_tok"], ids)  # (n, 4)
    pos_rows, c_pos = nn.positions_forward(params["P"], n)  # (n, 4)
    E = tok_rows + pos_rows  # (n, 4)
    unknown = set(path_rows or {}) - set(PATHS)
    if unknown:
        raise ValueError(f"path_rows: unknown paths {sorted(unknown)}; the paths are {PATHS}")
    reads = {path: E for path in PATHS} | dict(path_rows or {})  # the rows each path reads, (n, 4)
    mask = nn.causal_mask(n)  # (n, n)
    dE_att, c_att = nn.attention_forward(
        reads["query"], reads["key"], params["W_Q"], params["W_K"], params["W_V"], params["W_O"], mask,
        x_v=reads["value"],
    )  # (n, 4)
    E_prime = reads["residual"] + dE_att  # (n, 4) residual sum
    if readout == "last":
        rows = np.array([n - 1])
    elif readout == "all":
        rows = np.arange(n)
    else:
        raise ValueError(f"readout must be 'last' or 'all', not {readout!r}")
    logits, c_mlp = nn.mlp_forward(E_prime[rows], params["W1"], params["b1"], params["W2"], params["b2"])  # (m, 20)
    probs = nn.softmax(logits)  # (m, 20)
    return {
        "ids": ids, "tokens": decode(ids), "tok_rows": tok_rows, "pos_rows": pos_rows, "E": E,
        "Q": c_att["Q"], "K": c_att["K"], "V": c_att["V"], "scores": c_att["scores"], "mask": mask,
        "masked_scores": c_att["masked_scores"], "weights": c_att["weights"], "message": c_att["message"],
        "update": dE_att, "E_prime": E_prime, "readout_rows": rows, "pre": c_mlp["pre"],
        "hidden": c_mlp["hidden"], "logits": logits, "probs": probs,
        "_caches": {"tok": c_tok, "pos": c_pos, "att": c_att, "mlp": c_mlp},
    }


def loss(params: dict, ids, targets, readout: str = "last", path_rows: dict | None = None) -> float:
    """Mean cross-entropy of the targets, without gradients: what finite differences perturb."""
    return nn.cross_entropy_forward(forward(params, ids, readout, path_rows)["logits"], targets)[0]


def loss_and_grads(params: dict, ids, targets, readout: str = "last") -> tuple[float, np.ndarray, dict, dict]:
    """Mean cross-entropy of the targets, per-position losses, gradients of every parameter, intermediates.

    The intermediates also hold `dE`, the gradient reaching the input rows, and `dE_by_path`, its
    four shares (PATHS), which add up to it.
    """
    out = forward(params, ids, readout)
    mean, per_position, c_ce = nn.cross_entropy_forward(out["logits"], targets)
    caches = out["_caches"]
    dlogits = nn.cross_entropy_backward(c_ce)  # (m, 20)
    g_mlp = nn.mlp_backward(dlogits, caches["mlp"])
    dE_prime = np.zeros_like(out["E_prime"])  # (n, 4)
    dE_prime[out["readout_rows"]] += g_mlp["x"]
    g_att = nn.attention_backward(dE_prime, caches["att"])  # the update branch
    dE_by_path = {"residual": dE_prime, "query": g_att["x_q"], "key": g_att["x_k"], "value": g_att["x_v"]}
    dE = sum(dE_by_path[path] for path in PATHS)  # (n, 4): where the four paths meet, gradients add
    grads = {
        "E_tok": nn.embedding_backward(dE, caches["tok"]),  # (20, 4)
        "P": nn.embedding_backward(dE, caches["pos"]),  # (20, 4), rows past n stay zero
        "W_Q": g_att["W_Q"], "W_K": g_att["W_K"], "W_V": g_att["W_V"], "W_O": g_att["W_O"],
        "W1": g_mlp["W1"], "b1": g_mlp["b1"], "W2": g_mlp["W2"], "b2": g_mlp["b2"],
    }
    out.update(loss=mean, per_position=per_position, dlogits=dlogits, dE=dE, dE_by_path=dE_by_path)
    return mean, per_position, grads, out


# ---- generation (Part 3 section 14): greedy, with or without a KV cache ----


def prefill(params: dict, ids) -> tuple[np.ndarray, dict]:
    """Final-row-only prefill: keys and values of every prompt row, the query of the last row only."""
    ids = np.asarray(ids, dtype=int)
    n = ids.size
    E = nn.embedding_forward(params["E_tok"], ids)[0] + nn.positions_forward(params["P"], n)[0]  # (n, 4)
    K = matmul(E, params["W_K"], "qkv")  # (n, 3)
    V = matmul(E, params["W_V"], "qkv")  # (n, 2)
    cache = {"K": K, "V": V}
    return _last_row_logits(params, E[-1:], cache), cache


def step(params: dict, cache: dict, token_id: int) -> np.ndarray:
    """One cached step: project the new row once, append its key and value, score it against the cache."""
    t = cache["K"].shape[0]  # index of the new position
    e = params["E_tok"][[token_id]] + nn.positions_forward(params["P"], 1, start=t)[0]  # (1, 4)
    cache["K"] = np.vstack([cache["K"], matmul(e, params["W_K"], "qkv")])  # (t+1, 3)
    cache["V"] = np.vstack([cache["V"], matmul(e, params["W_V"], "qkv")])  # (t+1, 2)
    return _last_row_logits(params, e, cache)


def _last_row_logits(params: dict, e: np.ndarray, cache: dict) -> np.ndarray:
    """Query of one new row against all cached keys (all are in its past), then residual and MLP."""
    q = matmul(e, params["W_Q"], "qkv")  # (1, 3)
    scores = matmul(q, cache["K"].T, "scores") / np.sqrt(q.shape[1])  # (1, t)
    weights = nn.softmax(scores)  # (1, t)
    message = matmul(weights, cache["V"], "mix")  # (1, 2)
    e_prime = e + matmul(message, params["W_O"], "out_proj")  # (1, 4)
    logits, _ = nn.mlp_forward(e_prime, params["W1"], params["b1"], params["W2"], params["b2"])  # (1, 20)
    return logits[0]  # (20,)


def generate(params: dict, prompt_ids, n_new: int, use_cache: bool = True) -> dict:
    """Greedy decoding of n_new tokens; raises ContextLimitError before running out of position rows."""
    return greedy_generate(
        prompt_ids, n_new, params["P"].shape[0],
        full_logits=lambda ids: forward(params, ids, "last")["logits"][0],
        prefill=(lambda ids: prefill(params, ids)) if use_cache else None,
        step=(lambda cache, tid: step(params, cache, tid)),
        cache_size=lambda cache: {"keys": cache["K"].shape[0], "values": cache["V"].shape[0]},
    )


# ---- the forward pass as a graph (for diagrams; see tinyformer.graph) ----


def dataflow(params: dict, ids, readout: str = "last", targets=None) -> Dataflow:
    """The causal pass over `ids` as a checked graph: every node an array of `forward`, every op re-run.

    With `targets` (one per readout row) the graph ends in the mean cross-entropy loss.
    """
    out = forward(params, ids, readout)
    g = DataflowBuilder("one causal attention head and its prediction MLP")
    g.array("ids", out["ids"], "token ids")
    g.array("tok_rows", out["tok_rows"], "token rows", "e")
    g.op("lookup", ["ids"], "tok_rows", "E_tok[t]", {"E_tok": params["E_tok"]})
    g.array("pos_rows", out["pos_rows"], "position rows", "e")
    g.op("positions", ["ids"], "pos_rows", "E_pos[i]", {"P": params["P"]})
    g.array("E", out["E"], "input rows E", "e")
    g.op("add", ["tok_rows", "pos_rows"], "E", "+")
    with g.grouped("attention head"):
        message = g.attention("", "E", "E", out, params, mask=out["mask"], mask_label="causal mask")
        g.array("update", out["update"], "update ΔE", "d")
        g.op("matmul", [message], "update", "× W_O", {"W_O": params["W_O"]})
    g.array("E_prime", out["E_prime"], "updated rows E′", "p")
    g.op("add", ["E", "update"], "E_prime", "residual +")
    read = "final row" if readout == "last" else "every row"
    g.array("read", out["E_prime"][out["readout_rows"]], read, "p")
    g.op("rows", ["E_prime"], "read", "last row" if readout == "last" else "all rows", rows=out["readout_rows"])
    with g.grouped("prediction MLP"):
        g.array("pre", out["pre"], "hidden, before ReLU")
        g.op("linear", ["read"], "pre", "× W_1 + b_1", {"W1": params["W1"], "b1": params["b1"]})
        g.array("hidden", out["hidden"], "hidden row u")
        g.op("relu", ["pre"], "hidden", "ReLU")
        g.array("logits", out["logits"], "logits")
        g.op("linear", ["hidden"], "logits", "× W_2 + b_2", {"W2": params["W2"], "b2": params["b2"]})
    g.array("probs", out["probs"], "probabilities")
    g.op("softmax", ["logits"], "probs", "softmax")
    if targets is not None:
        loss, _, _ = nn.cross_entropy_forward(out["logits"], targets)
        g.array("loss", loss, "loss")
        g.op("cross_entropy", ["logits"], "loss", "−log p(target)", targets=np.asarray(targets))
    return g.build()
