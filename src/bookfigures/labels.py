"""Row and column labels the chapters' figures and tables share (plain Python, no matplotlib)."""

from __future__ import annotations

from collections.abc import Sequence


def position_labels(tokens: Sequence[str]) -> list[str]:
    """Labels that carry the position, counted from 1 as the prose counts, and the token.

    Why: a sentence can hold the same token twice ("the" at 5 and at 10); a grid labelled
    by token alone would have two rows the reader cannot tell apart.
    """
    return [f"{i} {token}" for i, token in enumerate(tokens, start=1)]
