"""Figures of Part 3's page on context and cost (section 3.17) that no other page draws.

* `attention_shapes`: the one-head toy's attention path as four matrix products drawn in
  shapes, one square per number, beside the concatenating and averaging predictors of the
  same section (`window_inputs`, `prefix_means`). Every count is the cost model's.

Imported by the page directly (`from bookfigures.part3_context_extra import ...`).
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ._common import attach_table
from ._sketch import LINE, WIDTH, Sheet, light, role_color, text_width, wrap
from .palette import INK, INK_MUTED
from .style import styled

CELL = 0.065  # one number, inches
OP_W = 0.26  # the slot of a "×" or "=" between two grids


def _products(n: int, widths) -> list[dict]:
    """The four products of the head at length n, with the cost model's counts (tags of `cost`)."""
    from tinyformer import cost

    counts = cost.onehead_full(n, widths)
    d, dk, dv = widths.d, widths.d_k, widths.d_v
    qkv_roles = ["q"] * dk + ["k"] * dk + ["v"] * dv
    return [
        {"tag": "qkv", "what": "queries, keys, values",
         "grids": [("E", (n, d), ["e"] * d), ("W_Q W_K W_V", (d, 2 * dk + dv), [None] * (2 * dk + dv)),
                   ("Q K V", (n, 2 * dk + dv), qkv_roles)],
         "rule": (n, d, 2 * dk + dv), "macs": counts["qkv"]},
        {"tag": "scores", "what": "scores",
         "grids": [("Q", (n, dk), ["q"] * dk), ("Kᵀ", (dk, n), [None] * n), ("S", (n, n), [None] * n)],
         "rule": (n, dk, n), "macs": counts["scores"]},
        {"tag": "mix", "what": "mixing",
         "grids": [("A", (n, n), ["a"] * n), ("V", (n, dv), ["v"] * dv), ("H", (n, dv), [None] * dv)],
         "rule": (n, n, dv), "macs": counts["mix"]},
        {"tag": "out_proj", "what": "update",
         "grids": [("H", (n, dv), [None] * dv), ("W_O", (dv, d), [None] * d), ("ΔE", (n, d), ["d"] * d)],
         "rule": (n, dv, d), "macs": counts["out_proj"]},
    ]


def _shape(s: Sequence[int]) -> str:
    return f"{s[0]} × {s[1]}"


def _rule(r: Sequence[int]) -> str:
    return f"[{r[0]} × {r[1]}][{r[1]} × {r[2]}]"


def attention_shapes_alt(n: int, widths) -> str:
    """The figure in words, with the cost model's counts."""
    parts = [f"{_shape(p['grids'][0][1])} times {_shape(p['grids'][1][1])} gives {p['grids'][2][0]} "
             f"({_shape(p['grids'][2][1])}), {p['macs']} multiply-accumulates"
             for p in _products(n, widths)]
    total = sum(p["macs"] for p in _products(n, widths))
    return (f"The attention path of the one-head toy over {n} tokens as four matrix products, one square per "
            f"number: " + "; ".join(parts) + f". Between the second and the third, scaling, the causal mask "
            f"and the softmax turn the scores S into the weights A without any product. {total} "
            f"multiply-accumulates in all; each of the two products between positions has a grid of {n} × {n}.")


@styled
def attention_shapes(n: int, widths) -> Figure:
    """The attention path of the one-head toy over n tokens, drawn as its four matrix products.

    Each product [a × b][b × c] is drawn as its two factors and its result, one square per
    number (queries, keys, values, weights and updates in their legend colours; the
    parameters, the scores and the messages outlined in ink), with a·b·c MACs under it, from `cost.onehead_full`.
    """
    products = _products(n, widths)
    sh = Sheet()
    y = 0.02
    rows = []
    for k, p in enumerate(products):
        labels = [(f"{name}", _shape(shape)) for name, shape, _ in p["grids"]]
        slots = [max(shape[1] * CELL, text_width(a, bold=True) * 1.06, text_width(b) * 1.06)
                 for (a, b), (_, shape, _) in zip(labels, p["grids"])]
        span = sum(slots) + 2 * OP_W
        x = (WIDTH - span) / 2
        top = y + 2 * LINE + 0.04
        tallest = max(shape[0] for _, shape, _ in p["grids"]) * CELL
        for j, ((name, shape, roles), slot, (a, b)) in enumerate(zip(p["grids"], slots, labels)):
            cx = x + slot / 2
            sh.text(cx, y + LINE / 2, a, ha="center", bold=True)
            sh.text(cx, y + 1.5 * LINE, b, ha="center", color=INK_MUTED)
            left = cx - shape[1] * CELL / 2
            for r in range(shape[0]):
                for c in range(shape[1]):
                    role = roles[c]
                    edge = role_color(role) if role else INK_MUTED
                    face = light(role, 0.45) if role else "none"
                    sh.ax.add_patch(Rectangle((left + c * CELL, top + r * CELL), CELL, CELL, facecolor=face,
                                              edgecolor=edge, linewidth=0.5))
            x += slot
            if j < 2:
                sh.text(x + OP_W / 2, top + tallest / 2, "×" if j == 0 else "=", ha="center", color=INK)
                x += OP_W
        y = top + tallest + 0.06
        y = sh.lines(0.02, y, [f"{p['what']}: {_rule(p['rule'])}, {p['macs']} MACs"], color=INK)
        rows.append([p["what"], _rule(p["rule"]), p["macs"]])
        if k == 1:
            y = sh.lines(0.02, y, wrap("scale by √dₖ, mask, softmax: S becomes A, the same shape, "
                                       "with no products", WIDTH - 0.05))
        y += 0.14
    total = sum(p["macs"] for p in products)
    y = sh.lines(0.02, y, wrap(f"The head: {total} MACs. One square, one number; "
                               "parameters, scores and messages outlined in ink.", WIDTH - 0.05))
    fig = sh.finish(y + 0.06)
    fig.alt_text = attention_shapes_alt(n, widths)
    return attach_table(fig, ["product", "shapes", "MACs"], [*rows, ["the head", "", total]])
