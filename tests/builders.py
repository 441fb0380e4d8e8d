"""Helpers for the tests that build with a second builder (Zensical)."""

from __future__ import annotations

import importlib.util
import os

import pytest

#: Set by .ci/run, with the reason, when the `zensical` dependency group cannot be installed.
UNAVAILABLE = "NUMBOOK_ZENSICAL_UNAVAILABLE"


def require_zensical() -> None:
    """Skip without Zensical, saying how to install it; in CI skip only when .ci/run found
    that it cannot be installed, and fail otherwise."""
    if importlib.util.find_spec("zensical") is not None:
        return
    reason = os.environ.get(UNAVAILABLE)
    if reason:
        pytest.skip(f"Zensical cannot be installed here: {reason}")
    if os.environ.get("CI"):
        pytest.fail("CI is set but Zensical is not installed: .ci/run installs it (uv sync --group zensical)")
    pytest.skip("needs Zensical: uv sync --group zensical (CI installs it)")
