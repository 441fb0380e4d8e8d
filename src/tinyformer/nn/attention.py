"""One attention head (self- or cross-attention), keeping every intermediate the book shows."""

from __future__ import annotations

import numpy as np

from ..ops import matmul, matmul_backward
from .softmax import softmax, softmax_backward


def head_forward(
    x_q: np.ndarray,
    x_kv: np.ndarray,
    W_Q: np.ndarray,
    W_K: np.ndarray,
    W_V: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    x_v: np.ndarray | None = None,
) -> tuple[np.ndarray, dict]:
    """Message rows A V: each query row mixes the value rows of the keys it may read.

    Values read `x_kv` like the keys, unless `x_v` gives them rows of their own: with a copy of the
    same rows perturbed on one path only, finite differences measure that path's share of the gradient.
    """
    x_v = x_kv if x_v is None else x_v
    Q = matmul(x_q, W_Q, "qkv")  # (n_q, d_k)
    K = matmul(x_kv, W_K, "qkv")  # (n_kv, d_k)
    V = matmul(x_v, W_V, "qkv")  # (n_kv, d_v)
    d_k = Q.shape[1]
    scores = matmul(Q, K.T, "scores") / np.sqrt(d_k)  # (n_q, n_kv)
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)  # (n_q, n_kv)
    if mask.shape != scores.shape:
        raise ValueError(f"mask {mask.shape} does not match scores {scores.shape}")
    masked_scores = np.where(mask, scores, -np.inf)  # (n_q, n_kv)
    weights = softmax(masked_scores, axis=-1)  # (n_q, n_kv), rows sum to 1
    message = matmul(weights, V, "mix")  # (n_q, d_v)
    cache = {
        "x_q": x_q, "x_kv": x_kv, "x_v": x_v, "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "mask": mask,
        "Q": Q, "K": K, "V": V, "scores": scores, "masked_scores": masked_scores,
        "weights": weights, "message": message,
    }
    return message, cache


def head_backward(dmessage: np.ndarray, cache: dict) -> dict:
    """Gradients of the head's message: dict(x_q, x_k, x_v, x_kv, W_Q, W_K, W_V).

    x_k and x_v are the shares that reach the rows through the keys and through the values;
    x_kv = x_k + x_v is the gradient of rows that feed both (self- and cross-attention alike).
    """
    dweights, dV = matmul_backward(dmessage, cache["weights"], cache["V"], "mix")  # (n_q, n_kv), (n_kv, d_v)
    dmasked = softmax_backward(dweights, cache["weights"])  # (n_q, n_kv)
    dscores = np.where(cache["mask"], dmasked, 0.0) / np.sqrt(cache["Q"].shape[1])  # (n_q, n_kv)
    dQ, dKT = matmul_backward(dscores, cache["Q"], cache["K"].T, "scores")  # (n_q, d_k), (d_k, n_kv)
    dK = dKT.T  # (n_kv, d_k)
    dx_q, dW_Q = matmul_backward(dQ, cache["x_q"], cache["W_Q"], "qkv")  # (n_q, d), (d, d_k)
    dx_k, dW_K = matmul_backward(dK, cache["x_kv"], cache["W_K"], "qkv")  # (n_kv, d), (d, d_k)
    dx_v, dW_V = matmul_backward(dV, cache["x_v"], cache["W_V"], "qkv")  # (n_kv, d), (d, d_v)
    return {"x_q": dx_q, "x_k": dx_k, "x_v": dx_v, "x_kv": dx_k + dx_v, "W_Q": dW_Q, "W_K": dW_K, "W_V": dW_V}


def attention_forward(
    x_q: np.ndarray,
    x_kv: np.ndarray,
    W_Q: np.ndarray,
    W_K: np.ndarray,
    W_V: np.ndarray,
    W_O: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    x_v: np.ndarray | None = None,
) -> tuple[np.ndarray, dict]:
    """One head plus its output projection: the update Delta = (A V) W_O, back at model width."""
    message, cache = head_forward(x_q, x_kv, W_Q, W_K, W_V, mask, x_v=x_v)  # (n_q, d_v)
    update = matmul(message, W_O, "out_proj")  # (n_q, d)
    cache.update(W_O=W_O, update=update)
    return update, cache


def attention_backward(dupdate: np.ndarray, cache: dict) -> dict:
    """dict(x_q, x_k, x_v, x_kv, W_Q, W_K, W_V, W_O); for self-attention add the x_q and x_kv gradients."""
    dmessage, dW_O = matmul_backward(dupdate, cache["message"], cache["W_O"], "out_proj")  # (n_q, d_v), (d_v, d)
    grads = head_backward(dmessage, cache)
    grads["W_O"] = dW_O
    return grads
