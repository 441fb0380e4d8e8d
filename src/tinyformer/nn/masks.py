"""Boolean masks (True = may be read) for causal, padded, packed and local attention.

The families of Part 3 differ in their masks: an encoder lets every position read every
other (`full_mask`), a decoder only the past (`causal_mask`), a decoder reading an encoder
reads every source position (`padding_mask` with no padding). `segment_causal_mask` packs
several sequences into one pass without letting them read each other, and `local_mask`
describes models whose layers reach only a few positions back (a fixed window, one step of
a recurrence, a causal convolution); `hops` counts the layers such a model needs to carry
information from one position to another.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def causal_mask(n: int) -> np.ndarray:
    """(n, n) mask, True where query i may read key j, i.e. j <= i: no row sees its future."""
    return np.tril(np.ones((n, n), dtype=bool))


def full_mask(n_queries: int, n_keys: int | None = None) -> np.ndarray:
    """(n_queries, n_keys) mask with every key allowed: an encoder's self-attention, or cross-attention."""
    return np.ones((n_queries, n_queries if n_keys is None else n_keys), dtype=bool)


def padding_mask(key_is_real, n_queries: int) -> np.ndarray:
    """(n_queries, m) mask that hides padded keys from every query."""
    key_is_real = np.asarray(key_is_real, dtype=bool)  # (m,)
    return np.broadcast_to(key_is_real, (n_queries, key_is_real.size)).copy()  # (n_queries, m)


def segment_ids(lengths: Sequence[int]) -> np.ndarray:
    """Which packed sequence each position belongs to: lengths (2, 3) give [0, 0, 1, 1, 1]."""
    lengths = [int(n) for n in lengths]
    if not lengths or min(lengths) < 1:
        raise ValueError(f"every packed sequence needs at least one position, got lengths {lengths}")
    return np.repeat(np.arange(len(lengths)), lengths)


def segment_positions(lengths: Sequence[int]) -> np.ndarray:
    """Each position's index inside its own sequence: lengths (2, 3) give [0, 1, 0, 1, 2]."""
    segment_ids(lengths)  # validates
    return np.concatenate([np.arange(int(n)) for n in lengths])


def segment_causal_mask(lengths: Sequence[int]) -> np.ndarray:
    """Causal mask over sequences packed end to end: a position reads its own sequence's past only.

    Block-diagonal, each block a `causal_mask`, so one pass over the packed rows gives every
    sequence exactly the rows a pass of its own would (training packs many names this way).
    """
    seg = segment_ids(lengths)  # (n,)
    return (seg[:, None] == seg[None, :]) & causal_mask(seg.size)  # (n, n)


def local_mask(n: int, width: int) -> np.ndarray:
    """(n, n) mask, True where 0 <= i - j < width: each position reads itself and width - 1 before it.

    width = 2 is one step of a recurrence (the previous state and the new input); width = k a
    causal convolution with a kernel of k; a fixed window of w characters plus the position
    itself is width w + 1.
    """
    if width < 1:
        raise ValueError(f"a local mask needs a width of at least 1, got {width}")
    i, j = np.indices((n, n))
    return (i - j >= 0) & (i - j < width)


def hops(mask: np.ndarray, max_layers: int | None = None) -> np.ndarray:
    """Fewest layers, each following `mask`, that carry information from position j to position i.

    Entry (i, j) is that count (0 on the diagonal), or -1 where no number of layers up to
    `max_layers` (default n) connects them. Computed by composing the mask with itself, layer
    by layer, the way stacked layers compose.
    """
    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[0]
    limit = n if max_layers is None else int(max_layers)
    out = np.full(mask.shape, -1, dtype=int)
    reach = np.eye(n, dtype=bool)  # after 0 layers, each position holds only itself
    out[reach] = 0
    for layer in range(1, limit + 1):
        reach = (mask.astype(int) @ reach.astype(int)) > 0  # one more layer: read what the read rows held
        out[(out < 0) & reach] = layer
    return out
