"""Line figures: cost curves against sequence length and a training loss curve.

Series differ by colour, marker and line style at once, so they stay apart in grey-scale
print and for colour-blind readers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

from ._common import PHONE_WIDTH_IN, attach_table, plain, power_of_ten
from .palette import INK, ROLE_COLORS
from .style import new_figure, styled

SERIES_COLORS = (ROLE_COLORS["k"], ROLE_COLORS["q"], ROLE_COLORS["v"], ROLE_COLORS["a"],
                 ROLE_COLORS["d"], ROLE_COLORS["e"])
MARKERS = ("o", "s", "^", "D", "v", "P")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (1, 1)))


def _thousands(x: float, _pos: int) -> str:
    """Counts with thousands separators ('12,000'), which read faster than '1.2e4'."""
    return f"{x:,.0f}" if abs(x) >= 1 or x == 0 else f"{x:g}"


@styled
def cost_curves(n: object, series: Mapping[str, object], *, logy: bool = False, logx: bool = False,
                title: str | None = None, xlabel: str = "sequence length n",
                ylabel: str = "multiply-accumulates (MACs)") -> Figure:
    """Counts (e.g. MACs from the cost model) against sequence length, one line per method.

    `logx` with doubling lengths makes "doubling n doubles / quadruples the cost" visible as
    equal steps; `logy` turns powers of n into straight lines of different slope.
    """
    x = np.asarray(n, dtype=float).ravel()
    ys = {name: np.asarray(v, dtype=float).ravel() for name, v in series.items()}
    for name, y in ys.items():
        if y.shape != x.shape:
            raise ValueError(f"series {name!r} has {y.size} values for {x.size} lengths")
    fig = new_figure(PHONE_WIDTH_IN, 3.2 + (0.3 if title else 0.0))
    ax = fig.add_subplot()
    for k, (name, y) in enumerate(ys.items()):
        ax.plot(x, y, color=SERIES_COLORS[k % 6], marker=MARKERS[k % 6],
                linestyle=LINESTYLES[k % 6], label=plain(name), markersize=5)
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(power_of_ten))
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
    if logx:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(_thousands))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=5))
    ax.grid(True)
    ax.set_xlabel(plain(xlabel))
    ax.set_ylabel(plain(ylabel))
    ax.legend(loc="upper left")
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left")
    rows = [[_int_if_whole(x[i]), *(_int_if_whole(y[i]) for y in ys.values())] for i in range(x.size)]
    return attach_table(fig, ["n", *ys], rows)


def _int_if_whole(v: float) -> int | float:
    return int(v) if float(v).is_integer() else float(v)


@styled
def loss_curve(steps: object, losses: object, *, title: str | None = None,
               xlabel: str = "training step", ylabel: str = "loss (cross-entropy)",
               decimals: int = 3) -> Figure:
    """Training loss against step, with the first and last values written on the curve."""
    x = np.asarray(steps, dtype=float).ravel()
    y = np.asarray(losses, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"{x.size} steps for {y.size} losses")
    fig = new_figure(PHONE_WIDTH_IN, 3.0 + (0.3 if title else 0.0))
    ax = fig.add_subplot()
    ax.plot(x, y, color=ROLE_COLORS["k"], linewidth=1.8)
    for i, ha in ((0, "left"), (-1, "right")):
        ax.plot(x[i], y[i], "o", color=ROLE_COLORS["k"], markersize=5)
        ax.annotate(f"{y[i]:.{decimals}f}", (x[i], y[i]), xytext=(0, 7),
                    textcoords="offset points", ha=ha, va="bottom", color=INK, fontsize=10)
    ax.margins(x=0.02, y=0.12)
    ax.grid(True)
    ax.set_xlabel(plain(xlabel))
    ax.set_ylabel(plain(ylabel))
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left")
    return attach_table(fig, ["step", "loss"], [[_int_if_whole(s), float(v)] for s, v in zip(x, y)])


__all__: Sequence[str] = ["cost_curves", "loss_curve"]
