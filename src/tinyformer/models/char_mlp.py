"""Part 1: a fixed-window character MLP that predicts the next letter of a name.

Architecture (Bengio et al. 2003 style), for one window of W = 3 previous characters:

    ids (3,) -> embedding rows (3, d) -> concatenated row (1, 3d)
             -> hidden = ReLU(row @ W1 + b1)   (1, h)
             -> logits = hidden @ W2 + b2      (1, 27)
             -> softmax -> loss = -log p(next character)

Concatenation keeps the slots apart: rows 0..d-1 of W1 read the oldest character,
rows d..2d-1 the middle one, rows 2d..3d-1 the newest, so each window slot has its
own input weights. The hidden nonlinearity is ReLU, the same one as the book's
prediction MLP (Part 2) and feed-forward network (Part 3), so that section 3.19 can set
the two models side by side with one nonlinearity.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from tinyformer import paramio
from tinyformer.data import NAMES_PATH, load_names, train_heldout_split  # noqa: F401 - part of this API
from tinyformer.nn import (
    cross_entropy_backward,
    cross_entropy_forward,
    embedding_backward,
    embedding_forward,
    linear_backward,
    linear_forward,
    relu_backward,
    relu_forward,
    softmax,
)

BOUNDARY = "."
ALPHABET = BOUNDARY + "abcdefghijklmnopqrstuvwxyz"  # id 0 is the boundary mark
VOCAB_SIZE = len(ALPHABET)  # 27
WINDOW = 3
EMBED_DIM = 4
HIDDEN = 64
SAMPLE_MAX_LEN = 20  # a sampled name stops here if the boundary mark has not come out
PARAM_NAMES = ("C", "W1", "b1", "W2", "b2")

PARAMS_FILE = "part1_char_mlp.json"
PARAMS_PATH = paramio.PARAMS_DIR / PARAMS_FILE


def encode(text: str) -> list[int]:
    """Map characters to ids so the model can index its embedding table."""
    unknown = sorted(set(text) - set(ALPHABET))
    if unknown:
        raise ValueError(f"{text!r} has characters outside the model's {VOCAB_SIZE} symbols "
                         f"(lower-case a-z and {BOUNDARY!r}): {', '.join(map(repr, unknown))}")
    return [ALPHABET.index(ch) for ch in text]


def decode(ids: ArrayLike) -> str:
    """Map ids back to characters so outputs can be read."""
    return "".join(ALPHABET[int(i)] for i in ids)


def training_pairs(name: str, window: int = WINDOW) -> list[tuple[str, str]]:
    """List the (window, next character) pairs one name yields, boundary-padded."""
    padded = BOUNDARY * window + name + BOUNDARY
    return [(padded[i : i + window], padded[i + window]) for i in range(len(name) + 1)]


def pairs_to_ids(names: list[str], window: int = WINDOW) -> tuple[np.ndarray, np.ndarray]:
    """Turn every name's training pairs into id arrays the model can batch."""
    pairs = [pair for name in names for pair in training_pairs(name, window)]
    contexts = np.array([encode(w) for w, _ in pairs], dtype=np.int64).reshape(len(pairs), window)  # (N, w)
    targets = np.array([ALPHABET.index(nxt) for _, nxt in pairs], dtype=np.int64)  # (N,)
    return contexts, targets


def config() -> dict[str, int]:
    """Report the model's sizes, e.g. for the notation page's shapes table."""
    return {"vocab": VOCAB_SIZE, "window": WINDOW, "embed_dim": EMBED_DIM, "hidden": HIDDEN}


def window_of(params: dict[str, np.ndarray]) -> int:
    """How many characters a parameter set reads: W1 has one block of d rows per window slot."""
    return params["W1"].shape[0] // params["C"].shape[1]


def init_params(seed: int = 0, embed_dim: int = EMBED_DIM, hidden: int = HIDDEN,
                window: int = WINDOW) -> dict[str, np.ndarray]:
    """Draw a reproducible starting point whose initial loss is close to log(27)."""
    rng = np.random.default_rng(seed)
    fan_in = window * embed_dim
    return {
        "C": rng.normal(0.0, 1.0, (VOCAB_SIZE, embed_dim)),  # (27, d)
        "W1": rng.normal(0.0, np.sqrt(2.0 / fan_in), (fan_in, hidden)),  # (3d, h), He scale
        "b1": np.zeros(hidden),
        "W2": rng.normal(0.0, 0.3 / np.sqrt(hidden), (hidden, VOCAB_SIZE)),  # (h, 27), small: near-uniform start
        "b2": np.zeros(VOCAB_SIZE),
    }


def forward(params: dict[str, np.ndarray], contexts: ArrayLike) -> dict:
    """Run windows of ids through the MLP and keep every intermediate the chapter shows."""
    out = _logits(params, contexts)
    return {**out, "probs": softmax(out["logits"], axis=-1)}  # (N, 27)


def _logits(params: dict[str, np.ndarray], contexts: ArrayLike) -> dict:
    """Forward pass up to the logits (the loss needs no separate softmax)."""
    contexts = np.atleast_2d(np.asarray(contexts, dtype=np.int64))  # (N, w)
    if contexts.shape[1] != window_of(params):
        raise ValueError(f"windows of {contexts.shape[1]} characters for parameters that read {window_of(params)}")
    flat, emb_cache = embedding_forward(params["C"], contexts.ravel())  # (wN, d)
    rows = flat.reshape(*contexts.shape, -1)  # (N, w, d)
    concat = flat.reshape(len(contexts), -1)  # (N, wd): oldest slot first
    pre, lin1_cache = linear_forward(concat, params["W1"], params["b1"], tag="mlp")  # (N, h)
    hidden, relu_cache = relu_forward(pre)  # (N, h)
    logits, lin2_cache = linear_forward(hidden, params["W2"], params["b2"], tag="vocab")  # (N, 27)
    return {
        "contexts": contexts,
        "rows": rows,
        "concat": concat,
        "pre_activation": pre,
        "hidden": hidden,
        "logits": logits,
        "_caches": (emb_cache, lin1_cache, relu_cache, lin2_cache),
    }


def loss(params: dict[str, np.ndarray], contexts: ArrayLike, targets: ArrayLike) -> float:
    """Mean cross-entropy, for finite differences and loss curves."""
    out = _logits(params, contexts)
    mean, _, _ = cross_entropy_forward(out["logits"], np.asarray(targets, dtype=np.int64))
    return float(mean)


def loss_and_grads(params: dict[str, np.ndarray], contexts: ArrayLike, targets: ArrayLike) -> tuple:
    """Mean loss, per-example losses, gradients of every parameter and the intermediates."""
    out = forward(params, contexts)
    mean, per_example, ce_cache = cross_entropy_forward(out["logits"], np.asarray(targets, dtype=np.int64))
    emb_cache, lin1_cache, relu_cache, lin2_cache = out["_caches"]
    dlogits = cross_entropy_backward(ce_cache)  # (N, 27)
    dhidden, dW2, db2 = linear_backward(dlogits, lin2_cache)  # (N, h)
    dpre = relu_backward(dhidden, relu_cache)  # (N, h)
    dconcat, dW1, db1 = linear_backward(dpre, lin1_cache)  # (N, 3d)
    dC = embedding_backward(dconcat.reshape(-1, params["C"].shape[1]), emb_cache)  # (27, d)
    grads = {"C": dC, "W1": dW1, "b1": db1, "W2": dW2, "b2": db2}
    return float(mean), per_example, grads, out


def next_char_probs(params: dict[str, np.ndarray], window: str) -> np.ndarray:
    """Distribution over the 27 symbols after one 3-character window."""
    return forward(params, [encode(window)])["probs"][0]


def target_probs(params: dict[str, np.ndarray], name: str) -> np.ndarray:
    """Probability the model gives each observed next character of a name (e.g. aabid)."""
    contexts, targets = pairs_to_ids([name], window_of(params))
    probs = forward(params, contexts)["probs"]  # (len(name)+1, 27)
    return probs[np.arange(len(targets)), targets]


def end_probability_by_length(params: dict[str, np.ndarray], names: list[str]) -> dict[str, np.ndarray]:
    """For each number of letters written so far: how often the names end there, and how likely
    the model thinks an ending is, on average over the same places.

    A window of w characters cannot count past w letters, so the two disagree where length matters.
    """
    contexts, targets = pairs_to_ids(names, window_of(params))
    letters_so_far = np.concatenate([np.arange(len(n) + 1) for n in names])  # one per pair
    p_end = forward(params, contexts)["probs"][:, ALPHABET.index(BOUNDARY)]  # (N,)
    count = np.bincount(letters_so_far)
    return {"letters": np.arange(len(count)), "count": count,
            "observed": np.bincount(letters_so_far, weights=targets == 0) / count,
            "predicted": np.bincount(letters_so_far, weights=p_end) / count}


def sample(params: dict[str, np.ndarray], n: int, seed: int = 0, max_len: int = SAMPLE_MAX_LEN) -> list[str]:
    """Draw n names from the model with a seeded generator, so the book's samples are fixed."""
    rng = np.random.default_rng(seed)
    return [_sample_one(params, rng, max_len) for _ in range(n)]


def _sample_one(params: dict[str, np.ndarray], rng: np.random.Generator, max_len: int) -> str:
    """Sample characters until the boundary mark (or max_len) ends the name."""
    window, out = [0] * window_of(params), []
    while len(out) < max_len:
        probs = forward(params, [window])["probs"][0]
        nxt = int(rng.choice(VOCAB_SIZE, p=probs))
        if nxt == 0:
            break
        out.append(nxt)
        window = window[1:] + [nxt]
    return decode(out)


def params_to_json(params: dict[str, np.ndarray]) -> dict:
    """Nested lists of Python floats: json writes them with repr, so they round-trip exactly."""
    return paramio.arrays_to_json(params, PARAM_NAMES)


def params_from_json(data: dict) -> dict[str, np.ndarray]:
    """Rebuild float64 arrays from the JSON checkpoint."""
    return paramio.arrays_from_json(data, PARAM_NAMES)


def load_checkpoint(path: Path = PARAMS_PATH) -> dict:
    """The whole stored checkpoint: parameters, loss curve and training settings."""
    return paramio.read_json(path)


def load_params(path: Path = PARAMS_PATH) -> dict[str, np.ndarray]:
    """The fitted parameters the book uses."""
    return paramio.load_arrays(path, PARAM_NAMES)
