"""Figures that only Part 1 draws: the loss of every training step on its own minibatch, the
loss curve with a yardstick that sits among the curves, and held-out loss against window length
for two models and two amounts of data.

Imported directly by the page (`from bookfigures.part1_character_model_extra import ...`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from ._common import PHONE_WIDTH_IN, attach_table, fixed, plain
from .curves import LINESTYLES, MARKERS, SERIES_COLORS, _clear_legend, _first_clear, _thousands, loss_curve
from .palette import INK, INK_MUTED
from .style import new_figure, styled


def minibatch_blocks(losses: Sequence[float], block: int) -> dict[str, np.ndarray]:
    """Each run of `block` steps summarised: first step, mean, 10th and 90th percentile of its losses."""
    values = np.asarray(losses, dtype=float)
    if values.size % block:
        raise ValueError(f"{values.size} steps do not split into blocks of {block}")
    runs = values.reshape(-1, block)  # (blocks, block)
    return {"start": np.arange(0, values.size, block), "mean": runs.mean(axis=1),
            "low": np.percentile(runs, 10, axis=1), "high": np.percentile(runs, 90, axis=1)}


@styled
def minibatch_loss_band(losses: Sequence[float], *, block: int, curve_steps: Sequence[int],
                        curve: Sequence[float], drop_step: int, drop_label: str,
                        ylim: tuple[float, float], xlabel: str = "training step",
                        ylabel: str = "loss (nats per character)", curve_label: str = "all training pairs",
                        width: float = PHONE_WIDTH_IN) -> Figure:
    """The loss of every step on its own minibatch, drawn per block of `block` steps as a band
    (10th to 90th percentile of the block) around the block's mean, with the loss on all the
    training pairs (`curve`, measured at `curve_steps`) and a dotted line where the learning rate
    changes. Values outside `ylim` are cut off (the caption should say so)."""
    stats = minibatch_blocks(losses, block)
    mid = stats["start"] + block / 2
    fig = new_figure(width, 4.0)
    ax = fig.add_subplot()
    band = fixed(SERIES_COLORS[0])
    ax.fill_between(mid, stats["low"], stats["high"], color=band, alpha=0.3, linewidth=0,
                    label="minibatch losses (middle 80%)")
    ax.plot(mid, stats["mean"], color=band, linewidth=1.8, label=f"their mean per {block} steps")
    ax.plot(curve_steps, curve, color=SERIES_COLORS[1], linestyle="--", marker="s", markersize=4,
            linewidth=1.2, label=plain(curve_label))
    ax.axvline(drop_step, color=INK_MUTED, linestyle=":", linewidth=1.2)
    ax.annotate(plain(drop_label), (drop_step, ylim[1]), xytext=(-4, -4), textcoords="offset points",
                ha="right", va="top", color=INK, fontsize=10)
    ax.set_ylim(*ylim)
    ax.set_xlim(0, len(losses))
    ax.xaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
    ax.xaxis.set_major_formatter(FuncFormatter(_thousands))
    ax.grid(True)
    ax.set_xlabel(plain(xlabel))
    ax.set_ylabel(plain(ylabel))
    fig.legend(loc="outside lower center", fontsize=10)  # clear of the band, which fills the plot
    curve_at = dict(zip((int(s) for s in curve_steps), (float(c) for c in curve)))
    rows = [[int(s), float(m), float(lo), float(hi), curve_at.get(int(s))]
            for s, m, lo, hi in zip(stats["start"], stats["mean"], stats["low"], stats["high"])]
    return attach_table(fig, ["first step of the block", "mean minibatch loss", "10th percentile",
                              "90th percentile", plain(curve_label)], rows)


def loss_curve_low_yardstick(steps: Sequence[int], losses: Mapping[str, Sequence[float]], *,
                             references: Mapping[str, float], low_reference: tuple[str, float],
                             decimals: int = 3, **kwargs) -> Figure:
    """`curves.loss_curve` with one more dotted yardstick, `low_reference` (name, value), that
    lies where the curves end, so its label cannot sit mid-run as `loss_curve` writes them:
    it goes below the line near the left edge, where the falling curves are still far above
    it, or a little lower, clear of a curve that dips just under it (or wherever else is clear).
    The last values go in the legend: the curves end near the yardstick, with no clear room
    for them beside their ends. The figure's data table gains the yardstick's column."""
    fig = loss_curve(steps, losses, references=references, decimals=decimals, last_in_legend=True,
                     **kwargs)
    name, value = low_reference
    ax = fig.axes[0]
    ax.axhline(value, color=INK_MUTED, linestyle=":", linewidth=1.2)
    x = np.asarray(steps, dtype=float)
    text = f"{plain(name)}: {value:.{decimals}f}"
    spots = [(x[0] + (x[-1] - x[0]) * f, dy, ha, va) for f, ha in ((0.04, "left"), (0.5, "center"))
             for dy, va in ((-3, "top"), (3, "bottom"), (-12, "top"), (-21, "top"))]
    _first_clear(fig, [dict(text=text, xy=(sx, value), xytext=(0, dy), ha=ha, va=va) for sx, dy, ha, va in spots])
    header, rows = fig.data_table
    return attach_table(fig, [*header, plain(name)], [[*row, float(value)] for row in rows])


@styled
def losses_by_window(windows: Sequence[int], losses: Mapping[str, Mapping[str, Sequence[float]]], *,
                     xlabel: str = "window (characters)", ylabel: str = "held-out loss (nats per character)",
                     width: float = PHONE_WIDTH_IN) -> Figure:
    """Loss against window length: `losses[model][data size]` is one value per window.

    A model keeps one colour and marker, a data size one line style, so the two questions
    (which model, how much data) read apart; the legend names each line "model, data size"."""
    xs = np.asarray(windows, dtype=float)
    fig = new_figure(width, 3.4)
    ax = fig.add_subplot()
    columns = []
    for m, (model, by_size) in enumerate(losses.items()):
        for k, (size, values) in enumerate(by_size.items()):
            y = np.asarray(values, dtype=float)
            if y.shape != xs.shape:
                raise ValueError(f"{model}, {size}: {y.size} values for {xs.size} windows")
            ax.plot(xs, y, color=fixed(SERIES_COLORS[m]), marker=MARKERS[m], markersize=5,
                    linestyle=LINESTYLES[k], linewidth=1.6, label=plain(f"{model}, {size}"))
            columns.append((f"{model}, {size}", y))
    ax.set_xticks(xs)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0f}"))
    ax.grid(True)
    ax.set_xlabel(plain(xlabel))
    ax.set_ylabel(plain(ylabel))
    _clear_legend(fig, ax, "upper left", width=width)
    rows = [[int(x), *(float(y[i]) for _, y in columns)] for i, x in enumerate(xs)]
    return attach_table(fig, [plain(xlabel), *(name for name, _ in columns)], rows)


__all__ = ["loss_curve_low_yardstick", "losses_by_window", "minibatch_blocks", "minibatch_loss_band"]
