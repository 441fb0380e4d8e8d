"""Section 3.19: the book's decoder-only Transformer trained on Part 1's names, letter by letter.

The task and the data are Part 1's: the 27 symbols of `char_mlp.ALPHABET` (id 0 is the boundary
mark), the shipped names, the same train/held-out split. Where the character MLP reads a window
of the last three characters, this model (a `decoder_stack`) reads the whole name so far:

    input   .  a  a  b  i  d          (the boundary mark, then the letters)
    target  a  a  b  i  d  .          (each letter, then the boundary that ends the name)

A name of k letters gives k + 1 predictions, exactly the k + 1 training pairs it gives the MLP,
so the two models' mean losses average over the same predictions and can be compared. Many
names are packed into one pass (`decoder_stack.forward(..., segments=...)`), each reading only
its own letters.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tinyformer import paramio, stats
from tinyformer.models import char_mlp
from tinyformer.models.decoder_stack import DecoderConfig, config_from_params, forward, init_params  # noqa: F401

ALPHABET = char_mlp.ALPHABET
VOCAB_SIZE = char_mlp.VOCAB_SIZE  # 27
CONTEXT = 12  # positions: the boundary mark and up to 11 letters, the longest name in the list
CONFIG = DecoderConfig(vocab_size=VOCAB_SIZE, context=CONTEXT, d_model=16, n_heads=2, n_layers=2, d_ff=32)

PARAMS_FILE = "part3_char_decoder.json"
PARAMS_PATH = paramio.PARAMS_DIR / PARAMS_FILE


def sequence(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The inputs (boundary, then the letters) and targets (the letters, then the boundary) of one name."""
    ids = np.array(char_mlp.encode(char_mlp.BOUNDARY + name + char_mlp.BOUNDARY), dtype=int)
    return ids[:-1], ids[1:]


def pack(names: list[str]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Several names end to end: ids, targets and each name's length, for one packed pass."""
    if not names:
        raise ValueError("pack needs at least one name")
    pairs = [sequence(name) for name in names]
    return (np.concatenate([i for i, _ in pairs]), np.concatenate([t for _, t in pairs]),
            [len(i) for i, _ in pairs])


def param_names(config: DecoderConfig = CONFIG) -> list[str]:
    """The checkpoint's array names, in the order `decoder_stack.init_params` makes them."""
    return list(init_params(config))


def per_prediction_losses(params: dict[str, np.ndarray], names: list[str], chunk: int = 16
                          ) -> tuple[np.ndarray, np.ndarray]:
    """-log p(observed next symbol) for every prediction of every name, and the letters read before it.

    The letters read so far (0 for the first letter, k for the end of a k-letter name) let a
    chapter compare the two models where a window of three runs out.
    """
    losses, letters = [], []
    for start in range(0, len(names), chunk):
        ids, targets, lengths = pack(names[start:start + chunk])
        probs = forward(params, ids, segments=lengths)["probs"]  # (n, V)
        losses.append(-np.log(probs[np.arange(ids.size), targets]))
        letters.append(np.concatenate([np.arange(n) for n in lengths]))
    return np.concatenate(losses), np.concatenate(letters)


def mean_loss(params: dict[str, np.ndarray], names: list[str]) -> float:
    """Mean cross-entropy over every prediction of the names (the MLP's held-out loss averages the same)."""
    return float(per_prediction_losses(params, names)[0].mean())


name_of_prediction = stats.name_of_prediction


def gap_interval(losses_a: np.ndarray, losses_b: np.ndarray, names: list[str], n_resamples: int = 10_000,
                 seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """The mean of losses_a − losses_b over every prediction of `names`, and a percentile
    bootstrap interval for it (`tinyformer.stats.bootstrap_name_gaps`). Returns (gap, low, high);
    deterministic for a given seed."""
    gaps = stats.bootstrap_name_gaps(losses_a, losses_b, names, n_resamples, seed)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(gaps, [tail, 100 - tail])
    return float(np.mean(np.asarray(losses_a) - np.asarray(losses_b))), float(low), float(high)


#: What a head's largest weight can fall on, for a row with at least two earlier positions.
WEIGHT_TARGETS = ("the row itself", "the letter before", "the boundary mark", "an earlier letter")


def largest_weight_kinds(params: dict[str, np.ndarray], names: list[str]) -> np.ndarray:
    """(rows, layers, heads): where each head's largest weight falls, as an index into `WEIGHT_TARGETS`.

    One entry per row of every name that has at least two earlier positions (from the second
    letter on), where the four kinds are distinct: the row's own position, the one just before
    it, position 0 (the boundary mark that starts the name) and any other. Kept per row, so
    that what several heads do on the same row can be compared.
    """
    rows = []
    for name in names:
        ids, _ = sequence(name)
        out = forward(params, ids)
        picks = np.array([[head["weights"][2:].argmax(axis=1) for head in block["mh"]["heads"]]
                          for block in out["blocks"]])             # (layers, heads, rows)
        i = np.arange(2, ids.size)
        kinds = np.where(picks == i, 0, np.where(picks == i - 1, 1, np.where(picks == 0, 2, 3)))
        rows.append(kinds.transpose(2, 0, 1))
    cfg = config_from_params(params)
    return np.concatenate(rows) if rows else np.zeros((0, cfg.n_layers, cfg.n_heads), dtype=int)


def largest_weight_targets(params: dict[str, np.ndarray], names: list[str]) -> np.ndarray:
    """(layers, heads, 4): how often each head's largest weight falls on each of `WEIGHT_TARGETS`.

    The rows of `largest_weight_kinds`, counted per head.
    """
    kinds = largest_weight_kinds(params, names)
    return (kinds[..., None] == np.arange(len(WEIGHT_TARGETS))).sum(axis=0)


def sample(params: dict[str, np.ndarray], n: int, seed: int = 0) -> list[str]:
    """Draw n names with a seeded generator, each until the boundary mark or the context is full."""
    rng = np.random.default_rng(seed)
    context = params["pos"].shape[0]
    names = []
    for _ in range(n):
        ids = [0]
        while len(ids) < context:
            probs = forward(params, ids, readout="last")["probs"][0]
            nxt = int(rng.choice(VOCAB_SIZE, p=probs))
            if nxt == 0:
                break
            ids.append(nxt)
        names.append(char_mlp.decode(ids[1:]))
    return names


def load_checkpoint(path: Path = PARAMS_PATH) -> dict:
    """The whole stored checkpoint: parameters, settings, loss curves and the record of the run."""
    return paramio.read_json(path)


def load_params(path: Path = PARAMS_PATH) -> dict[str, np.ndarray]:
    """The fitted parameters section 3.19 uses (their sizes are read back from their shapes)."""
    stored = paramio.read_json(path)["params"]
    return paramio.arrays_from_json(stored, stored)
