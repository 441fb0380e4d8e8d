"""Write PNG previews of every figure kind: light page, dark page, phone width (360 CSS px).

Run by hand: `uv run python -m tests.figures.make_previews /tmp/figpreviews`. Uses the
synthetic catalogue, plus the real toy models when the engine can be imported, so the
previews show the book's own labels and numbers.
"""

from __future__ import annotations

import sys
from pathlib import Path

from matplotlib.figure import Figure

from bookfigures.preview import render_png

from bookfigures.catalogue import EXAMPLES


def engine_figures() -> dict[str, Figure]:
    """The chapters' main figures, from the engine (empty if it is not importable)."""
    try:
        import numpy as np

        from tinyformer.models import encdec, onehead
    except ImportError:
        return {}
    import bookfigures as bf

    params = onehead.load_params()
    out: dict[str, Figure] = {}
    river = onehead.forward(params, onehead.encode(onehead.RIVER_SENTENCE))
    cheque = onehead.forward(params, onehead.encode(onehead.CHEQUE_SENTENCE))
    words = list(onehead.RIVER_SENTENCE)
    out["real_river_heatmap"] = bf.attention_heatmap(
        river["weights"], words, words, mask=river["mask"], title="One causal head, river sentence")
    out["real_river_inputs"] = bf.matrix_view(river["E"], words, onehead.COORDINATES, role="e",
                                              title="Input rows e = token + position")
    out["real_river_probs"] = bf.probability_bars(onehead.VOCAB, river["probs"][0], target="water",
                                                  logits=river["logits"][0],
                                                  title="Next token after the river sentence")
    b_r, b_c = words.index("bank"), list(onehead.CHEQUE_SENTENCE).index("bank")
    out["real_bank_before_after"] = bf.row_before_after(
        np.stack([river["E"][b_r], cheque["E"][b_c]]),
        np.stack([river["E_prime"][b_r], cheque["E_prime"][b_c]]), onehead.COORDINATES,
        titles=["river sentence", "cheque sentence"], groups=["bank before", "bank after"])
    p4 = encdec.load_params()
    src, prefix = ["the", "river", "bank", "<eos>"], ["<bos>", "la", "rive"]
    fwd = encdec.forward(p4, src, prefix)
    out["real_cross_3x4"] = bf.attention_heatmap(fwd["cross"]["weights"], prefix, src,
                                                 title="Cross-attention, teacher forcing")
    gen = encdec.generate(p4, src)
    steps = [f"{a} \u2192 {b}" for a, b in zip(gen["tokens"], gen["tokens"][1:])]
    out["real_step_rows"] = bf.step_rows(gen["cross_weights"], steps, src,
                                         title="Source weights at each generated token")
    return out


def main(outdir: str = "/tmp/figpreviews") -> None:
    target = Path(outdir)
    figures = {name: ex.build() for name, ex in EXAMPLES.items()} | engine_figures()
    for name, fig in figures.items():
        render_png(fig, target / f"{name}-light.png", mode="light")
        render_png(fig, target / f"{name}-dark.png", mode="dark")
        render_png(fig, target / f"{name}-phone-dark.png", mode="dark", width_px=360)
        print(f"{name}: {fig.get_figwidth():.2f} x {fig.get_figheight():.2f} in")


if __name__ == "__main__":
    main(*sys.argv[1:])
