"""Part 3: a two-block pre-norm decoder with hand-chosen weights, where depth changes the answer.

The model is `decoder_stack` (pre-norm blocks, final LayerNorm, readout tied to the token
table); this module only supplies its vocabulary and its parameters, from params/twoblock.json.
"""

from __future__ import annotations

import numpy as np

from ..paramio import read_json
from . import decoder_stack
from .vocab import Vocabulary

PARAMS_FILE = "twoblock.json"
_DOC = read_json(PARAMS_FILE)

COORDINATES: tuple[str, ...] = tuple(_DOC["coordinates"])  # names of the 4 model-width coordinates
_VOCABULARY = Vocabulary(_DOC["vocab"])
VOCAB: tuple[str, ...] = _VOCABULARY.tokens
TOKEN_ID: dict[str, int] = _VOCABULARY.ids
encode = _VOCABULARY.encode  # token strings to ids
decode = _VOCABULARY.decode  # ids to token strings
HEAD_NAMES: tuple[str, ...] = tuple(h["name"] for h in _DOC["blocks"][0]["heads"])
FFN_UNITS: tuple[tuple[str, ...], ...] = tuple(tuple(b["ffn"]["hidden_units"]) for b in _DOC["blocks"])

SENTENCE: tuple[str, ...] = ("They", "walked", "by", "the", "river", "bank", "and", "watched", "the")
NEXT = "water"


def load_params() -> dict[str, np.ndarray]:
    """The hand-chosen parameters, named as `decoder_stack` expects; positions are Part 2's table."""
    doc = read_json(PARAMS_FILE)
    d = len(doc["coordinates"])
    p = {
        "tok": np.array([doc["token_rows"][t] for t in doc["vocab"]], dtype=float),  # (16, 4)
        "pos": np.array(read_json("onehead.json")["positions"], dtype=float),  # (20, 4)
        "lnf.gamma": np.ones(d), "lnf.beta": np.zeros(d),
    }
    for l, block in enumerate(doc["blocks"]):
        b = f"block{l}."
        for ln in ("ln1", "ln2"):
            p[f"{b}{ln}.gamma"], p[f"{b}{ln}.beta"] = np.ones(d), np.zeros(d)
        for h, head in enumerate(block["heads"]):
            for w in ("W_Q", "W_K", "W_V"):
                p[f"{b}head{h}.{w}"] = np.array(head[w], dtype=float)  # (4, 1)
        p[b + "W_O"] = np.array(block["W_O"], dtype=float)  # (2, 4)
        for w in ("W1", "b1", "W2", "b2"):
            p[f"{b}ffn.{w}"] = np.array(block["ffn"][w], dtype=float)
    return p


def example() -> tuple[np.ndarray, np.ndarray]:
    """Section 3.13's training pair: the sentence with water appended, shifted by one position."""
    ids = encode(SENTENCE + (NEXT,))
    return ids[:-1], ids[1:]


def forward(params: dict, tokens=SENTENCE) -> dict:
    """`decoder_stack.forward` on token strings, every position read out."""
    return decoder_stack.forward(params, encode(tokens))
