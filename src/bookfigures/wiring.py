"""Wiring diagrams of a block and of the models, drawn from the engine's own passes.

Each function runs (or reads) the engine's forward pass and takes every shape from the
arrays it produced or from the model's parameters, never from a typed number, so a
diagram changes when the model does. Each has an ``*_alt`` helper that says the same in
words, shapes included, for the figure's text alternative. Diagrams are one phone column
wide (`_sketch.WIDTH`) with 10 pt text, in the legend's colours.

* `multihead_diagram`: input rows -> h heads, each with its own Q, K, V -> messages side
  by side -> W_O -> update.
* `rows_and_features`: attention mixes rows (one receiving row and its weights) against
  the FFN, which works inside one row (d -> d_ff -> d scalar units).
* `residual_stream`: the decoder's stream with its two branches per block, from the
  engine's dataflow graph (`tinyformer.models.decoder_stack.dataflow`).
* `norm_placement`: one block in the pre-norm or the post-norm arrangement, where
  LayerNorm sits read off the engine's graph of that block; `norm_variances` and
  `prepost_rows` give the row variances the engine computes for each (a switch's tables).
* `generation_loop`: predict -> pick -> append -> predict again, with the prefix (and the
  cache) one position longer at every step.
* `attention_sources`: where each block of the encoder-decoder takes its queries, and
  its keys and values (`tinyformer.models.encdec.forward`).
* `two_sequences`: the source read by the encoder, the target prefix written by the
  decoder, and the bridge between them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from ._common import attach_table
from ._placement import beside
from ._sketch import (BOX_H, FS, LINE, WIDTH, Box, Sheet, box_height, box_width, shape_text, short_ln, text_width,
                      wrap)
from .dataflow import _label_extent
from .labels import position_labels
from .palette import INK, INK_GRID, INK_MUTED, NEUTRAL, NO_ROLE, ROLE_COLORS
from .style import styled

# --- multi-head attention -----------------------------------------------------------------


def _multihead_spec(x, heads, W_O, mask):
    from tinyformer import nn

    x = np.asarray(x, dtype=float)
    update, cache = nn.multihead_forward(x, x, heads, W_O, mask)
    per_head = [{"W_Q": h["W_Q"].shape, "W_K": h["W_K"].shape, "W_V": h["W_V"].shape,
                 "Q": c["Q"].shape, "K": c["K"].shape, "V": c["V"].shape, "message": c["message"].shape}
                for h, c in zip(heads, cache["heads"])]
    return {"x": x.shape, "heads": per_head, "concat": cache["concat"].shape, "W_O": np.shape(W_O),
            "update": update.shape}


def _head_lines(h: Mapping) -> list[str]:
    if h["Q"] == h["K"] == h["V"]:
        return [f"Q, K, V: {shape_text(h['Q'])}"]
    return [f"Q, K: {shape_text(h['Q'])}", f"V: {shape_text(h['V'])}"]


def multihead_alt(x, heads, W_O, mask=None) -> str:
    """The multi-head diagram in words, with the engine's shapes."""
    s = _multihead_spec(x, heads, W_O, mask)
    h0 = s["heads"][0]
    H = len(s["heads"])
    return (f"A diagram of multi-head attention. The input rows E, {shape_text(s['x'])}, feed {H} heads side by "
            f"side. Each head multiplies the full rows by its own W_Q, W_K and W_V ({shape_text(h0['W_Q'])} "
            f"each) into queries and keys of {shape_text(h0['Q'])} and values of {shape_text(h0['V'])}, and "
            f"returns a message of {shape_text(h0['message'])}. The {H} messages are laid side by side, "
            f"{shape_text(s['concat'])}, and W_O ({shape_text(s['W_O'])}) turns them into the update ΔE, "
            f"{shape_text(s['update'])}.")


@styled
def multihead_diagram(x, heads: Sequence[Mapping], W_O, mask=None, *, head_labels: Sequence[str] | None = None,
                      row_name: str = "input rows E", title: str | None = None) -> Figure:
    """Multi-head attention as the engine runs it (`nn.multihead_forward`) on the rows `x`.

    `heads` is a list of dicts with W_Q, W_K, W_V; every shape drawn is one the pass
    produced. Up to three heads are drawn side by side; more are drawn as the first two,
    an ellipsis and the last.
    """
    s = _multihead_spec(x, heads, W_O, mask)
    H = len(s["heads"])
    names = list(head_labels) if head_labels is not None else [f"head {h + 1}" for h in range(H)]
    if len(names) != H:
        raise ValueError(f"{len(names)} head labels for {H} heads")
    shown: list[int | None] = list(range(H)) if H <= 3 else [0, 1, None, H - 1]
    sh = Sheet()
    y = sh.title(0.0, title) if title else 0.02
    top = sh.box(WIDTH / 2, y, row_name, shape_text(s["x"]), role="e")
    y = top.bottom + 0.42
    gap = 0.1
    col = (WIDTH - gap * (len(shown) - 1)) / len(shown)
    centres = [col / 2 + k * (col + gap) for k in range(len(shown))]
    head_h = max(box_height(_head_lines(s["heads"][h])) for h in shown if h is not None)
    messages = []
    if any(text_width(names[h]) > col - 0.12 for h in shown if h is not None):
        names = [f"head {h + 1}" for h in range(H)]  # the caller's names do not fit a column
    for cx, h in zip(centres, shown):
        if h is None:
            sh.text(cx, y + head_h / 2, "…", ha="center")
            sh.text(cx, y + head_h + 0.3 + BOX_H / 2, "…", ha="center")
            continue
        sh.arrow([(top.cx + (cx - WIDTH / 2) * 0.25, top.bottom), (cx, y)])
        hb = sh.box(cx, y, names[h], _head_lines(s["heads"][h]), width=col)
        mb = sh.box(cx, y + head_h + 0.3, "message", shape_text(s["heads"][h]["message"]),  # no role colour
                    width=min(col, box_width("message", "8 × 88")))
        sh.arrow([(cx, hb.bottom), (cx, mb.top)])
        messages.append(mb)
    y = messages[0].bottom + 0.42
    cat = sh.box(WIDTH / 2, y, "side by side", shape_text(s["concat"]))  # messages: no role colour
    for mb in messages:
        sh.arrow([(mb.cx, mb.bottom), (cat.cx + (mb.cx - WIDTH / 2) * 0.25, cat.top)])
    y = cat.bottom + 0.42
    upd = sh.box(WIDTH / 2, y, "update ΔE", shape_text(s["update"]), role="d")
    sh.arrow([(cat.cx, cat.bottom), (upd.cx, upd.top)])
    sh.text(cat.cx + 0.08, (cat.bottom + upd.top) / 2, f"× W_O ({shape_text(s['W_O'])})", color=INK_MUTED)
    h0 = s["heads"][0]
    note = (f"Every head reads the whole {s['x'][1]}-number row through its own W_Q, W_K, W_V "
            f"({shape_text(h0['W_Q'])} each).")
    y = sh.lines(0.02, upd.bottom + 0.12, wrap(note, WIDTH - 0.05))
    y = sh.legend(y + 0.08, ["e", "d"], [(NO_ROLE, INK_MUTED, False)])  # the messages
    fig = sh.finish(y + 0.04)
    rows = [["input rows E", shape_text(s["x"])]]
    for h, head in enumerate(s["heads"]):
        rows += [[f"{names[h]}: {k}", shape_text(head[k])] for k in ("W_Q", "W_K", "W_V", "Q", "K", "V", "message")]
    rows += [["messages side by side", shape_text(s["concat"])], ["W_O", shape_text(s["W_O"])],
             ["update ΔE", shape_text(s["update"])]]
    fig.alt_text = multihead_alt(x, heads, W_O, mask)
    return attach_table(fig, ["array", "shape"], rows)


# --- attention mixes rows, the FFN mixes features -------------------------------------------


def _ffn_shapes(ffn: Mapping) -> tuple[int, int, int]:
    d_in, d_ff = np.shape(ffn["W1"])
    d_ff2, d_out = np.shape(ffn["W2"])
    if d_ff != d_ff2:
        raise ValueError(f"W1 {np.shape(ffn['W1'])} and W2 {np.shape(ffn['W2'])} do not chain")
    return d_in, d_ff, d_out


def rows_and_features_alt(weights, tokens: Sequence[str], row: int, ffn: Mapping, *, mask=None) -> str:
    """The two panels in words: which rows the receiving row mixes, and the FFN's widths."""
    w = np.asarray(weights, dtype=float)
    allowed = np.ones(w.shape, bool) if mask is None else np.asarray(mask, bool)
    d_in, d_ff, d_out = _ffn_shapes(ffn)
    k = int(allowed[row].sum())
    top = int(np.argmax(np.where(allowed[row], w[row], -np.inf)))
    return (f"Two panels. Across rows: the row of {tokens[row]} (position {row + 1}) mixes the value rows of the "
            f"{k} positions it may read, with weights that sum to one; the largest, {w[row, top]:.2f}, goes to "
            f"{tokens[top]} (position {top + 1}), and the {len(tokens) - k} later positions are blocked. Within one "
            f"row: the feed-forward network takes one row of {d_in} numbers to {d_ff} hidden units (W₁ᶠᶠ, "
            f"{d_in} × {d_ff}, then ReLU) and back to {d_out} numbers (W₂ᶠᶠ, {d_ff} × {d_out}), one line per "
            f"product, with the same weights at every position.")


@styled
def rows_and_features(weights, tokens: Sequence[str], row: int, ffn: Mapping, *, mask=None,
                      coordinates: Sequence[str] | None = None) -> Figure:
    """Attention mixes rows; the FFN mixes the features inside one row.

    Top: the receiving row `row` and the weight it gives each position (`weights`, one
    head's weight matrix, with its `mask`). Bottom: the FFN `ffn` (W1, b1, W2, b2) as
    scalar units, d -> d_ff -> d, every product a line; its widths are W1's and W2's.
    """
    w = np.asarray(weights, dtype=float)
    n = w.shape[1]
    if len(tokens) != n:
        raise ValueError(f"{len(tokens)} tokens for {n} columns of weights")
    allowed = np.ones(w.shape, bool) if mask is None else np.asarray(mask, bool)
    d_in, d_ff, d_out = _ffn_shapes(ffn)
    coords = list(coordinates) if coordinates is not None else [f"x{k + 1}" for k in range(d_in)]
    if len(coords) != d_in:
        raise ValueError(f"{len(coords)} coordinate names for rows of {d_in}")
    labels = position_labels(tokens)
    sh = Sheet()
    y = sh.title(0.0, "across rows: attention")
    x_lab = max(text_width(lab) for lab in labels) * 1.05 + 0.06
    x_w = x_lab + 0.08
    x0 = x_w + text_width("0.00") + 0.1
    step = 0.2
    ys = [y + step * (j + 0.5) for j in range(n)]
    recv = sh.box(WIDTH - box_width(f"row {row + 1}: {tokens[row]}", "Σ α v") / 2 - 0.02,
                  ys[row] - BOX_H / 2, f"row {row + 1}: {tokens[row]}", "Σ α v")  # a message: no role colour
    rows_out = []
    for j in range(n):
        ok = bool(allowed[row, j])
        sh.text(x_lab, ys[j], labels[j], ha="right", color=INK if ok else INK_MUTED)
        if ok:
            sh.text(x_w, ys[j], f"{w[row, j]:.2f}")
            sh.arrow([(x0, ys[j]), (recv.left - 0.02, recv.cy + (ys[j] - recv.cy) * 0.15)],
                     color=ROLE_COLORS["a"], width=0.4 + 4.0 * float(w[row, j]), head=False)
        else:
            sh.text(x_w, ys[j], "—", color=INK_MUTED)
        rows_out.append(["attention", labels[j], float(w[row, j]) if ok else "blocked"])
    y = ys[-1] + step / 2 + 0.08
    y = sh.lines(0.02, y, wrap(f"The row of {tokens[row]} takes a share α of each value row it may read; "
                              "later rows are blocked (—).", WIDTH - 0.05))
    y = sh.title(y + 0.18, "within one row: the FFN")
    size, pitch = 0.15, 0.21
    xs = [0.02 + max(text_width(c) for c in coords) + 0.25, WIDTH / 2,
          WIDTH - max(text_width(c) for c in coords) - 0.27]
    heads = [f"row ({d_in})", f"hidden ({d_ff})", f"update ({d_out})"]
    for x, head in zip(xs, heads):
        sh.text(x, y + LINE / 2, head, ha="center", color=INK_MUTED)
    y += LINE + 0.08
    tallest = max(d_in, d_ff, d_out)
    cols = []
    for x, m in zip(xs, (d_in, d_ff, d_out)):
        offset = (tallest - m) * pitch / 2
        cols.append([(x, y + offset + pitch * (k + 0.5)) for k in range(m)])
    sh.fan([(x + size / 2, yy) for x, yy in cols[0]], [(x - size / 2, yy) for x, yy in cols[1]])
    sh.fan([(x + size / 2, yy) for x, yy in cols[1]], [(x - size / 2, yy) for x, yy in cols[2]])
    for (x, yy), c in zip(cols[0], coords):
        sh.square(x, yy, size, "p", filled=False)
        sh.text(x - size / 2 - 0.06, yy, c, ha="right")
    for x, yy in cols[1]:
        sh.square(x, yy, size, None, filled=False)
    for (x, yy), c in zip(cols[2], coords):
        sh.square(x, yy, size, "d", filled=False)
        sh.text(x + size / 2 + 0.06, yy, c)
    y += tallest * pitch + 0.08
    sh.text((xs[0] + xs[1]) / 2, y + LINE / 2, f"W₁ᶠᶠ {d_in} × {d_ff}, ReLU", ha="center", color=INK_MUTED)
    sh.text((xs[1] + xs[2]) / 2, y + LINE * 1.5, f"W₂ᶠᶠ {d_ff} × {d_out}", ha="center", color=INK_MUTED)
    y += 2 * LINE + 0.04
    y = sh.lines(0.02, y, wrap(f"One line per product: {d_in * d_ff} + {d_ff * d_out}. The same weights "
                               "work on every row, one row at a time.", WIDTH - 0.05))
    y = sh.legend(y + 0.1, ["a", "d", "p"], [(NO_ROLE, INK_MUTED, False)])  # the message Σ α v
    fig = sh.finish(y + 0.04)
    rows_out += [["FFN", "W1", shape_text(np.shape(ffn["W1"]))], ["FFN", "W2", shape_text(np.shape(ffn["W2"]))]]
    fig.alt_text = rows_and_features_alt(w, tokens, row, ffn, mask=mask)
    return attach_table(fig, ["panel", "item", "value"], rows_out)


# --- the residual stream and its branches, read off a dataflow graph -----------------------


def _main_path(graph, start: str, end: str) -> list:
    """The ops from `start` to `end` that stay on the stream: residual sums and LayerNorms."""
    frontier, parent = [start], {start: None}
    while frontier:
        node = frontier.pop(0)
        if node == end:
            break
        for op in graph.consumers(node):
            if op.kind in ("add", "layernorm") and op.output not in parent:
                parent[op.output] = (node, op)
                frontier.append(op.output)
    if end not in parent:
        raise ValueError(f"no chain of sums and LayerNorms from {start!r} to {end!r} in {graph.title!r}")
    ops, node = [], end
    while parent[node] is not None:
        prev, op = parent[node]
        ops.append((prev, op))
        node = prev
    return ops[::-1]


def _ancestors(graph, node: str, stop: set[str]) -> list[str]:
    seen, frontier = [], [node]
    while frontier:
        n = frontier.pop()
        if n in seen or n in stop:
            continue
        seen.append(n)
        op = graph.producer(n)
        if op is not None:
            frontier.extend(op.inputs)
    return seen


def _branches(graph, start: str, end: str) -> list[dict]:
    """Each step along the stream: a LayerNorm on it, or a sum with the branch that feeds it."""
    path = _main_path(graph, start, end)
    on_stream = {start} | {op.output for _, op in path}
    steps = []
    for prev, op in path:
        node = graph.node(op.output)
        if op.kind == "layernorm":
            steps.append({"kind": "ln", "label": op.label, "node": node})
            continue
        (update,) = [i for i in op.inputs if i != prev]
        inside = _ancestors(graph, update, on_stream)
        entry = [graph.producer(n) for n in inside
                 if graph.producer(n) is not None and set(graph.producer(n).inputs) & on_stream]
        ln = next((e for e in entry if e.kind == "layernorm"), None)
        heads = sum(graph.node(n).role == "q" for n in inside)
        ffn = next((graph.producer(n) for n in inside if graph.producer(n) and graph.producer(n).kind == "ffn"), None)
        steps.append({"kind": "add", "node": node, "update": graph.node(update), "heads": heads,
                      "ln": None if ln is None else {"label": ln.label, "node": graph.node(ln.output)},
                      "ffn": None if ffn is None else [p.shape for p in ffn.params]})
    return steps


def _branch_name(step: dict) -> str:
    name = step["update"].label.removesuffix(" update")
    if step["heads"]:
        return f"{name}, {step['heads']} head" + ("s" if step["heads"] > 1 else "")
    if step["ffn"]:
        (d, h), (_, d2) = step["ffn"][0], step["ffn"][2]
        return f"FFN {d} → {h} → {d2}"
    return name


def _draw_stream(sh: Sheet, graph, start: str, end: str, y: float, *, labels: Mapping[str, str],
                 tail: Sequence[str] = (), frames: bool = True,
                 stream_label: str | None = None) -> tuple[float, list[list]]:
    """Draw the stream from `start` to `end` (then `tail` nodes under it); returns y and table rows."""
    steps = _branches(graph, start, end)
    first, last = graph.node(start), graph.node(end)
    on_stream_boxes = [(labels.get(start, first.label), first.shape_text)]
    on_stream_boxes += [(labels.get(s["node"].id, short_ln(s["label"])), s["node"].shape_text)
                        for s in steps if s["kind"] == "ln"]
    on_stream_boxes += [(labels.get(t, graph.node(t).label), graph.node(t).shape_text) for t in tail]
    if steps[-1]["kind"] == "add":
        on_stream_boxes.append((labels.get(end, last.label), last.shape_text))
    sx = max(box_width(*b) for b in on_stream_boxes) / 2 + 0.04
    r = 0.1
    stream = ROLE_COLORS["p"]
    b = sh.box(sx, y, labels.get(start, first.label), first.shape_text, role=first.role)
    y = b.bottom
    stream_top = y
    rows = [["stream", labels.get(start, first.label), first.shape_text]]
    spans: dict[str, list[float]] = {}
    right = sx
    for s in steps:
        group = s["node"].group
        y_top = y
        if s["kind"] == "ln":
            ln = sh.box(sx, y + 0.25, labels.get(s["node"].id, short_ln(s["label"])), s["node"].shape_text)
            sh.arrow([(sx, y), (sx, ln.top)], color=stream)
            y = ln.bottom
            rows.append(["on the stream", s["label"], s["node"].shape_text])
        else:
            yb = y + 0.22
            ty = yb + BOX_H / 2
            x = sx + 0.3
            sh.arrow([(sx, ty), (x, ty)])
            sh.circle(sx, ty, 0.03, None, filled=True, face=INK_MUTED)
            if s["ln"] is not None:
                lb = sh.box(x + box_width(short_ln(s["ln"]["label"]), s["ln"]["node"].shape_text) / 2, yb,
                            short_ln(s["ln"]["label"]), s["ln"]["node"].shape_text)
                x = lb.right + 0.18
                sh.arrow([(lb.right, ty), (x, ty)])
                rows.append(["branch", s["ln"]["label"], s["ln"]["node"].shape_text])
            name = _branch_name(s)
            ub = sh.box(x + box_width(name, s["update"].shape_text) / 2, yb, name, s["update"].shape_text,
                        role=s["update"].role)
            right = max(right, ub.right)
            py = ub.bottom + 0.2
            sh.arrow([(ub.cx, ub.bottom), (ub.cx, py), (sx + r, py)])
            sh.arrow([(sx, y), (sx, py - r)], color=stream, width=1.6)
            sh.plus(sx, py, r)
            y = py + r
            rows.append(["branch", name, s["update"].shape_text])
            rows.append(["stream", "residual +", s["node"].shape_text])
        if group:
            spans.setdefault(group, [y_top, y])[1] = y
    if steps[-1]["kind"] == "add":
        eb = sh.box(sx, y + 0.25, labels.get(end, last.label), last.shape_text, role=last.role)
        sh.arrow([(sx, y), (sx, eb.top)], color=stream)
        y = eb.bottom
    stream_bottom = y
    before = end
    for t in tail:
        node = graph.node(t)
        chain, at = [], t
        while at != before:  # the ops between the last box drawn and this one
            op = graph.producer(at)
            chain.append(op.label)
            (at,) = op.inputs
        tb = sh.box(sx, y + 0.3, labels.get(t, node.label), node.shape_text, role=node.role)
        sh.arrow([(sx, y), (sx, tb.top)])
        sh.text(sx + 0.08, (y + tb.top) / 2, ", ".join(reversed(chain)), color=INK_MUTED)
        y = tb.bottom
        before = t
        rows.append(["after the stream", labels.get(t, node.label), node.shape_text])
    if stream_label and stream_bottom - stream_top > text_width(stream_label) + 0.2:
        sh.text(sx - 0.28, (stream_top + stream_bottom) / 2, stream_label, rotation=90, ha="center",
                color=INK_MUTED)
    if frames:
        for group, (top, bottom) in spans.items():
            sh.frame(sx - 0.16, top + 0.06, right + 0.1, bottom + 0.04)
            sh.text(right + 0.04, bottom - 0.12, group, ha="right", color=INK_MUTED, italic=True)
    return y, rows


def residual_stream_alt(params, ids) -> str:
    """The residual-stream diagram in words: blocks, branches and the engine's shapes."""
    from tinyformer.models import decoder_stack

    graph = decoder_stack.dataflow(params, ids)
    steps = _branches(graph, "x0", "final")
    parts = []
    for s in steps:
        if s["kind"] == "add":
            ln = f"{short_ln(s['ln']['label'])} then " if s["ln"] else ""
            parts.append(f"{s['node'].group}: {ln}{_branch_name(s)}, whose update of {s['update'].shape_text} "
                         "is added back")
    return (f"A vertical line, the residual stream, carries the input rows ({graph.node('x0').shape_text}) down "
            f"through {len(parts)} branches: " + "; ".join(parts) + ". Every sum keeps the shape "
            f"{graph.node('x0').shape_text}. A final LayerNorm sits on the stream itself, and the tied readout "
            f"gives probabilities of {graph.node('probs').shape_text}.")


@styled
def residual_stream(params, ids, *, labels: Mapping[str, str] | None = None, title: str | None = None) -> Figure:
    """The decoder's residual stream with its two branches per block, from the engine's graph.

    Built from `decoder_stack.dataflow(params, ids)`: the stream is the chain of residual
    sums from the input rows to the final LayerNorm, each branch what feeds one sum (its
    LayerNorm, its heads or its FFN), with the shapes of that pass.
    """
    from tinyformer.models import decoder_stack

    graph = decoder_stack.dataflow(params, ids)
    names = {"x0": "input rows", "final": "final LN", "probs": "probabilities", **(labels or {})}
    sh = Sheet()
    y = sh.title(0.0, title) if title else 0.02
    y, rows = _draw_stream(sh, graph, "x0", "final", y, labels=names, tail=("probs",),
                           stream_label=f"residual stream, {graph.node('x0').shape_text}")
    y = sh.legend(y + 0.15, ["e", "d", "p"])
    fig = sh.finish(y + 0.04)
    fig.alt_text = residual_stream_alt(params, ids)
    return attach_table(fig, ["where", "what", "shape"], rows)


# --- pre-norm against post-norm: where LayerNorm sits, and what it does to the rows --------


def _block_graph(params, x, arrangement: str, layer: int):
    from tinyformer.models import decoder_stack

    if arrangement not in ("pre", "post"):
        raise ValueError(f"arrangement must be 'pre' or 'post', not {arrangement!r}")
    return decoder_stack.block_dataflow(params, np.asarray(x, dtype=float), layer, (arrangement,))


def norm_variances(params, x, layer: int = 0) -> dict[str, dict[str, np.ndarray]]:
    """For each arrangement, the variance of every row the attention branch reads and of every output row.

    Computed by the engine's two blocks (`decoder_stack.block_forward` and
    `postnorm_block_forward`) on the same rows `x`.
    """
    from tinyformer import nn
    from tinyformer.models import decoder_stack

    cfg = decoder_stack.config_from_params(params)
    x = np.asarray(x, dtype=float)
    mask = nn.causal_mask(len(x))
    out = {}
    for arrangement, block in (("pre", decoder_stack.block_forward), ("post", decoder_stack.postnorm_block_forward)):
        rows, cache = block(params, layer, cfg.n_heads, x, mask)
        read = cache["mh"]["heads"][0]["x_q"]  # what every head of the attention branch reads
        out[arrangement] = {"read": read.var(axis=1), "out": rows.var(axis=1), "mean": rows.mean(axis=1)}
    return out


def _norm_where(steps: list[dict]) -> str:
    on_stream = [s for s in steps if s["kind"] == "ln"]
    if on_stream:
        return "LayerNorm sits on the stream, after each residual sum"
    return "LayerNorm sits at the start of each branch; the stream itself is never normalised"


def norm_placement_alt(params, x, arrangement: str, layer: int = 0) -> str:
    """One arrangement in words: where each LayerNorm sits, the shapes, and the row variances."""
    g = _block_graph(params, x, arrangement, layer)
    a = arrangement
    steps = _branches(g, f"{a}.x", f"{a}.b{layer}.out")
    var = norm_variances(params, x, layer)[a]
    order = []
    for s in steps:
        if s["kind"] == "ln":
            order.append(f"{s['label']} on the stream")
        else:
            order.append((f"{s['ln']['label']} then " if s["ln"] else "") + f"{_branch_name(s)} added back")
    return (f"One decoder block, {a}-norm: {_norm_where(steps)}. From the input rows "
            f"({g.node(f'{a}.x').shape_text}): " + ", then ".join(order) + ". The attention branch reads rows "
            f"whose variances run from {var['read'].min():.3f} to {var['read'].max():.3f}; the block's output "
            f"rows have variances from {var['out'].min():.3f} to {var['out'].max():.3f}.")


def _norm_drawing(sh: Sheet, params, x, arrangement: str, layer: int, labels: Mapping[str, str] | None):
    g = _block_graph(params, x, arrangement, layer)
    a = arrangement
    steps = _branches(g, f"{a}.x", f"{a}.b{layer}.out")
    names = {f"{a}.x": "input rows", f"{a}.b{layer}.out": "block output", **(labels or {})}
    y = sh.title(0.0, f"{a}-norm")
    y = sh.lines(0.02, y - 0.04, wrap(_norm_where(steps) + ".", WIDTH - 0.05), color=INK)
    y, rows = _draw_stream(sh, g, f"{a}.x", f"{a}.b{layer}.out", y + 0.12, labels=names, frames=False)
    return y, rows


@styled
def norm_placement(params, x, arrangement: str, layer: int = 0, *, labels: Mapping[str, str] | None = None) -> Figure:
    """One block in one arrangement ("pre" or "post"), drawn from the engine's graph of it.

    Where LayerNorm sits is read off the graph (`decoder_stack.block_dataflow`): on a branch
    it is drawn in the branch, on the stream it is drawn on the stream. Under the block, the
    range of the engine's variances of the output rows. Both arrangements come out the same
    height, so a switch between them does not move the page.
    """
    sh = Sheet()
    y, rows = _norm_drawing(sh, params, x, arrangement, layer, labels)
    other = {"pre": "post", "post": "pre"}[arrangement]
    scratch = Sheet()
    y_other, _ = _norm_drawing(scratch, params, x, other, layer, labels)
    scratch.fig.clear()
    var = norm_variances(params, x, layer)[arrangement]
    y = sh.lines(0.02, max(y, y_other) + 0.12, wrap(f"Variance of the output rows: {var['out'].min():.3f} to "
                                                    f"{var['out'].max():.3f}.", WIDTH - 0.05), color=INK)
    y = sh.legend(y + 0.1, ["e", "d", "p"])
    fig = sh.finish(y + 0.04)
    fig.alt_text = norm_placement_alt(params, x, arrangement, layer)
    return attach_table(fig, ["where", "what", "shape"], rows)


def prepost_rows(params, x, row_labels: Sequence[str], layer: int = 0) -> tuple[list[str], dict[str, list[list]]]:
    """For each arrangement ("pre", "post"), one row per input row: its label, the variance of
    what the attention branch reads and of what the block outputs (`norm_variances`); with the
    header. Plain data, for a table or a switch between the arrangements' figures."""
    var = norm_variances(params, x, layer)
    if len(row_labels) != len(np.asarray(x)):
        raise ValueError(f"{len(row_labels)} row labels for {len(np.asarray(x))} rows")
    header = ["row", "variance read by attention", "variance of the output"]
    return header, {a: [[lab, float(r), float(o)] for lab, r, o in zip(row_labels, v["read"], v["out"])]
                    for a, v in var.items()}


# --- the generation loop -------------------------------------------------------------------


def _generation(params, prompt_ids, n_new: int):
    from tinyformer.models import decoder_stack

    cfg = decoder_stack.config_from_params(params)
    result = decoder_stack.generate(params, prompt_ids, n_new)
    probs = [float(np.exp(lg - lg.max())[i] / np.exp(lg - lg.max()).sum())
             for lg, i in zip(result["logits"], result["new_ids"])]
    per_token = 2 * cfg.n_layers * cfg.n_heads * cfg.head_width
    return cfg, result, probs, per_token


def generation_loop_alt(params, prompt_ids, n_new: int, decode) -> str:
    """The loop in words, with each step's prefix length, choice and cache."""
    cfg, result, probs, per_token = _generation(params, prompt_ids, n_new)
    words = decode(result["new_ids"])
    n0 = len(prompt_ids)
    steps = "; ".join(f"step {s + 1} reads {n0 + s} tokens and picks {w} ({p:.2f}), with "
                      f"{c['keys_per_head']} keys per head cached"
                      for s, (w, p, c) in enumerate(zip(words, probs, result["cache_sizes"])))
    return (f"A loop of four boxes: the prefix, the decoder's distribution over {cfg.vocab_size} tokens at its last "
            f"row, the pick of the most probable token, and the prefix one token longer, which goes round again. "
            f"The key-value cache beside it gains {per_token} numbers per token (a key and a value for each of "
            f"{cfg.n_heads} heads in {cfg.n_layers} blocks, {cfg.head_width} wide). Under it: {steps}.")


@styled
def generation_loop(params, prompt_ids, n_new: int, decode) -> Figure:
    """Greedy generation as the engine runs it (`decoder_stack.generate`, with its cache).

    The loop predict -> pick -> append -> predict again, and under it the prefix at every
    step, one square per position (prompt outlined, appended tokens filled), each row
    ending in the token that step picks. `decode` turns ids into words.
    """
    cfg, result, probs, per_token = _generation(params, prompt_ids, n_new)
    words = decode(result["new_ids"])
    n0 = len(prompt_ids)
    sh = Sheet()
    y = 0.02
    half = (WIDTH - 0.75) / 2
    lx, rx = half / 2 + 0.02, half * 1.5 + 0.47
    a = sh.box(lx, y, "prefix", ["n tokens,", f"{n0} at the start"], width=half)
    b = sh.box(rx, y, "1. predict", [f"{cfg.vocab_size} probabilities", "at the last row"], width=half)
    y2 = a.bottom + 0.4
    c = sh.box(rx, y2, "2. pick", ["the most", "probable token"], width=half)
    d = sh.box(lx, y2, "3. append", ["it: n + 1", "tokens"], width=half)
    sh.arrow([(a.right, a.cy), (b.left, b.cy)])
    sh.arrow([(b.cx, b.bottom), (c.cx, c.top)])
    sh.arrow([(c.left, c.cy), (d.right, d.cy)])
    sh.arrow([(d.cx, d.top), (a.cx, a.bottom)])
    sh.text(a.cx + 0.08, (a.bottom + d.top) / 2, "again", color=INK_MUTED)
    y = d.bottom + 0.3
    lines = [f"+{per_token} numbers per new token:", f"{cfg.n_layers} blocks × {cfg.n_heads} heads × key, value",
             f"of {cfg.head_width} number" + ("s" if cfg.head_width > 1 else "")]
    cache = sh.box((b.right + 0.02) / 2, y, "KV cache", lines, role="k", width=b.right - 0.02)
    lane = b.right + 0.15
    sh.arrow([(b.right, b.cy), (lane, b.cy), (lane, cache.cy), (cache.right, cache.cy)], dashed=True)
    y = cache.bottom + 0.25
    y = sh.lines(0.02, y, wrap("The prefix at each step, one square per position: the prompt outlined, the "
                               "tokens the loop appended filled.", WIDTH - 0.05))
    y += 0.08
    total = n0 + len(words) - 1
    label_w = text_width(f"{len(words)}:") + 0.06
    size = min(0.16, (WIDTH - label_w - max(text_width(f"→ {w}") for w in words) - 0.15) / total * 0.85)
    pitch = size / 0.85
    rows = []
    for s, (word, p, sizes) in enumerate(zip(words, probs, result["cache_sizes"])):
        yy = y + 0.24 * s + 0.12
        sh.text(0.02, yy, f"{s + 1}:")
        length = n0 + s
        for k in range(length):
            sh.square(label_w + pitch * (k + 0.5), yy, size, "e", filled=k >= n0, face=NEUTRAL if k >= n0 else None)
        sh.text(label_w + pitch * length + 0.06, yy, f"→ {word}")
        rows.append([s + 1, length, word, p, sizes["keys_per_head"], sizes["numbers"]])
    y += 0.24 * len(words) + 0.1
    y = sh.legend(y, ["e", "k"], extra=[("appended by the loop", NEUTRAL, True)])
    fig = sh.finish(y + 0.04)
    fig.alt_text = generation_loop_alt(params, prompt_ids, n_new, decode)
    return attach_table(fig, ["step", "tokens read", "picks", "probability", "keys per head cached",
                              "numbers cached"], rows)


# --- where queries, keys and values come from (encoder-decoder) -----------------------------

# block: (name, its intermediates in `encdec.forward`, rows its queries read, rows its keys and
# values read, how the picture names them, and whether `encdec.forward` gives it a causal mask).
# A name with " after " is drawn as a box named by what comes before, the rest a line under it.
_BLOCKS = {
    "enc": ("encoder self-attention", "encoder", "source_rows", "source_rows", "English rows", "English rows", False),
    "dec": ("masked self-attention", "decoder_self", "target_rows", "target_rows", "French rows", "French rows", True),
    "cross": ("cross-attention", "cross", "self_rows", "encoded", "French rows after self-attention",
              "encoded English", False),
}


def _source_box(sh: Sheet, cx: float, top: float, name: str, shape: Sequence[int], role: str):
    """A box of rows a block reads: "French rows after self-attention" is the box "French rows"
    with "after self-attention" under its name, then its shape; kept inside the sheet."""
    label, sep, rest = name.partition(" after ")
    lines = ([f"after {rest}"] if sep else []) + [shape_text(shape)]
    w = box_width(label, lines)
    cx = min(max(cx, 0.02 + w / 2), WIDTH - 0.02 - w / 2)
    return sh.box(cx, top, label, lines, role=role)


def _projection_label(sh: Sheet, src: Box, x0: float, dst: Box, name: str) -> None:
    """ "× W_Q" beside its arrow, on the side the arrow leans to, clear of it over the
    label's whole height (`_placement.beside`)."""
    text = f"× W_{name}"
    w, above, below = _label_extent(text, FS)
    side = -1 if x0 > dst.cx + 1e-9 else 1
    rect, x, _ = beside((x0, src.bottom), (dst.cx, dst.top), 0.5, w, above + below, side, gap=0.07)
    sh.text(x, rect.y0 + above, text, ha="right" if side < 0 else "left", color=INK_MUTED)


def _sources_spec(out: Mapping, blocks: Sequence[str]):
    spec = []
    for blk in blocks:
        title, view, q_from, kv_from, q_name, kv_name, masked = _BLOCKS[blk]
        v = out[view]
        if np.isinf(v["masked_scores"]).any() and not masked:
            raise ValueError(f"{title} blocked some cells: the pass is not the one this picture describes")
        spec.append({"block": blk, "title": title, "q_from": (q_name, np.shape(out[q_from])),
                     "kv_from": (kv_name, np.shape(out[kv_from])), "same": q_from == kv_from,
                     "Q": v["Q"].shape, "K": v["K"].shape, "V": v["V"].shape, "A": v["weights"].shape,
                     "message": v["message"].shape,
                     "mask": "causal mask" if masked else "no mask"})
    return spec


def attention_sources_alt(out: Mapping, blocks: Sequence[str] = ("dec", "cross")) -> str:
    """Each block's sources of Q, K and V in words, with the shapes of the pass `out`."""
    parts = []
    for s in _sources_spec(out, blocks):
        where = (f"Q, K and V all from the {s['q_from'][0]} ({shape_text(s['q_from'][1])})" if s["same"] else
                 f"Q from the {s['q_from'][0]} ({shape_text(s['q_from'][1])}), K and V from the {s['kv_from'][0]} "
                 f"rows ({shape_text(s['kv_from'][1])})")
        parts.append(f"{s['title']}: {where}; Q {shape_text(s['Q'])}, K {shape_text(s['K'])}, V "
                     f"{shape_text(s['V'])}, weights {shape_text(s['A'])}, {s['mask']}")
    return f"{len(parts)} panels, one per attention block. " + ". ".join(p[0].upper() + p[1:] for p in parts) + "."


@styled
def attention_sources(out: Mapping, blocks: Sequence[str] = ("dec", "cross")) -> Figure:
    """Where each attention block of the encoder-decoder takes Q, and K and V, with their shapes.

    `out` is `encdec.forward(...)`; `blocks` chooses among "enc", "dec" and "cross". One
    panel per block: the rows it reads, the three projections, the weights and the message.
    """
    spec = _sources_spec(out, blocks)
    sh = Sheet()
    y = 0.02
    rows = []
    third = WIDTH / 3
    qx, kx, vx = third / 2, third * 1.5, third * 2.5
    for k, s in enumerate(spec):
        if k:
            sh.line([(0.02, y - 0.1), (WIDTH - 0.02, y - 0.1)], color=INK_GRID, width=0.8)
        y = sh.title(y, s["title"])
        if s["same"]:
            src = _source_box(sh, kx, y, s["q_from"][0], s["q_from"][1], "e")
            froms = {"Q": src, "K": src, "V": src}
        else:
            qb = _source_box(sh, qx + 0.1, y, s["q_from"][0], s["q_from"][1], "p")
            kvb = _source_box(sh, (kx + vx) / 2 + 0.05, y, s["kv_from"][0], s["kv_from"][1], "p")
            froms = {"Q": qb, "K": kvb, "V": kvb}
        y = max(b.bottom for b in froms.values()) + 0.4
        made = {}
        for name, x, role in (("Q", qx, "q"), ("K", kx, "k"), ("V", vx, "v")):
            made[name] = sh.box(x, y, name, shape_text(s[name]), role=role)
            src = froms[name]
            x0 = src.cx + (x - src.cx) * (0.45 if s["same"] else 0.3)
            x0 = min(max(x0, src.left + 0.08), src.right - 0.08)  # leave from the box, not its corner
            sh.arrow([(x0, src.bottom), (x, made[name].top)])
            _projection_label(sh, src, x0, made[name], name)
        y = made["Q"].bottom + 0.32
        ab = sh.box((qx + kx) / 2, y, "weights A", [shape_text(s["A"]), s["mask"]], role="a")
        sh.arrow([(made["Q"].cx, made["Q"].bottom), (ab.cx - 0.15, ab.top)])
        sh.arrow([(made["K"].cx, made["K"].bottom), (ab.cx + 0.15, ab.top)])
        msg_shape = s["message"]
        mb = sh.box(vx, ab.bottom - BOX_H, "message", shape_text(msg_shape))  # no role colour
        sh.arrow([(made["V"].cx, made["V"].bottom), (mb.cx, mb.top)])
        sh.arrow([(ab.right, mb.cy), (mb.left, mb.cy)])
        sh.text((ab.right + mb.left) / 2, mb.cy - 0.13, "A V", ha="center", color=INK_MUTED)
        y = ab.bottom + 0.32
        rows += [[s["title"], "Q from", s["q_from"][0], shape_text(s["Q"])],
                 [s["title"], "K, V from", s["kv_from"][0], shape_text(s["K"])],
                 [s["title"], "weights", s["mask"], shape_text(s["A"])],
                 [s["title"], "message", "A V", shape_text(msg_shape)]]
    roles = (["e"] if any(s["same"] for s in spec) else []) + ["q", "k", "v", "a"] + \
        (["p"] if not all(s["same"] for s in spec) else [])
    y = sh.legend(y - 0.05, roles, [(NO_ROLE, INK_MUTED, False)])  # the message
    fig = sh.finish(y + 0.04)
    fig.alt_text = attention_sources_alt(out, blocks)
    return attach_table(fig, ["block", "what", "from", "shape"], rows)


# --- two sequences, two jobs ---------------------------------------------------------------


def _two_spec(params, source, prefix):
    from tinyformer.models import encdec

    out = encdec.forward(params, source, prefix)
    src = [encdec.SRC_VOCAB[i] for i in out["source_ids"]]
    tgt = [encdec.TGT_VOCAB[i] for i in out["decoder_ids"]]
    nxt = encdec.TGT_VOCAB[int(np.argmax(out["probs"][-1]))]
    return out, src, tgt, nxt


def two_sequences_alt(params, source, prefix) -> str:
    """The two sequences and their jobs in words, with the engine's shapes."""
    out, src, tgt, nxt = _two_spec(params, source, prefix)
    return (f"Two columns. Left, the source “{' '.join(src)}”: the encoder reads all {len(src)} tokens, without a "
            f"mask, and returns {shape_text(out['encoded'].shape)} encoded rows, the memory. Right, the target "
            f"written so far, “{' '.join(tgt)}”: the decoder reads it with a causal mask "
            f"({shape_text(out['decoder_self']['weights'].shape)} weights), and its rows ask the memory through "
            f"cross-attention ({shape_text(out['cross']['weights'].shape)} weights, target × source). Its last row "
            f"predicts the next token: {nxt}.")


@styled
def two_sequences(params, source, prefix) -> Figure:
    """The source read by the encoder and the target prefix written by the decoder, side by side.

    Runs `encdec.forward(params, source, prefix)`; every count and shape is that pass's,
    and the next token is the one its last row finds most probable.
    """
    out, src, tgt, nxt = _two_spec(params, source, prefix)
    sh = Sheet()
    half = (WIDTH - 0.6) / 2
    lx, rx = half / 2 + 0.02, WIDTH - half / 2 - 0.02
    sh.text(lx, 0.12, "source: read", ha="center", bold=True)
    sh.text(rx, 0.12, "target: written", ha="center", bold=True)
    y0 = 0.32
    chip = 0.26
    for k, t in enumerate(src):
        sh.box(lx, y0 + k * (chip + 0.05), t, width=half * 0.7, role="e")
    for k, t in enumerate(tgt):
        sh.box(rx, y0 + k * (chip + 0.05), t, width=half * 0.7, role="e")
    y = y0 + max(len(src), len(tgt)) * (chip + 0.05) + 0.3
    enc = sh.box(lx, y, "encoder", ["reads every token", f"{shape_text(out['encoder']['weights'].shape)} weights"],
                 width=half)
    dec = sh.box(rx, y, "decoder", ["reads up to itself", f"{shape_text(out['decoder_self']['weights'].shape)} weights"],
                 width=half)
    sh.arrow([(lx, y0 + len(src) * (chip + 0.05) - 0.02), (lx, enc.top)])
    sh.arrow([(rx, y0 + len(tgt) * (chip + 0.05) - 0.02), (rx, dec.top)])
    y = enc.bottom + 0.35
    mem = sh.box(lx, y, "memory", f"{shape_text(out['encoded'].shape)} rows", role="p", width=half)
    sh.arrow([(lx, enc.bottom), (lx, mem.top)])
    cross = sh.box(rx, y, "cross-attention", f"{shape_text(out['cross']['weights'].shape)} weights", role="a",
                   width=half)
    sh.arrow([(rx, dec.bottom), (rx, cross.top)])
    sh.arrow([(mem.right, mem.cy), (cross.left, cross.cy)])
    sh.text((mem.right + cross.left) / 2, mem.cy - 0.13, "K, V", ha="center", color=INK_MUTED)
    y = cross.bottom + 0.3
    nb = sh.box(rx, y, f"next: {nxt}", width=half, dashed=True)
    sh.arrow([(rx, cross.bottom), (rx, nb.top)])
    y = sh.lines(0.02, nb.bottom + 0.12, wrap(f"The memory is made once; the decoder reads it at every step, "
                                               f"whatever the target's length ({len(tgt)} so far).", WIDTH - 0.05))
    y = sh.legend(y + 0.1, ["e", "a", "p"])
    fig = sh.finish(y + 0.04)
    fig.alt_text = two_sequences_alt(params, source, prefix)
    rows = [["source token", t, k + 1] for k, t in enumerate(src)] + \
           [["target token", t, k + 1] for k, t in enumerate(tgt)] + \
           [["encoded rows", shape_text(out["encoded"].shape), ""],
            ["decoder weights", shape_text(out["decoder_self"]["weights"].shape), ""],
            ["cross-attention weights", shape_text(out["cross"]["weights"].shape), ""],
            ["next token", nxt, ""]]
    return attach_table(fig, ["item", "value", "position"], rows)


__all__ = [
    "attention_sources", "attention_sources_alt", "generation_loop", "generation_loop_alt", "multihead_alt",
    "multihead_diagram", "norm_placement", "norm_placement_alt", "norm_variances", "prepost_rows",
    "residual_stream", "residual_stream_alt", "rows_and_features", "rows_and_features_alt", "two_sequences",
    "two_sequences_alt",
]
