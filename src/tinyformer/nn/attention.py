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


def tiled_attention_forward(Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray | None = None,
                            block: int = 2) -> tuple[np.ndarray, dict]:
    """softmax(Q K^T / sqrt(d_k) + mask) V, computed one block x block tile of scores at a time.

    The recurrence of FlashAttention (Dao et al. 2022): for each block of queries, walk over the
    keys a block at a time, keeping for every query row only a running maximum, a running sum of
    exponentials and a running mixture of values, rescaled whenever the maximum grows. The result
    is the same attention (to rounding); the full n_q x n_kv score matrix never exists, only one
    tile of it. The products are the same ones, so the multiply-accumulates are the same.
    Returns the messages and {"tile_numbers": the most score numbers held at once, "tiles": count}.
    """
    n_q, d_k = Q.shape
    n_kv = K.shape[0]
    mask = np.ones((n_q, n_kv), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if mask.shape != (n_q, n_kv):
        raise ValueError(f"mask {mask.shape} does not match scores {(n_q, n_kv)}")
    out = np.zeros((n_q, V.shape[1]))  # (n_q, d_v)
    held, tiles = 0, 0
    for q0 in range(0, n_q, block):
        rows = slice(q0, q0 + block)
        run_max = np.full((Q[rows].shape[0], 1), -np.inf)  # (b, 1)
        run_sum = np.zeros_like(run_max)  # (b, 1)
        run_mix = np.zeros((Q[rows].shape[0], V.shape[1]))  # (b, d_v)
        for k0 in range(0, n_kv, block):
            cols = slice(k0, k0 + block)
            tile = matmul(Q[rows], K[cols].T, "scores") / np.sqrt(d_k)  # (b, b): the only scores held
            tile = np.where(mask[rows, cols], tile, -np.inf)
            held, tiles = max(held, tile.size), tiles + 1
            new_max = np.maximum(run_max, tile.max(axis=1, keepdims=True))  # (b, 1)
            seen = np.isfinite(new_max)  # rows that have met at least one allowed key
            safe_max = np.where(seen, new_max, 0.0)
            rescale = np.where(seen, np.exp(np.where(seen, run_max - safe_max, 0.0)), 1.0)  # old terms shrink
            p = np.exp(tile - safe_max)  # (b, b), 0 where masked
            run_sum = run_sum * rescale + p.sum(axis=1, keepdims=True)
            run_mix = run_mix * rescale + matmul(p, V[cols], "mix")
            run_max = new_max
        out[rows] = run_mix / run_sum
    return out, {"tile_numbers": held, "tiles": tiles}
