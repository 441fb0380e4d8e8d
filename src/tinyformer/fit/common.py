"""What every fitting script does around its fit: the split of the names, a guard against
diverging runs, the record of the run, and writing the checkpoint."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from tinyformer import data, paramio


class TrainingDiverged(FloatingPointError):
    """The numbers overflowed: each step overshot and the parameters grew without bound."""

    def __init__(self, step: int, lr: float):
        super().__init__(f"training diverged at step {step}: the numbers overflowed "
                         f"(is the learning rate {lr} too large?)")
        self.step, self.lr = step, lr


@contextmanager
def divergence_guard(step: int, lr: float) -> Iterator[None]:
    """Turn an overflow inside one training step into `TrainingDiverged`, naming the step and rate."""
    try:
        with np.errstate(over="raise", invalid="raise"):
            yield
    except (FloatingPointError, ValueError) as exc:
        raise TrainingDiverged(step, lr) from exc


def names_to_fit(train: list[str] | None, heldout: list[str] | None) -> tuple[list[str], list[str], bool]:
    """The book's fixed split of the shipped names unless the caller gives names; and which it was."""
    shipped = train is None and heldout is None
    if shipped:
        train, heldout = data.train_heldout_split()
    train, heldout = list(train or []), list(heldout or [])
    if not train:
        raise ValueError("fit needs at least one training name")
    return train, heldout, shipped


def split_record(train: list[str], heldout: list[str], shipped: bool) -> dict:
    """Where the names came from and how many there were, for a checkpoint's `data` field."""
    return {"file": "tinyformer/data/names.txt" if shipped else None,
            "split_rule": data.SPLIT_RULE if shipped else "given by the caller",
            "train_names": len(train), "heldout_names": len(heldout)}


def run_record(steps: int, curve: dict, cpu0: float, wall0: float) -> dict:
    """Steps, final losses and the time taken since (cpu0, wall0): the only fields that vary between runs
    are the times and the NumPy version."""
    return {"steps": steps, "final_train_loss": curve["train"][-1], "final_heldout_loss": curve["heldout"][-1],
            "cpu_seconds": round(time.process_time() - cpu0, 2),
            "wall_seconds": round(time.perf_counter() - wall0, 2), "numpy": np.__version__}


def fit_and_write(label: str, fit: Callable[[], dict], name: str, losses: Callable[[dict], list[float]],
                  detail: str = "") -> dict:
    """Run `fit`, write its checkpoint to params/`name`, print the loss change and time; return it.

    `losses` picks the loss curve out of the checkpoint; `detail` is printed after the losses.
    """
    start = time.perf_counter()
    checkpoint = fit()
    path = paramio.write_json(name, checkpoint)
    curve = losses(checkpoint)
    print(f"{label}: loss {curve[0]:.4f} -> {curve[-1]:.4f}{detail.format(**checkpoint)}"
          f" in {time.perf_counter() - start:.2f} s; wrote {path}")
    return checkpoint
