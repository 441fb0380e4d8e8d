"""Multi-head attention: every head reads the full row; messages are concatenated, then W_O."""

from __future__ import annotations

import numpy as np

from ..ops import matmul, matmul_backward
from .attention import head_backward, head_forward


def multihead_forward(
    x_q: np.ndarray,
    x_kv: np.ndarray,
    heads: list[dict],
    W_O: np.ndarray,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, dict]:
    """Run each head (dict with W_Q, W_K, W_V) on the same rows, concatenate, project with W_O."""
    head_caches = []
    messages = []
    for h in heads:
        msg, c = head_forward(x_q, x_kv, h["W_Q"], h["W_K"], h["W_V"], mask)  # (n_q, d_v)
        messages.append(msg)
        head_caches.append(c)
    concat = np.concatenate(messages, axis=1)  # (n_q, n_heads * d_v)
    update = matmul(concat, W_O, "out_proj")  # (n_q, d)
    widths = [m.shape[1] for m in messages]
    cache = {"heads": head_caches, "concat": concat, "W_O": W_O, "widths": widths, "update": update}
    return update, cache


def multihead_backward(dupdate: np.ndarray, cache: dict) -> dict:
    """dict(x_q, x_kv, heads=[dict(W_Q, W_K, W_V)], W_O)."""
    dconcat, dW_O = matmul_backward(dupdate, cache["concat"], cache["W_O"], "out_proj")  # (n_q, H*d_v)
    splits = np.cumsum(cache["widths"])[:-1]
    dmessages = np.split(dconcat, splits, axis=1)  # H x (n_q, d_v)
    dx_q = 0.0
    dx_kv = 0.0
    dheads = []
    for dmsg, c in zip(dmessages, cache["heads"]):
        g = head_backward(dmsg, c)
        dx_q = dx_q + g["x_q"]  # (n_q, d)
        dx_kv = dx_kv + g["x_kv"]  # (n_kv, d)
        dheads.append({"W_Q": g["W_Q"], "W_K": g["W_K"], "W_V": g["W_V"]})
    return {"x_q": dx_q, "x_kv": dx_kv, "heads": dheads, "W_O": dW_O}
