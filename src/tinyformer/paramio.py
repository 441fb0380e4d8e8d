"""Parameters as data: readable JSON files whose floats round-trip exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

PARAMS_DIR = Path(__file__).parent / "params"


def to_jsonable(value):
    """Arrays become nested lists of Python floats (json writes repr, so they read back bit-exact)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    return value


def read_json(name: str) -> dict:
    """The raw JSON document `name` from the params folder."""
    return json.loads((PARAMS_DIR / name).read_text())


def write_json(name: str, doc: dict) -> Path:
    """Write `doc` to the params folder, one array row per line where it helps reading."""
    path = PARAMS_DIR / name
    path.write_text(json.dumps(to_jsonable(doc), indent=1) + "\n")
    return path
