"""Part 4 encoder-decoder: shapes, masks, gradients, the stored fit, translation and cached generation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.engine.conftest import GRAD_TOL, MEASURED
from tinyformer.fit import part4
from tinyformer.gradcheck import gradient_errors
from tinyformer.models import encdec as e
from tinyformer.ops import count_macs

EPS = 1e-4  # the model is smooth (no ReLU); smaller eps is roundoff-limited
RIVER, FINANCIAL = e.PAIRS


@pytest.fixture(scope="module")
def fitted() -> dict:
    """The stored checkpoint's parameters."""
    return e.load_params()


def test_vocabularies_match_the_lesson():
    assert e.SRC_VOCAB == ("the", "river", "financial", "bank", "<eos>")
    assert e.TGT_VOCAB == ("<bos>", "la", "rive", "banque", "<eos>")


def test_teacher_forcing_shifts_by_one():
    dec_in, labels = e.split_target("<bos> la rive <eos>")
    assert [e.TGT_VOCAB[i] for i in dec_in] == ["<bos>", "la", "rive"]
    assert [e.TGT_VOCAB[i] for i in labels] == ["la", "rive", "<eos>"]


def test_parameter_shapes(fitted):
    assert {k: v.shape for k, v in fitted.items()} == e.PARAM_SHAPES
    assert all(fitted[f"{b}_{w}"].shape == (3, 3) for b in e.BLOCKS for w in e.PROJ)


def test_forward_intermediates_shapes_and_masks(fitted):
    out = e.forward(fitted, RIVER[0], "<bos> la rive")
    assert out["source_rows"].shape == out["encoded"].shape == (4, 3)
    assert out["encoder"]["weights"].shape == (4, 4) and np.all(out["encoder"]["weights"] > 0)  # no mask
    assert out["decoder_self"]["weights"].shape == (3, 3)
    assert np.all(np.triu(out["decoder_self"]["weights"], k=1) == 0)  # causal
    assert out["cross"]["Q"].shape == (3, 3) and out["cross"]["K"].shape == out["cross"]["V"].shape == (4, 3)
    assert out["cross"]["scores"].shape == out["cross"]["weights"].shape == (3, 4)  # rectangular
    assert out["logits"].shape == out["probs"].shape == (3, 5)
    for block in ("encoder", "decoder_self", "cross"):
        assert np.allclose(out[block]["weights"].sum(axis=1), 1.0)
    assert np.allclose(out["probs"].sum(axis=1), 1.0)


def test_residual_sums(fitted):
    out = e.forward(fitted, RIVER[0], "<bos> la")
    assert np.array_equal(out["encoded"], out["source_rows"] + out["encoder"]["update"])
    assert np.array_equal(out["self_rows"], out["target_rows"] + out["decoder_self"]["update"])
    assert np.array_equal(out["cross_rows"], out["self_rows"] + out["cross"]["update"])


def test_prefix_rows_do_not_depend_on_later_tokens(fitted):
    """Causal masking: the la row is the same whether or not rive follows it."""
    short, full = e.forward(fitted, RIVER[0], "<bos> la"), e.forward(fitted, RIVER[0], "<bos> la rive")
    assert np.allclose(short["probs"], full["probs"][:2], rtol=0, atol=1e-15)


def test_per_position_losses(fitted):
    mean, per_position, _, out = e.loss_and_grads(fitted, *RIVER)
    labels = e.split_target(RIVER[1])[1]
    assert np.allclose(per_position, -np.log(out["probs"][np.arange(3), labels]), rtol=1e-12)
    assert mean == pytest.approx(per_position.mean(), rel=1e-12)


@pytest.mark.parametrize("which", ["init", "fitted"])
@pytest.mark.parametrize("pair", [RIVER, FINANCIAL], ids=["river", "financial"])
def test_gradients_match_finite_differences(which, pair, fitted):
    params = e.init_params(0) if which == "init" else fitted
    _, _, grads, _ = e.loss_and_grads(params, *pair)
    errors = gradient_errors(lambda p: e.loss(p, *pair), params, grads, eps=EPS)
    MEASURED[f"encdec ({which}, {pair[0].split()[1]}, eps={EPS:g})"] = max(errors.values())
    assert set(errors) == set(e.PARAM_SHAPES)
    assert max(errors.values()) < GRAD_TOL, errors


@pytest.mark.parametrize("pair", [RIVER, FINANCIAL], ids=["river", "financial"])
def test_greedy_translates_both_fitted_pairs(pair, fitted):
    assert e.generate(fitted, pair[0])["tokens"] == pair[1].split()


@pytest.mark.parametrize("which", ["init", "fitted"])
@pytest.mark.parametrize("pair", [RIVER, FINANCIAL], ids=["river", "financial"])
def test_cached_generation_equals_full_recomputation(which, pair, fitted):
    params = e.init_params(5) if which == "init" else fitted
    cached, full = e.generate(params, pair[0]), e.generate_uncached(params, pair[0])
    assert cached["ids"] == full["ids"]
    for key in ("cross_weights", "probs"):
        assert np.allclose(cached[key], full[key], rtol=0, atol=1e-12), key
    for c_step, f_step in zip(cached["steps"], full["steps"]):
        assert np.allclose(c_step["self"]["weights"], f_step["self"]["weights"], rtol=0, atol=1e-12)
        assert np.allclose(c_step["logits"], f_step["logits"], rtol=0, atol=1e-12)


def test_generation_encodes_the_source_once(fitted, monkeypatch):
    calls = []
    real_encode = e.encode
    monkeypatch.setattr(e, "encode", lambda *a: calls.append(1) or real_encode(*a))
    out = e.generate(fitted, RIVER[0])
    assert len(calls) == 1 and len(out["steps"]) == 3
    assert np.allclose(out["cross_K"], out["encoded"] @ fitted["cross_W_K"], rtol=0, atol=1e-15)


@pytest.mark.parametrize("generate", [e.generate, e.generate_uncached], ids=["cached", "uncached"])
def test_generation_work_record_matches_the_projections_counted(generate, fitted):
    """The rows each step says it computed are the rows it projected (counted in MACs)."""
    with count_macs() as counter:
        out = generate(fitted, RIVER[0])
    records = [out["work_before"], *(s["work"] for s in out["steps"])]
    projected = sum(3 * w["encoder"][0] + 2 * w["cross K, V"][0] + 3 * w["self K, V"][0] + w["query"][0]
                    for w in records)  # encoder Q, K, V; cross K, V; French Q, K, V; cross query
    assert counter.by_tag["qkv"] == projected * e.D_MODEL * e.D_MODEL
    if generate is e.generate:
        assert [s["work"]["self K, V"] for s in out["steps"]] == [(1, 0), (1, 1), (1, 2)]
        assert all(s["work"]["cross K, V"] == (0, 4) for s in out["steps"])


def test_cached_generation_does_less_work(fitted):
    with count_macs() as cached:
        e.generate(fitted, RIVER[0])
    with count_macs() as full:
        e.generate_uncached(fitted, RIVER[0])
    assert cached.total < full.total


def test_fit_script_reproduces_the_stored_checkpoint():
    stored = e.load_checkpoint()
    fresh = json.loads(json.dumps(part4.fit()))  # the same JSON round trip the script writes
    assert fresh["settings"] == stored["settings"] and fresh["steps"] == stored["steps"]
    assert np.allclose(fresh["loss_curve"], stored["loss_curve"], rtol=0, atol=1e-9)
    for name in e.PARAM_SHAPES:
        assert np.allclose(fresh["params"][name], stored["params"][name], rtol=0, atol=1e-9), name


def test_checkpoint_is_fitted_but_not_saturated(fitted):
    losses = [e.loss(fitted, *pair) for pair in e.PAIRS]
    first_loss = e.load_checkpoint()["loss_curve"][0]
    assert np.mean(losses) < part4.SETTINGS["stop_below"] < first_loss
    probs = [e.forward(fitted, src, "<bos> la")["probs"][1] for src, _ in e.PAIRS]
    assert 0.5 < probs[0][e.TGT_VOCAB.index("rive")] < 0.99
    assert 0.5 < probs[1][e.TGT_VOCAB.index("banque")] < 0.99


def test_source_word_decides_the_translation(fitted):
    """Only the second source word differs, and the la row's choice follows it."""
    la_row = [e.forward(fitted, src, "<bos> la")["probs"][1] for src, _ in e.PAIRS]
    rive, banque = e.TGT_VOCAB.index("rive"), e.TGT_VOCAB.index("banque")
    assert la_row[0][rive] > la_row[0][banque] and la_row[1][banque] > la_row[1][rive]


def test_sampling_follows_the_model_probabilities(fitted):
    """Sampled translations appear about as often as the model's probability of each path."""
    source = RIVER[0]
    rng = np.random.default_rng(1)
    runs = [e.generate(fitted, source, rng=rng) for _ in range(3000)]
    counts: dict[tuple[str, ...], int] = {}
    for run in runs:
        counts[tuple(run["tokens"])] = counts.get(tuple(run["tokens"]), 0) + 1
        for k, step in enumerate(run["steps"]):  # each step's probabilities are the full pass's
            full = e.forward(fitted, source, run["tokens"][: k + 1])["probs"][-1]
            assert np.allclose(step["probs"], full)
            assert step["probs"][e.TGT_VOCAB.index(run["tokens"][k + 1])] > 0
    for tokens, count in counts.items():
        path = 1.0
        for k in range(1, len(tokens)):  # the probability of this exact path, step by step
            probs = e.forward(fitted, source, list(tokens[:k]))["probs"][-1]
            path *= probs[e.TGT_VOCAB.index(tokens[k])]
        sigma = np.sqrt(path * (1 - path) / len(runs))
        assert abs(count / len(runs) - path) < 4 * sigma + 1e-3, (tokens, count, path)
    assert len(counts) > 1  # sampling does not always write the greedy translation


def test_a_length_limit_cuts_the_translation_short(fitted):
    source = RIVER[0]
    assert e.generate(fitted, source, max_new=2)["tokens"] == ["<bos>", "la", "rive"]
    longest = e.generate(fitted, source, max_new=10)
    assert len(longest["steps"]) <= e.TGT_LEN  # never past the French position table


def test_evaluate_pairs_matches_the_loss_and_greedy_decoding(fitted):
    report = e.evaluate_pairs(fitted)
    assert [r["source"] for r in report] == [s for s, _ in e.PAIRS]
    for r in report:
        assert np.isclose(r["loss"], e.loss(fitted, r["source"], r["target"]))
        assert np.isclose(r["per_position"].mean(), r["loss"])
        assert r["greedy"] == " ".join(r["target"].split()[1:-1])  # the fitted pairs translate


def test_output_distribution_sums_to_one_and_matches_the_path_products(fitted):
    source = RIVER[0]
    dist = e.output_distribution(fitted, source)
    assert np.isclose(sum(dist.values()), 1.0)
    assert max(dist, key=dist.get) == "la rive <eos>"
    for text, p in dist.items():
        assert np.isclose(p, e.output_probability(fitted, source, text))
        assert text.endswith("<eos>") or len(text.split()) == e.TGT_LEN  # finished, or cut off
    assert set(e.output_distribution(fitted, source, max_new=1)) == {f"{t}" for t in e.TGT_VOCAB}


def test_beam_search(fitted):
    """A beam of one is greedy decoding; a beam of four finds the most probable output, and
    every output it returns carries the model's log-probability of it."""
    for source, _ in e.PAIRS:
        greedy = e.generate(fitted, source)["tokens"][1:]
        assert e.beam_search(fitted, source, beam=1)[0]["tokens"] == greedy
        dist = e.output_distribution(fitted, source)
        found = e.beam_search(fitted, source, beam=4)
        assert " ".join(found[0]["tokens"]) == max(dist, key=dist.get)
        logps = [f["logprob"] for f in found]
        assert logps == sorted(logps, reverse=True)
        for f in found:
            assert np.isclose(np.exp(f["logprob"]), dist[" ".join(f["tokens"])])
            assert f["finished"] == (f["tokens"][-1] == "<eos>")
    with pytest.raises(ValueError):
        e.beam_search(fitted, RIVER[0], beam=0)
