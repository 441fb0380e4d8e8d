"""Plain stochastic gradient descent."""

from __future__ import annotations

import numpy as np


def sgd_step(params: dict[str, np.ndarray], grads: dict[str, np.ndarray], lr: float) -> dict[str, np.ndarray]:
    """theta - lr * grad for every parameter; returns a new dict and leaves the old one untouched."""
    missing = set(params) - set(grads)
    if missing:
        raise KeyError(f"no gradient for {sorted(missing)}")
    return {name: params[name] - lr * grads[name] for name in params}
