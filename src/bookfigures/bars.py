"""Bar figures: next-token probabilities (with logits), sizes per parameter, before/after rows.

Bars are horizontal so that token and parameter names stay horizontal and legible at
phone width, and every bar carries its value as text: the prose quotes these numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

from ._common import (PHONE_WIDTH_IN, attach_table, check_labels, fmt, plain, power_of_ten, sig_text, text_width_in,
                      value_text)
from .palette import HIGHLIGHT, INK, INK_MUTED, NEUTRAL, ROLE_COLORS
from .style import new_figure, styled

TARGET_MARK = "\u25c0 target"  # the non-colour cue for the target bar, beside its value


def _bar_height_in(n: int) -> float:
    return 0.55 + 0.25 * n


def _target_index(labels: list[str], target: int | str | None) -> int | None:
    if target is None:
        return None
    if isinstance(target, (int, np.integer)):
        if not 0 <= int(target) < len(labels):
            raise ValueError(f"target index {target} out of range for {len(labels)} labels")
        return int(target)
    if str(target) not in labels:
        raise ValueError(f"target {target!r} is not one of the labels")
    return labels.index(str(target))


def _value_label(ax: Axes, y: int, value: float, text: str, *, bold: bool = False) -> None:
    """Value text to the right of a bar: past its end, or past the zero line for a negative bar.

    Never on the left, where it would run into the category names of a narrow figure.
    """
    ax.annotate(text, (max(value, 0.0), y), xytext=(4, 0), textcoords="offset points", va="center",
                ha="left", color=INK, fontsize=10, fontweight="bold" if bold else "normal")


def _bar_axis(ax: Axes, labels: list[str], target: int | None, *, show_labels: bool = True) -> None:
    """Category axis: names on the left of the first panel only, target name in bold."""
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.tick_params(axis="y", length=0, labelleft=show_labels)
    ax.grid(axis="x")
    ax.spines["left"].set_visible(False)
    if not show_labels:
        return
    ax.set_yticks(range(len(labels)), [plain(lab) for lab in labels])
    if target is not None:
        ax.get_yticklabels()[target].set_fontweight("bold")


def _span(values: np.ndarray, room: float) -> tuple[float, float]:
    """x-limits with `room` (fraction of the range) right of the bars for their value labels."""
    lo, hi = min(0.0, float(values.min())), max(0.0, float(values.max()))
    width = (hi - lo) or 1.0
    return lo - (0.04 * width if lo < 0 else 0.0), hi + room * width


def _given_span(xlim: Sequence[float] | None, values: np.ndarray, room: float) -> tuple[float, float]:
    """The x-limits: `xlim` as given (checked to hold every bar and zero), else `_span`.

    A figure's switch variants pass one `xlim`, so the bars keep one scale from variant to
    variant and a reader compares lengths, not tick labels.
    """
    if xlim is None:
        return _span(values, room)
    lo, hi = (float(x) for x in xlim)
    if not lo < hi:
        raise ValueError(f"xlim {xlim!r}: the lower limit must be below the upper one")
    if lo > min(0.0, float(values.min())) or hi < max(0.0, float(values.max())):
        raise ValueError(f"xlim {xlim!r} cuts off bars: the values run from {float(values.min()):g} to "
                         f"{float(values.max()):g}, and the axis must hold them and zero")
    return lo, hi


def _few_ticks(ax: Axes, lo: float, hi: float) -> None:
    """Two or three x ticks: every bar carries its value, the axis only gives the scale."""
    ticks = MaxNLocator(nbins=2, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
    ax.set_xticks([t for t in ticks if lo <= t <= hi])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}".replace("-", "\u2212")))


def _draw_bars(ax: Axes, values: np.ndarray, target: int | None, decimals: int,
               mark: bool, color: str = NEUTRAL, upper: float | None = None) -> None:
    colors = [HIGHLIGHT if i == target else color for i in range(len(values))]
    ax.barh(range(len(values)), values, color=colors, height=0.68)
    ax.axvline(0, color=INK_MUTED, linewidth=0.8)
    for i, v in enumerate(values):
        text = value_text(v, decimals, upper=upper)
        if mark and i == target:
            text += "  " + TARGET_MARK
        _value_label(ax, i, v, text, bold=(i == target))


@styled
def probability_bars(labels: Sequence[object], probs: object, *, target: int | str | None = None,
                     title: str | None = None, logits: object = None, decimals: int = 3,
                     xlabel: str = "probability", logit_xlabel: str = "logit",
                     role: str | None = None) -> Figure:
    """Next-token probabilities, target bar highlighted by colour, bold label and a text mark.

    `target` is the observed next token (the legend's target colour); leave it out for a
    distribution that has none. `role` colours every bar in a legend role instead of neutral
    grey, e.g. "a" for a row of attention weights. With `logits`, a left panel shows them so
    the reader sees softmax turn one set of numbers into the other.
    """
    if role is not None and role not in ROLE_COLORS:
        raise ValueError(f"unknown role {role!r}; expected one of {sorted(ROLE_COLORS)}")
    color = NEUTRAL if role is None else ROLE_COLORS[role]
    p = np.asarray(probs, dtype=float).ravel()
    labs = check_labels(labels, p.size, "labels")
    t = _target_index(labs, target)
    panels = 2 if logits is not None else 1
    fig = new_figure(PHONE_WIDTH_IN, _bar_height_in(p.size) + (0.3 if title else 0.0))
    axes = fig.subplots(1, panels, sharey=True, width_ratios=[1, 1.15] if panels == 2 else None)
    axes = np.atleast_1d(axes)
    header, columns = ["token"], []
    if logits is not None:
        lg = np.asarray(logits, dtype=float).ravel()
        if lg.size != p.size:
            raise ValueError(f"{lg.size} logits for {p.size} probabilities")
        _draw_bars(axes[0], lg, t, 2, mark=False, color=color)
        lo, hi = _span(lg, 0.55)
        axes[0].set_xlim(lo, hi)
        _few_ticks(axes[0], lo, hi)
        axes[0].set_xlabel(plain(logit_xlabel))
        header.append("logit")
        columns.append(lg)
    ax = axes[-1]
    _draw_bars(ax, p, t, decimals, mark=True, color=color, upper=1.0)
    right = max(float(p.max()), 1e-9) * (2.1 if t is not None else 1.45)
    ax.set_xlim(0, right)
    _few_ticks(ax, 0.0, min(right, 1.0))  # a probability axis never reads past 1
    ax.set_xlabel(plain(xlabel))
    for k, a in enumerate(axes):
        _bar_axis(a, labs, t, show_labels=(k == 0))
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left")
    header += ["probability", "is_target"]
    columns.append(p)
    rows = [[lab, *(float(c[i]) for c in columns), i == t] for i, lab in enumerate(labs)]
    return attach_table(fig, header, rows)


@styled
def bar_sizes(names: Sequence[object], values: object, *, title: str | None = None,
              log: bool = False, xlabel: str = "size", color: str = NEUTRAL) -> Figure:
    """One bar per named quantity (e.g. the gradient norm of each parameter), values written.

    `log=True` for quantities spanning orders of magnitude; the written values keep the
    exact sizes readable either way.
    """
    v = np.asarray(values, dtype=float).ravel()
    labs = check_labels(names, v.size, "names")
    if log and np.any(v <= 0):
        raise ValueError("log scale needs positive values")
    fig = new_figure(PHONE_WIDTH_IN, _bar_height_in(v.size) + (0.3 if title else 0.0))
    ax = fig.add_subplot()
    ax.barh(range(v.size), v, color=color, height=0.68, left=0 if not log else None)
    for i, x in enumerate(v):
        _value_label(ax, i, x, sig_text(x))
    _bar_axis(ax, labs, None)
    if log:
        ax.set_xscale("log")
        ax.set_xlim(v.min() / 3, v.max() * 40)
        ax.xaxis.set_major_formatter(FuncFormatter(power_of_ten))
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        lo, hi = _span(v, 0.45)
        ax.set_xlim(lo, hi)
        _few_ticks(ax, lo, hi)
        ax.axvline(0, color=INK_MUTED, linewidth=0.8)
    ax.set_xlabel(plain(xlabel))
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left")
    return attach_table(fig, ["name", "value"], [[n, float(x)] for n, x in zip(labs, v)])


def _as_panels(values: object) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    return arr[None, :] if arr.ndim == 1 else arr


@styled
def row_before_after(before: object, after: object, coord_labels: Sequence[object], *,
                     groups: Sequence[str] | None = None, titles: Sequence[str] | None = None,
                     decimals: int = 2, xlim: Sequence[float] | None = None) -> Figure:
    """A row before and after its update, coordinate by coordinate; one panel per row.

    Pass 2-D `before`/`after` (one row per panel) to set two contexts side by side, e.g.
    the bank row in the river sentence and in the cheque sentence. `groups` names the
    two states (default: before/after). Before bars are outlined, after bars solid, so
    the two differ in shape as well as colour. `xlim=(lo, hi)` fixes the value axis (leave
    room right of the bars for their labels), e.g. one axis for every variant of a switch.
    """
    b, a = _as_panels(before), _as_panels(after)
    if b.shape != a.shape:
        raise ValueError(f"before {b.shape} and after {a.shape} differ in shape")
    coords = check_labels(coord_labels, b.shape[1], "coord_labels")
    names = list(groups) if groups else ["before", "after"]
    heads = check_labels(titles, b.shape[0], "titles") if titles else [""] * b.shape[0]
    n_panels, d = b.shape
    fig = new_figure(PHONE_WIDTH_IN if n_panels <= 2 else min(6.4, 1.8 * n_panels), 1.3 + 0.55 * d)
    axes = np.atleast_1d(fig.subplots(1, n_panels, sharex=True, sharey=True))
    lo, hi = _given_span(xlim, np.concatenate([b.ravel(), a.ravel()]), 0.6)
    for k, (ax, row_b, row_a, head) in enumerate(zip(axes, b, a, heads)):
        _before_after_panel(ax, row_b, row_a, coords, decimals, show_labels=(k == 0))
        ax.set_xlim(lo, hi)
        _few_ticks(ax, lo, hi)
        if head:
            ax.set_title(plain(head), fontsize=10.5)
    handles = [Patch(facecolor="none", edgecolor=ROLE_COLORS["e"], linewidth=1.6, label=names[0]),
               Patch(facecolor=ROLE_COLORS["p"], label=names[1])]
    fig.legend(handles=handles, loc="outside upper left", ncols=2, handlelength=1.2, columnspacing=1.0)
    rows = [[heads[k] or str(k + 1), coords[j], float(b[k, j]), float(a[k, j]),
             float(a[k, j] - b[k, j])] for k in range(n_panels) for j in range(d)]
    return attach_table(fig, ["panel", "coordinate", names[0], names[1], "change"], rows)


def _before_after_panel(ax: Axes, before: np.ndarray, after: np.ndarray, coords: list[str],
                        decimals: int, *, show_labels: bool,
                        colors: tuple[str, str] = (ROLE_COLORS["e"], ROLE_COLORS["p"]),
                        upper: float | None = None) -> None:
    """Outlined bars (first series) above solid bars (second series), each value written."""
    y = np.arange(len(coords))
    ax.barh(y - 0.19, before, height=0.36, facecolor="none", edgecolor=colors[0],
            linewidth=1.6)
    ax.barh(y + 0.19, after, height=0.36, color=colors[1])
    for j in range(len(coords)):
        _value_label(ax, y[j] - 0.19, before[j], value_text(before[j], decimals, upper=upper))
        _value_label(ax, y[j] + 0.19, after[j], value_text(after[j], decimals, upper=upper), bold=True)
    ax.axvline(0, color=INK_MUTED, linewidth=0.8)
    _bar_axis(ax, coords, None, show_labels=show_labels)


@styled
def paired_bars(labels: Sequence[object], first: object, second: object, *,
                names: Sequence[str] = ("before", "after"), title: str | None = None,
                xlabel: str = "value", decimals: int = 3, change: bool = True,
                upper: float | None = None, xlim: Sequence[float] | None = None) -> Figure:
    """Two numbers per label, e.g. each position's loss before and after one training step.

    Not tied to a role of the colour legend (a loss is not a row), so neither series wears a
    legend colour: both are the neutral data grey, the first outlined and the second solid,
    told apart by shape. Drawn at phone width, like every figure. The data table has a
    "change" column (second − first) when the second series follows the first (``change``);
    leave it out for two series side by side. ``upper`` is a bound the values never reach
    (1 for probabilities), so a label never rounds onto it. ``xlim=(lo, hi)`` fixes the value
    axis (leave room right of the bars for their labels), e.g. one axis for every variant of
    a switch; by default it spans the bars with room for the labels.
    """
    a = np.asarray(first, dtype=float).ravel()
    b = np.asarray(second, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"first {a.shape} and second {b.shape} differ in shape")
    labs = check_labels(labels, a.size, "labels")
    series = check_labels(names, 2, "names")
    fig = new_figure(PHONE_WIDTH_IN, 1.1 + 0.5 * a.size + (0.3 if title else 0.0))
    ax = fig.add_subplot()
    _before_after_panel(ax, a, b, labs, decimals, show_labels=True, colors=(NEUTRAL, NEUTRAL), upper=upper)
    ax.set_xlim(*_given_span(xlim, np.concatenate([a, b]), 0.3))
    ax.set_xlabel(plain(xlabel))
    handles = [Patch(facecolor="none", edgecolor=NEUTRAL, linewidth=1.6, label=plain(series[0])),
               Patch(facecolor=NEUTRAL, label=plain(series[1]))]
    fig.legend(handles=handles, loc="outside lower left", ncols=1)  # one per line: fits a phone
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left")
    fig.data_decimals = decimals  # the data table at the precision the bars are labelled with
    if change:
        rows = [[lab, float(x), float(y), float(y - x)] for lab, x, y in zip(labs, a, b)]
        return attach_table(fig, ["label", series[0], series[1], "change"], rows)
    return attach_table(fig, ["label", *series], [[lab, float(x), float(y)] for lab, x, y in zip(labs, a, b)])


__all__ = ["probability_bars", "bar_sizes", "row_before_after", "paired_bars"]
