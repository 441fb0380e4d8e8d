"""The shipped names, their fixed split, the counts the chapter draws from them, and the count baselines."""

from __future__ import annotations

import hashlib
from collections import Counter

import numpy as np
import pytest

from tinyformer import data
from tinyformer.models import baselines


def test_split_is_a_partition_of_whole_names_by_the_stated_hash_rule():
    names = data.load_names()
    train, heldout = data.train_heldout_split()
    assert sorted(train + heldout) == sorted(names) and not set(train) & set(heldout)
    assert heldout == [n for n in names if int(hashlib.sha256(n.encode()).hexdigest(), 16) % 10 == 0]
    assert 0.05 < len(heldout) / len(names) < 0.15


def test_split_depends_on_each_name_alone_not_on_the_list_order():
    names = data.load_names()
    shuffled = list(np.random.default_rng(1).permutation(names))
    train, heldout = data.train_heldout_split(shuffled + ["zzyzx"])
    assert set(heldout) - {"zzyzx"} == set(data.train_heldout_split()[1])
    assert train[0] == shuffled[0] or heldout[0] == shuffled[0]


def test_next_after_window_tells_the_start_of_a_name_from_later_places():
    names = ["shane", "sharon", "marsha", "natasha", "ashanti"]
    assert data.next_after_window(names, "sha", at_start=True) == Counter({"n": 1, "r": 1})
    assert data.next_after_window(names, "sha", at_start=False) == Counter({".": 2, "n": 1})


def test_start_dependent_windows_ranks_by_the_gap_between_end_rates():
    names = ["shane", "sharon", "marsha", "natasha", "anna", "annie", "joann", "luann"]
    ranked = data.start_dependent_windows(names, size=3, min_count=2)
    assert [w for w, _, _ in ranked] == ["ann", "sha"]  # equal gaps: alphabetical
    assert ranked[0][1:] == (0.0, 1.0) and ranked[1][1:] == (0.0, 1.0)
    assert data.start_dependent_windows(names, size=3, min_count=3) == []


TOY_CONTEXTS = np.array([[0, 0, 1], [0, 1, 2], [0, 1, 2], [0, 1, 3], [0, 2, 1]])  # (5, 3)
TOY_TARGETS = np.array([2, 0, 0, 1, 0])


def test_bigram_table_counts_pairs_and_smooths_by_alpha():
    table = baselines.ngram_table(TOY_CONTEXTS, TOY_TARGETS, k=1, vocab_size=4, alpha=0.0)
    # after symbol 1: next 2 once, 0 once; after 2: next 0 twice; after 3: next 1 once
    assert table.shape == (4, 4)
    assert table[1].tolist() == [0.5, 0.0, 0.5, 0.0] and table[2].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert table[0].tolist() == [0.25] * 4  # never seen, nothing added: uniform
    smooth = baselines.ngram_table(TOY_CONTEXTS, TOY_TARGETS, k=1, vocab_size=4, alpha=1.0)
    assert smooth[2].tolist() == [3 / 6, 1 / 6, 1 / 6, 1 / 6] and np.allclose(smooth.sum(axis=1), 1)
    assert smooth[0].tolist() == [0.25] * 4  # never seen: uniform


def test_unigram_is_the_target_frequency_and_losses_are_mean_minus_log():
    uni = baselines.ngram_table(TOY_CONTEXTS, TOY_TARGETS, k=0, vocab_size=4, alpha=0.0)
    assert uni.tolist() == [[3 / 5, 1 / 5, 1 / 5, 0.0]]
    assert baselines.ngram_loss(uni, TOY_CONTEXTS, TOY_TARGETS, 0) == pytest.approx(
        -(3 * np.log(3 / 5) + 2 * np.log(1 / 5)) / 5, rel=1e-12)
    tri = baselines.ngram_table(TOY_CONTEXTS, TOY_TARGETS, k=2, vocab_size=4, alpha=0.0)
    probs = baselines.ngram_probs(tri, TOY_CONTEXTS, 2)  # (5, 4)
    assert probs[1].tolist() == [1.0, 0.0, 0.0, 0.0] and probs[3].tolist() == [0.0, 1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="order 4"):
        baselines.ngram_table(TOY_CONTEXTS, TOY_TARGETS, k=4, vocab_size=4)
