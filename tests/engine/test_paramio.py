"""paramio: checkpoints written and read back bit-exact, by name or by absolute path."""

from __future__ import annotations

import numpy as np

from tinyformer import paramio
from tinyformer.fit.common import fit_and_write


def test_checkpoint_round_trips_bit_exact(tmp_path, rng):
    arrays = {"W": rng.normal(size=(3, 2)), "b": rng.normal(size=2) / 3}
    path = paramio.write_json(tmp_path / "sub" / "ck.json", {"params": paramio.arrays_to_json(arrays, ["W", "b"])})
    assert path == tmp_path / "sub" / "ck.json"  # an absolute path is used as it is; folders are made
    back = paramio.load_arrays(path, ["W", "b"])
    assert all(back[k].dtype == np.float64 and np.array_equal(back[k], arrays[k]) for k in arrays)


def test_fit_and_write_writes_what_fit_returns(tmp_path, capsys):
    doc = {"loss_curve": [2.0, 0.5], "steps": 1}
    assert fit_and_write("toy", lambda: doc, tmp_path / "toy.json", lambda c: c["loss_curve"], " after {steps} steps") == doc
    assert paramio.read_json(tmp_path / "toy.json") == doc
    assert capsys.readouterr().out.startswith("toy: loss 2.0000 -> 0.5000 after 1 steps in ")
