"""Train Part 1's MLP with windows of 1 to 8 characters, on all the training names and on a
quarter of them: write params/part1_windows.json.

Run `python -m tinyformer.fit.part1_windows` to reproduce the record. Each run is
`tinyformer.fit.part1.fit` with the checkpoint's settings (seed, sizes, steps, learning rates)
and only the window changed, trained on the names of its data size and scored on all the
held-out names. The settings were chosen for a window of three on all the names and are not
tuned again per run, nor is any run stopped early. The record keeps, per run, the final losses,
the losses on all training and held-out pairs every `eval_every` steps along the run (the
checkpoint's curve: where the held-out loss was lowest), the loss on the held-out pairs whose
window never occurs in that run's training pairs, the number of parameters and the time taken;
no parameters. Count models are counted again wherever they are needed, in a fraction of a
second; their held-out losses and sizes are also kept, in params/part1_window_counts.json
(`python -m tinyformer.fit.part1_windows --counts`, a second), for a page that only quotes them
(Home, which runs again whenever any chapter changes) and must not pay for the counting; Part 1
checks that record against its own counts.

About three minutes of processor time on one core (16 runs of 16,000 steps).
"""

from __future__ import annotations

import hashlib
import time

import numpy as np

from tinyformer import data, paramio
from tinyformer.fit import part1
from tinyformer.models import char_mlp

RUNS_FILE = "part1_windows.json"
COUNTS_FILE = "part1_window_counts.json"
#: The window lengths tried, in characters.
WINDOWS = tuple(range(1, 9))
#: The data sizes: one training name in this many, in list order (1: all of them).
ONE_IN = (1, 4)


def names_for(one_in: int) -> tuple[list[str], list[str]]:
    """The training names of one data size (every `one_in`-th, the first included) and all the held-out names."""
    train, heldout = data.train_heldout_split()
    return train[::one_in], heldout


def fingerprint(names: list[str]) -> str:
    """SHA-256 of the names, one a line: which names a run saw, in one string."""
    return hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()


def settings_for(window: int) -> dict:
    """The checkpoint's settings with another window."""
    return {**part1.SETTINGS, "window": window}


def run(window: int, one_in: int) -> dict:
    """One MLP run: its final losses, its loss curves, its loss on held-out pairs with a window unseen
    in its training pairs, its size and its time."""
    train, heldout = names_for(one_in)
    cpu0 = time.process_time()
    checkpoint = part1.fit(settings_for(window), train=train, heldout=heldout)
    params = char_mlp.params_from_json(checkpoint["params"])
    x, _ = char_mlp.pairs_to_ids(train, window)
    hx, hy = char_mlp.pairs_to_ids(heldout, window)
    known = {tuple(w) for w in x.tolist()}
    unseen = np.array([tuple(w) not in known for w in hx.tolist()])
    per_pair = char_mlp.loss_and_grads(params, hx, hy)[1]
    return {"window": window, "one_in": one_in, "train_names": len(train), "train_pairs": int(len(x)),
            "final_train_loss": checkpoint["run"]["final_train_loss"],
            "final_heldout_loss": checkpoint["run"]["final_heldout_loss"],
            "curve": {k: checkpoint["loss_curve"][k] for k in ("step", "train", "heldout")},
            "heldout_unseen_pairs": int(unseen.sum()),
            "heldout_unseen_loss": float(per_pair[unseen].mean()) if unseen.any() else None,
            "parameters": int(sum(p.size for p in params.values())),
            "cpu_seconds": round(time.process_time() - cpu0, 2)}


def record() -> dict:
    """The whole JSON-ready record (see the module's docstring)."""
    heldout = data.train_heldout_split()[1]
    return {
        "script": "python -m tinyformer.fit.part1_windows",
        "settings": dict(part1.SETTINGS),
        "windows": list(WINDOWS),
        "one_in": list(ONE_IN),
        "names": {"train": {str(k): fingerprint(names_for(k)[0]) for k in ONE_IN},
                  "heldout": fingerprint(heldout)},
        "runs": [run(w, k) for k in ONE_IN for w in WINDOWS],
        "numpy": np.__version__,
        "note": "losses are mean cross-entropies in nats over all the held-out pairs (final_heldout_loss) "
                "or over those whose window never occurs in the run's training pairs (heldout_unseen_loss); "
                "curve: the mean losses on all training and all held-out pairs before the update of "
                "each step listed, and after the last; "
                "every run uses `settings` with its own window; the names are SHA-256 digests of the "
                "names, one a line",
    }


def best_heldout(run_record: dict) -> tuple[int, float]:
    """The step along a stored run at which its held-out loss was lowest, and that loss: where
    stopping early would have ended it (chosen on the held-out names themselves)."""
    curve = run_record["curve"]
    at = int(np.argmin(curve["heldout"]))
    return curve["step"][at], curve["heldout"][at]


def load() -> dict:
    """The stored record."""
    return paramio.read_json(RUNS_FILE)


def belongs_to_current_settings(doc: dict) -> bool:
    """Was the record made with today's settings, windows, data sizes and names?"""
    heldout = data.train_heldout_split()[1]
    return (doc["settings"] == part1.SETTINGS and doc["windows"] == list(WINDOWS)
            and doc["one_in"] == list(ONE_IN) and doc["names"]["heldout"] == fingerprint(heldout)
            and doc["names"]["train"] == {str(k): fingerprint(names_for(k)[0]) for k in ONE_IN})


def counts_record() -> dict:
    """The interpolated counts (Kneser-Ney) at every window and data size of the runs: their
    held-out loss and how many counts they store."""
    from tinyformer.models import interpolated_counts

    train, heldout = data.train_heldout_split()
    rows = []
    for one_in in ONE_IN:
        for window in WINDOWS:
            counts = interpolated_counts.fit(*char_mlp.pairs_to_ids(train[::one_in], window),
                                             window, char_mlp.VOCAB_SIZE)
            rows.append({"window": window, "one_in": one_in,
                         "heldout_loss": counts.loss(*char_mlp.pairs_to_ids(heldout, window)),
                         "stored_counts": counts.stored_counts()})
    return {"script": "python -m tinyformer.fit.part1_windows --counts", "counts": rows}


def load_counts() -> dict[tuple[int, int], dict]:
    """The stored counts record, by (one in, window)."""
    return {(r["one_in"], r["window"]): r for r in paramio.read_json(COUNTS_FILE)["counts"]}


def main() -> None:
    """Make the record (or, with --counts, the counts record), write it and say how long it took."""
    import sys

    if "--counts" in sys.argv[1:]:
        print(f"wrote {paramio.write_json(COUNTS_FILE, counts_record())}")
        return
    start = time.perf_counter()
    doc = record()
    path = paramio.write_json(RUNS_FILE, doc)
    cpu = sum(r["cpu_seconds"] for r in doc["runs"])
    print(f"part1 windows: {len(doc['runs'])} runs, {cpu:.0f} s of processor time, "
          f"{time.perf_counter() - start:.0f} s in all; wrote {path}")


if __name__ == "__main__":
    main()
