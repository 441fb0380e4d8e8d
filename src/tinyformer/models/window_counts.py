"""Counting over the character MLP's whole window, with add-alpha smoothing: one of the baselines
Part 1 measures its MLP against (the strongest, which falls back on shorter windows, is
`interpolated_counts`).

A count model of order k (`baselines.ngram_table`) predicts the next symbol from how often each
symbol followed the same last k symbols in the training pairs, plus a small number `alpha` added
to every count (add-alpha smoothing) so that nothing gets probability zero. With k equal to the
MLP's window (3), it reads exactly what the MLP reads, and differs only in how it uses it: a free
row of counts per window, where the MLP computes its row from shared, learned parameters.

What this module adds to `baselines`:

- `choose_alpha`: pick alpha without looking at the held-out names, on a slice of the training
  names set aside for it (every `every`-th name), with counts taken from the other training names;
- `pair_losses`: each pair's -log p, so that losses can be split by kind of window;
- `seen_in`: which windows occur in a set of training windows (a count model has nothing but
  alpha for the others);
- `paired_bootstrap`: how much a difference of two mean losses moves when the names scored are
  resampled (whole names, with replacement), both models scored on the same resampled names.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import stats
from . import baselines, char_mlp

#: The values of alpha `choose_alpha` tries: about three times apart, from very light to add-one.
ALPHAS = (0.01, 0.03, 0.1, 0.3, 1.0)
#: One training name in this many (every tenth, in list order) forms the slice that alpha is chosen on.
SLICE_EVERY = 10


def tuning_split(train: Sequence[str], every: int = SLICE_EVERY) -> tuple[list[str], list[str]]:
    """The training names cut in two: (names to count from, the slice to score alpha on).

    The slice is every `every`-th name, starting with the first; no held-out name is involved.
    """
    if every < 2:
        raise ValueError("the slice must leave some names to count from: every >= 2")
    train = list(train)
    return [n for i, n in enumerate(train) if i % every], train[::every]


def choose_alpha(train: Sequence[str], k: int = char_mlp.WINDOW, alphas: Sequence[float] = ALPHAS,
                 every: int = SLICE_EVERY) -> tuple[float, dict[float, float]]:
    """The alpha whose count table, built from the training names outside the slice, gives the
    lowest mean loss on the slice; and every alpha's loss on the slice."""
    counted, slice_names = tuning_split(train, every)
    x, y = char_mlp.pairs_to_ids(counted)
    sx, sy = char_mlp.pairs_to_ids(slice_names)
    losses = {float(a): baselines.ngram_loss(baselines.ngram_table(x, y, k, char_mlp.VOCAB_SIZE, a), sx, sy, k)
              for a in alphas}
    return min(losses, key=losses.get), losses


def pair_losses(table: np.ndarray, contexts, targets, k: int) -> np.ndarray:
    """-log p(observed next symbol) for every pair under a count table, shape (N,)."""
    probs = baselines.ngram_probs(table, contexts, k)  # (N, vocab)
    return -np.log(probs[np.arange(len(probs)), np.asarray(targets)])


def seen_in(train_contexts, contexts) -> np.ndarray:
    """For each window of `contexts` (N, w): does it occur among `train_contexts`? Shape (N,), bool."""
    known = {tuple(w) for w in np.asarray(train_contexts).tolist()}
    return np.array([tuple(w) in known for w in np.asarray(contexts).tolist()], dtype=bool)


def paired_bootstrap(loss_a: np.ndarray, loss_b: np.ndarray, names: Sequence[str], resamples: int = 2000,
                     seed: int = 0, only: np.ndarray | None = None) -> np.ndarray:
    """Mean loss of model a minus that of model b, on `resamples` resamplings of the names
    (`tinyformer.stats.bootstrap_name_gaps`); `loss_a` and `loss_b` are per-pair losses over
    the pairs of `names`, in order; `only` keeps some of the pairs (say, the seen windows')."""
    return stats.bootstrap_name_gaps(loss_a, loss_b, names, resamples, seed, only)
