"""LayerNorm over the last axis: centre each row, scale it to unit variance, then gamma and beta."""

from __future__ import annotations

import numpy as np


def layernorm_forward(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5
) -> tuple[np.ndarray, dict]:
    """(x - mean) / sqrt(var + eps) * gamma + beta, row by row; eps keeps a constant row finite."""
    mu = x.mean(axis=-1, keepdims=True)  # (n, 1)
    xc = x - mu  # (n, d)
    var = (xc**2).mean(axis=-1, keepdims=True)  # (n, 1) population variance
    inv = 1.0 / np.sqrt(var + eps)  # (n, 1)
    xhat = xc * inv  # (n, d)
    y = xhat * gamma + beta  # (n, d)
    return y, {"xhat": xhat, "inv": inv, "gamma": gamma, "mean": mu, "var": var}


def layernorm_backward(dy: np.ndarray, cache: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dx, dgamma, dbeta); dx removes the parts of dxhat along the mean and along xhat."""
    xhat, inv = cache["xhat"], cache["inv"]  # (n, d), (n, 1)
    dgamma = (dy * xhat).reshape(-1, xhat.shape[-1]).sum(axis=0)  # (d,)
    dbeta = dy.reshape(-1, xhat.shape[-1]).sum(axis=0)  # (d,)
    dxhat = dy * cache["gamma"]  # (n, d)
    dx = inv * (
        dxhat - dxhat.mean(axis=-1, keepdims=True) - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)
    )  # (n, d)
    return dx, dgamma, dbeta
