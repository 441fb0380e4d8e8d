"""The one matrix product of the engine, instrumented so that MAC counts can be checked."""

from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager
from typing import Iterator

import numpy as np

UNTAGGED = "untagged"


class MacCounter:
    """Multiply-accumulates seen while the counter is active, in total and per tag."""

    def __init__(self) -> None:
        self.by_tag: dict[str, int] = defaultdict(int)

    @property
    def total(self) -> int:
        """All MACs counted, whatever their tag."""
        return sum(self.by_tag.values())

    def add(self, tag: str, macs: int) -> None:
        """Record `macs` multiply-accumulates under `tag`."""
        self.by_tag[tag] += macs


_active: list[MacCounter] = []


@contextmanager
def count_macs() -> Iterator[MacCounter]:
    """Count the MACs of every `matmul` inside the block (counters may be nested)."""
    counter = MacCounter()
    _active.append(counter)
    try:
        yield counter
    finally:
        _active.remove(counter)


def matmul(a: np.ndarray, b: np.ndarray, tag: str | None = None) -> np.ndarray:
    """a @ b, counting (cells of the result) x (length of the shared axis) MACs: [a x k][k x b] costs akb."""
    out = a @ b
    if _active:
        macs = int(np.size(out)) * int(np.shape(a)[-1])
        for counter in _active:
            counter.add(tag or UNTAGGED, macs)
    return out


def grad_tags(tag: str | None) -> tuple[str, str]:
    """Tags of the two backward products of Z = X W: G W^T (to the input) and X^T G (to the weight)."""
    base = tag or UNTAGGED
    return f"{base}:GWt", f"{base}:XtG"


def matmul_backward(
    dz: np.ndarray, a: np.ndarray, b: np.ndarray, tag: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of z = a @ b: (dz b^T, a^T dz); each product costs as much as the forward one."""
    t_in, t_w = grad_tags(tag)
    da = matmul(dz, b.T, t_in)  # same shape as a
    db = matmul(a.T, dz, t_w)  # same shape as b
    return da, db
