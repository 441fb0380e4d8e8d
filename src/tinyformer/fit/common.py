"""What every fitting script does around its fit: time it, write the checkpoint, say so."""

from __future__ import annotations

import time
from collections.abc import Callable

from tinyformer import paramio


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
