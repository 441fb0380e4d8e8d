"""Fit the Part 1 character MLP on the training names and write params/part1_char_mlp.json.

Run `python -m tinyformer.fit.part1` to reproduce the checkpoint. Minibatch SGD with the
engine's `sgd_step` on the training side of `tinyformer.data.train_heldout_split()`;
minibatches follow a seeded permutation of the training pairs each epoch, so the whole run
is deterministic. Every `eval_every` steps the mean loss over all training pairs and over all
held-out pairs is recorded. The checkpoint also records the split itself (the rule and the
held-out names) and the run (steps, final losses, time taken: the only fields that differ
from one run to the next). Takes a few seconds on one core.
"""

from __future__ import annotations

import time

import numpy as np

from tinyformer.fit.common import (  # noqa: F401 - TrainingDiverged is part of this module's API
    TrainingDiverged,
    divergence_guard,
    fit_and_write,
    names_to_fit,
    run_record,
    split_record,
)
from tinyformer.models import char_mlp
from tinyformer.nn import sgd_step

SETTINGS = {
    "seed": 0,
    "window": char_mlp.WINDOW,
    "embed_dim": char_mlp.EMBED_DIM,
    "hidden": char_mlp.HIDDEN,
    "steps": 16000,
    "batch_size": 128,
    "lr": 0.4,
    "lr_late": 0.04,  # used from step `lr_drop_step` on, to settle the noisy end of SGD
    "lr_drop_step": 12000,
    "eval_every": 800,
}


def minibatch_order(n_examples: int, steps: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of every step's minibatch: a fresh seeded permutation per epoch, remainder dropped."""
    per_epoch = n_examples // batch_size
    if per_epoch == 0:
        raise ValueError(f"a minibatch of {batch_size} pairs is larger than the {n_examples} training pairs")
    epochs = -(-steps // per_epoch)  # ceil
    perms = [rng.permutation(n_examples)[: per_epoch * batch_size] for _ in range(epochs)]
    return np.concatenate(perms).reshape(-1, batch_size)[:steps]  # (steps, batch_size)


def fit(settings: dict = SETTINGS, train: list[str] | None = None, heldout: list[str] | None = None,
        *, step_losses: list[float] | None = None) -> dict:
    """Train from the seeded start and return the checkpoint (params, both loss curves, split, run).

    Without names it uses the book's fixed split of the shipped list; a workbook can pass its own
    (smaller) lists and settings to see what a change does in a second or two. A list passed as
    `step_losses` receives each step's mean loss on its own minibatch, before that step's update
    (what `tinyformer.fit.part1_runs` records; the checkpoint itself keeps only the loss curve).
    """
    train, heldout, shipped = names_to_fit(train, heldout)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    window = settings["window"]
    contexts, targets = char_mlp.pairs_to_ids(train, window)  # (N, w), (N,)
    held = char_mlp.pairs_to_ids(heldout, window) if heldout else None
    rng = np.random.default_rng(settings["seed"])
    params = char_mlp.init_params(settings["seed"], settings["embed_dim"], settings["hidden"], window)
    batches = minibatch_order(len(targets), settings["steps"], settings["batch_size"], rng)
    curve: dict[str, list] = {"step": [], "train": [], "heldout": []}

    def record(step: int) -> None:
        curve["step"].append(step)
        curve["train"].append(char_mlp.loss(params, contexts, targets))
        curve["heldout"].append(char_mlp.loss(params, *held) if held else None)

    for step, idx in enumerate(batches):
        if step % settings["eval_every"] == 0:
            record(step)
        lr = settings["lr"] if step < settings["lr_drop_step"] else settings["lr_late"]
        with divergence_guard(step, lr):
            batch_loss, _, grads, _ = char_mlp.loss_and_grads(params, contexts[idx], targets[idx])
        if step_losses is not None:
            step_losses.append(batch_loss)
        params = sgd_step(params, grads, lr)
    record(len(batches))
    run = run_record(len(batches), curve, cpu0, wall0)
    return _checkpoint(params, settings, train, heldout, shipped, curve, run)


def _checkpoint(params, settings, train, heldout, shipped, curve, run) -> dict:
    """Assemble the JSON-ready record of one training run."""
    pairs = lambda names: int(sum(len(n) + 1 for n in names))  # noqa: E731 - one pair per letter, plus the end
    return {
        "model": "tinyformer.models.char_mlp",
        "script": "python -m tinyformer.fit.part1",
        "data": {**split_record(train, heldout, shipped),
                 "train_pairs": pairs(train), "heldout_pairs": pairs(heldout),
                 "heldout": list(heldout)},
        "settings": dict(settings),
        "loss_curve": {**curve, "note": "mean cross-entropy over all training pairs and over all "
                                        "held-out pairs, before the update of that step"},
        "run": run,
        "params": char_mlp.params_to_json(params),
    }


def main() -> None:
    """Fit, write the checkpoint and say how long it took."""
    fit_and_write("part1 char MLP", fit, char_mlp.PARAMS_FILE, lambda c: c["loss_curve"]["train"],
                  detail=" (held-out {run[final_heldout_loss]:.4f})")


if __name__ == "__main__":
    main()
