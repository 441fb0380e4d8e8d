"""The shipped list of names, the one fixed train/held-out split of it, and counts taken from it.

Every model that learns from the names (the Part 1 character MLP, the decoder that section
3.19 sets beside it) trains on `train_heldout_split()[0]` and is scored on
`train_heldout_split()[1]`, so their losses can be compared. Where the list comes from:
`README.md` beside this file.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

NAMES_PATH = Path(__file__).resolve().parent / "names.txt"
HELDOUT_ONE_IN = 10  # about one name in ten is held out
SPLIT_RULE = (f"a name is held out when the SHA-256 digest of its UTF-8 bytes, read as a big-endian "
              f"integer, is divisible by {HELDOUT_ONE_IN}")


def load_names(path: Path = NAMES_PATH) -> list[str]:
    """Read the shipped name list (see README.md beside it for its source)."""
    return path.read_text(encoding="utf-8").split()


def is_heldout(name: str) -> bool:
    """Which side of the split a name falls on, decided by the name alone (see SPLIT_RULE).

    A hash, not a seeded shuffle: the split stays the same if the list is re-sorted or grows,
    does not depend on NumPy's random streams, and any model can recompute it from a name.
    """
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return int.from_bytes(digest, "big") % HELDOUT_ONE_IN == 0


def train_heldout_split(names: list[str] | None = None) -> tuple[list[str], list[str]]:
    """The training names and the held-out names, each in the order of the list.

    Whole names go to one side, never single characters, so no held-out name was seen in part.
    """
    names = load_names() if names is None else names
    heldout = [n for n in names if is_heldout(n)]
    train = [n for n in names if not is_heldout(n)]
    return train, heldout


def next_after_window(names: list[str], window: str, at_start: bool, boundary: str = ".") -> Counter:
    """What follows `window` in the names: counts of each next character (`boundary` = the name ends).

    `at_start=True` counts only names that begin with `window`; `False` only the places where
    at least one letter stands before it. A model that sees just the window cannot tell the two apart.
    """
    after: Counter = Counter()
    for name in names:
        padded = name + boundary
        starts = [0] if at_start else range(1, len(name) - len(window) + 1)
        for i in starts:
            if name[i : i + len(window)] == window:
                after[padded[i + len(window)]] += 1
    return after


def start_dependent_windows(names: list[str], size: int = 3, min_count: int = 20,
                            boundary: str = ".") -> list[tuple[str, float, float]]:
    """Windows whose chance of ending the name depends most on whether the name began just before them.

    Each entry is `(window, end rate when the name starts with it, end rate elsewhere)` for the
    windows seen at least `min_count` times in both places, largest gap between the rates first.
    """
    start, later = Counter(n[:size] for n in names if len(n) >= size), Counter()
    for name in names:
        later.update(name[i : i + size] for i in range(1, len(name) - size + 1))
    rows = []
    for window in start.keys() & later.keys():
        if start[window] >= min_count and later[window] >= min_count:
            rate_start = next_after_window(names, window, True, boundary)[boundary] / start[window]
            rate_later = next_after_window(names, window, False, boundary)[boundary] / later[window]
            rows.append((window, rate_start, rate_later))
    return sorted(rows, key=lambda r: (-abs(r[2] - r[1]), r[0]))
