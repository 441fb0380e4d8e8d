"""The two non-attention predictors of Part 3 section 17, runnable so their costs can be counted."""

from __future__ import annotations

import numpy as np

from .. import nn


def window_concat_forward(params: dict, ids, w: int, pad_id: int) -> np.ndarray:
    """Each position predicts from its last w token rows, concatenated (slots padded with pad_id)."""
    ids = np.asarray(ids, dtype=int)
    padded = np.concatenate([np.full(w - 1, pad_id), ids])  # (n + w - 1,)
    windows = np.stack([padded[i : i + w] for i in range(ids.size)])  # (n, w)
    rows = params["E_tok"][windows].reshape(ids.size, -1)  # (n, w*d) one slot after another
    logits, _ = nn.mlp_forward(rows, params["W1"], params["b1"], params["W2"], params["b2"])  # (n, C)
    return logits


def prefix_mean_forward(params: dict, ids) -> np.ndarray:
    """Each position predicts from the mean of the rows up to it: order and choice are lost."""
    ids = np.asarray(ids, dtype=int)
    E = params["E_tok"][ids] + params["P"][: ids.size]  # (n, d)
    means = np.cumsum(E, axis=0) / np.arange(1, ids.size + 1)[:, None]  # (n, d) running sums, O(nd)
    logits, _ = nn.mlp_forward(means, params["W1"], params["b1"], params["W2"], params["b2"])  # (n, C)
    return logits
