"""Where a label may go in a diagram drawn in inches (y pointing down).

A `Room` remembers what a diagram has drawn so far: areas (boxes, placed labels) and lines
(arrows, the sides of frames). `Room.place` takes a label's candidate spots, best first,
and keeps the first one that clears everything by a margin; where none does, the one that
meets the fewest things. The margins are wider than what the figure check
(`bookfigures.collisions`) tolerates, so a label placed here never touches a line it does
not belong to, and does not read as running into the next column either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: Room kept between a label and anything that is not its own (inches): about 5 pt.
MARGIN = 0.07
#: Room kept between a label and its own arrow or box (inches).
OWN_MARGIN = 0.03
#: A label nearer than this to an arrow that is not its own might seem to name it (inches).
NEAR = 0.2
#: DejaVu Sans: ascent plus descent, per point of font size (the box matplotlib lays a line in).
EM_HEIGHT = 1.164


@dataclass(frozen=True)
class Rect:
    """A rectangle in inches, y down: (x0, y0) its top left, (x1, y1) its bottom right."""

    x0: float
    y0: float
    x1: float
    y1: float

    def grown(self, m: float) -> Rect:
        return Rect(self.x0 - m, self.y0 - m, self.x1 + m, self.y1 + m)

    def overlaps(self, other: Rect, margin: float = 0.0) -> bool:
        return (self.x0 - margin < other.x1 and other.x0 - margin < self.x1
                and self.y0 - margin < other.y1 and other.y0 - margin < self.y1)

    @property
    def width(self) -> float:
        return self.x1 - self.x0


def text_height(size: float, lines: int = 1, linespacing: float = 1.2) -> float:
    """Height in inches of `lines` lines of text at `size` points, as matplotlib lays them out."""
    return (EM_HEIGHT + (lines - 1) * linespacing * EM_HEIGHT) * size / 72.0


def segment_hits(rect: Rect, p: Sequence[float], q: Sequence[float]) -> bool:
    """Does the segment p-q meet the rectangle (Liang-Barsky)?"""
    lo, hi = 0.0, 1.0
    for k, (a, b) in enumerate(((rect.x0, rect.x1), (rect.y0, rect.y1))):
        d = q[k] - p[k]
        if abs(d) < 1e-12:
            if not a <= p[k] <= b:
                return False
            continue
        t0, t1 = sorted(((a - p[k]) / d, (b - p[k]) / d))
        lo, hi = max(lo, t0), min(hi, t1)
        if lo > hi:
            return False
    return True


class Room:
    """What has been drawn: areas and lines, each with an owner (what a label may belong to)."""

    def __init__(self) -> None:
        self.areas: list[tuple[Rect, object]] = []
        self.lines: list[tuple[tuple[float, float], tuple[float, float], object]] = []

    def add_area(self, rect: Rect, owner: object = None) -> None:
        self.areas.append((rect, owner))

    def add_polyline(self, verts: Sequence[Sequence[float]], owner: object = None) -> None:
        pts = [tuple(map(float, v)) for v in verts]
        self.lines += [(a, b, owner) for a, b in zip(pts, pts[1:])]

    def add_outline(self, rect: Rect, owner: object = None) -> None:
        """The four sides of a frame: a label may sit inside it or outside, never across."""
        corners = [(rect.x0, rect.y0), (rect.x1, rect.y0), (rect.x1, rect.y1), (rect.x0, rect.y1), (rect.x0, rect.y0)]
        self.add_polyline(corners, owner)

    def clashes(self, rect: Rect, own: Sequence[object] = ()) -> int:
        """How many things `rect` comes too close to. Its own things get the narrower margin;
        its own frames none (a frame is drawn round the labels inside it)."""
        n = 0
        for area, owner in self.areas:
            m = OWN_MARGIN if owner is not None and owner in own else MARGIN
            n += area.overlaps(rect, m)
        for a, b, owner in self.lines:
            if owner is not None and owner in own and isinstance(owner, tuple) and owner[:1] == ("frame",):
                continue
            m = OWN_MARGIN if owner is not None and owner in own else MARGIN
            n += segment_hits(rect.grown(m), a, b)
        return n

    def clashing(self, rect: Rect, own: Sequence[object] = ()) -> set[object]:
        """The owners of what `rect` comes too close to (as `clashes` counts them)."""
        found = set()
        for area, owner in self.areas:
            if area.overlaps(rect, OWN_MARGIN if owner is not None and owner in own else MARGIN):
                found.add(owner)
        for a, b, owner in self.lines:
            if owner is not None and owner in own and isinstance(owner, tuple) and owner[:1] == ("frame",):
                continue
            if segment_hits(rect.grown(OWN_MARGIN if owner is not None and owner in own else MARGIN), a, b):
                found.add(owner)
        return found

    def place(self, candidates: Sequence[tuple[Rect, object]], own: Sequence[object] = (),
              bounds: tuple[float, float] | None = None,
              veto: Callable[[Rect], int] | None = None) -> tuple[tuple[Rect, object], int]:
        """The best candidate (its rectangle and payload) and how many things it clashes with.

        Best: clear of everything, then within `bounds` (x from, x to: the drawing's width),
        then not near another arrow, then first in the list. `veto(rect)` counts clashes the
        room cannot see (a frame that would have to take in a box not its own). The chosen
        rectangle becomes an area of the room."""
        def cost(k: int) -> tuple:
            rect = candidates[k][0]
            outside = 0.0 if bounds is None else max(0.0, bounds[0] - rect.x0) + max(0.0, rect.x1 - bounds[1])
            vetoed = veto(rect) if veto else 0
            return (self.clashes(rect, own) + vetoed, outside > 0.01, self.ambiguous(rect, own), outside, k)

        best = min(range(len(candidates)), key=cost)
        rect = candidates[best][0]
        clashes = self.clashes(rect, own) + (veto(rect) if veto else 0)
        self.add_area(rect, owner="label")
        return (rect, candidates[best][1]), clashes

    def ambiguous(self, rect: Rect, own: Sequence[object] = ()) -> bool:
        """Is an arrow that is not the label's own within `NEAR` of it (so that it might seem
        to name that arrow)?"""
        near = rect.grown(NEAR)
        return any(isinstance(owner, tuple) and owner[:1] == ("edge",) and owner not in own
                   and segment_hits(near, a, b) for a, b, owner in self.lines)


def x_at(p: Sequence[float], q: Sequence[float], y: float) -> float:
    """The x of the line through p and q at height y (p's x for a horizontal line)."""
    if abs(q[1] - p[1]) < 1e-12:
        return float(p[0])
    return float(p[0] + (q[0] - p[0]) * (y - p[1]) / (q[1] - p[1]))


def beside(p: Sequence[float], q: Sequence[float], t: float, width: float, height: float, side: int,
           gap: float) -> tuple[Rect, float, float]:
    """A label's rectangle beside the segment p-q at fraction t of its height, on `side`
    (+1 right, -1 left), kept `gap` from the line, sideways, over the label's height and
    `gap` above and below it (so a margin up to `gap` round the label misses the line).

    Returns the rectangle and the anchor (x, y) of a label drawn with ha="left" (right side)
    or ha="right" (left side) and va="center".
    """
    y = p[1] + (q[1] - p[1]) * t
    top, bottom = y - height / 2, y + height / 2
    xs = [x_at(p, q, min(max(yy, min(p[1], q[1])), max(p[1], q[1]))) for yy in (top - gap, bottom + gap)]
    if side > 0:
        x = max(xs) + gap
        return Rect(x, top, x + width, bottom), x, y
    x = min(xs) - gap
    return Rect(x - width, top, x, bottom), x, y


__all__ = ["MARGIN", "NEAR", "OWN_MARGIN", "Rect", "Room", "beside", "segment_hits", "text_height", "x_at"]

