"""Table lookups: token rows by id and position rows by index, with their scatter-add backward."""

from __future__ import annotations

import numpy as np


class ContextLimitError(ValueError):
    """Raised when a sequence needs more positions than the position table holds."""


def embedding_forward(table: np.ndarray, ids) -> tuple[np.ndarray, dict]:
    """Rows of `table` picked by `ids` (a lookup is a copy, not a product)."""
    ids = np.asarray(ids, dtype=int)
    if ids.ndim != 1:
        raise ValueError(f"ids must be one-dimensional, got shape {ids.shape}")
    if ids.size and (ids.min() < 0 or ids.max() >= table.shape[0]):
        raise IndexError(f"id out of range for a table of {table.shape[0]} rows")
    rows = table[ids]  # (n, d)
    return rows, {"ids": ids, "shape": table.shape}


def embedding_backward(drows: np.ndarray, cache: dict) -> np.ndarray:
    """Gradient of the whole table: each used row receives the sum of its positions' gradients."""
    dtable = np.zeros(cache["shape"])  # (V, d)
    np.add.at(dtable, cache["ids"], drows)
    return dtable


def positions_forward(table: np.ndarray, n: int, start: int = 0) -> tuple[np.ndarray, dict]:
    """Position rows start..start+n-1; refuses to run past the table instead of inventing rows."""
    if start < 0 or start + n > table.shape[0]:
        raise ContextLimitError(
            f"positions {start + 1}..{start + n} requested, but the position table has only "
            f"{table.shape[0]} rows (the context limit); no position is reused or zero-filled"
        )
    return embedding_forward(table, np.arange(start, start + n))
