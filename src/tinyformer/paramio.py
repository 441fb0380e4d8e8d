"""Parameters as data: readable JSON files whose floats round-trip exactly.

Every function takes a file `name` inside the params folder; an absolute path is used as it is
(`PARAMS_DIR / "/elsewhere/x.json"` is `/elsewhere/x.json`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

PARAMS_DIR = Path(__file__).resolve().parent / "params"


def to_jsonable(value):
    """Arrays become nested lists of Python floats (json writes repr, so they read back bit-exact)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    return value


def read_json(name: str | Path) -> dict:
    """The raw JSON document `name` from the params folder."""
    return json.loads((PARAMS_DIR / name).read_text(encoding="utf-8"))


def write_json(name: str | Path, doc: dict) -> Path:
    """Write `doc` to the params folder as indented JSON (one number per line, diff-friendly)."""
    path = PARAMS_DIR / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_jsonable(doc), indent=1) + "\n", encoding="utf-8")
    return path


def arrays_to_json(arrays: dict[str, np.ndarray], names: Iterable[str]) -> dict:
    """The arrays `names` as nested lists of float64 values, in that order."""
    return {name: np.asarray(arrays[name], dtype=np.float64).tolist() for name in names}


def arrays_from_json(doc: dict, names: Iterable[str]) -> dict[str, np.ndarray]:
    """Rebuild the float64 arrays `names` from a JSON object."""
    return {name: np.array(doc[name], dtype=np.float64) for name in names}


def load_arrays(name: str | Path, names: Iterable[str], key: str = "params") -> dict[str, np.ndarray]:
    """The arrays `names` stored under `key` of checkpoint `name` (a fitting script's output)."""
    return arrays_from_json(read_json(name)[key], names)
