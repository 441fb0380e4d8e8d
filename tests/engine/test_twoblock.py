"""The Part 3 two-block decoder: the multi-hop behaviour section 3.11 states, its cache, its limits."""

from __future__ import annotations

import numpy as np
import pytest

import tinyformer.nn as nn
from tinyformer.models import decoder_stack as ds
from tinyformer.models import onehead
from tinyformer.models import twoblock as m
from tinyformer.paramio import read_json
from tests.engine.conftest import assert_gradients

BANK, LAST = m.SENTENCE.index("bank"), len(m.SENTENCE) - 1
RIVER = m.SENTENCE.index("river")
WATER, FINANCE = m.COORDINATES.index("water"), m.COORDINATES.index("finance")


@pytest.fixture(scope="module")
def params():
    return m.load_params()


@pytest.fixture(scope="module")
def out(params):
    return m.forward(params)


def test_configuration_and_shared_tables(params):
    cfg = ds.config_from_params(params)
    assert (cfg.vocab_size, cfg.context, cfg.d_model, cfg.n_heads, cfg.n_layers, cfg.d_ff) == (16, 20, 4, 2, 2, 2)
    assert cfg.head_width == 1 and m.COORDINATES == onehead.COORDINATES
    np.testing.assert_array_equal(params["pos"], onehead.load_params()["P"])  # Part 2's positions
    assert set(m.SENTENCE + (m.NEXT,)) <= set(m.VOCAB) and len(set(m.VOCAB)) == len(m.VOCAB)
    for k, v in params.items():
        if "gamma" in k:
            assert np.all(v == 1.0)
        if "beta" in k:
            assert np.all(v == 0.0)
    doc = read_json(m.PARAMS_FILE)
    np.testing.assert_array_equal(params["block1.W_O"], np.array(doc["blocks"][1]["W_O"]))
    assert not any("readout" in k or "vocab" in k for k in params)  # tied readout, no bias


def test_block_one_moves_river_into_bank_and_block_two_reads_the_updated_bank(out):
    b1, b2 = out["blocks"]
    place_head, function_head = 0, 1
    assert b1["mh"]["heads"][place_head]["weights"][BANK].argmax() == RIVER
    assert b1["mh"]["heads"][place_head]["weights"][BANK, RIVER] > 0.9
    for blk in (b1, b2):
        assert blk["mh"]["heads"][function_head]["weights"][LAST].argmax() == BANK
    assert b2["mh"]["heads"][function_head]["weights"][LAST, BANK] > 0.9
    x0, x1 = out["residual"][0], out["residual"][1]
    assert x1[BANK, WATER] - x0[BANK, WATER] > 1.0  # bank gained water in block 1
    assert x0[BANK, FINANCE] > x0[BANK, WATER]  # it started leaning toward finance


def test_depth_changes_the_answer(params, out):
    stages = ds.predictions_by_depth(params, out)
    np.testing.assert_allclose(stages[-1], out["probs"], rtol=0, atol=1e-15)
    top = [m.VOCAB[int(s[LAST].argmax())] for s in stages]
    assert top == ["the", "money", "water"]
    water = m.TOKEN_ID["water"]
    assert stages[2, LAST, water] > 5 * stages[1, LAST, water]


def test_rows_before_bank_ignore_what_follows(params):
    a = ds.forward(params, m.encode(m.SENTENCE))["logits"]
    b = ds.forward(params, m.encode(m.SENTENCE[:BANK + 1] + ("money", "money", "the")))["logits"]
    np.testing.assert_array_equal(a[: BANK + 1], b[: BANK + 1])


def test_gradients_of_the_training_example(params):
    ids, targets = m.example()
    value, per, grads, out = ds.loss_and_grads(params, ids, targets)
    assert np.isclose(value, per.mean())
    pre = np.concatenate([b["ffn"]["pre"].ravel() for b in out["blocks"]])
    assert np.abs(pre).min() > 1e-3, "a ReLU sits on its kink"
    assert_gradients("twoblock_example", lambda q: ds.loss_and_grads(q, ids, targets)[0], params, grads)


def test_cached_generation_equals_recomputation(params):
    prompt = m.encode(m.SENTENCE)
    cached = ds.generate(params, prompt, 3, use_cache=True)
    full = ds.generate(params, prompt, 3, use_cache=False)
    np.testing.assert_array_equal(cached["ids"], full["ids"])
    assert np.abs(cached["logits"] - full["logits"]).max() <= 1e-12
    assert m.decode(cached["new_ids"])[0] == m.NEXT
    assert [s["keys_per_head"] for s in cached["cache_sizes"]] == [9, 10, 11]


def test_context_limit(params):
    prompt = m.encode(m.SENTENCE)
    ds.generate(params, prompt, 12)  # 9 + 12 - 1 = 20 positions: the whole table
    with pytest.raises(nn.ContextLimitError, match="needs 21 positions"):
        ds.generate(params, prompt, 13)


def test_vocabulary_round_trips_and_refuses_bad_input():
    from tinyformer.models.vocab import Vocabulary

    ids = m.encode(m.SENTENCE)
    assert tuple(m.decode(ids)) == m.SENTENCE and ids.dtype.kind == "i"
    assert ids[3] == ids[-1] == m.TOKEN_ID["the"]  # one id per token, however often it occurs
    with pytest.raises(KeyError, match="Walked"):
        m.encode(["Walked"])
    with pytest.raises(ValueError, match="once"):
        Vocabulary(["a", "b", "a"])


def test_tokens_read_as_text_with_punctuation_against_the_word_before():
    from tinyformer.models import block_parts
    from tinyformer.models.vocab import as_text

    assert as_text(block_parts.PRIYA_SENTENCE) == "Priya opened the notebook; she smiled."
    assert as_text(m.SENTENCE) == " ".join(m.SENTENCE)  # no punctuation: words apart
    assert as_text([]) == ""
