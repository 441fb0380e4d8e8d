"""Fit the Part 1 character MLP on the shipped names and write params/part1_char_mlp.json.

Run `python -m tinyformer.fit.part1` to reproduce the checkpoint exactly. Minibatch SGD
with the engine's `sgd_step`; minibatches follow a seeded permutation of the training
pairs each epoch, so the whole run is deterministic. Takes a few seconds on 2 cores.
"""

from __future__ import annotations

import numpy as np

from tinyformer.fit.common import fit_and_write
from tinyformer.models import char_mlp
from tinyformer.nn import sgd_step

SETTINGS = {
    "seed": 0,
    "embed_dim": char_mlp.EMBED_DIM,
    "hidden": char_mlp.HIDDEN,
    "steps": 3000,
    "batch_size": 128,
    "lr": 0.2,
    "lr_late": 0.02,  # used from step `lr_drop_step` on, to settle the noisy end of SGD
    "lr_drop_step": 2250,
    "eval_every": 250,
}


def minibatch_order(n_examples: int, steps: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of every step's minibatch: a fresh seeded permutation per epoch, remainder dropped."""
    per_epoch = n_examples // batch_size
    epochs = -(-steps // per_epoch)  # ceil
    perms = [rng.permutation(n_examples)[: per_epoch * batch_size] for _ in range(epochs)]
    return np.concatenate(perms).reshape(-1, batch_size)[:steps]  # (steps, batch_size)


def fit(settings: dict = SETTINGS, names: list[str] | None = None) -> dict:
    """Train from the seeded start and return the checkpoint (params, loss curves, settings)."""
    names = char_mlp.load_names() if names is None else names
    contexts, targets = char_mlp.pairs_to_ids(names)  # (N, 3), (N,)
    rng = np.random.default_rng(settings["seed"])
    params = char_mlp.init_params(settings["seed"], settings["embed_dim"], settings["hidden"])
    batches = minibatch_order(len(targets), settings["steps"], settings["batch_size"], rng)
    curve_steps, curve_loss, batch_loss = [], [], []
    for step, idx in enumerate(batches):
        if step % settings["eval_every"] == 0:
            curve_steps.append(step)
            curve_loss.append(char_mlp.loss(params, contexts, targets))
        loss, _, grads, _ = char_mlp.loss_and_grads(params, contexts[idx], targets[idx])
        batch_loss.append(loss)
        lr = settings["lr"] if step < settings["lr_drop_step"] else settings["lr_late"]
        params = sgd_step(params, grads, lr)
    curve_steps.append(len(batches))
    curve_loss.append(char_mlp.loss(params, contexts, targets))
    return _checkpoint(params, settings, names, curve_steps, curve_loss, batch_loss)


def _checkpoint(params, settings, names, curve_steps, curve_loss, batch_loss) -> dict:
    """Assemble the JSON-ready record of one training run."""
    return {
        "model": "tinyformer.models.char_mlp",
        "script": "python -m tinyformer.fit.part1",
        "data": {"file": "tinyformer/data/names.txt", "names": len(names),
                 "pairs": int(sum(len(n) + 1 for n in names))},
        "settings": dict(settings),
        "loss_curve": {"step": curve_steps, "loss": [float(x) for x in curve_loss],
                       "note": "mean cross-entropy over all training pairs, before the update of that step"},
        "minibatch_loss": [float(x) for x in batch_loss],
        "params": char_mlp.params_to_json(params),
    }


def main() -> None:
    """Fit, write the checkpoint and say how long it took."""
    fit_and_write("part1 char MLP", fit, char_mlp.PARAMS_FILE, lambda c: c["loss_curve"]["loss"])


if __name__ == "__main__":
    main()
