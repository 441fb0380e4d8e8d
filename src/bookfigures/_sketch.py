"""Drawing primitives for the wiring diagrams (`bookfigures.wiring`, `bookfigures.units`).

A `Sheet` is one figure whose axes cover it exactly, measured in inches with y pointing
down, so a layout can be computed top to bottom in the units the legibility rules use
(10 pt text, a 3.55 in phone column). Its height is settled at the end (`finish`), once
everything is placed. Every text is ink (it flips in dark mode); boxes, squares and
circles wear the legend's fixed colours, and nothing filled ever carries a text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle
from matplotlib.path import Path

from ._common import PHONE_WIDTH_IN, fixed, plain
from .dataflow import _label, _label_width
from .palette import INK, INK_GRID, INK_MUTED, ROLE_COLORS, ROLE_NAMES, tint
from .style import new_figure

FS = 10.0  # every text: the legible floor on a phone
BOX_H = 0.44  # a box with a name line and a shape line
ONE_LINE_H = 0.28  # a box with one line
LINE = 0.19  # one line of 10 pt text
WIDTH = PHONE_WIDTH_IN - 0.1  # what a diagram may use (its crop adds a margin): it never shrinks on a phone
PAD = 0.1  # inside a box, either side of its text


def text_width(text: str, size: float = FS, *, bold: bool = False) -> float:
    """Width in inches of a label as the sheet draws it (subscripts lowered, full size).

    Measured from the font's outlines; a screen's hinting can draw a line a few per cent
    wider, so layouts leave that much room (`wrap`, label columns).
    """
    return _label_width(text, size, "bold" if bold else "normal")


def box_width(*lines: str | Sequence[str] | None) -> float:
    """The narrowest box that holds these lines (a list counts as several lines)."""
    flat = [s for item in lines if item for s in ([item] if isinstance(item, str) else item)]
    return max(text_width(s) for s in flat) + 2 * PAD


def box_height(shape: str | Sequence[str] | None) -> float:
    """Height of a box with a name line and these shape lines."""
    if not shape:
        return ONE_LINE_H
    n = 1 if isinstance(shape, str) else len(shape)
    return BOX_H + 0.18 * (n - 1)


def role_color(role: str | None) -> str:
    return ROLE_COLORS[role] if role else INK_MUTED


def light(role: str, amount: float = 0.35) -> str:
    """A pale fill of a role's colour that is never mistaken for an ink."""
    return fixed(tint(ROLE_COLORS[role], amount))


_LN = re.compile(r"^LayerNorm (\d+)$")
_SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def short_ln(label: str) -> str:
    """"LayerNorm 1" as "LN₁" (and "LayerNorm" as "LN"): narrow enough for a branch on a phone."""
    m = _LN.match(label)
    if m:
        return "LN" + m.group(1).translate(_SUB)
    return "LN" if label == "LayerNorm" else label


@dataclass
class Box:
    left: float
    top: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + self.height

    @property
    def cx(self) -> float:
        return self.left + self.width / 2

    @property
    def cy(self) -> float:
        return self.top + self.height / 2


class Sheet:
    """A figure drawn in inches, y down; `finish(height)` crops it to what was drawn."""

    def __init__(self, width: float = WIDTH, height: float = 12.0):
        self.width = width
        self.fig: Figure = new_figure(width, height)
        self.fig.set_layout_engine("none")
        self.ax = self.fig.add_axes((0, 0, 1, 1))
        self.ax.set_xlim(0, width)
        self.ax.set_ylim(height, 0)
        self.ax.set_axis_off()

    # --- text -----------------------------------------------------------------------------

    def text(self, x: float, y: float, text: str, *, ha: str = "left", va: str = "center",
             color: str = INK, bold: bool = False, italic: bool = False, rotation: float = 0) -> None:
        style = {}
        if bold:
            style["fontweight"] = "bold"
        if italic:
            style["fontstyle"] = "italic"
        _label(self.ax, x, y, text, size=FS, ha=ha, va=va, color=color, rotation=rotation, **style)

    def title(self, y: float, text: str) -> float:
        """A bold heading at the left edge; returns the y below it."""
        self.ax.text(0.02, y, plain(text), ha="left", va="top", color=INK, fontsize=11, fontweight="bold")
        return y + 0.3

    def lines(self, x: float, y: float, texts: Sequence[str], *, color: str = INK_MUTED,
              ha: str = "left") -> float:
        """Lines of text from y down; returns the y below the last."""
        for k, t in enumerate(texts):
            self.text(x, y + LINE * (k + 0.5), t, ha=ha, color=color)
        return y + LINE * len(texts)

    # --- shapes ---------------------------------------------------------------------------

    def box(self, cx: float, top: float, label: str, shape: str | Sequence[str] | None = None, *,
            role: str | None = None, width: float | None = None, dashed: bool = False,
            bold: bool = False) -> Box:
        """A rounded box outlined in its role's colour: its name, and its shape (lines) under it."""
        w = width if width is not None else box_width(label, shape)
        h = box_height(shape)
        b = Box(cx - w / 2, top, w, h)
        self.ax.add_patch(FancyBboxPatch((b.left, b.top), w, h, boxstyle="round,pad=0,rounding_size=0.06",
                                         facecolor="none", edgecolor=role_color(role),
                                         linewidth=1.8 if role else 1.1,
                                         linestyle=(0, (3, 2)) if dashed else "solid"))
        if shape:
            self.text(b.cx, top + 0.15, label, ha="center", bold=bold)
            for k, line in enumerate([shape] if isinstance(shape, str) else shape):
                self.text(b.cx, top + 0.33 + 0.18 * k, line, ha="center", color=INK_MUTED)
        else:
            self.text(b.cx, top + h / 2, label, ha="center", bold=bold)
        return b

    def frame(self, left: float, top: float, right: float, bottom: float) -> None:
        """A dashed frame around a group (a block)."""
        self.ax.add_patch(FancyBboxPatch((left, top), right - left, bottom - top,
                                         boxstyle="round,pad=0,rounding_size=0.08", facecolor="none",
                                         edgecolor=INK_GRID, linewidth=1.0, linestyle=(0, (4, 2))))

    def square(self, x: float, y: float, size: float, role: str | None, *, filled: bool,
               face: str | None = None, hatch: bool = False) -> None:
        """One scalar: a square centred at (x, y), filled or outlined in its role's colour."""
        edge = role_color(role) if role else INK_MUTED
        fill = face if face is not None else (edge if filled else "none")
        self.ax.add_patch(Rectangle((x - size / 2, y - size / 2), size, size, facecolor=fill, edgecolor=edge,
                                    linewidth=1.1, hatch="///" if hatch else None,
                                    **({"hatchcolor": INK_MUTED} if hatch else {})))

    def circle(self, x: float, y: float, r: float, role: str | None, *, filled: bool = False,
               face: str | None = None) -> None:
        """One scalar unit: a circle, filled or outlined in its role's colour."""
        edge = role_color(role)
        fill = face if face is not None else (edge if filled else "none")
        self.ax.add_patch(Circle((x, y), r, facecolor=fill, edgecolor=edge, linewidth=1.1))

    def plus(self, x: float, y: float, r: float = 0.1) -> None:
        """A residual sum: a circle with a plus, in ink."""
        self.ax.add_patch(Circle((x, y), r, facecolor="none", edgecolor=INK_MUTED, linewidth=1.2))
        self.ax.plot([x - r * 0.6, x + r * 0.6], [y, y], color=INK_MUTED, linewidth=1.2, solid_capstyle="butt")
        self.ax.plot([x, x], [y - r * 0.6, y + r * 0.6], color=INK_MUTED, linewidth=1.2, solid_capstyle="butt")

    def arrow(self, points: Sequence[tuple[float, float]], *, color: str = INK_MUTED, width: float = 1.0,
              head: bool = True, dashed: bool = False, curve: float | None = None) -> None:
        """An arrow along a polyline (or, with `curve`, an arc between two points)."""
        style = "-|>" if head else "-"
        kwargs = dict(arrowstyle=style, mutation_scale=9, color=color, linewidth=width, shrinkA=0, shrinkB=0,
                      joinstyle="round", capstyle="round", linestyle=(0, (3, 2)) if dashed else "solid")
        if curve is not None:
            (x0, y0), (x1, y1) = points
            self.ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), connectionstyle=f"arc3,rad={curve}", **kwargs))
            return
        codes = [Path.MOVETO] + [Path.LINETO] * (len(points) - 1)
        self.ax.add_patch(FancyArrowPatch(path=Path(list(points), codes), **kwargs))

    def line(self, points: Sequence[tuple[float, float]], *, color: str = INK_GRID, width: float = 0.6) -> None:
        xs, ys = zip(*points)
        self.ax.plot(xs, ys, color=color, linewidth=width, solid_capstyle="butt")

    def fan(self, top: Sequence[tuple[float, float]], bottom: Sequence[tuple[float, float]], *,
            color: str = INK_GRID, width: float = 0.5) -> None:
        """Every unit of one layer joined to every unit of the next: one line per product."""
        segments = [[a, b] for a in top for b in bottom]
        from matplotlib.collections import LineCollection

        self.ax.add_collection(LineCollection(segments, colors=color, linewidths=width))

    # --- legend and end -------------------------------------------------------------------

    def legend(self, y: float, roles: Sequence[str], extra: Sequence[tuple] = ()) -> float:
        """The legend's colours used here, and `extra` marks (label, colour, filled[, hatched]), two per line."""
        items = [(ROLE_NAMES[r], ROLE_COLORS[r], False) for r in dict.fromkeys(roles)] + list(extra)
        col = self.width / 2
        for k, (name, color, filled, *hatched) in enumerate(items):
            x, yy = (k % 2) * col + 0.02, y + LINE * (k // 2) + LINE / 2
            hatch = {"hatch": "///", "hatchcolor": INK_MUTED} if hatched and hatched[0] else {}
            self.ax.add_patch(Rectangle((x, yy - 0.06), 0.16, 0.12, facecolor=color if filled else "none",
                                        edgecolor=color, linewidth=0.8 if hatch else 1.6, **hatch))
            self.text(x + 0.22, yy, name)
        return y + LINE * -(-len(items) // 2)

    def finish(self, height: float) -> Figure:
        """Crop the sheet to `height` inches (keeping one unit per inch) and return the figure."""
        self.fig.set_size_inches(self.width, height)
        self.ax.set_ylim(height, 0)
        return self.fig


def spread(n: int, left: float, right: float) -> list[float]:
    """n centres spread evenly over [left, right]."""
    if n == 1:
        return [(left + right) / 2]
    return list(np.linspace(left, right, n))


def wrap(text: str, width: float) -> list[str]:
    """Words of `text` in lines no wider than `width` inches (as the sheet draws them)."""
    lines: list[str] = []
    width *= 0.95  # room for hinting
    for word in text.split():
        if lines and text_width(lines[-1] + " " + word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def shape_text(shape: Sequence[int]) -> str:
    """A shape as the book writes it: "10 × 4"."""
    return " × ".join(str(int(n)) for n in shape) if len(shape) else "scalar"
