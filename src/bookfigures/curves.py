"""Line figures: quantities against one x (cost curves among them) and training loss curves.

Series differ by colour, marker and line style at once, so they stay apart in grey-scale
print and for colour-blind readers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

from ._common import PHONE_WIDTH_IN, attach_table, plain, power_of_ten
from .palette import INK, INK_MUTED, ROLE_COLORS
from .style import new_figure, styled

SERIES_COLORS = (ROLE_COLORS["k"], ROLE_COLORS["q"], ROLE_COLORS["v"], ROLE_COLORS["a"],
                 ROLE_COLORS["d"], ROLE_COLORS["e"])
MARKERS = ("o", "s", "^", "D", "v", "P")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (1, 1)))


def _thousands(x: float, _pos: int) -> str:
    """Counts with thousands separators ('12,000'), which read faster than '1.2e4'.

    Only whole numbers are written without decimals: a tick at 2.5 must not read "2".
    """
    return f"{x:,.0f}" if x == round(x) else f"{x:,g}"


@styled
def line_chart(x: object, series: Mapping[str, object], *, logy: bool = False, logx: bool = False,
               title: str | None = None, xlabel: str = "x", ylabel: str = "y",
               ylim: tuple[float, float] | None = None, legend_loc: str = "upper left",
               x_header: str | None = None, width: float = PHONE_WIDTH_IN,
               marks: Mapping[float, Mapping[str, float]] | None = None) -> Figure:
    """Several quantities against one x, one line per quantity, with a legend.

    `logx` with doubling lengths makes "doubling n doubles / quadruples the cost" visible as
    equal steps; `logy` turns powers of n into straight lines of different slope. A narrower
    `width` (inches) keeps the text larger on a phone, where the figure is scaled to fit.

    The legend stands at `legend_loc` inside the axes if no line, marker or text lies
    under it there, else in another corner that is clear, else under the axes.

    `marks` ({x: {series name: value}}) marks chosen x values with dotted vertical lines and
    gives each series' values there in its legend entry ("400 → 800" for two marks): the
    values never pile up on the curves, however close the curves run.
    """
    xs = np.asarray(x, dtype=float).ravel()
    ys = {name: np.asarray(v, dtype=float).ravel() for name, v in series.items()}
    for name, y in ys.items():
        if y.shape != xs.shape:
            raise ValueError(f"series {name!r} has {y.size} values for {xs.size} x values")
    marks = dict(marks or {})
    for at, values in marks.items():
        if set(values) != set(ys):
            raise ValueError(f"the mark at {at} gives values for {sorted(values)}, the series are {sorted(ys)}")
    fig = new_figure(width, 3.4 + (0.3 if title else 0.0))
    ax = fig.add_subplot()
    labels = {}
    for k, (name, y) in enumerate(ys.items()):
        labels[name] = plain(name)
        if marks:
            labels[name] += ": " + " → ".join(_thousands(float(v[name]), 0) for v in marks.values())
        ax.plot(xs, y, color=SERIES_COLORS[k % 6], marker=MARKERS[k % 6],
                linestyle=LINESTYLES[k % 6], label=labels[name], markersize=5)
    for at in marks:
        ax.axvline(at, color=INK_MUTED, linestyle=":", linewidth=1.2, zorder=0)
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(power_of_ten))
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        whole = all(np.all(y[np.isfinite(y)] == np.round(y[np.isfinite(y)])) for y in ys.values())
        ax.yaxis.set_major_locator(MaxNLocator(integer=whole, nbins=6))  # counts get whole-number ticks
        ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
    if logx:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(_thousands))
    elif xs.size <= 8 and np.all(xs == np.round(xs)):
        ax.set_xticks(xs)  # a few whole numbers: label every one
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=5))
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.grid(True)
    ax.set_xlabel(plain(xlabel))
    ax.set_ylabel(plain(ylabel))
    name_x = x_header or xlabel
    legend_title = " → ".join(f"{plain(name_x)} = {_thousands(float(at), 0)}" for at in marks) if marks else None
    # the same chart again (a switch's versions differ only in what is drawn on it afterwards)
    # has the same clear corner: look for it once
    drawn = repr((xs.tolist(), [(labels[n], y.tolist()) for n, y in ys.items()], logy, logx, ylim,
                  legend_loc, legend_title, width, fig.get_figheight(), plain(xlabel), plain(ylabel)))
    _clear_legend(fig, ax, legend_loc, title=legend_title, width=width, known=drawn)
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left")
    rows = [[_int_if_whole(xs[i]), *(_int_if_whole(y[i]) for y in ys.values())] for i in range(xs.size)]
    return attach_table(fig, [x_header or xlabel, *ys], rows)


def cost_curves(n: object, series: Mapping[str, object], *, logy: bool = False, logx: bool = False,
                title: str | None = None, xlabel: str = "sequence length n",
                ylabel: str = "multiply-accumulates (MACs)",
                marks: Mapping[float, Mapping[str, float]] | None = None) -> Figure:
    """Counts (e.g. MACs from the cost model) against sequence length, one line per method;
    `marks` as in `line_chart` ({n: {method: count}})."""
    return line_chart(n, series, logy=logy, logx=logx, title=title, xlabel=xlabel, ylabel=ylabel,
                      x_header="n", marks=marks)


#: The corner `_clear_legend` found for a chart it has placed a legend on (None: below the axes).
_CLEAR_CORNER: dict[str, str | None] = {}


def _clear_legend(fig: Figure, ax, loc: str, *, title: str | None = None, width: float = PHONE_WIDTH_IN,
                  known: str | None = None) -> None:
    """The axes' legend where nothing lies under it: at `loc`, else another corner, else below
    the axes (the figure grows to hold it), one entry per line, each line within `width`.

    `known` describes everything drawn so far: a chart described alike before gets the place
    found then, without drawing the figure once per corner again."""
    from .collisions import clear_of_everything

    handles, labels = ax.get_legend_handles_labels()
    corners = list(dict.fromkeys([loc, "upper left", "upper right", "lower right", "lower left"]))
    if known is not None and known in _CLEAR_CORNER:
        corners = [c for c in [_CLEAR_CORNER[known]] if c is not None]
    for corner in corners:
        if title is not None:
            break  # a legend that carries values is read with the chart, below it
        leg = ax.legend(handles, labels, loc=corner, fontsize=10)
        if (known is not None and known in _CLEAR_CORNER) or clear_of_everything(fig, leg):
            if known is not None:
                _CLEAR_CORNER[known] = corner
            return
        leg.remove()
    if known is not None:
        _CLEAR_CORNER[known] = None
    room = width - 0.55  # the handle and the padding
    labels = [_two_lines_if_wide(lab, room) for lab in labels]
    lines = sum(lab.count("\n") + 1 for lab in labels) + (1 if title else 0)
    fig.set_figheight(fig.get_figheight() + 0.22 * lines + 0.1)
    fig.legend(handles, labels, loc="outside lower left", ncols=1, fontsize=10, title=title,
               title_fontsize=10, alignment="left")


def _two_lines_if_wide(label: str, room: float) -> str:
    """A legend entry "name: values" in two lines when one would be wider than `room` inches."""
    from ._common import text_width_in

    if text_width_in(label) <= room or ": " not in label:
        return label
    name, _, values = label.partition(": ")
    return f"{name}:\n{values}"


def _int_if_whole(v: float) -> int | float:
    return int(v) if float(v).is_integer() else float(v)


@styled
def loss_curve(steps: object, losses: object, *, title: str | None = None,
               xlabel: str = "training step", ylabel: str = "loss (cross-entropy)",
               decimals: int = 3, references: Mapping[str, float] | None = None,
               width: float = PHONE_WIDTH_IN, last_in_legend: bool = False) -> Figure:
    """Loss against training step, with the first and last values written on the curves.

    `losses` is one curve, or a mapping of names to curves over the same steps (for example
    training and held-out loss); `references` draws named constant losses as dotted
    horizontal lines (for example a baseline model's loss), each labelled with its value.
    A narrower `width` (inches) keeps the text larger on a phone. `last_in_legend` gives the
    last values in the legend ("training names, last 1.997") rather than beside the curves'
    ends, where ends that finish close together, or near a yardstick, leave no clear room.
    """
    x = np.asarray(steps, dtype=float).ravel()
    curves = ({plain(k): np.asarray(v, dtype=float).ravel() for k, v in losses.items()}
              if isinstance(losses, Mapping) else {"loss": np.asarray(losses, dtype=float).ravel()})
    for name, y in curves.items():
        if x.shape != y.shape:
            raise ValueError(f"{x.size} steps for {y.size} values of {name!r}")
    if len(curves) > 2:
        raise ValueError("loss_curve labels at most two curves; use line_chart for more")
    refs = dict(references or {})
    fig = new_figure(width, 3.2 + (0.3 if title else 0.0))
    ax = fig.add_subplot()
    for k, (name, y) in enumerate(curves.items()):
        label = f"{name}, last {y[-1]:.{decimals}f}" if last_in_legend else name
        ax.plot(x, y, color=SERIES_COLORS[k], linestyle=LINESTYLES[k], linewidth=1.8, label=label)
        ax.plot(x[[0, -1]], y[[0, -1]], MARKERS[k], color=SERIES_COLORS[k], markersize=5)
    for name, value in refs.items():
        ax.axhline(value, color=INK_MUTED, linestyle=":", linewidth=1.2)
    ax.margins(x=0.02, y=0.12)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))  # long step numbers need room
    ax.grid(True)
    ax.set_xlabel(plain(xlabel))
    ax.set_ylabel(plain(ylabel))
    if title:
        fig.suptitle(plain(title), x=0.02, ha="left")
    _write_ends(fig, ax, x, list(curves.values()), decimals, last=not last_in_legend)
    for name, value in refs.items():
        # in the middle of the run, clear of the values written at both ends: above its line, or below
        _first_clear(fig, [dict(text=f"{plain(name)}: {value:.{decimals}f}", xy=((x[0] + x[-1]) / 2, value),
                                xytext=(0, dy), ha="center", va=va) for dy, va in ((3, "bottom"), (-3, "top"))])
    if len(curves) > 1 or last_in_legend:  # top right: a falling curve leaves it empty, the first value is top left
        _clear_legend(fig, ax, "upper right", width=width)
    header = ["step", *curves, *(plain(r) for r in refs)]
    rows = [[_int_if_whole(s), *(float(y[i]) for y in curves.values()), *map(float, refs.values())]
            for i, s in enumerate(x)]
    return attach_table(fig, header, rows)


def _first_clear(fig: Figure, options: Sequence[dict]):
    """Write the first of `options` (annotate arguments, offsets in points) that collides with
    nothing (`collisions.clear_of_everything`); the last if none is clear, for the check to report."""
    from .collisions import clear_of_everything

    ax = fig.axes[0]
    for k, o in enumerate(options):
        text = ax.annotate(o["text"], o["xy"], xytext=o["xytext"], textcoords="offset points", ha=o["ha"],
                           va=o["va"], color=INK, fontsize=10)
        if k == len(options) - 1 or clear_of_everything(fig, text):
            return text
        text.remove()


def _write_ends(fig: Figure, ax, x: np.ndarray, curves: list[np.ndarray], decimals: int, last: bool = True) -> None:
    """First and last value of each curve; a shared first value once, the last values apart,
    each where it collides with nothing (beside its point, above or below it). `last=False`:
    the first values only."""
    text = lambda v: f"{v:.{decimals}f}"  # noqa: E731
    firsts = {text(y[0]) for y in curves}
    for k, y in enumerate(curves if len(firsts) > 1 else curves[:1]):
        _first_clear(fig, [dict(text=text(y[0]), xy=(x[0], y[0]), xytext=(7, dy), ha="left", va="center")
                           for dy in (7 - 16 * k, -9 - 16 * k, 23 + 16 * k)])
    order = np.argsort([y[-1] for y in curves]) if last else []  # lowest last value: below its curve
    for rank, k in enumerate(order):
        below = rank == 0 and len(curves) > 1
        spots = [(-7, "top"), (-21, "top")] if below else [(7, "bottom"), (21, "bottom"), (-7, "top")]
        _first_clear(fig, [dict(text=text(curves[k][-1]), xy=(x[-1], curves[k][-1]), xytext=(0, dy), ha="right", va=va)
                           for dy, va in spots])


__all__: Sequence[str] = ["cost_curves", "line_chart", "loss_curve"]
