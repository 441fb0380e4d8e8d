"""Optimisers: plain stochastic gradient descent, and Adam for the models that SGD trains slowly.

Both are functions of the parameters and the gradients that return new arrays and leave the
old ones untouched, so a fitting script's steps can be replayed and compared exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def _check_grads(params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
    missing = set(params) - set(grads)
    if missing:
        raise KeyError(f"no gradient for {sorted(missing)}")


def sgd_step(params: dict[str, np.ndarray], grads: dict[str, np.ndarray], lr: float) -> dict[str, np.ndarray]:
    """theta - lr * grad for every parameter; returns a new dict and leaves the old one untouched."""
    _check_grads(params, grads)
    return {name: params[name] - lr * grads[name] for name in params}


@dataclass
class AdamState:
    """Adam's memory: the step count and running means of each gradient (m) and of its square (v)."""

    step: int = 0
    m: dict[str, np.ndarray] = field(default_factory=dict)
    v: dict[str, np.ndarray] = field(default_factory=dict)


def adam_step(params: dict[str, np.ndarray], grads: dict[str, np.ndarray], state: AdamState, lr: float,
              beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8
              ) -> tuple[dict[str, np.ndarray], AdamState]:
    """One Adam update (Kingma and Ba 2015): each number moves by about lr, scaled by its own gradient history.

    m = beta1 m + (1 - beta1) g and v = beta2 v + (1 - beta2) g^2, both corrected for starting
    at zero (divided by 1 - beta^t), then theta - lr m_hat / (sqrt(v_hat) + eps). SGD moves each
    parameter in proportion to its gradient; Adam divides by the gradient's typical size, so
    parameters with small gradients (a rarely used embedding row) still learn. Returns the new
    parameters and a new state; neither argument is changed.
    """
    _check_grads(params, grads)
    t = state.step + 1
    m = {k: beta1 * state.m.get(k, 0.0) + (1 - beta1) * grads[k] for k in params}
    v = {k: beta2 * state.v.get(k, 0.0) + (1 - beta2) * grads[k] ** 2 for k in params}
    new = {k: params[k] - lr * (m[k] / (1 - beta1**t)) / (np.sqrt(v[k] / (1 - beta2**t)) + eps) for k in params}
    return new, AdamState(t, m, v)
