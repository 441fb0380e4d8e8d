"""A toy model's vocabulary: token strings to row ids of its token table, and back; tokens as text."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


class Vocabulary:
    """The tokens of a model in table order; `encode` and `decode` convert between strings and ids."""

    def __init__(self, tokens: Iterable[str]) -> None:
        self.tokens: tuple[str, ...] = tuple(tokens)
        self.ids: dict[str, int] = {t: i for i, t in enumerate(self.tokens)}
        if len(self.ids) != len(self.tokens):
            raise ValueError("a vocabulary lists each token once")

    def encode(self, tokens: Iterable[str]) -> np.ndarray:
        """Token strings to ids; an unknown token raises KeyError naming it."""
        return np.array([self.ids[t] for t in tokens], dtype=int)

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Ids to token strings."""
        return [self.tokens[int(i)] for i in ids]


PUNCTUATION = ".,;:!?"


def as_text(tokens: Iterable[str]) -> str:
    """Tokens as a reader writes them: words apart, punctuation against the word before it.

    "Priya opened the notebook ; she smiled ." would be what joining with spaces gives.
    """
    return "".join(t if t in PUNCTUATION else f" {t}" for t in tokens).strip()
