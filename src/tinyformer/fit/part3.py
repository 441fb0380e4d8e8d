"""Fit the decoder of section 3.19 on Part 1's training names and write params/part3_char_decoder.json.

Run `python -m tinyformer.fit.part3` to reproduce the checkpoint. The model is
`tinyformer.models.char_decoder` (a two-block pre-norm `decoder_stack` over the 27 symbols);
the data is the training side of `tinyformer.data.train_heldout_split()`, the same names the
Part 1 MLP was fitted on. Each step packs `batch_size` names into one pass (each name reads
only its own letters), takes the mean loss over all their predictions and makes one Adam
step (`tinyformer.nn.adam_step`); the learning rate falls along half a cosine to zero. The
names are shuffled by a seeded generator every epoch, so the run is deterministic. Every
`eval_every` steps the mean loss over every training prediction and every held-out one is
recorded; the checkpoint also records the split, the settings and the run (steps, final
losses, time taken: the only fields that differ from one run to the next). About twenty
seconds of CPU time.
"""

from __future__ import annotations

import time

import numpy as np

from tinyformer.fit.common import divergence_guard, fit_and_write, names_to_fit, run_record, split_record
from tinyformer.fit.part1 import minibatch_order
from tinyformer.models import char_decoder, decoder_stack
from tinyformer.nn import AdamState, adam_step

SETTINGS = {
    "seed": 0,
    "model": {"context": char_decoder.CONFIG.context, "d_model": char_decoder.CONFIG.d_model,
              "n_heads": char_decoder.CONFIG.n_heads, "n_layers": char_decoder.CONFIG.n_layers,
              "d_ff": char_decoder.CONFIG.d_ff},
    "optimizer": "adam",
    "steps": 8700,  # 30 passes over the 4,668 training names, 16 at a time
    "batch_size": 16,
    "lr": 0.01,
    "schedule": "cosine to zero",
    "eval_every": 580,
}


def learning_rate(settings: dict, step: int) -> float:
    """Half a cosine from `lr` at step 0 to zero after the last step: big moves first, then settle."""
    return settings["lr"] * 0.5 * (1 + np.cos(np.pi * step / settings["steps"]))


def config(settings: dict = SETTINGS) -> decoder_stack.DecoderConfig:
    """The decoder's sizes from the settings (vocabulary: the 27 symbols of Part 1)."""
    return decoder_stack.DecoderConfig(vocab_size=char_decoder.VOCAB_SIZE, **settings["model"])


def fit(settings: dict = SETTINGS, train: list[str] | None = None, heldout: list[str] | None = None,
        stop_after: int | None = None) -> dict:
    """Train from the seeded start and return the checkpoint (params, both loss curves, split, run).

    Without names it uses the book's fixed split of the shipped list; a workbook or a test can
    pass smaller lists and fewer steps. `stop_after` runs only the first steps of the same
    schedule: its loss curve is the beginning of the full run's, which a test compares with
    the stored checkpoint in a few seconds.
    """
    train, heldout, shipped = names_to_fit(train, heldout)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    rng = np.random.default_rng(settings["seed"])
    params = decoder_stack.init_params(config(settings), settings["seed"])
    state = AdamState()
    batches = minibatch_order(len(train), settings["steps"], settings["batch_size"], rng)
    curve: dict[str, list] = {"step": [], "train": [], "heldout": []}

    def record(step: int) -> None:
        curve["step"].append(step)
        curve["train"].append(char_decoder.mean_loss(params, train))
        curve["heldout"].append(char_decoder.mean_loss(params, heldout) if heldout else None)

    for step, idx in enumerate(batches[:stop_after]):
        if step % settings["eval_every"] == 0:
            record(step)
        ids, targets, lengths = char_decoder.pack([train[i] for i in idx])
        lr = learning_rate(settings, step)
        with divergence_guard(step, lr):
            _, _, grads, _ = decoder_stack.loss_and_grads(params, ids, targets, segments=lengths)
        params, state = adam_step(params, grads, state, lr)
    steps = len(batches[:stop_after])
    record(steps)
    run = run_record(steps, curve, cpu0, wall0)
    return _checkpoint(params, settings, train, heldout, shipped, curve, run)


def _checkpoint(params, settings, train, heldout, shipped, curve, run) -> dict:
    """Assemble the JSON-ready record of one training run."""
    predictions = lambda names: int(sum(len(n) + 1 for n in names))  # noqa: E731 - one per letter, plus the end
    return {
        "model": "tinyformer.models.char_decoder",
        "script": "python -m tinyformer.fit.part3",
        "data": {**split_record(train, heldout, shipped),
                 "train_predictions": predictions(train), "heldout_predictions": predictions(heldout)},
        "settings": dict(settings),
        "loss_curve": {**curve, "note": "mean cross-entropy over every prediction of the training names and "
                                        "of the held-out names, before the update of that step"},
        "run": run,
        "params": {name: value.tolist() for name, value in params.items()},
    }


def main() -> None:
    """Fit, write the checkpoint and say how long it took."""
    fit_and_write("part3 char decoder", fit, char_decoder.PARAMS_FILE, lambda c: c["loss_curve"]["train"],
                  detail=" (held-out {run[final_heldout_loss]:.4f})")


if __name__ == "__main__":
    main()
