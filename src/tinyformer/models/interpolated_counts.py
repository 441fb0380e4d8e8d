"""Interpolated counts: the strongest plain count models Part 1 measures its MLP against.

Add-alpha counts over a window (`window_counts`, `baselines.ngram_table`) know nothing about a
window they never saw: they give it the uniform row. An interpolated count model falls back on
shorter windows instead. Write h for a window of k symbols and h' for the same window less its
oldest symbol; C(h, c) counts how often c followed h in training, C(h) is their sum and T(h) the
number of different symbols that followed h. Two standard, untuned ways to mix p_k with p_(k-1):

* **Witten-Bell** (Witten and Bell 1991; interpolated as in Chen and Goodman 1999):

      p_k(c | h) = (C(h, c) + T(h) p_(k-1)(c | h')) / (C(h) + T(h)).

  A window seen often trusts its own counts; one followed by many different symbols leans more
  on the shorter window.

* **interpolated Kneser-Ney** (Kneser and Ney 1995; Chen and Goodman 1999):

      p_k(c | h) = (max(C(h, c) - D_k, 0) + D_k T(h) p_(k-1)(c | h')) / C(h),

  and, below the longest window, C(h, c) replaced by the number of different symbols seen just
  before (h, c): a symbol that follows many different windows is a better guess for an unseen
  one than a symbol that is frequent after one window only. The discount D_k is either one
  customary value for every length (0.75, the default) or, with `discount=COUNTS_OF_COUNTS`, set
  for each length from the training counts alone: D_k = n1 / (n1 + 2 n2), where n1 and n2 are how
  many of that length's counts equal 1 and 2 (Ney, Essen and Kneser 1994; the estimate Chen and
  Goodman use; 0.75 where no count equals 1). Windows mostly seen once get a discount near 1.

Either way an unseen window (C(h) = 0) takes its shorter window's guess, and at the bottom p_0 is
mixed the same way with the uniform guess 1/V, so nothing gets probability zero.

The model stores only the non-zero counts of every length 0 to k, as sorted integer keys: a window
of up to 12 symbols of a 27-symbol alphabet, followed by one symbol, fits one int64. NumPy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

METHODS = ("witten-bell", "kneser-ney")
#: The discount of interpolated Kneser-Ney: the customary value, not fitted to these names.
DISCOUNT = 0.75
#: Pass as `discount` to set Kneser-Ney's discount per window length from the counts of counts.
COUNTS_OF_COUNTS = "counts-of-counts"


@dataclass(frozen=True)
class _Order:
    """The counts one window length uses: sorted keys and their counts."""

    pair_keys: np.ndarray  # (window, next) as window * V + next, sorted
    pair_counts: np.ndarray  # C(h, c) for each key
    window_keys: np.ndarray  # every window that occurred, sorted
    window_totals: np.ndarray  # C(h)
    window_types: np.ndarray  # T(h): how many different symbols followed h


@dataclass(frozen=True)
class InterpolatedCounts:
    """An interpolated count model over windows of `k` symbols (build it with `fit`)."""

    k: int
    vocab_size: int
    method: str
    orders: tuple[_Order, ...]  # orders[j]: the counts of the last j symbols, j = 0..k
    discounts: tuple[float, ...] = ()  # Kneser-Ney: discounts[j] for the last j symbols, j = 0..k

    @property
    def discount(self) -> float:
        """Kneser-Ney's one discount, where every window length has the same (see `discounts`)."""
        if len(set(self.discounts)) != 1:
            raise ValueError(f"no single discount: one per window length, {self.discounts}")
        return self.discounts[0]

    def stored_counts(self) -> int:
        """How many non-zero counts the model keeps, over every window length 0 to k."""
        return int(sum(o.pair_keys.size for o in self.orders))

    def target_probs(self, contexts: ArrayLike, targets: ArrayLike) -> np.ndarray:
        """p_k(target | window) for each pair, shape (N,); only the last k symbols of a window are read."""
        contexts = _windows(contexts, self.k)
        targets = np.asarray(targets, dtype=np.int64).ravel()  # (N,)
        p = np.full(targets.shape, 1.0 / self.vocab_size)  # below length 0: the uniform guess
        for j, order in enumerate(self.orders):
            h = _window_keys(contexts, j, self.vocab_size)  # (N,): the last j symbols
            total, types = _lookup(order.window_keys, h, order.window_totals, order.window_types)
            count = _lookup(order.pair_keys, h * self.vocab_size + targets, order.pair_counts)[0]
            if self.method == "witten-bell":
                mixed = (count + types * p) / np.maximum(total + types, 1)
            else:
                d = self.discounts[j]
                mixed = (np.maximum(count - d, 0) + d * types * p) / np.maximum(total, 1)
            p = np.where(total > 0, mixed, p)  # an unseen window keeps its shorter window's guess
        return p

    def probs(self, contexts: ArrayLike) -> np.ndarray:
        """The whole next-symbol distribution after each window, shape (N, V); rows sum to one."""
        contexts = _windows(contexts, self.k)
        n, v = len(contexts), self.vocab_size
        every = np.repeat(contexts, v, axis=0)  # (N V, w): each window once per symbol
        return self.target_probs(every, np.tile(np.arange(v), n)).reshape(n, v)

    def pair_losses(self, contexts: ArrayLike, targets: ArrayLike) -> np.ndarray:
        """-log p(observed next symbol) for each pair, shape (N,)."""
        return -np.log(self.target_probs(contexts, targets))

    def loss(self, contexts: ArrayLike, targets: ArrayLike) -> float:
        """Mean -log p over the pairs: comparable with the models' losses, in nats."""
        return float(self.pair_losses(contexts, targets).mean())


def fit(contexts: ArrayLike, targets: ArrayLike, k: int, vocab_size: int,
        method: str = "kneser-ney", discount: float | str = DISCOUNT) -> InterpolatedCounts:
    """Count every (last j symbols, next symbol) of the training pairs, j = 0..k.

    `contexts` (N, w) with w >= k, `targets` (N,): the same pairs the MLP trains on. `discount`
    (Kneser-Ney only): one value for every window length, or `COUNTS_OF_COUNTS` for one per length
    estimated from that length's counts (see the module's docstring).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not (discount == COUNTS_OF_COUNTS or isinstance(discount, (int, float)) and 0 < discount < 1):
        raise ValueError(f"discount must be between 0 and 1 or {COUNTS_OF_COUNTS!r}, got {discount!r}")
    if vocab_size ** (k + 2) >= np.iinfo(np.int64).max:
        raise ValueError(f"windows of {k} symbols of {vocab_size} do not fit one int64 key")
    contexts = _windows(contexts, k)
    targets = np.asarray(targets, dtype=np.int64).ravel()
    if len(targets) != len(contexts):
        raise ValueError(f"{len(contexts)} windows for {len(targets)} next symbols")
    orders = []
    for j in range(k + 1):
        keys = _window_keys(contexts, j, vocab_size) * vocab_size + targets
        if method == "kneser-ney" and j < k:  # count different symbols before (h, c), not (h, c)
            longer = np.unique(_window_keys(contexts, j + 1, vocab_size) * vocab_size + targets)
            keys = longer % vocab_size ** (j + 1)  # drop the oldest symbol of each longer key
        orders.append(_order(keys, vocab_size))
    if method == "witten-bell":
        discounts: tuple[float, ...] = ()
    elif discount == COUNTS_OF_COUNTS:
        discounts = tuple(counts_of_counts_discount(o.pair_counts) for o in orders)
    else:
        discounts = (discount,) * (k + 1)
    return InterpolatedCounts(k, vocab_size, method, tuple(orders), discounts)


def counts_of_counts_discount(counts: np.ndarray) -> float:
    """D = n1 / (n1 + 2 n2) from one window length's non-zero counts (Ney, Essen and Kneser 1994).

    n1 and n2 are how many counts equal 1 and 2: with many counts of one, most of what was seen once
    is treated as luck and handed to the shorter window. Where no count equals 1 (on the names: the
    symbols' own counts, every one of them large) the estimate says nothing, and the customary
    `DISCOUNT` is kept.
    """
    n1, n2 = int((counts == 1).sum()), int((counts == 2).sum())
    return n1 / (n1 + 2 * n2) if n1 else DISCOUNT


def _order(keys: np.ndarray, vocab_size: int) -> _Order:
    """The counts of a list of (window, next) keys, and of their windows."""
    pair_keys, pair_counts = np.unique(keys, return_counts=True)
    window_keys, first, types = np.unique(pair_keys // vocab_size, return_index=True, return_counts=True)
    totals = np.add.reduceat(pair_counts, first) if first.size else np.zeros(0, dtype=np.int64)
    return _Order(pair_keys, pair_counts, window_keys, totals, types)


def _windows(contexts: ArrayLike, k: int) -> np.ndarray:
    """The windows as an (N, w) int64 array, checked to hold at least k symbols."""
    contexts = np.asarray(contexts, dtype=np.int64)
    contexts = contexts.reshape(len(contexts), -1)
    if contexts.shape[1] < k:
        raise ValueError(f"a model over {k} symbols needs windows of at least {k}, got {contexts.shape[1]}")
    return contexts


def _window_keys(contexts: np.ndarray, j: int, vocab_size: int) -> np.ndarray:
    """One int64 per window for its last j symbols (a base-`vocab_size` numeral); 0 for j = 0."""
    key = np.zeros(len(contexts), dtype=np.int64)
    for column in range(contexts.shape[1] - j, contexts.shape[1]):
        key = key * vocab_size + contexts[:, column]
    return key


def _lookup(keys: np.ndarray, wanted: np.ndarray, *values: np.ndarray) -> list[np.ndarray]:
    """For each wanted key, the values stored with it, or 0 where it is not among `keys` (sorted)."""
    if keys.size == 0:
        return [np.zeros(wanted.shape, dtype=np.int64) for _ in values]
    at = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
    hit = keys[at] == wanted
    return [np.where(hit, v[at], 0) for v in values]


__all__ = ["COUNTS_OF_COUNTS", "DISCOUNT", "METHODS", "InterpolatedCounts", "counts_of_counts_discount", "fit"]
