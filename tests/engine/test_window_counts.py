"""Part 1's counting baseline over the whole window: alpha chosen on training names only, per-pair
losses, unseen windows and the paired bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from tinyformer import data
from tinyformer.models import baselines, window_counts
from tinyformer.models import char_mlp as m


def test_tuning_split_takes_every_tenth_training_name_and_nothing_else():
    train, heldout = data.train_heldout_split()
    counted, slice_names = window_counts.tuning_split(train)
    assert slice_names == train[::10] and len(counted) + len(slice_names) == len(train)
    assert not set(slice_names) & set(counted) and not set(heldout) & (set(counted) | set(slice_names))
    with pytest.raises(ValueError, match="every >= 2"):
        window_counts.tuning_split(train, every=1)


def test_choose_alpha_matches_a_direct_count_and_never_reads_held_out_names(monkeypatch):
    train, _ = data.train_heldout_split()
    best, losses = window_counts.choose_alpha(train)
    assert best == min(losses, key=losses.get) and set(losses) == set(window_counts.ALPHAS)
    counted, slice_names = window_counts.tuning_split(train)
    (x, y), (sx, sy) = m.pairs_to_ids(counted), m.pairs_to_ids(slice_names)
    direct = baselines.ngram_loss(baselines.ngram_table(x, y, 3, m.VOCAB_SIZE, 0.3), sx, sy, 3)
    assert losses[0.3] == pytest.approx(direct, rel=1e-12)
    # the choice is made from the training names it is given: it never reads the split
    monkeypatch.setattr(data, "train_heldout_split", lambda *a: pytest.fail("read the split"))
    assert window_counts.choose_alpha(train) == (best, losses)


def test_pair_losses_average_to_ngram_loss_and_unseen_windows_get_the_uniform_row():
    train, heldout = data.train_heldout_split()
    (x, y), (hx, hy) = m.pairs_to_ids(train), m.pairs_to_ids(heldout)
    table = baselines.ngram_table(x, y, 3, m.VOCAB_SIZE, 0.1)
    per_pair = window_counts.pair_losses(table, hx, hy, 3)
    assert per_pair.mean() == pytest.approx(baselines.ngram_loss(table, hx, hy, 3), rel=1e-12)
    seen = window_counts.seen_in(x, hx)
    assert seen.dtype == bool and 0 < (~seen).sum() < len(seen)
    assert np.allclose(per_pair[~seen], np.log(m.VOCAB_SIZE))  # only alpha: every symbol alike
    assert window_counts.seen_in(x, x).all()


def test_seen_in_on_a_small_case():
    assert window_counts.seen_in([[1, 2, 3], [0, 0, 1]], [[0, 0, 1], [3, 2, 1]]).tolist() == [True, False]


def test_the_window_counts_come_close_to_the_mlp_on_held_out_names():
    """What Part 1 section 1.6 shows: with alpha chosen on the training slice, counting the window
    is within 0.01 of the MLP on held-out names; add-one is far worse."""
    train, heldout = data.train_heldout_split()
    (x, y), (hx, hy) = m.pairs_to_ids(train), m.pairs_to_ids(heldout)
    alpha, _ = window_counts.choose_alpha(train)
    counted = baselines.ngram_loss(baselines.ngram_table(x, y, 3, m.VOCAB_SIZE, alpha), hx, hy, 3)
    add_one = baselines.ngram_loss(baselines.ngram_table(x, y, 3, m.VOCAB_SIZE, 1.0), hx, hy, 3)
    mlp = m.loss(m.load_params(), hx, hy)
    assert alpha == 0.1 and mlp < counted < mlp + 0.01 < add_one
