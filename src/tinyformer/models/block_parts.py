"""Part 3: the parts of a block, each with readable hand-chosen weights (illustrations, not learned).

* Three attention heads for "Priya opened the notebook; she smiled." (params/priya_heads.json),
  run by the engine's multi-head layer: each head reads the full row through its own matrices.
* A block feed-forward network 4 -> 8 -> 4 with one-decimal weights (params/ffn_4_8_4.json),
  which reads rows in the four named coordinates of the Part 2 toy.
"""

from __future__ import annotations

import numpy as np

from .. import nn
from ..paramio import read_json

HEADS_FILE = "priya_heads.json"
FFN_FILE = "ffn_4_8_4.json"

PRIYA_SENTENCE: tuple[str, ...] = ("Priya", "opened", "the", "notebook", ";", "she", "smiled", ".")


def load_heads() -> dict:
    """Token table, the three heads (dicts of W_Q, W_K, W_V), their names, W_O, coordinate names."""
    doc = read_json(HEADS_FILE)
    return {
        "coordinates": tuple(doc["coordinates"]),
        "vocab": tuple(doc["vocab"]),
        "E_tok": np.array([doc["token_rows"][t] for t in doc["vocab"]], dtype=float),  # (8, 6)
        "heads": [{w: np.array(h[w], dtype=float) for w in ("W_Q", "W_K", "W_V")} for h in doc["heads"]],
        "head_names": tuple(h["name"] for h in doc["heads"]),
        "W_O": np.array(doc["W_O"], dtype=float),  # (6, 6)
    }


def heads_forward(params: dict, tokens=PRIYA_SENTENCE) -> dict:
    """Causal multi-head self-attention over the token rows; every head's intermediates kept."""
    ids = [params["vocab"].index(t) for t in tokens]
    E = params["E_tok"][ids]  # (n, 6)
    mask = nn.causal_mask(len(ids))  # (n, n), the same for every head
    update, cache = nn.multihead_forward(E, E, params["heads"], params["W_O"], mask)  # (n, 6)
    return {"tokens": list(tokens), "E": E, "mask": mask, "heads": cache["heads"],
            "concat": cache["concat"], "update": update, "E_prime": E + update}


def load_ffn() -> dict:
    """W1 (4, 8), b1 (8,), W2 (8, 4), b2 (4,), with the names of the coordinates and hidden units."""
    doc = read_json(FFN_FILE)
    p = {w: np.array(doc[w], dtype=float) for w in ("W1", "b1", "W2", "b2")}
    p.update(coordinates=tuple(doc["coordinates"]), hidden_units=tuple(doc["hidden_units"]))
    return p


def ffn_forward(params: dict, rows: np.ndarray) -> dict:
    """The FFN on every row at once: pre-activations, hidden values after ReLU, the update."""
    out, cache = nn.ffn_forward(np.atleast_2d(rows), params["W1"], params["b1"], params["W2"], params["b2"])
    return {"pre": cache["pre"], "hidden": cache["hidden"], "update": out}
