"""Two-layer ReLU networks: the block FFN (d -> d_ff -> d) and the prediction MLP (d -> h -> C)."""

from __future__ import annotations

import numpy as np

from .activations import relu_backward, relu_forward
from .linear import linear_backward, linear_forward


def _two_layer_forward(x, W1, b1, W2, b2, tag1, tag2):
    """relu(x W1 + b1) W2 + b2, applied to every row independently."""
    pre, c1 = linear_forward(x, W1, b1, tag1)  # (n, hidden)
    hidden, cr = relu_forward(pre)  # (n, hidden)
    out, c2 = linear_forward(hidden, W2, b2, tag2)  # (n, d_out)
    return out, {"pre": pre, "hidden": hidden, "out": out, "c1": c1, "cr": cr, "c2": c2}


def _two_layer_backward(dout, cache) -> dict:
    """Gradients of the two-layer network, keyed like its arguments."""
    dhidden, dW2, db2 = linear_backward(dout, cache["c2"])  # (n, hidden)
    dpre = relu_backward(dhidden, cache["cr"])  # (n, hidden)
    dx, dW1, db1 = linear_backward(dpre, cache["c1"])  # (n, d)
    return {"x": dx, "W1": dW1, "b1": db1, "W2": dW2, "b2": db2}


def ffn_forward(
    x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray
) -> tuple[np.ndarray, dict]:
    """Block FFN: mixes the features inside each row and returns a model-width update."""
    return _two_layer_forward(x, W1, b1, W2, b2, "ffn", "ffn")


def ffn_backward(dy: np.ndarray, cache: dict) -> dict:
    """dict(x, W1, b1, W2, b2) of the FFN."""
    return _two_layer_backward(dy, cache)


def mlp_forward(
    x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray
) -> tuple[np.ndarray, dict]:
    """Prediction MLP: hidden ReLU features (tag "mlp"), then vocabulary logits (tag "vocab")."""
    return _two_layer_forward(x, W1, b1, W2, b2, "mlp", "vocab")


def mlp_backward(dlogits: np.ndarray, cache: dict) -> dict:
    """dict(x, W1, b1, W2, b2) of the prediction MLP."""
    return _two_layer_backward(dlogits, cache)
