"""tinyformer.stats: the paired bootstrap over whole names that Parts 1 and 3 use."""

from __future__ import annotations

import numpy as np
import pytest

from tinyformer import stats
from tinyformer.models import char_decoder, window_counts


def test_each_prediction_knows_its_name():
    assert stats.name_of_prediction(["ab", "c", "def"]).tolist() == [0, 0, 0, 1, 1, 2, 2, 2, 2]


def test_a_constant_gap_is_the_same_in_every_resampling_and_a_seed_repeats():
    names = ["ab", "c", "def"]  # 3 + 2 + 4 predictions
    a = np.arange(9, dtype=float)
    gaps = stats.bootstrap_name_gaps(a, a - 0.5, names, resamples=50, seed=1)
    assert gaps.shape == (50,) and np.allclose(gaps, 0.5)
    again = stats.bootstrap_name_gaps(a, a[::-1], names, resamples=50, seed=1)
    assert np.array_equal(again, stats.bootstrap_name_gaps(a, a[::-1], names, resamples=50, seed=1))
    with pytest.raises(ValueError, match="9 predictions for 3 names, got 8 and 8"):
        stats.bootstrap_name_gaps(a[:8], a[:8], names, resamples=5)


def test_a_resampling_weighs_names_by_their_predictions():
    """Two names drawn: the gap is their summed difference over their predictions, by hand."""
    names = ["a", "bcd"]  # 2 + 4 predictions
    diff = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    gaps = stats.bootstrap_name_gaps(diff, np.zeros(6), names, resamples=200, seed=0)
    # each resampling draws two names: (a, a) -> 4/4, (a, bcd) -> 2/6, (bcd, bcd) -> 0/8
    assert set(np.round(gaps, 12)) <= {1.0, round(2 / 6, 12), 0.0}


def test_only_some_predictions_count_within_the_names_drawn():
    """Names "a" (predictions 0, 1) and "bcd" (2 to 5); only predictions 1, 2 and 3 count, with
    differences 3, 1, 1. Draws: (a, a) -> 6/2 = 3, (a, bcd) -> 5/3, (bcd, bcd) -> 4/4 = 1."""
    names = ["a", "bcd"]
    diff = np.array([100.0, 3.0, 1.0, 1.0, -100.0, -100.0])
    only = np.array([False, True, True, True, False, False])
    gaps = stats.bootstrap_name_gaps(diff, np.zeros(6), names, resamples=200, seed=0, only=only)
    assert set(np.round(gaps, 12)) == {3.0, round(5 / 3, 12), 1.0}
    everything = np.ones(6, dtype=bool)
    assert np.allclose(stats.bootstrap_name_gaps(diff, np.zeros(6), names, 50, 4, only=everything),
                       stats.bootstrap_name_gaps(diff, np.zeros(6), names, 50, 4))


def test_both_parts_use_the_one_bootstrap():
    names = ["ab", "c"]
    a, b = np.arange(5, dtype=float), np.zeros(5)
    assert np.array_equal(window_counts.paired_bootstrap(a, b, names, resamples=20, seed=3),
                          stats.bootstrap_name_gaps(a, b, names, 20, 3))
    gap, low, high = char_decoder.gap_interval(a, b, names, n_resamples=20, seed=3)
    assert gap == pytest.approx(a.mean()) and low <= high
