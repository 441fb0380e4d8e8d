"""Central finite differences, to check every analytic gradient of the engine.

The stencil is fourth-order, (8 [L(+e) - L(-e)] - [L(+2e) - L(-2e)]) / 12e, with e = 1e-4: its truncation
error is ~e^4 and its round-off ~1e-15 / e, far below those of the two-point rule at any single step,
while the steps stay small enough not to cross a ReLU kink that is more than ~1e-3 away.
"""

from __future__ import annotations

from typing import Callable

import numpy as np


def numerical_gradient(loss_fn: Callable[[dict], float], params: dict, name: str, eps: float = 1e-4) -> np.ndarray:
    """Fourth-order central difference (8 [L(+e) - L(-e)] - [L(+2e) - L(-2e)]) / 12e, entry by entry."""
    base = params[name]
    grad = np.zeros_like(base, dtype=float)
    for idx in np.ndindex(base.shape):
        at = {}
        for step in (-2, -1, 1, 2):
            bumped = base.copy()
            bumped[idx] += step * eps
            at[step] = float(loss_fn({**params, name: bumped}))
        # differences first, so an entry the loss ignores gives exactly 0
        grad[idx] = (8.0 * (at[1] - at[-1]) - (at[2] - at[-2])) / (12.0 * eps)
    return grad


def relative_errors(analytic: np.ndarray, numeric: np.ndarray, floor: float = 1e-5) -> np.ndarray:
    """|a - n| / max(|a|, |n|, floor).

    Round-off limits a finite difference to about 1e-11 absolute accuracy, so an entry smaller than
    `floor` is judged by its absolute error (divided by floor): a wrong gradient still shows, since its
    error is the size of the entry, but exact zeros and round-off on tiny entries do not divide by ~0.
    """
    scale = np.maximum(np.maximum(np.abs(analytic), np.abs(numeric)), floor)
    return np.abs(analytic - numeric) / scale


def gradient_errors(
    loss_fn: Callable[[dict], float], params: dict, grads: dict, eps: float = 1e-4, floor: float = 1e-5
) -> dict[str, float]:
    """Largest relative error per parameter name."""
    return {
        name: float(relative_errors(np.asarray(grads[name], float), numerical_gradient(loss_fn, params, name, eps), floor).max(initial=0.0))
        for name in params
    }


def check_gradients(
    loss_fn: Callable[[dict], float], params: dict, grads: dict, eps: float = 1e-4, floor: float = 1e-5
) -> float:
    """Largest relative error over every entry of every parameter (central differences)."""
    return max(gradient_errors(loss_fn, params, grads, eps, floor).values(), default=0.0)
