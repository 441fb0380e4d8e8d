"""Record the Part 1 training runs that the chapter shows beside its checkpoint: write
params/part1_runs.json.

Run `python -m tinyformer.fit.part1_runs` to reproduce the record. It holds three things, each
from the same seeded start and the same minibatches as `python -m tinyformer.fit.part1`:

- `minibatch_loss`: every step's mean loss on its own minibatch of the checkpoint's run (before
  that step's update), one number per step: what the loss curve, measured every `eval_every`
  steps on all the pairs, smooths over;
- `sweep`: short runs at a few constant learning rates, with the mean loss on all training pairs
  and on all held-out pairs every `eval_every` steps, or the step at which a run diverged;
- `longer`: full-length runs at other learning rates (dropped tenfold at the same step as the
  checkpoint's), with their final losses, to set against the checkpoint's.

Nothing here is stored as parameters: the chapter loads the checkpoint for the model itself.
Takes about ten seconds on one core.
"""

from __future__ import annotations

from tinyformer import paramio
from tinyformer.fit import part1

RUNS_FILE = "part1_runs.json"

#: Constant learning rates of the short runs, each for `SWEEP_STEPS` steps.
SWEEP_RATES = (0.01, 0.04, 0.1, 0.4, 1.0, 2.0, 4.0)
SWEEP_STEPS = 1600
#: Learning rates of the full-length runs compared with the checkpoint's 0.4 (each dropped to a tenth
#: at the checkpoint's `lr_drop_step`).
LONGER_RATES = (1.0,)


def minibatch_losses(settings: dict = part1.SETTINGS) -> list[float]:
    """Every step's mean loss on its own minibatch, in the run that `part1.fit(settings)` makes."""
    losses: list[float] = []
    part1.fit(settings, step_losses=losses)
    return losses


def short_run(rate: float, steps: int = SWEEP_STEPS, settings: dict = part1.SETTINGS) -> dict:
    """`steps` steps at the constant rate `rate`: the loss curve, or the step where the run diverged."""
    short = {**settings, "lr": rate, "lr_late": rate, "steps": steps, "lr_drop_step": steps,
             "eval_every": settings["eval_every"]}
    try:
        curve = part1.fit(short)["loss_curve"]
    except part1.TrainingDiverged as failure:
        return {"lr": rate, "diverged_at": failure.step, "step": [], "train": [], "heldout": []}
    return {"lr": rate, "diverged_at": None,
            "step": curve["step"], "train": curve["train"], "heldout": curve["heldout"]}


def longer_run(rate: float, settings: dict = part1.SETTINGS) -> dict:
    """The checkpoint's run with another learning rate (dropped tenfold at the same step)."""
    run = part1.fit({**settings, "lr": rate, "lr_late": rate / 10})["run"]
    return {"lr": rate, "lr_late": rate / 10, "steps": run["steps"],
            "final_train_loss": run["final_train_loss"], "final_heldout_loss": run["final_heldout_loss"]}


def record(settings: dict = part1.SETTINGS) -> dict:
    """The whole JSON-ready record (see the module's docstring)."""
    return {
        "script": "python -m tinyformer.fit.part1_runs",
        "settings": dict(settings),
        "minibatch_loss": minibatch_losses(settings),
        "sweep": {"steps": SWEEP_STEPS, "runs": [short_run(r, SWEEP_STEPS, settings) for r in SWEEP_RATES]},
        "longer": [longer_run(r, settings) for r in LONGER_RATES],
        "note": "losses are mean cross-entropies in nats (natural logarithm); minibatch_loss[i] is step i's "
                "loss on its own minibatch, before its update; the sweep's curves are over all pairs",
    }


def load() -> dict:
    """The stored record."""
    return paramio.read_json(RUNS_FILE)


def main() -> None:
    """Make the record, write it and say what it holds."""
    doc = record()
    path = paramio.write_json(RUNS_FILE, doc)
    finals = ", ".join(f"{r['lr']:g}: " + (f"{r['train'][-1]:.4f}" if r["diverged_at"] is None
                                           else f"diverged at step {r['diverged_at']}")
                       for r in doc["sweep"]["runs"])
    print(f"part1 runs: {len(doc['minibatch_loss'])} minibatch losses; sweep after {SWEEP_STEPS} steps "
          f"{finals}; wrote {path}")


if __name__ == "__main__":
    main()
