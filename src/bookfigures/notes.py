"""Short texts that spell out the arithmetic behind a number, for a widget to show on focus.

Numbers are written like the figures write them:
fixed decimals and a real minus sign.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._common import fmt


def _factor(x: float, decimals: int) -> str:
    text = fmt(x, decimals)
    return f"({text})" if text.startswith("\u2212") else text


def score_notes(Q: object, K: object, row_labels: Sequence[str], col_labels: Sequence[str], *,
                mask: object = None, decimals: int = 3) -> list[list[str]]:
    """For each score q_i · k_j / √d_k, the sum of products that makes it, with these numbers.

    A masked cell (``mask`` False, as `tinyformer.nn.causal_mask`) gets a note saying why
    its score is never used instead.
    """
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    d_k = Q.shape[1]
    root = float(np.sqrt(d_k))
    allowed = np.ones((Q.shape[0], K.shape[0]), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    notes = []
    for i, q in enumerate(Q):
        row = []
        for j, k in enumerate(K):
            who = f"{row_labels[i]} reading {col_labels[j]}"
            if not allowed[i, j]:
                row.append(f"{who}: masked, a later position; the mask sets this score to −∞, so its weight is 0.")
                continue
            dot = float(q @ k)
            terms = " + ".join(f"{_factor(a, decimals)} × {_factor(b, decimals)}" for a, b in zip(q, k))
            row.append(f"{who}: q · k / √{d_k} = ({terms}) / {fmt(root, decimals)} = {fmt(dot, decimals)} / "
                       f"{fmt(root, decimals)} = {fmt(dot / root, decimals)}")
        notes.append(row)
    return notes
