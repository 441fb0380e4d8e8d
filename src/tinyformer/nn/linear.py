"""Affine maps: the linear layer and the vocabulary readout (optionally tied to a token table)."""

from __future__ import annotations

import numpy as np

from ..ops import matmul, matmul_backward


def linear_forward(
    x: np.ndarray, W: np.ndarray, b: np.ndarray | None = None, tag: str | None = None
) -> tuple[np.ndarray, dict]:
    """y = x W (+ b): every row is mapped by the same weights."""
    y = matmul(x, W, tag)  # (n, d_out)
    if b is not None:
        y = y + b  # (n, d_out)
    return y, {"x": x, "W": W, "has_bias": b is not None, "tag": tag}


def linear_backward(dy: np.ndarray, cache: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Gradients (dx, dW, db) of y = x W + b; db is None when the layer had no bias."""
    dx, dW = matmul_backward(dy, cache["x"], cache["W"], cache["tag"])  # (n, d_in), (d_in, d_out)
    db = dy.sum(axis=0) if cache["has_bias"] else None  # (d_out,)
    return dx, dW, db


def readout_forward(
    x: np.ndarray,
    W: np.ndarray,
    b: np.ndarray | None = None,
    tied: bool = False,
    tag: str = "vocab",
) -> tuple[np.ndarray, dict]:
    """Vocabulary logits x W (+ b); with tied=True, W is the (C, d) token table and logits are x W^T."""
    Wm = W.T if tied else W  # (d, C)
    logits, lin = linear_forward(x, Wm, b, tag)  # (n, C)
    return logits, {"lin": lin, "tied": tied}


def readout_backward(dlogits: np.ndarray, cache: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(dx, dW, db) of the readout; dW has the shape of the W passed in (the table's shape when tied)."""
    dx, dWm, db = linear_backward(dlogits, cache["lin"])  # (n, d), (d, C)
    dW = dWm.T if cache["tied"] else dWm
    return dx, dW, db
