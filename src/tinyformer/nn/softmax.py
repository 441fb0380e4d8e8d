"""Softmax along one axis, stable for huge inputs, with its backward."""

from __future__ import annotations

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x - max) / sum: subtracting the row maximum keeps exp from overflowing; -inf cells get 0."""
    m = np.max(x, axis=axis, keepdims=True)  # (..., 1)
    if not np.all(np.isfinite(m)):
        raise ValueError("softmax row has no finite entry (every cell masked?)")
    with np.errstate(over="ignore"):  # x - m may overflow to -inf, whose exp is exactly 0
        z = np.exp(x - m)  # same shape as x
    return z / z.sum(axis=axis, keepdims=True)


def softmax_backward(dp: np.ndarray, p: np.ndarray, axis: int = -1) -> np.ndarray:
    """dx = p * (dp - sum(dp * p)): the Jacobian diag(p) - p p^T applied row by row."""
    return p * (dp - np.sum(dp * p, axis=axis, keepdims=True))
