"""How much a comparison of two models depends on which names were scored.

Both character models (Part 1's MLP and window counts, Part 3's decoder) score every
prediction of a held-out list of names; a name of k letters gives k + 1 predictions, in order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def name_of_prediction(names: Sequence[str]) -> np.ndarray:
    """For every prediction of `names` (k + 1 for a name of k letters, in order), the index of its name."""
    return np.concatenate([np.full(len(name) + 1, i) for i, name in enumerate(names)])


def bootstrap_name_gaps(losses_a: np.ndarray, losses_b: np.ndarray, names: Sequence[str],
                        resamples: int, seed: int = 0, only: np.ndarray | None = None) -> np.ndarray:
    """Mean loss of model a minus that of model b on `resamples` resamplings of the names.

    A paired bootstrap over whole names: each resampling draws len(names) names with
    replacement (a seeded generator; a name's predictions stay together) and divides the
    summed difference by the number of predictions drawn, so both models are always scored on
    the same names. Both models stay as they were fitted: this measures the choice of names
    scored, not the fitting. `only` (a boolean per prediction) keeps some kind of prediction
    (say, those after a window seen in training): the names are drawn the same way, and the
    mean runs over the kept predictions of the names drawn. Returns the (resamples,) differences.
    """
    which = name_of_prediction(names)
    if len(losses_a) != len(which) or len(losses_b) != len(which):
        raise ValueError(f"{len(which)} predictions for {len(names)} names, got {len(losses_a)} and {len(losses_b)}")
    kept = np.ones(len(which)) if only is None else np.asarray(only, dtype=bool).astype(float)
    gap = (np.asarray(losses_a, dtype=float) - np.asarray(losses_b, dtype=float)) * kept
    diff = np.bincount(which, weights=gap, minlength=len(names))
    count = np.bincount(which, weights=kept, minlength=len(names))  # kept predictions per name
    picks = np.random.default_rng(seed).integers(0, len(names), size=(resamples, len(names)))
    return diff[picks].sum(axis=1) / count[picks].sum(axis=1)
