"""Boolean masks (True = may be read) for causal and padded attention."""

from __future__ import annotations

import numpy as np


def causal_mask(n: int) -> np.ndarray:
    """(n, n) mask, True where query i may read key j, i.e. j <= i: no row sees its future."""
    return np.tril(np.ones((n, n), dtype=bool))


def padding_mask(key_is_real, n_queries: int) -> np.ndarray:
    """(n_queries, m) mask that hides padded keys from every query."""
    key_is_real = np.asarray(key_is_real, dtype=bool)  # (m,)
    return np.broadcast_to(key_is_real, (n_queries, key_is_real.size)).copy()  # (n_queries, m)
