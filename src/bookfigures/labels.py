"""Row and column labels the chapters' figures and tables share (plain Python, no matplotlib)."""

from __future__ import annotations

from collections.abc import Sequence


def position_labels(tokens: Sequence[str]) -> list[str]:
    """Labels that carry the position, counted from 1 as the prose counts, and the token.

    Why: a sentence can hold the same token twice ("the" at 5 and at 10); a grid labelled
    by token alone would have two rows the reader cannot tell apart.
    """
    return [f"{i} {token}" for i, token in enumerate(tokens, start=1)]


_SUBSCRIPT_DIGITS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def subscript(position: int) -> str:
    """A position as subscript digits, for labels such as e′₁₀ in tables and figures.

    Why not mathtext or markup: a table cell and a figure label are plain text, and these
    digits read the same in both (and in a copied CSV).
    """
    return str(position).translate(_SUBSCRIPT_DIGITS)
