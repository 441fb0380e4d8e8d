"""Fit the Part 4 encoder-decoder to its two pairs and write params/part4_encdec.json.

Run `python -m tinyformer.fit.part4` to reproduce the checkpoint exactly (well under a
second). Plain full-batch gradient descent with the engine's `sgd_step` on the mean of
the two pairs' teacher-forced losses, from a seeded random start, stopping at the
first step whose mean loss is below `stop_below`. The stopping rule is what keeps the
checkpoint good but not saturated: both pairs translate greedily, yet the rive/banque
predictions are still far from probability one, so one more SGD step (Part 4, step 06)
visibly moves the losses.

About the seed: seeds 0-11 were all tried with these settings. Eleven of them fit
both pairs; seed 9 stalls on the plateau where the model ignores the source and gives
rive and banque one half each (mean loss ln 2 / 3). Seed 11 was chosen because in
its la row the cross-attention weight is largest at the source word that decides the
translation (river, financial), which makes the chapter's attention figures
readable; in other seeds that information reaches the decoder through other encoded
rows (every encoded row has already mixed the whole source).
"""

from __future__ import annotations

import numpy as np

from tinyformer.fit.common import fit_and_write
from tinyformer.models import encdec
from tinyformer.nn import sgd_step

SETTINGS = {"seed": 11, "init_scale": 0.5, "lr": 0.1, "stop_below": 0.1, "max_steps": 3000}


def pairs_loss_and_grads(params: dict[str, np.ndarray], pairs=encdec.PAIRS):
    """Mean over pairs of each pair's teacher-forced mean loss, with its gradients."""
    total, grads, per_pair = 0.0, {name: np.zeros_like(v) for name, v in params.items()}, []
    for source, target in pairs:
        loss, per_position, g, _ = encdec.loss_and_grads(params, source, target)
        total += loss / len(pairs)
        per_pair.append(per_position)
        for name in grads:
            grads[name] += g[name] / len(pairs)
    return total, per_pair, grads


def fit(settings: dict = SETTINGS) -> dict:
    """Gradient descent from the seeded start until the mean loss drops below the threshold."""
    params = encdec.init_params(settings["seed"], settings["init_scale"])
    curve = []
    for _ in range(settings["max_steps"] + 1):
        loss, per_pair, grads = pairs_loss_and_grads(params)
        curve.append(loss)
        if loss < settings["stop_below"] or len(curve) > settings["max_steps"]:
            break
        params = sgd_step(params, grads, settings["lr"])
    return _checkpoint(params, settings, curve, per_pair)


def _checkpoint(params, settings, curve, per_pair) -> dict:
    """Assemble the JSON-ready record of one fitting run."""
    return {
        "model": "tinyformer.models.encdec",
        "script": "python -m tinyformer.fit.part4",
        "pairs": [list(pair) for pair in encdec.PAIRS],
        "settings": dict(settings),
        "steps": len(curve) - 1,
        "loss_curve": [float(x) for x in curve],
        "final_per_position_loss": [[float(x) for x in p] for p in per_pair],
        "params": encdec.params_to_json(params),
    }


def main() -> None:
    """Fit, write the checkpoint and say how long it took."""
    fit_and_write("part4 encoder-decoder", fit, encdec.PARAMS_FILE, lambda c: c["loss_curve"],
                  detail=" after {steps} steps")


if __name__ == "__main__":
    main()
