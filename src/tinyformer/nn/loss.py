"""Cross-entropy of next-token targets: mean over positions, per-position losses kept."""

from __future__ import annotations

import numpy as np


def cross_entropy_forward(logits: np.ndarray, targets) -> tuple[float, np.ndarray, dict]:
    """-log p(target) at each row, via a stable log-softmax; returns (mean, per_position, cache)."""
    targets = np.asarray(targets, dtype=int)  # (n,)
    if logits.ndim != 2 or targets.shape != (logits.shape[0],):
        raise ValueError(f"logits {logits.shape} and targets {targets.shape} do not match")
    shifted = logits - logits.max(axis=1, keepdims=True)  # (n, C)
    log_z = np.log(np.exp(shifted).sum(axis=1, keepdims=True))  # (n, 1)
    log_p = shifted - log_z  # (n, C)
    rows = np.arange(targets.size)
    per_position = -log_p[rows, targets]  # (n,)
    probs = np.exp(log_p)  # (n, C)
    return float(per_position.mean()), per_position, {"probs": probs, "targets": targets}


def cross_entropy_backward(cache: dict) -> np.ndarray:
    """Gradient of the mean loss with respect to the logits: (p - onehot(target)) / n."""
    probs, targets = cache["probs"], cache["targets"]
    n = targets.size
    dlogits = probs.copy()  # (n, C)
    dlogits[np.arange(n), targets] -= 1.0
    return dlogits / n
