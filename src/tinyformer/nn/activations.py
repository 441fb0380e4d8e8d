"""ReLU and its backward."""

from __future__ import annotations

import numpy as np


def relu_forward(x: np.ndarray) -> tuple[np.ndarray, dict]:
    """max(x, 0): keeps positive features, zeroes the rest."""
    return np.maximum(x, 0.0), {"on": x > 0}


def relu_backward(dy: np.ndarray, cache: dict) -> np.ndarray:
    """Gradient passes only where the input was positive."""
    return dy * cache["on"]
