"""Interpolated counts (Witten-Bell and Kneser-Ney): small cases worked by hand, then what Part 1
says of them on the names."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from tinyformer import data
from tinyformer.models import baselines, interpolated_counts, window_counts
from tinyformer.models import char_mlp as m

# Five training pairs over the symbols 0, 1, 2 (and a symbol 3 that never occurs), windows of one:
# 0 -> 1, 0 -> 1, 0 -> 2, 1 -> 0, 2 -> 1.
CONTEXTS = [[0], [0], [0], [1], [2]]
TARGETS = [1, 1, 2, 0, 1]


def test_witten_bell_on_five_pairs_worked_by_hand():
    """Order 0: the counts 1, 3, 1 of symbols 0, 1, 2 (and 0 of symbol 3), N = 5, T = 3 kinds,
    mixed with 1/4: p0(c) = (C(c) + 3 * 1/4) / (5 + 3), so p0 = (7/32, 15/32, 7/32, 3/32).
    After window 0: C = 3, T = 2, p1(c | 0) = (C(0, c) + 2 p0(c)) / 5: c = 1 gives (2 + 15/16) / 5
    = 47/80, c = 2 gives (1 + 7/16) / 5 = 23/80, c = 0 gives (7/16) / 5 = 7/80, c = 3 gives 3/80.
    Window 3 was never seen: it keeps p0."""
    model = interpolated_counts.fit(CONTEXTS, TARGETS, k=1, vocab_size=4, method="witten-bell")
    p0 = [F(7, 32), F(15, 32), F(7, 32), F(3, 32)]
    after_0 = [F(7, 80), F(47, 80), F(23, 80), F(3, 80)]
    assert np.allclose(model.probs([[0]])[0], [float(p) for p in after_0], rtol=1e-12, atol=0)
    assert np.allclose(model.probs([[3]])[0], [float(p) for p in p0], rtol=1e-12, atol=0)
    assert sum(after_0) == 1 and sum(p0) == 1  # the hand results are distributions


def test_kneser_ney_on_five_pairs_worked_by_hand():
    """D = 3/4. Order 0 counts, for each symbol, the different symbols seen just before it:
    0 after 1 (1), 1 after 0 and 2 (2), 2 after 0 (1), 3 never (0); total 4, 3 kinds, so
    p0(c) = (max(N(c) - 3/4, 0) + 3/4 * 3 * 1/4) / 4: c = 0 gives (1/4 + 9/16) / 4 = 13/64,
    c = 1 gives (5/4 + 9/16) / 4 = 29/64, c = 2 gives 13/64, c = 3 gives (9/16) / 4 = 9/64.
    After window 0 (C = 3, T = 2): p1(c | 0) = (max(C(0, c) - 3/4, 0) + 3/4 * 2 * p0(c)) / 3:
    c = 1 gives (5/4 + 87/128) / 3 = 247/384, c = 2 gives (1/4 + 39/128) / 3 = 71/384,
    c = 0 gives (39/128) / 3 = 39/384, c = 3 gives (27/128) / 3 = 27/384."""
    model = interpolated_counts.fit(CONTEXTS, TARGETS, k=1, vocab_size=4, method="kneser-ney")
    assert model.discount == F(3, 4)
    p0 = [F(13, 64), F(29, 64), F(13, 64), F(9, 64)]
    after_0 = [F(39, 384), F(247, 384), F(71, 384), F(27, 384)]
    assert sum(p0) == 1 and sum(after_0) == 1
    assert np.allclose(model.probs([[0]])[0], [float(p) for p in after_0], rtol=1e-12, atol=0)
    assert np.allclose(model.probs([[3]])[0], [float(p) for p in p0], rtol=1e-12, atol=0)


def test_kneser_ney_with_discounts_from_the_counts_of_counts_worked_by_hand():
    """D = n1 / (n1 + 2 n2) per length. Order 0's counts (different symbols just before each
    symbol) are 1, 2, 1: n1 = 2, n2 = 1, D0 = 2 / 4 = 1/2. Order 1's counts C(0, 1) = 2, C(0, 2) = 1,
    C(1, 0) = 1, C(2, 1) = 1: n1 = 3, n2 = 1, D1 = 3 / 5.
    p0(c) = (max(N(c) - 1/2, 0) + 1/2 * 3 * 1/4) / 4: c = 0 gives (1/2 + 3/8) / 4 = 7/32, c = 1 gives
    (3/2 + 3/8) / 4 = 15/32, c = 2 gives 7/32, c = 3 gives (3/8) / 4 = 3/32.
    After window 0 (C = 3, T = 2): p1(c | 0) = (max(C(0, c) - 3/5, 0) + 3/5 * 2 * p0(c)) / 3:
    c = 1 gives (7/5 + 9/16) / 3 = 157/240, c = 2 gives (2/5 + 21/80) / 3 = 53/240,
    c = 0 gives (21/80) / 3 = 21/240, c = 3 gives (9/80) / 3 = 9/240."""
    model = interpolated_counts.fit(CONTEXTS, TARGETS, k=1, vocab_size=4,
                                    discount=interpolated_counts.COUNTS_OF_COUNTS)
    assert model.discounts == (float(F(1, 2)), float(F(3, 5)))
    p0 = [F(7, 32), F(15, 32), F(7, 32), F(3, 32)]
    after_0 = [F(21, 240), F(157, 240), F(53, 240), F(9, 240)]
    assert sum(p0) == 1 and sum(after_0) == 1
    assert np.allclose(model.probs([[0]])[0], [float(p) for p in after_0], rtol=1e-12, atol=0)
    assert np.allclose(model.probs([[3]])[0], [float(p) for p in p0], rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match="no single discount"):
        model.discount  # noqa: B018 - two lengths, two discounts


def test_the_counts_of_counts_estimate_needs_a_count_of_one():
    """n1 = 2, n2 = 1 gives 2/4; counts that are all 3 or more say nothing, and 0.75 is kept."""
    estimate = interpolated_counts.counts_of_counts_discount
    assert estimate(np.array([1, 1, 2, 5])) == F(1, 2)
    assert estimate(np.array([3, 6])) == interpolated_counts.DISCOUNT == F(3, 4)
    with pytest.raises(ValueError, match="discount"):
        interpolated_counts.fit(CONTEXTS, TARGETS, k=1, vocab_size=4, discount=1.5)


def test_a_window_longer_than_the_model_reads_only_its_last_symbols():
    model = interpolated_counts.fit(CONTEXTS, TARGETS, k=1, vocab_size=4)
    assert np.array_equal(model.probs([[2, 0], [0, 3]]), model.probs([[0], [3]]))
    with pytest.raises(ValueError, match="at least 2"):
        interpolated_counts.fit(CONTEXTS, TARGETS, k=2, vocab_size=4)
    with pytest.raises(ValueError, match="method"):
        interpolated_counts.fit(CONTEXTS, TARGETS, k=1, vocab_size=4, method="add-one")


@pytest.fixture(scope="module")
def names_pairs():
    train, heldout = data.train_heldout_split()
    return m.pairs_to_ids(train), m.pairs_to_ids(heldout)


@pytest.mark.parametrize("method", interpolated_counts.METHODS)
def test_on_the_names_rows_sum_to_one_and_losses_match_the_rows(names_pairs, method):
    (x, y), (hx, hy) = names_pairs
    model = interpolated_counts.fit(x, y, 3, m.VOCAB_SIZE, method)
    rows = model.probs(hx[:200])  # (200, 27)
    assert np.allclose(rows.sum(axis=1), 1.0, rtol=0, atol=1e-12) and rows.min() > 0
    assert np.allclose(model.pair_losses(hx[:200], hy[:200]), -np.log(rows[np.arange(200), hy[:200]]))


def test_stored_counts_are_the_different_pairs_of_each_window_length(names_pairs):
    """Witten-Bell keeps, for every length j = 0..3, one count per different (last j symbols, next)."""
    (x, y), _ = names_pairs
    model = interpolated_counts.fit(x, y, 3, m.VOCAB_SIZE, "witten-bell")
    different = [len({(tuple(w[3 - j:]), c) for w, c in zip(x.tolist(), y.tolist())}) for j in range(4)]
    assert model.stored_counts() == sum(different) and model.orders[3].pair_keys.size == different[3]


def test_interpolated_counts_beat_the_add_alpha_counts_and_the_mlp_held_out(names_pairs):
    """What Part 1 shows: over the MLP's window of three, both interpolated count models score the
    held-out names better than the add-alpha window counts and the MLP, on every held-out pair and
    on those whose window never occurs in training."""
    (x, y), (hx, hy) = names_pairs
    mlp = m.loss_and_grads(m.load_params(), hx, hy)[1]
    add_alpha = window_counts.pair_losses(baselines.ngram_table(x, y, 3, m.VOCAB_SIZE, 0.1), hx, hy, 3)
    unseen = ~window_counts.seen_in(x, hx)
    for method in interpolated_counts.METHODS:
        counts = interpolated_counts.fit(x, y, 3, m.VOCAB_SIZE, method).pair_losses(hx, hy)
        assert counts.mean() < mlp.mean() < add_alpha.mean()
        assert counts[unseen].mean() < mlp[unseen].mean() < add_alpha[unseen].mean()
