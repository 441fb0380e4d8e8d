"""Shared helpers for the engine tests."""

from __future__ import annotations

import numpy as np
import pytest

from tinyformer.gradcheck import gradient_errors

GRAD_TOL = 1e-6
# Largest relative errors measured in this session, reported by report_gradcheck at the end.
MEASURED: dict[str, float] = {}


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240607)


def assert_gradients(label: str, loss_fn, params: dict, grads: dict) -> float:
    """Compare analytic with central-difference gradients and record the worst relative error."""
    assert set(grads) == set(params), f"{label}: gradient keys {sorted(grads)} != {sorted(params)}"
    for name in params:
        assert np.shape(grads[name]) == np.shape(params[name]), f"{label}: shape of d{name}"
    errors = gradient_errors(loss_fn, params, grads)
    worst = max(errors.values())
    MEASURED[label] = worst
    bad = {k: v for k, v in errors.items() if not v < GRAD_TOL}
    assert not bad, f"{label}: relative errors above {GRAD_TOL}: {bad}"
    return worst


def pytest_terminal_summary(terminalreporter):
    if MEASURED:
        terminalreporter.section("largest gradient-check relative errors")
        for label, err in sorted(MEASURED.items()):
            terminalreporter.write_line(f"{label:40s} {err:.3e}")
