"""The greedy decoding loop shared by the toys: with a KV cache or by recomputing the whole prefix."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .nn import ContextLimitError


def greedy_generate(
    prompt_ids,
    n_new: int,
    context: int,
    full_logits: Callable[[np.ndarray], np.ndarray],
    prefill: Callable | None = None,
    step: Callable | None = None,
    cache_size: Callable | None = None,
) -> dict:
    """Shared greedy loop: with `prefill` it reuses a cache, without it it recomputes the whole prefix."""
    ids = [int(i) for i in prompt_ids]
    if n_new < 1 or not ids:
        raise ValueError("need a non-empty prompt and n_new >= 1")
    needed = len(ids) + n_new - 1  # the last generated token is never fed back in
    if needed > context:
        raise ContextLimitError(
            f"a prompt of {len(ids)} tokens plus {n_new} new tokens needs {needed} positions, "
            f"but the model has only {context}; shorten the request (positions are never reused or zero-filled)"
        )
    step_logits, sizes = [], []
    cache = None
    for s in range(n_new):
        if prefill is None:
            logits = full_logits(np.array(ids))
        elif cache is None:
            logits, cache = prefill(np.array(ids))
        else:
            logits = step(cache, ids[-1])
        if cache is not None:
            sizes.append(cache_size(cache))
        step_logits.append(logits)
        ids.append(int(np.argmax(logits)))
    return {
        "ids": np.array(ids), "new_ids": np.array(ids[len(ids) - n_new:]),
        "logits": np.array(step_logits), "cache_sizes": sizes,
    }
