"""Diagrams of scalar units and grids: what one count, one score or one row is made of.

Every square or circle is one number of the engine's arrays; every count is the cost
model's (`tinyformer.cost`) or the shape of an array the engine produced. Each function
has an ``*_alt`` helper that says the same in words.

* `score_grids`: the score grid of one head at two lengths (n² cells, n² d_k MACs).
* `window_inputs`: the window of a concatenating predictor, its w·d separate inputs and
  the products of its two layers.
* `prefix_means`: n rows reduced to d coordinate-wise means, then the same two layers.
* `final_row`: the last updated row's way to the probability of the next token.
* `reach`: which positions one layer (or step) of each sequence model reads, and how
  many it takes to connect the first position to the last (`nn.hops`).
* `allowed_context`: each position's input, its target and the positions it may read.
* `query_against_keys`, `value_mixture`: one query scored against every key; the weights
  mixing the value rows.
* `past_and_memory`: the decoder's own past (masked) beside the source memory (not).
* `fitted_cross_weights`: cross-attention weights at the fitting run's seeded start
  and in the fitted checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ._common import attach_table, fixed, value_text
from ._sketch import LINE, WIDTH, Sheet, light, shape_text, text_width, wrap
from .colormaps import ATTENTION_CMAP, cmap_hex
from .labels import position_labels
from .palette import HIGHLIGHT, INK, INK_GRID, INK_MUTED, NEUTRAL, NO_ROLE, ROLE_COLORS, cell_text_color
from .style import styled

# --- the score grid at two lengths ---------------------------------------------------------


def _score_counts(ns: Sequence[int], widths) -> list[dict]:
    from tinyformer import cost

    return [{"n": int(n), "cells": cost.score_matrix_numbers(int(n)),
             "macs": cost.onehead_full(int(n), widths)["scores"], "d_k": widths.d_k} for n in ns]


def score_grids_alt(ns: Sequence[int], widths) -> str:
    """The score grids in words: queries × keys, cells and the MACs of the cost model."""
    parts = [f"{c['n']} queries by {c['n']} keys, {c['cells']} scores, {c['macs']} multiply-accumulates"
             for c in _score_counts(ns, widths)]
    return (f"{len(parts)} square grids, rows for the queries and columns for the keys, one cell per score: "
            + "; ".join(parts) + f". Each score is a dot product of dₖ = {widths.d_k} numbers.")


@styled
def score_grids(ns: Sequence[int], widths) -> Figure:
    """One head's score grid at each length in `ns`, drawn cell by cell to the same scale.

    Cells and MACs come from the cost model (`cost.score_matrix_numbers`, the "scores"
    count of `cost.onehead_full`) at the widths `widths` (a `cost.Widths`).
    """
    counts = _score_counts(ns, widths)
    biggest = max(c["n"] for c in counts)
    heads = [(f"{c['n']} queries × {c['n']} keys", f"{c['cells']} scores") for c in counts]
    text_w = [max(text_width(a, bold=True), text_width(b)) * 1.05 for a, b in heads]
    gap = 0.25
    cell = 0.22
    while cell > 0.08 and sum(max(c["n"] * cell, t) for c, t in zip(counts, text_w)) + gap * (len(counts) - 1) > WIDTH - 0.06:
        cell -= 0.01
    sh = Sheet()
    top = 0.5
    x = 0.02
    face = light("a", 0.45)
    rows = []
    for c, (head, sub), tw in zip(counts, heads, text_w):
        n = c["n"]
        size = n * cell
        slot = max(size, tw)
        cx = x + slot / 2
        sh.text(cx, 0.12, head, ha="center", bold=True)
        sh.text(cx, 0.33, sub, ha="center", color=INK_MUTED)
        left = cx - size / 2
        for i in range(n):
            for j in range(n):
                sh.ax.add_patch(Rectangle((left + j * cell, top + i * cell), cell, cell, facecolor=face,
                                          edgecolor=ROLE_COLORS["a"], linewidth=0.6))
        sh.text(cx, top + size + 0.14, f"{c['macs']} MACs", ha="center")
        x += slot + gap
        rows.append([n, n, c["cells"], c["d_k"], c["macs"]])
    y = top + biggest * cell + 0.3
    y = sh.lines(0.02, y, wrap(f"Rows are queries, columns keys. One cell, one score: a dot product of dₖ = {widths.d_k} numbers, so "
                               f"{widths.d_k} multiply-accumulates. Twice the length, four times the cells.",
                               WIDTH - 0.05))
    fig = sh.finish(y + 0.06)
    fig.alt_text = score_grids_alt(ns, widths)
    return attach_table(fig, ["queries", "keys", "scores", "d_k", "MACs"], rows)


# --- scalar layers: rows of units joined by one line per product ---------------------------

UNIT = 0.13  # a scalar unit's size, inches
PITCH = 0.165
#: The meshes of one line per multiply-accumulate stand right of a gutter that holds what
#: each layer does ("× W₁", its shape, its MACs): no label is ever written over the lines.
GUTTER = 0.86


def _units_row(sh: Sheet, y: float, n: int, role: str | None, *, filled: bool = False, x0: float | None = None,
               groups: int = 1, circles: bool = True, faces: Sequence[str | None] | None = None,
               area: tuple[float, float] = (0.0, WIDTH)) -> list[tuple]:
    """n units in a row centred in `area` (x from, x to; in `groups` with a gap between), closer
    together and smaller where the row would not fit; returns their centres."""
    gap = 0.12 if groups > 1 else 0.0
    pitch = min(PITCH, (area[1] - area[0] - 0.04 - gap * (groups - 1)) / n)
    unit = UNIT * pitch / PITCH
    width = n * pitch + gap * (groups - 1)
    x = (area[0] + area[1] - width) / 2 if x0 is None else x0
    per = n // groups
    centres = []
    for k in range(n):
        cx = x + pitch * (k + 0.5) + gap * (k // per)
        face = faces[k] if faces is not None else None
        if circles:
            sh.circle(cx, y, unit / 2, role, filled=filled, face=face)
        else:
            sh.square(cx, y, unit, role, filled=filled, face=face)
        centres.append((cx, y, unit))
    return centres


def _join(sh: Sheet, top: Sequence[tuple], bottom: Sequence[tuple]) -> None:
    """Every unit of `top` to every unit of `bottom`, one thin line per product; the lines
    into one unit (the middle one) drawn thick and in a stronger ink, so that the mesh reads
    as what it is: each unit below adds up one product from every unit above."""
    sh.fan([(x, y + u / 2) for x, y, u in top], [(x, y - u / 2) for x, y, u in bottom], width=0.4)
    x, y, u = bottom[len(bottom) // 2]
    sh.fan([(xa, ya + ua / 2) for xa, ya, ua in top], [(x, y - u / 2)], color=INK_MUTED, width=0.9)


def _step_label(sh: Sheet, y0: float, y1: float, lines: Sequence[str]) -> None:
    """What a layer does, in the gutter left of its mesh, centred between its two rows: the
    operation in muted ink, its count of multiply-accumulates (last) in ink."""
    y = (y0 + y1) / 2 - LINE * len(lines) / 2
    for k, line in enumerate(lines):
        sh.text(0.02, y + LINE * (k + 0.5), line, color=INK if line.endswith("MACs") else INK_MUTED)


def _mlp_tail(sh: Sheet, y: float, top_units: Sequence[tuple], widths, counts: Mapping[str, int],
              d_in: int) -> tuple[float, list[list]]:
    """hidden layer (h units) and vocabulary scores (C units) under `top_units`, with their MACs."""
    gap = 0.75
    area = (GUTTER, WIDTH)
    hidden = _units_row(sh, y + gap, widths.h, None, area=area)
    _join(sh, top_units, hidden)
    _step_label(sh, y, y + gap, ["× W₁", f"({d_in} × {widths.h})", f"{counts['mlp']} MACs"])
    y += gap
    scores = _units_row(sh, y + gap, widths.C, None, filled=True, faces=[NEUTRAL] * widths.C, area=area)
    _join(sh, hidden, scores)
    _step_label(sh, y, y + gap, ["× W₂", f"({widths.h} × {widths.C})", f"{counts['vocab']} MACs"])
    y += gap + scores[0][2] / 2 + 0.05
    sh.text(sum(area) / 2, y + LINE / 2, f"{widths.C} vocabulary scores", ha="center", color=INK_MUTED)
    return y + LINE, [["hidden layer", f"{d_in} × {widths.h}", counts["mlp"]],
                      ["vocabulary layer", f"{widths.h} × {widths.C}", counts["vocab"]]]


def window_inputs_alt(tokens: Sequence[str], window: int, widths) -> str:
    """The window diagram in words, with the cost model's counts."""
    from tinyformer import cost

    counts = cost.concat_predictor(1, window, widths)
    n = len(tokens)
    return (f"The last {window} of {n} tokens ({' '.join(tokens[n - window:])}) each give a row of {widths.d} "
            f"numbers; the earlier {n - window} are outside the window. Concatenated, they are "
            f"{window * widths.d} separate inputs, each joined to every one of {widths.h} hidden units "
            f"({counts['mlp']} multiply-accumulates), which are joined to {widths.C} vocabulary scores "
            f"({counts['vocab']}).")


@styled
def window_inputs(tokens: Sequence[str], window: int, widths) -> Figure:
    """One prediction of a concatenating predictor: w rows of d numbers become w·d separate inputs.

    Every circle is one number; every line between two layers one multiply-accumulate, as
    counted by `cost.concat_predictor(1, window, widths)`.
    """
    from tinyformer import cost

    counts = cost.concat_predictor(1, window, widths)
    n = len(tokens)
    if not 1 <= window <= n:
        raise ValueError(f"a window of {window} over {n} tokens")
    sh = Sheet()
    y = 0.02
    outside = " ".join(tokens[: n - window])
    y = sh.lines(0.02, y, wrap(f"outside the window: {outside}", WIDTH - 0.05))
    y += 0.06
    labels = position_labels(tokens)[n - window:]
    y = sh.lines(0.02, y, [f"{window} slots × {widths.d} = {window * widths.d} separate inputs:"], color=INK)
    inputs = _units_row(sh, y + 0.32, window * widths.d, "e", groups=window, area=(GUTTER, WIDTH))
    for k, lab in enumerate(labels):
        slot = inputs[k * widths.d:(k + 1) * widths.d]
        sh.text((slot[0][0] + slot[-1][0]) / 2, y + 0.1, lab, ha="center", color=INK_MUTED)
    y += 0.32
    y, rows = _mlp_tail(sh, y, inputs, widths, counts, window * widths.d)
    y = sh.lines(0.02, y + 0.05, wrap("One circle, one number; one line, one multiply-accumulate; the thick "
                                      "lines: the products one unit adds up.", WIDTH - 0.05))
    fig = sh.finish(y + 0.06)
    fig.alt_text = window_inputs_alt(tokens, window, widths)
    return attach_table(fig, ["layer", "weights", "MACs"],
                        [["join the window", f"{window} rows of {widths.d}", 0], *rows])


def prefix_means_alt(tokens: Sequence[str], widths) -> str:
    """The running-mean diagram in words, with the cost model's counts."""
    from tinyformer import cost

    n = len(tokens)
    counts = cost.prefix_mean_predictor(1, widths)
    return (f"{n} rows of {widths.d} numbers, one per token, are summed column by column into {widths.d} means "
            f"({cost.prefix_mean_additions(n, widths)} additions, every token with the same weight); the "
            f"{widths.d} means feed {widths.h} hidden units ({counts['mlp']} multiply-accumulates) and "
            f"{widths.C} vocabulary scores ({counts['vocab']}).")


@styled
def prefix_means(tokens: Sequence[str], widths) -> Figure:
    """A running-mean predictor: n rows of d numbers reduced to d means, then the two layers.

    Additions from `cost.prefix_mean_additions`, MACs from `cost.prefix_mean_predictor`.
    """
    from tinyformer import cost

    n = len(tokens)
    counts = cost.prefix_mean_predictor(1, widths)
    adds = cost.prefix_mean_additions(n, widths)
    sh = Sheet()
    labels = position_labels(tokens)
    lab_w = max(text_width(lab) for lab in labels) * 1.05 + 0.1
    y = 0.02
    rows_xy = []
    for k, lab in enumerate(labels):
        yy = y + 0.19 * k + 0.1
        sh.text(0.02, yy, lab)
        rows_xy.append(_units_row(sh, yy, widths.d, "e", x0=lab_w, circles=False))
    y += 0.19 * n + 0.02
    gap = 0.6
    means = _units_row(sh, y + gap, widths.d, "e", filled=True, faces=[light("e", 0.6)] * widths.d,
                       x0=lab_w)
    for col in range(widths.d):
        sh.line([(rows_xy[-1][col][0], rows_xy[-1][col][1] + rows_xy[-1][col][2] / 2),
                 (means[col][0], means[col][1] - means[col][2] / 2)], color=INK_MUTED, width=0.9)
    x_note = lab_w + PITCH * widths.d + 0.15
    sh.text(x_note, y + gap / 2, "mean of each column:", color=INK_MUTED)
    sh.text(x_note, y + gap / 2 + LINE, f"{adds} additions", color=INK)
    y += gap
    y, rows = _mlp_tail(sh, y, means, widths, counts, widths.d)
    y = sh.lines(0.02, y + 0.05, wrap(f"Every token counts the same in the {widths.d} means; their order is lost. "
                                      "One line, one multiply-accumulate; the thick lines: the products one unit adds up.",
                                      WIDTH - 0.05))
    fig = sh.finish(y + 0.06)
    fig.alt_text = prefix_means_alt(tokens, widths)
    return attach_table(fig, ["layer", "weights", "MACs"],
                        [["sum and divide the rows", f"{n} rows of {widths.d}", 0], *rows])


# --- the final row's pipeline ---------------------------------------------------------------


def _final_spec(params, ids):
    from tinyformer.models import onehead

    out = onehead.forward(params, ids, "last")
    return out


def final_row_alt(params, ids, vocab: Sequence[str], target: str | None = None) -> str:
    """The final row's pipeline in words, with the engine's shapes and the target's probability."""
    out = _final_spec(params, ids)
    n, d = out["E_prime"].shape
    h, C = out["hidden"].shape[1], out["logits"].shape[1]
    p = out["probs"][0]
    best = vocab[int(np.argmax(p))]
    tail = f" The target, {target}, gets {p[list(vocab).index(target)]:.3f}." if target else ""
    return (f"The updated rows E′ ({n} × {d}) with their last row, e′{n} (1 × {d}), taken out. It goes through "
            f"W1 to {h} hidden units, of which ReLU keeps {int((out['hidden'] > 0).sum())}, then through W2 to "
            f"{C} scores, and softmax turns them into {C} probabilities; the largest is {best}'s, {p.max():.3f}."
            + tail)


@styled
def final_row(params, ids, vocab: Sequence[str], *, target: str | None = None) -> Figure:
    """From the last updated row to the next token's probability, in the one-head toy's engine.

    Runs `onehead.forward(params, ids)`: E′ as a grid of squares with its last row
    picked out, then that row, the hidden units (filled where ReLU lets them through),
    the scores and the probabilities (the target's highlighted).
    """
    from tinyformer import cost
    from tinyformer.models import onehead  # noqa: F401  (the pass below)

    out = _final_spec(params, ids)
    n, d = out["E_prime"].shape
    h, C = out["hidden"].shape[1], out["logits"].shape[1]
    counts = cost.onehead_full(n, cost.Widths(d=d, d_k=params["W_Q"].shape[1], d_v=params["W_V"].shape[1], h=h, C=C),
                               readout_rows=1)
    if len(vocab) != C:
        raise ValueError(f"{len(vocab)} vocabulary labels for {C} scores")
    t = list(vocab).index(target) if target is not None else None
    sh = Sheet()
    cell = 0.15
    x0 = (WIDTH - d * cell) / 2
    y = 0.3
    sh.text(WIDTH / 2, 0.12, f"updated rows E′, {n} × {d}", ha="center", bold=True)
    for i in range(n):
        for j in range(d):
            last = i == n - 1
            sh.ax.add_patch(Rectangle((x0 + j * cell, y + i * cell), cell, cell,
                                      facecolor=ROLE_COLORS["p"] if last else "none",
                                      edgecolor=ROLE_COLORS["p"], linewidth=0.8))
    sh.text(x0 + d * cell + 0.08, y + (n - 0.5) * cell, f"last row e′{_sub(n)}", color=INK)
    y += n * cell
    gap = 0.7
    row = _units_row(sh, y + gap, d, "p", filled=True, circles=False)
    sh.arrow([(WIDTH / 2, y + 0.04), (WIDTH / 2, y + gap - 0.12)])
    sh.text(WIDTH / 2 + 0.08, y + gap / 2 - 0.04, "take the last row", color=INK_MUTED)
    y += gap
    area = (GUTTER, WIDTH)
    active = out["hidden"][0] > 0
    hidden = _units_row(sh, y + gap, h, None, filled=False, faces=[NEUTRAL if a else None for a in active],
                        area=area)
    _join(sh, row, hidden)
    _step_label(sh, y, y + gap, ["× W₁ + b₁,", "ReLU", f"{counts['mlp']} MACs"])
    y += gap
    scores = _units_row(sh, y + gap, C, None, area=area)
    _join(sh, hidden, scores)
    _step_label(sh, y, y + gap, ["× W₂ + b₂", f"{counts['vocab']} MACs"])
    y += gap
    probs = out["probs"][0]
    faces = [HIGHLIGHT if k == t else fixed(cmap_hex(ATTENTION_CMAP, float(np.clip(p / probs.max(), 0, 1))))
             for k, p in enumerate(probs)]
    prob_units = _units_row(sh, y + 0.55, C, None, filled=True, faces=faces, circles=False, area=area)
    for (x, yy, u), (x2, y2, u2) in zip(scores, prob_units):
        sh.line([(x, yy + u / 2), (x2, y2 - u2 / 2)], color=INK_MUTED, width=0.6)
    _step_label(sh, y, y + 0.55, ["softmax"])
    y += 0.55 + prob_units[0][2] / 2 + 0.06
    if t is not None:
        xt = prob_units[t][0]
        sh.arrow([(xt, y + 0.2), (xt, y)])
        sh.text(xt, y + 0.32, f"p({target}) = {probs[t]:.3f}", ha="center" if 0.9 < xt < WIDTH - 0.9 else
                ("left" if xt <= 0.9 else "right"), color=INK)
        y += 0.45
    y = sh.lines(0.02, y + 0.05, wrap(f"{h} hidden units (filled: those ReLU lets through), {C} scores, "
                                      f"{C} probabilities; a darker square, a larger probability. One line, one "
                                      "multiply-accumulate; the thick lines: the products one unit adds up.",
                                      WIDTH - 0.05))
    legend = [("the last row", ROLE_COLORS["p"], True)]
    if t is not None:
        legend.append((f"the target, {target}", HIGHLIGHT, True))
    y = sh.legend(y + 0.08, [], extra=legend)
    fig = sh.finish(y + 0.04)
    fig.alt_text = final_row_alt(params, ids, vocab, target)
    rows = [["updated rows E′", shape_text(out["E_prime"].shape), ""],
            ["last row", shape_text(out["E_prime"][-1:].shape), ""],
            ["hidden units", shape_text(out["hidden"].shape), counts["mlp"]],
            ["scores", shape_text(out["logits"].shape), counts["vocab"]],
            ["probabilities", shape_text(out["probs"].shape), ""]]
    rows += [[f"p({tok})", "", float(p)] for tok, p in zip(vocab, probs)]
    return attach_table(fig, ["array", "shape", "MACs or value"], rows)


def _sub(n: int) -> str:
    return str(n).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


# --- how far one layer reaches --------------------------------------------------------------


def _reach_spec(reads: Mapping[str, object], layers: Mapping[str, int | None] | None):
    from tinyformer import nn

    spec = []
    for name, mask in reads.items():
        m = np.asarray(mask, dtype=bool)
        limit = (layers or {}).get(name)
        hop = int(nn.hops(m, max_layers=limit)[-1, 0])
        # a recurrent step reads the state one position back and the new input: a mask of width 2
        spec.append({"name": name, "mask": m, "n": m.shape[0], "reads": np.flatnonzero(m[-1]),
                     "hops": hop, "recurrent": bool(np.array_equal(m, nn.local_mask(m.shape[0], 2)))})
    return spec


def _hop_text(s) -> str:
    unit = "steps" if s["recurrent"] else "layers"
    if s["hops"] < 0:
        return f"position 1 never reaches position {s['n']}"
    one = unit[:-1] if s["hops"] == 1 else unit
    return f"position 1 reaches position {s['n']} in {s['hops']} {one}"


def reach_alt(reads: Mapping[str, object], layers: Mapping[str, int | None] | None = None) -> str:
    """The reach diagrams in words: what the last position reads in one layer, and the hops."""
    parts = []
    for s in _reach_spec(reads, layers):
        read = ", ".join(str(j + 1) for j in s["reads"])
        parts.append(f"{s['name']}: in one {'step' if s['recurrent'] else 'layer'} position {s['n']} reads "
                     f"position{'s' if len(s['reads']) > 1 else ''} {read}; {_hop_text(s)}")
    return f"{len(parts)} rows of {_reach_spec(reads, layers)[0]['n']} positions. " + ". ".join(
        p[0].upper() + p[1:] for p in parts) + "."


@styled
def reach(reads: Mapping[str, object], layers: Mapping[str, int | None] | None = None) -> Figure:
    """What one layer of each sequence model reads, drawn from its mask (True = may read).

    For each model a row of positions; arcs join the last position to every position its
    mask lets one layer (or one recurrent step) read, and the text gives how many layers
    connect position 1 to the last (`nn.hops`, at most `layers[name]` of them).
    """
    spec = _reach_spec(reads, layers)
    sh = Sheet()
    y = 0.02
    rows = []
    for s in spec:
        n = s["n"]
        y = sh.title(y, s["name"])
        pitch = (WIDTH - 0.3) / n
        xs = [0.15 + pitch * (k + 0.5) for k in range(n)]
        r = min(0.09, pitch * 0.35)
        far = max((n - 1 - k for k in s["reads"] if k != n - 1), default=0)
        peak = min(0.6, 0.25 + 0.03 * far) * far * pitch / 2  # how high the longest arc climbs
        base = y + max(0.15, peak + 0.12) + r
        for k, x in enumerate(xs):
            read = k in set(s["reads"])
            sh.circle(x, base, r, "e", filled=read and k != n - 1, face=light("e", 0.6) if read and k != n - 1 else None)
            if k == n - 1:
                sh.circle(x, base, r, "q", filled=False)
        for k in s["reads"]:
            if k == n - 1:
                continue
            dist = n - 1 - k
            sh.arrow([(xs[k], base - r), (xs[-1], base - r)], color=ROLE_COLORS["a"], width=1.2,
                     curve=-min(0.6, 0.25 + 0.03 * dist))
        if s["recurrent"]:
            for k in range(n - 1):
                sh.arrow([(xs[k] + r, base), (xs[k + 1] - r, base)], color=INK_MUTED, width=0.9)
        sh.text(xs[0], base + r + 0.14, "1", ha="center", color=INK_MUTED)
        sh.text(xs[-1], base + r + 0.14, str(n), ha="center", color=INK_MUTED)
        y = sh.lines(0.02, base + r + 0.26, wrap(f"One {'step' if s['recurrent'] else 'layer'} reads "
                                                 f"{len(s['reads'])} position{'s' if len(s['reads']) > 1 else ''}; "
                                                 f"{_hop_text(s)}.", WIDTH - 0.05), color=INK)
        y += 0.2
        rows.append([s["name"], len(s["reads"]), s["hops"] if s["hops"] >= 0 else "never"])
    y = sh.legend(y - 0.05, [], extra=[("the reading position", ROLE_COLORS["q"], False),
                                       ("a position it reads", light("e", 0.6), True)])
    fig = sh.finish(y + 0.04)
    fig.alt_text = reach_alt(reads, layers)
    return attach_table(fig, ["model", "positions one layer reads", "layers from first to last"], rows)


# --- which positions each row may read ---------------------------------------------------------


def allowed_context_alt(tokens: Sequence[str], targets: Sequence[str], mask) -> str:
    """The allowed-context grid in words."""
    m = np.asarray(mask, dtype=bool)
    n = len(tokens)
    first, last = m[0].sum(), m[-1].sum()
    return (f"A grid of {n} rows, one per input position, against the {m.shape[1]} positions it could read. Row i "
            f"shows the token at i, the token it must predict, and filled cells for the positions the mask allows: "
            f"row 1 ({tokens[0]} → {targets[0]}) reads {first} position{'s' if first > 1 else ''}, row {n} "
            f"({tokens[-1]} → {targets[-1]}) reads {last}; {int(m.sum())} of {m.size} cells are allowed.")


@styled
def allowed_context(tokens: Sequence[str], targets: Sequence[str], mask) -> Figure:
    """One row per position: its token, the token it predicts, and the positions it may read.

    `mask` is the engine's mask (True = may read), e.g. `nn.causal_mask(n)`; the column
    headings are the tokens, so a reader sees which words each prediction can use.
    """
    m = np.asarray(mask, dtype=bool)
    n = len(tokens)
    if m.shape != (n, n) or len(targets) != n:
        raise ValueError(f"{n} tokens, {len(targets)} targets and a mask of {m.shape}")
    labels = [f"{t} → {g}" for t, g in zip(tokens, targets)]
    sh = Sheet()
    lab_w = max(text_width(lab) for lab in labels) * 1.05 + 0.12
    cell = min(0.24, (WIDTH - lab_w - 0.05) / n)
    head = max(text_width(t) for t in tokens) + 0.1
    top = head + 0.3
    sh.text(0.02, 0.12, "input → predict", bold=True)
    for j, t in enumerate(tokens):
        sh.text(lab_w + (j + 0.5) * cell, top - 0.06, t, rotation=90, ha="left", va="center", color=INK_MUTED)
    face = light("e", 0.5)
    rows = []
    for i in range(n):
        yy = top + i * cell
        sh.text(lab_w - 0.08, yy + cell / 2, labels[i], ha="right")
        for j in range(n):
            allowed = bool(m[i, j])
            sh.ax.add_patch(Rectangle((lab_w + j * cell, yy), cell, cell, facecolor=face if allowed else "none",
                                      edgecolor=INK_GRID, linewidth=0.8, hatch=None if allowed else "///",
                                      **({} if allowed else {"hatchcolor": INK_MUTED})))
        rows.append([i + 1, tokens[i], targets[i], " ".join(tokens[j] for j in np.flatnonzero(m[i]))])
    y = top + n * cell + 0.12
    y = sh.lines(0.02, y, wrap(f"{int(m.sum())} of {m.size} cells may be read: no row sees the token it must "
                               "predict.", WIDTH - 0.05), color=INK)
    y = sh.legend(y + 0.08, [], extra=[("may read", face, True), ("blocked by the mask", INK_MUTED, False, True)])
    fig = sh.finish(y + 0.04)
    fig.alt_text = allowed_context_alt(tokens, targets, mask)
    return attach_table(fig, ["position", "input", "predict", "allowed context"], rows)


# --- one query against every key; the weighted mixture of values ------------------------------


def _short(x: float) -> str:
    """A teaching input as it was typed: 1 for 1.0, 0.4 for 0.4 (up to three decimals)."""
    text = f"{float(x):.3f}".rstrip("0").rstrip(".")
    text = "0" if text in ("-0", "") else text
    return text.replace("-", "\u2212")


def _vec(v) -> str:
    return "[" + ", ".join(_short(x) for x in v) + "]"


def query_against_keys_alt(q, K, key_labels: Sequence[str], query_label: str) -> str:
    """One query against every key in words: the shapes and each scaled score."""
    q, K = np.asarray(q, float).ravel(), np.asarray(K, float)
    scores = K @ q / np.sqrt(K.shape[1])
    parts = ", ".join(f"{lab} {s:.1f}" for lab, s in zip(key_labels, scores))
    return (f"The query of {query_label}, one row of {q.size} numbers, is compared with each of the {K.shape[0]} "
            f"keys ({K.shape[0]} × {K.shape[1]}), one dot product per key, divided by √{K.shape[1]}: "
            f"{parts}; one score per source position.")


@styled
def query_against_keys(q, K, key_labels: Sequence[str], query_label: str) -> Figure:
    """One query row scored against every key row: q · k_j / √d_k, one score per key."""
    q, K = np.asarray(q, float).ravel(), np.asarray(K, float)
    if K.shape[1] != q.size or len(key_labels) != K.shape[0]:
        raise ValueError(f"query of {q.size}, keys {K.shape}, {len(key_labels)} key labels")
    scores = K @ q / np.sqrt(K.shape[1])
    m = K.shape[0]
    sh = Sheet()
    qb = sh.box(WIDTH / 2, 0.02, f"query of {query_label}", f"{_vec(q)}   1 × {q.size}", role="q")
    col = (WIDTH - 0.1 * (m - 1)) / m
    xs = [col / 2 + k * (col + 0.1) for k in range(m)]
    y = qb.bottom + 0.62
    rows = []
    for k, (x, lab) in enumerate(zip(xs, key_labels)):
        kb = sh.box(x, y, f"key of {lab}", _vec(K[k]), role="k", width=col)
        x0 = qb.cx + (x - qb.cx) * 0.3
        sh.arrow([(x0, qb.bottom), (x, kb.top)])
        sh.text(x + 0.06 if x >= qb.cx else x - 0.06, kb.top - 0.16, f"{scores[k]:.1f}",
                ha="left" if x >= qb.cx else "right", bold=True)
        rows.append([lab, *[float(v) for v in K[k]], float(scores[k])])
    y = kb.bottom + 0.15
    y = sh.lines(0.02, y, wrap(f"On each arrow, the score q · k / √{K.shape[1]}: {m} scores, one per source "
                               f"position, from a query of 1 × {q.size} and keys of {m} × {K.shape[1]}.",
                               WIDTH - 0.05), color=INK)
    y = sh.legend(y + 0.08, ["q", "k"])
    fig = sh.finish(y + 0.04)
    fig.alt_text = query_against_keys_alt(q, K, key_labels, query_label)
    return attach_table(fig, ["key", *[f"k{i + 1}" for i in range(K.shape[1])], "score"], rows)


def value_mixture_alt(weights, values, labels: Sequence[str]) -> str:
    """The mixture in words: each weight, each value row, and the sum."""
    w, V = np.asarray(weights, float).ravel(), np.asarray(values, float)
    mix = w @ V
    parts = "; ".join(f"{lab}: {a:.3f} × {_vec(v)}" for lab, a, v in zip(labels, w, V))
    return (f"{len(w)} value rows of {V.shape[1]} numbers, each multiplied by its weight and added: {parts}. The "
            f"mixture is [{', '.join(f'{x:.3f}' for x in mix)}], one row of {V.shape[1]}.")


@styled
def value_mixture(weights, values, labels: Sequence[str]) -> Figure:
    """The weights blending the value rows: Σ_j α_j v_j, each term drawn, then the sum."""
    w, V = np.asarray(weights, float).ravel(), np.asarray(values, float)
    if V.shape[0] != w.size or len(labels) != w.size:
        raise ValueError(f"{w.size} weights, values {V.shape}, {len(labels)} labels")
    mix = w @ V
    m = w.size
    sh = Sheet()
    col = (WIDTH - 0.1 * (m - 1)) / m
    xs = [col / 2 + k * (col + 0.1) for k in range(m)]
    rows = []
    boxes = []
    for k, (x, lab) in enumerate(zip(xs, labels)):
        ab = sh.box(x, 0.02, lab, f"α = {w[k]:.3f}", role="a", width=col)
        vb = sh.box(x, ab.bottom + 0.3, "value", _vec(V[k]), role="v", width=col)
        sh.arrow([(x, ab.bottom), (x, vb.top)])
        sh.text(x + 0.06, (ab.bottom + vb.top) / 2, "×", color=INK_MUTED)
        boxes.append(vb)
        rows.append([lab, float(w[k]), *[float(v) for v in V[k]]])
    y = boxes[0].bottom + 0.5
    mb = sh.box(WIDTH / 2, y, "mixture Σ α v", "[" + ", ".join(f"{x:.3f}" for x in mix) + "]")  # a message
    for vb in boxes:
        sh.arrow([(vb.cx, vb.bottom), (mb.cx + (vb.cx - WIDTH / 2) * 0.3, mb.top)])
    y = sh.lines(0.02, mb.bottom + 0.15, wrap(f"{m} value rows of {V.shape[1]} numbers in, one row of "
                                              f"{V.shape[1]} out; each coordinate collects the weights of the "
                                              "rows that have something there.", WIDTH - 0.05), color=INK)
    y = sh.legend(y + 0.08, ["a", "v"], [(NO_ROLE, INK_MUTED, False)])  # the mixture, a message
    fig = sh.finish(y + 0.04)
    fig.alt_text = value_mixture_alt(weights, values, labels)
    rows.append(["mixture", float(w.sum()), *[float(x) for x in mix]])
    return attach_table(fig, ["source", "weight", *[f"v{i + 1}" for i in range(V.shape[1])]], rows)


# --- the decoder's past against the source memory ---------------------------------------------


def _grid(sh: Sheet, x: float, y: float, weights: np.ndarray, allowed: np.ndarray, cell: float) -> None:
    for i in range(weights.shape[0]):
        for j in range(weights.shape[1]):
            box = (x + j * cell, y + i * cell)
            if not allowed[i, j]:
                sh.ax.add_patch(Rectangle(box, cell, cell, facecolor="none", edgecolor=INK_GRID, linewidth=0.8,
                                          hatch="///", hatchcolor=INK_MUTED))
                continue
            face = fixed(cmap_hex(ATTENTION_CMAP, float(np.clip(weights[i, j], 0, 1))))
            sh.ax.add_patch(Rectangle(box, cell, cell, facecolor=face, edgecolor=INK_GRID, linewidth=0.8))
            sh.ax.text(box[0] + cell / 2, box[1] + cell / 2, value_text(float(weights[i, j]), 2, upper=1.0),
                       ha="center", va="center", fontsize=10, color=cell_text_color(face))


def _tokens(out: Mapping):
    from tinyformer.models import encdec

    return ([encdec.SRC_VOCAB[i] for i in out["source_ids"]], [encdec.TGT_VOCAB[i] for i in out["decoder_ids"]])


def past_and_memory_alt(out: Mapping) -> str:
    """The two grids in words, with their shapes and masks."""
    src, tgt = _tokens(out)
    self_w, cross_w = out["decoder_self"]["weights"], out["cross"]["weights"]
    blocked = int(np.isinf(out["decoder_self"]["masked_scores"]).sum())
    return (f"Two grids of weights for the French rows {', '.join(tgt)}. First the decoder's masked "
            f"self-attention, {shape_text(self_w.shape)}: each row reads itself and the French before it, "
            f"{blocked} cells blocked. Then cross-attention, {shape_text(cross_w.shape)}: every row reads all "
            f"{len(src)} English positions ({', '.join(src)}), nothing blocked.")


@styled
def past_and_memory(out: Mapping) -> Figure:
    """The decoder's two reads, side by side: its own past (masked) and the source memory (not).

    `out` is `encdec.forward(...)`; the grids are its decoder self-attention and
    cross-attention weights, numbers in the cells, blocked cells hatched.
    """
    src, tgt = _tokens(out)
    self_w, cross_w = out["decoder_self"]["weights"], out["cross"]["weights"]
    self_ok = ~np.isinf(out["decoder_self"]["masked_scores"])
    cross_ok = ~np.isinf(out["cross"]["masked_scores"])
    sh = Sheet()
    lab_w = max(text_width(t) for t in tgt) * 1.05 + 0.12
    cell = min(0.5, (WIDTH - lab_w - 0.05) / max(self_w.shape[1], cross_w.shape[1]))
    y = 0.02
    panels = (("1. its own past: masked self-attention", self_w, self_ok, tgt, f"{shape_text(self_w.shape)}, causal"),
              ("2. the source: cross-attention", cross_w, cross_ok, src, f"{shape_text(cross_w.shape)}, all read"))
    for title, w, ok, cols, note in panels:
        sh.text(0.02, y + 0.1, title, bold=True)
        head = max(text_width(t) for t in cols) + 0.08
        top = y + 0.28 + head
        for j, t in enumerate(cols):
            sh.text(lab_w + (j + 0.5) * cell, top - 0.06, t, rotation=90, ha="left", color=INK_MUTED)
        for i, t in enumerate(tgt):
            sh.text(lab_w - 0.06, top + (i + 0.5) * cell, t, ha="right")
        _grid(sh, lab_w, top, w, ok, cell)
        sh.text(lab_w, top + w.shape[0] * cell + 0.14, note, color=INK_MUTED)
        y = top + w.shape[0] * cell + 0.4
    y = sh.lines(0.02, y, wrap("Each French row first reads what has been written, then the whole English "
                               "memory.", WIDTH - 0.05), color=INK)
    y += 0.06
    sh.ax.add_patch(Rectangle((0.02, y + 0.03), 0.16, 0.12, facecolor="none", edgecolor=INK_MUTED, hatch="///",
                              hatchcolor=INK_MUTED, linewidth=0.8))
    sh.text(0.24, y + 0.09, "blocked by the causal mask")
    fig = sh.finish(y + 0.25)
    fig.alt_text = past_and_memory_alt(out)
    rows = [["self", tgt[i], tgt[j], float(self_w[i, j]) if self_ok[i, j] else "masked"]
            for i in range(self_w.shape[0]) for j in range(self_w.shape[1])]
    rows += [["cross", tgt[i], src[j], float(cross_w[i, j])] for i in range(cross_w.shape[0])
             for j in range(cross_w.shape[1])]
    return attach_table(fig, ["block", "query", "key", "weight"], rows)


# --- cross-attention weights before and after fitting --------------------------------------------


def _fitted_spec(checkpoint: Mapping, source, target):
    from tinyformer.models import encdec

    settings = checkpoint["settings"]
    start = encdec.init_params(settings["seed"], settings["init_scale"])
    fitted = encdec.params_from_json(checkpoint["params"])
    dec_in, _ = encdec.split_target(target)
    before = encdec.forward(start, source, dec_in)
    after = encdec.forward(fitted, source, dec_in)
    src, tgt = _tokens(after)
    return before["cross"]["weights"], after["cross"]["weights"], src, tgt, checkpoint["steps"]


def fitted_cross_weights_alt(checkpoint: Mapping, source, target) -> str:
    """The before/after grid in words: each French row's largest weight, at the start and fitted."""
    w0, w1, src, tgt, steps = _fitted_spec(checkpoint, source, target)
    def top(w) -> str:
        j = int(w.argmax())
        return f"{w[j]:.2f} to {src[j]} (English position {j + 1})"

    parts = "; ".join(f"{t}: {top(w0[i])} at the start, {top(w1[i])} fitted" for i, t in enumerate(tgt))
    return (f"A grid of cross-attention weights, {len(tgt)} French rows by {len(src)} English columns, each row "
            f"twice: at the seeded start of the fitting run and after its {steps} steps. Largest weight of each "
            f"row: {parts}.")


@styled
def fitted_cross_weights(checkpoint: Mapping, source, target) -> Figure:
    """Cross-attention weights of a teacher-forced pass at the fitting run's start and fitted.

    The start is `encdec.init_params` with the checkpoint's own seed and scale (the start
    its fitting script used), the end the checkpoint's parameters; both passes are the
    engine's (`encdec.forward`).
    """
    w0, w1, src, tgt, steps = _fitted_spec(checkpoint, source, target)
    labels = []
    weights = []
    for i, t in enumerate(tgt):
        labels += [f"{t}, start", f"{t}, fitted"]
        weights += [w0[i], w1[i]]
    weights = np.array(weights)
    sh = Sheet()
    lab_w = max(text_width(lab) for lab in labels) * 1.05 + 0.1
    cell = min(0.5, (WIDTH - lab_w - 0.05) / len(src))
    head = max(text_width(t) for t in src) + 0.08
    top = 0.3 + head
    sh.text(0.02, 0.12, f"French row, before and after {steps} steps", bold=True)
    for j, t in enumerate(src):
        sh.text(lab_w + (j + 0.5) * cell, top - 0.06, t, rotation=90, ha="left", color=INK_MUTED)
    rows = []
    for i, lab in enumerate(labels):
        sh.text(lab_w - 0.06, top + (i + 0.5) * cell + (i // 2) * 0.08, lab, ha="right")
    for pair in range(len(tgt)):
        y0 = top + pair * 2 * cell + pair * 0.08
        _grid(sh, lab_w, y0, weights[2 * pair:2 * pair + 2], np.ones((2, len(src)), bool), cell)
        rows += [[tgt[pair], "start", *map(float, w0[pair])], [tgt[pair], "fitted", *map(float, w1[pair])]]
    y = top + len(labels) * cell + 0.08 * (len(tgt) - 1) + 0.15
    y = sh.lines(0.02, y, wrap("Each pair of rows: the same French query before fitting (the seeded start) and "
                               "after it (the checkpoint).", WIDTH - 0.05), color=INK)
    fig = sh.finish(y + 0.06)
    fig.alt_text = fitted_cross_weights_alt(checkpoint, source, target)
    return attach_table(fig, ["French row", "parameters", *src], rows)


__all__ = [
    "allowed_context", "allowed_context_alt", "final_row", "final_row_alt", "fitted_cross_weights",
    "fitted_cross_weights_alt", "past_and_memory", "past_and_memory_alt", "prefix_means", "prefix_means_alt",
    "query_against_keys", "query_against_keys_alt", "reach", "reach_alt", "score_grids", "score_grids_alt",
    "value_mixture", "value_mixture_alt", "window_inputs", "window_inputs_alt",
]
