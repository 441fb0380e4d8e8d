"""Does any label of a figure collide? Measured on matplotlib's own artists after a draw.

A figure passes when, as matplotlib lays it out (the SVG the book publishes has the same
geometry; its dark variant only swaps colours, its phone layout is a figure of its own):

* no text's box overlaps another text's box;
* no line, arrow, marker or patch outline crosses a text that does not belong to it, and a
  data line or marker (a plotted line, a scatter) keeps `CLEARANCE_PT` from it: a curve that
  runs along the edge of a label reads as underlining or striking it;
* a label that names a marker (an annotation whose point is a marker's centre) is nearer its
  own marker than any other, by a clear margin (`AMBIGUITY_PT`, or its own distance again):
  a label halfway between two markers names neither;
* every legend either has an opaque background or sits clear of the data: no line,
  marker, filled patch or text of the figure under it.

Geometry. A text's box is the box matplotlib lays its lines out in (the font's full
ascent and descent, the advance width), taken in the text's own rotated frame: a label
turned by 45 degrees is a turned rectangle, not the axis-aligned box around it. A line
is its path in display coordinates, curves flattened, clipped to its clip box, with its
width; a marker is a disc of its size; a patch contributes its outline (where its edge
or its fill is visible), so a text inside a box or a cell is never crossed by it, and
a text that pokes out of its box is. Overlaps thinner than `TOLERANCE_PT` are ignored:
0.75 pt, one CSS pixel, a fourteenth of the book's 10 pt text.

Variants. The light figure is what is measured: its dark variant is the same SVG with its
ink colours swapped (nothing moves), so the one check holds for both, provided a legend's
background flips with the page too (`check_figure` accepts only an ink of the dark map
there); a phone layout or a switch variant is a figure of its own and is checked as one.

Left out: grid lines, ticks, spines and the axes' background (the frame a chart is read
against, not its content), images, and hatching.

Belonging. A text belongs to

* the patch it lies inside (containment: that outline never crosses it);
* its own background box and, for an annotation, its own arrow;
* any artist named with `belongs_to(text, artist, ...)`: a figure function says so where
  a line deliberately runs through a label (none of the book's figures needs it today);
* the other pieces of the same label, tied with `one_label(...)`: a label drawn as several
  texts (a subscript lowered by hand) is one label, its pieces abut by design;
* its legend: a legend's texts and handles are checked as one unit, under rule three.

`collisions(fig)` lists what collides; `check_figure(fig, name)` raises `FigureCollision`
when anything does (the build plugin's `figure_check` calls it on every figure of the
book, its phone layouts and switch variants included). NumPy and matplotlib only.
"""

from __future__ import annotations

from collections.abc import Collection as AbstractCollection
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection, LineCollection, PathCollection, QuadMesh
from matplotlib.colors import to_hex, to_rgba
from matplotlib.figure import Figure, SubFigure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Annotation, Text

#: Overlaps thinner than this (points) are not collisions: sub-pixel on every screen.
TOLERANCE_PT = 0.75
#: The gap (points) a data line or marker keeps from a text not its own: two CSS pixels.
CLEARANCE_PT = 1.5
#: How much nearer (points) a label is to the marker it names than to any other, at least.
AMBIGUITY_PT = 2.0

_OWNERS = "_bookfigures_owners"  # artists a text belongs to (`belongs_to`)
_LABEL = "_bookfigures_label"  # a token shared by the pieces of one label (`one_label`)


def belongs_to(text: Text, *artists: Artist) -> Text:
    """Declare that `artists` (an arrow, a bracket) may cross `text`: it is their label."""
    setattr(text, _OWNERS, (*getattr(text, _OWNERS, ()), *artists))
    return text


def one_label(*texts: Text) -> tuple[Text, ...]:
    """Declare `texts` pieces of one label (e.g. "× W" and its lowered subscript "Q")."""
    token = object()
    for t in texts:
        setattr(t, _LABEL, token)
    return texts


# --- what was drawn -------------------------------------------------------------------------


@dataclass
class Box:
    """A text's box in its own frame: centre, unit axes `u` (along the text) and `v`, half sizes."""

    text: Text
    centre: np.ndarray
    u: np.ndarray
    v: np.ndarray
    half: np.ndarray  # (along u, along v), pixels
    legend: Legend | None = None

    @property
    def name(self) -> str:
        return _quote(self.text.get_text())

    def corners(self) -> np.ndarray:
        a, b = self.u * self.half[0], self.v * self.half[1]
        return np.array([self.centre - a - b, self.centre + a - b, self.centre + a + b, self.centre - a + b])


@dataclass
class Stroke:
    """A drawn line-like thing: polylines (display pixels), its line width, its marker discs."""

    artist: Artist
    name: str
    segments: np.ndarray  # (n, 2, 2)
    width: float  # pixels
    discs: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))  # (x, y, radius)
    filled: list[np.ndarray] = field(default_factory=list)  # closed polygons with a visible fill
    legend: Legend | None = None
    data: bool = False  # a plotted line or marker of an axes (kept `CLEARANCE_PT` from texts)


@dataclass(frozen=True)
class Collision:
    kind: str  # "text overlaps text", "line crosses text", "data line too close to text", ...
    first: str
    second: str
    depth_pt: float  # how far the two overlap, points
    artists: tuple = field(default=(), compare=False, repr=False)  # the two artists (a legend for its box)

    def __str__(self) -> str:
        return f"{self.kind}: {self.first} / {self.second} ({self.depth_pt:.1f} pt)"


class FigureCollision(AssertionError):
    """A figure has labels that collide; the message lists every collision."""


def _quote(s: str) -> str:
    s = " ".join(s.split())
    return repr(s if len(s) <= 40 else s[:37] + "...")


_KINDS = {"Line2D": "line", "FancyArrowPatch": "arrow", "FancyBboxPatch": "box", "Rectangle": "rectangle",
          "Circle": "circle", "Ellipse": "ellipse", "Polygon": "polygon", "LineCollection": "lines",
          "PathCollection": "markers", "PolyCollection": "polygons", "PathPatch": "path"}


def _describe(artist: Artist) -> str:
    """What a reader would call the artist: "arrow", "line 'rising'"."""
    kind = _KINDS.get(type(artist).__name__, type(artist).__name__)
    label = artist.get_label() if hasattr(artist, "get_label") else ""
    if label and not str(label).startswith("_"):
        return f"{kind} {_quote(str(label))}"
    return kind


def _drawn_texts(fig: Figure) -> list[tuple[Text, Legend | None]]:
    """Every text the reader sees: titles, labels, drawn tick labels, texts, legend texts."""
    found: list[tuple[Text, Legend | None]] = []

    def legend_texts(leg: Legend | None) -> None:
        if leg is None or not leg.get_visible():
            return
        for t in [*leg.get_texts(), leg.get_title()]:
            found.append((t, leg))

    def walk(container: Figure | SubFigure) -> None:
        for ax in container.axes:
            if not ax.get_visible() or ax.get_figure(root=False) is not container:
                continue
            found.extend((t, None) for t in (ax.title, ax._left_title, ax._right_title))
            found.extend((t, None) for t in ax.texts)
            for a in ax.artists:
                if isinstance(a, Text):
                    found.append((a, None))
            if ax.axison:
                for axis in ax._axis_map.values():
                    if not axis.get_visible():
                        continue
                    found.append((axis.label, None))
                    found.append((axis.offsetText, None))
                    for tick in axis._update_ticks():  # only the ticks matplotlib draws
                        found.extend((lab, None) for lab in (tick.label1, tick.label2) if lab.get_visible())
            legend_texts(ax.get_legend())
        found.extend((t, None) for t in container.texts)
        for attr in ("_suptitle", "_supxlabel", "_supylabel"):
            t = getattr(container, attr, None)
            if t is not None:
                found.append((t, None))
        for leg in container.legends:
            legend_texts(leg)
        for sub in container.subfigs:
            walk(sub)

    walk(fig)
    out, seen = [], set()
    for t, leg in found:
        if id(t) in seen or not t.get_visible() or not t.get_text().strip():
            continue
        seen.add(id(t))
        out.append((t, leg))
    return out


def _box(text: Text, renderer, legend: Legend | None) -> Box:
    """The text's box in its own rotated frame (the axis-aligned extent only gives its centre)."""
    if isinstance(text, Annotation):
        text.update_positions(renderer)  # an annotation's extent takes in its arrow: the text's alone
    extent = Text.get_window_extent(text, renderer)
    centre = np.array([(extent.x0 + extent.x1) / 2, (extent.y0 + extent.y1) / 2])
    angle = np.deg2rad(text.get_rotation())
    u = np.array([np.cos(angle), np.sin(angle)])
    v = np.array([-np.sin(angle), np.cos(angle)])
    try:  # matplotlib >= 3.10 gives the text-aligned box's size
        _, _, (_, (w, h)) = text._get_layout(renderer)
    except (ValueError, TypeError, AttributeError):
        c, s = abs(u[0]), abs(u[1])
        if abs(c - s) < 1e-6:  # 45 degrees: the turned box is not recoverable from its extent
            raise
        det = c * c - s * s  # solve W = w c + h s, H = w s + h c
        w = (extent.width * c - extent.height * s) / det
        h = (extent.height * c - extent.width * s) / det
    return Box(text, centre, u, v, np.array([w / 2, h / 2]), legend)


def _polylines(path, transform) -> list[np.ndarray]:
    """A path in display coordinates as polylines (curves flattened, every subpath kept)."""
    return [np.asarray(p) for p in transform.transform_path(path).to_polygons(closed_only=False) if len(p) > 1]


def _closed(poly: np.ndarray) -> bool:
    return len(poly) > 2 and np.allclose(poly[0], poly[-1])


def _segments(polys: Iterable[np.ndarray]) -> np.ndarray:
    segs = [np.stack([p[:-1], p[1:]], axis=1) for p in polys if len(p) > 1]
    return np.concatenate(segs) if segs else np.zeros((0, 2, 2))


def _clip_segments(segs: np.ndarray, clip) -> np.ndarray:
    """The parts of segments inside an axis-aligned clip box (Liang-Barsky)."""
    if clip is None or not len(segs):
        return segs
    p0, d = segs[:, 0], segs[:, 1] - segs[:, 0]
    lo, hi = np.zeros(len(segs)), np.ones(len(segs))
    for k, (a, b) in enumerate(((clip.x0, clip.x1), (clip.y0, clip.y1))):
        with np.errstate(divide="ignore", invalid="ignore"):
            t0, t1 = (a - p0[:, k]) / d[:, k], (b - p0[:, k]) / d[:, k]
        flat = d[:, k] == 0
        inside = (p0[:, k] >= a) & (p0[:, k] <= b)
        t_enter = np.where(flat, np.where(inside, -np.inf, np.inf), np.minimum(t0, t1))
        t_leave = np.where(flat, np.where(inside, np.inf, -np.inf), np.maximum(t0, t1))
        lo, hi = np.maximum(lo, t_enter), np.minimum(hi, t_leave)
    keep = lo <= hi
    return np.stack([p0[keep] + lo[keep, None] * d[keep], p0[keep] + hi[keep, None] * d[keep]], axis=1)


def _alpha(color) -> float:
    try:
        return float(to_rgba(color)[3])
    except (ValueError, TypeError):
        return 0.0


def _patch_stroke(patch: Patch, renderer, legend: Legend | None) -> Stroke | None:
    edge = patch.get_linewidth() > 0 and _alpha(patch.get_edgecolor()) > 0
    fill = patch.get_fill() and _alpha(patch.get_facecolor()) > 0
    if not (edge or fill):
        return None
    polys = _polylines(patch.get_path(), patch.get_transform())
    clip = patch.get_clip_box() if patch.get_clip_on() else None
    width = renderer.points_to_pixels(patch.get_linewidth()) if edge else 0.0
    filled = [p for p in polys if _closed(p)] if fill else []
    return Stroke(patch, _describe(patch), _clip_segments(_segments(polys), clip), width, filled=filled,
                  legend=legend)


def _line_stroke(line: Line2D, renderer, legend: Legend | None) -> Stroke | None:
    has_line = line.get_linestyle() not in ("None", "none", "", " ") and line.get_linewidth() > 0
    marker = line.get_marker()
    has_marker = marker not in (None, "None", "none", "", " ") and line.get_markersize() > 0
    if not (has_line or has_marker):
        return None
    path, transform = line.get_path(), line.get_transform()
    clip = line.get_clip_box() if line.get_clip_on() else None
    segs = _clip_segments(_segments(_polylines(path, transform)), clip) if has_line else np.zeros((0, 2, 2))
    discs = np.zeros((0, 3))
    if has_marker:
        points = transform.transform(path.vertices)
        every = line.get_markevery()
        if every is not None:
            points = points[np.arange(len(points))[every]] if not isinstance(every, (int, np.integer)) else points[::every]
        points = points[np.all(np.isfinite(points), axis=1)]
        if clip is not None:
            points = points[(points[:, 0] >= clip.x0) & (points[:, 0] <= clip.x1)
                            & (points[:, 1] >= clip.y0) & (points[:, 1] <= clip.y1)]
        r = renderer.points_to_pixels(line.get_markersize() + line.get_markeredgewidth()) / 2
        discs = np.column_stack([points, np.full(len(points), r)])
    width = renderer.points_to_pixels(line.get_linewidth()) if has_line else 0.0
    return Stroke(line, _describe(line), segs, width, discs, legend=legend)


def _collection_strokes(coll: Collection, renderer) -> list[Stroke]:
    if isinstance(coll, QuadMesh):  # a colour mesh is an image: no outline to cross a text
        return []
    clip = coll.get_clip_box() if coll.get_clip_on() else None
    widths = np.atleast_1d(coll.get_linewidths())
    width = renderer.points_to_pixels(float(widths.max())) if widths.size else 0.0
    if isinstance(coll, PathCollection):  # scatter: markers at offsets
        offsets = coll.get_offset_transform().transform(coll.get_offsets())
        sizes = np.broadcast_to(np.atleast_1d(coll.get_sizes()), (len(offsets),))
        r = renderer.points_to_pixels(np.sqrt(sizes)) / 2 + width / 2
        return [Stroke(coll, _describe(coll), np.zeros((0, 2, 2)), 0.0, np.column_stack([offsets, r]))]
    edges = np.atleast_2d(coll.get_edgecolor())
    faces = np.atleast_2d(coll.get_facecolor())
    edge = bool(width > 0 and edges.size and edges[:, 3].max() > 0)
    fill = bool(not isinstance(coll, LineCollection) and faces.size and faces[:, 3].max() > 0)
    if not (edge or fill):
        return []
    transform = coll.get_transform()
    polys = [p for path in coll.get_paths() for p in _polylines(path, transform)]
    filled = [p for p in polys if _closed(p)] if fill else []
    return [Stroke(coll, _describe(coll), _clip_segments(_segments(polys), clip), width if edge else 0.0,
                   filled=filled)]


def _strokes(fig: Figure, renderer) -> list[Stroke]:
    """Every line, arrow, marker and patch outline drawn, legends' handles marked as theirs."""
    out: list[Stroke] = []

    def add(artist: Artist, legend: Legend | None = None, data: bool = False) -> None:
        if not artist.get_visible():
            return
        if isinstance(artist, Patch):
            s = _patch_stroke(artist, renderer, legend)
        elif isinstance(artist, Line2D):
            s = _line_stroke(artist, renderer, legend)
            if s is not None:
                s.data = data
        elif isinstance(artist, Collection):
            for s in _collection_strokes(artist, renderer):
                s.legend, s.data = legend, data and not isinstance(artist, QuadMesh)
                out.append(s)
            return
        else:
            return
        if s is not None:
            out.append(s)

    def legend_handles(leg: Legend | None) -> None:
        if leg is None or not leg.get_visible():
            return
        for h in leg.legend_handles:
            if h is not None:
                add(h, leg)

    def walk(container: Figure | SubFigure) -> None:
        for ax in container.axes:
            if not ax.get_visible() or ax.get_figure(root=False) is not container:
                continue
            for a in [*ax.lines, *ax.collections]:
                add(a, data=True)
            for a in [*ax.patches, *ax.artists]:
                add(a)
            for t in ax.texts:
                if isinstance(t, Annotation) and t.arrow_patch is not None and t.get_visible():
                    add(t.arrow_patch)
            legend_handles(ax.get_legend())
        for a in [*container.lines, *container.patches, *container.artists]:
            add(a)
        for leg in container.legends:
            legend_handles(leg)
        for sub in container.subfigs:
            walk(sub)

    walk(fig)
    return out


# --- geometry ---------------------------------------------------------------------------


def _overlap_depth(a: Box, b: Box) -> float:
    """How deep two turned rectangles overlap (separating axes); <= 0 when they do not."""
    ca, cb = a.corners(), b.corners()
    depth = np.inf
    for axis in (a.u, a.v, b.u, b.v):
        pa, pb = ca @ axis, cb @ axis
        depth = min(depth, min(pa.max(), pb.max()) - max(pa.min(), pb.min()))
    return float(depth)


def _segments_into_box(box: Box, segs: np.ndarray, grow: float | np.ndarray) -> np.ndarray:
    """For each segment, how deep it reaches into the box grown by `grow` pixels (one value,
    or one per segment); below 0: not at all.

    The depth of a point is its distance to the nearest side of the box, inside it; a
    segment's depth is that of its deepest point, sampled along the part of it that
    lies in the box.
    """
    n = len(segs)
    depth = np.full(n, -np.inf)
    if not n:
        return depth
    rel = segs - box.centre
    local = np.stack([rel @ box.u, rel @ box.v], axis=-1)  # (n, 2 ends, 2 coords), in the box's frame
    half = box.half[None, :] + np.broadcast_to(np.asarray(grow, dtype=float), (n,))[:, None]  # (n, 2)
    p0, d = local[:, 0], local[:, 1] - local[:, 0]
    lo, hi = np.zeros(n), np.ones(n)
    for k in range(2):  # Liang-Barsky: the part of each segment inside the box
        with np.errstate(divide="ignore", invalid="ignore"):
            t0, t1 = (-half[:, k] - p0[:, k]) / d[:, k], (half[:, k] - p0[:, k]) / d[:, k]
        flat = d[:, k] == 0
        inside = np.abs(p0[:, k]) <= half[:, k]
        lo = np.maximum(lo, np.where(flat, np.where(inside, -np.inf, np.inf), np.minimum(t0, t1)))
        hi = np.minimum(hi, np.where(flat, np.where(inside, np.inf, -np.inf), np.maximum(t0, t1)))
    hit = (lo <= hi) & np.all(half > 0, axis=1)
    if hit.any():
        t = lo[hit, None] + (hi[hit] - lo[hit])[:, None] * np.linspace(0, 1, 17)  # (m, 17)
        points = p0[hit, None, :] + t[..., None] * d[hit, None, :]
        depth[hit] = np.max(np.min(half[hit, None, :] - np.abs(points), axis=-1), axis=1)
    return depth


def _discs_into_box(box: Box, discs: np.ndarray) -> np.ndarray:
    if not len(discs):
        return np.zeros(0)
    rel = discs[:, :2] - box.centre
    local = np.abs(np.stack([rel @ box.u, rel @ box.v], axis=-1))
    outside = np.maximum(local - box.half, 0)
    dist = np.hypot(outside[:, 0], outside[:, 1])
    inside = np.min(box.half - local, axis=1)
    return np.where(dist > 0, discs[:, 2] - dist, discs[:, 2] + np.maximum(inside, 0))


def _all_segments(strokes: list[Stroke]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every stroke's segments in one array, with the index of their stroke and half their width."""
    parts = [s.segments for s in strokes if len(s.segments)]
    if not parts:
        return np.zeros((0, 2, 2)), np.zeros(0, dtype=int), np.zeros(0)
    of = np.concatenate([np.full(len(s.segments), k) for k, s in enumerate(strokes) if len(s.segments)])
    grow = np.concatenate([np.full(len(s.segments), s.width / 2) for s in strokes if len(s.segments)])
    return np.concatenate(parts), of, grow


def _all_discs(strokes: list[Stroke]) -> tuple[np.ndarray, np.ndarray]:
    parts = [s.discs for s in strokes if len(s.discs)]
    if not parts:
        return np.zeros((0, 3)), np.zeros(0, dtype=int)
    of = np.concatenate([np.full(len(s.discs), k) for k, s in enumerate(strokes) if len(s.discs)])
    return np.concatenate(parts), of


def _point_in_polygon(point: np.ndarray, poly: np.ndarray) -> bool:
    x, y = point
    xs, ys = poly[:, 0], poly[:, 1]
    x2, y2 = np.roll(xs, -1), np.roll(ys, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = ((ys > y) != (y2 > y)) & (x < (x2 - xs) * (y - ys) / (y2 - ys) + xs)
    return bool(np.count_nonzero(cross) % 2)


def _named_point(text: Text, renderer) -> np.ndarray | None:
    """The display point an annotation points at (None for a plain text, or an arrow's label)."""
    if not isinstance(text, Annotation) or text.arrow_patch is not None:
        return None
    try:
        return np.asarray(text._get_xy(renderer, text.xy, text.xycoords), dtype=float)
    except (ValueError, TypeError, AttributeError):
        return None


def _belongs(box: Box, stroke: Stroke) -> bool:
    text, artist = box.text, stroke.artist
    if artist in getattr(text, _OWNERS, ()):
        return True
    if artist is text.get_bbox_patch():
        return True
    if isinstance(text, Annotation) and artist is text.arrow_patch:
        return True
    return box.legend is not None and stroke.legend is box.legend


# --- the check --------------------------------------------------------------------------


def collisions(fig: Figure, *, backgrounds: AbstractCollection[str] | None = None) -> list[Collision]:
    """Every collision of the figure's labels, as laid out at its own size and dpi.

    `backgrounds`: the colours a legend's background may have to count as opaque (a book
    whose figures flip to a dark page needs one that flips with it); None: any opaque colour.
    """
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    fig.draw_without_rendering()  # everything placed, no pixels drawn
    renderer = canvas.get_renderer()
    tol = renderer.points_to_pixels(TOLERANCE_PT)
    px_to_pt = 72.0 / fig.dpi
    boxes = [_box(t, renderer, leg) for t, leg in _drawn_texts(fig)]
    strokes = _strokes(fig, renderer)
    found: list[Collision] = []

    # (a) text over text (only pairs whose axis-aligned extents meet can overlap)
    corners = np.array([b.corners() for b in boxes]).reshape(len(boxes), 4, 2)  # (0, 4, 2) with no text
    lo, hi = corners.min(axis=1), corners.max(axis=1)
    meet = np.all((lo[:, None, :] < hi[None, :, :] - tol) & (lo[None, :, :] < hi[:, None, :] - tol), axis=-1)
    for i, j in zip(*np.nonzero(np.triu(meet, 1))):
        a, b = boxes[i], boxes[j]
        token = getattr(a.text, _LABEL, None)
        if token is not None and token is getattr(b.text, _LABEL, None):
            continue
        depth = _overlap_depth(a, b)
        if depth > tol:
            found.append(Collision("text overlaps text", a.name, b.name, depth * px_to_pt, (a.text, b.text)))

    # legends: opaque ones hide what lies under them; the others must sit clear of it
    legends = {id(b.legend): b.legend for b in boxes if b.legend is not None}
    opaque = {key for key, leg in legends.items() if _opaque(leg, backgrounds)}

    # (b) lines, arrows, markers and outlines through texts: every segment against each box at
    # once, then the strokes that reach in are looked at one by one; a data line or marker that
    # stops short of a text but within `CLEARANCE_PT` of it counts as well
    clearance = renderer.points_to_pixels(CLEARANCE_PT)
    segs, seg_of, grow = _all_segments(strokes)
    discs, disc_of = _all_discs(strokes)
    is_data = np.array([s.data for s in strokes], dtype=bool)
    extra = clearance * is_data  # how much farther each stroke must stay from a text
    for box in boxes:
        deepest, near = np.full(len(strokes), -np.inf), np.full(len(strokes), -np.inf)
        if len(segs):
            np.maximum.at(deepest, seg_of, _segments_into_box(box, segs, grow))
            np.maximum.at(near, seg_of, _segments_into_box(box, segs, grow + extra[seg_of]))
        if len(discs):
            np.maximum.at(deepest, disc_of, _discs_into_box(box, discs))
            np.maximum.at(near, disc_of, _discs_into_box(box, discs + np.outer(extra[disc_of], [0, 0, 1])))
        too_near = (deepest > tol) | (is_data & (near > 0) & (box.legend is None))
        for k in np.flatnonzero(too_near):
            s = strokes[k]
            if _belongs(box, s):
                continue
            if box.legend is not None and id(box.legend) in opaque and s.legend is None \
                    and s.artist.get_zorder() < box.legend.get_zorder():
                continue  # under the legend's background
            if deepest[k] <= tol:  # depth: how far into the clearance it reaches
                found.append(Collision("data line too close to text", s.name, box.name, float(near[k]) * px_to_pt,
                                       (s.artist, box.text)))
                continue
            if len(s.discs) and not len(s.segments):
                kind = "marker covers text"
            else:
                kind = "line crosses text"
            found.append(Collision(kind, s.name, box.name, float(deepest[k]) * px_to_pt, (s.artist, box.text)))

    # (c) a legend without a background sits clear of the data and of other texts
    for key, leg in legends.items():
        if key in opaque:
            continue
        extent = leg.get_window_extent(renderer)
        frame = Box(leg, np.array([(extent.x0 + extent.x1) / 2, (extent.y0 + extent.y1) / 2]),
                    np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([extent.width / 2, extent.height / 2]))
        name = "legend " + _quote(" · ".join(t.get_text() for t in leg.get_texts()))
        for s in strokes:
            if s.legend is leg:
                continue
            depth = -np.inf
            if len(s.segments):
                depth = max(depth, float(np.max(_segments_into_box(frame, s.segments, s.width / 2))))
            if len(s.discs):
                depth = max(depth, float(np.max(_discs_into_box(frame, s.discs))))
            if any(_point_in_polygon(frame.centre, p) for p in s.filled):
                depth = max(depth, float(np.min(frame.half)))
            if depth > tol:
                found.append(Collision("legend without background over data", name, s.name, depth * px_to_pt,
                                       (leg, s.artist)))
        for b in boxes:
            if b.legend is leg:
                continue
            depth = _overlap_depth(frame, b)
            if depth > tol:
                found.append(Collision("legend without background over data", name, b.name, depth * px_to_pt,
                                       (leg, b.text)))

    # (d) a label that names a marker is clearly nearer it than any other marker
    margin = renderer.points_to_pixels(AMBIGUITY_PT)
    for box in boxes:
        point = _named_point(box.text, renderer)
        if point is None or not len(discs) or box.legend is not None:
            continue
        apart = np.hypot(*(discs[:, :2] - point).T)
        at_point = apart <= 1.5  # the marker(s) the label names
        if not at_point.any():
            continue
        # a marker that overlaps the label's own is read with it: no label could be nearer one of them
        touching = apart < discs[:, 2] + discs[at_point, 2].max()
        if touching.all():
            continue
        gaps = -_discs_into_box(box, discs)  # distance from each marker's edge to the box
        own, nearest = float(gaps[at_point].min()), int(np.argmin(np.where(touching, np.inf, gaps)))
        if gaps[nearest] < own + max(margin, own):
            other = strokes[disc_of[nearest]]
            found.append(Collision("label as near another marker as its own", other.name, box.name,
                                   float(own + max(margin, own) - gaps[nearest]) * px_to_pt,
                                   (other.artist, box.text)))
    return found


def clear_of_everything(fig: Figure, *artists: Artist) -> bool:
    """True when none of `artists` (texts, a legend with its texts) collides with anything:
    a figure function tries a label's places in turn and keeps the first that is clear."""
    ids = {id(a) for a in artists}
    for a in artists:
        if isinstance(a, Legend):
            ids |= {id(t) for t in a.get_texts()} | {id(a.get_title())}
    return not any(id(x) in ids for c in collisions(fig) for x in c.artists)


def _opaque(leg: Legend, backgrounds: AbstractCollection[str] | None) -> bool:
    patch = leg.legendPatch
    if not (leg.get_frame_on() and patch.get_visible() and patch.get_fill()):
        return False
    face = to_rgba(patch.get_facecolor())
    if face[3] < 1.0:
        return False
    return backgrounds is None or to_hex(face, keep_alpha=False) in {c.lower() for c in backgrounds}


def check_figure(fig: Figure, name: str = "figure") -> Figure:
    """Raise `FigureCollision` listing every collision of `fig`'s labels; return `fig` if none.

    The book's check: a legend's background counts only in a colour that flips with the
    page (an ink of `bookfigures.palette.DARK_INK_MAP`).
    """
    from .palette import DARK_INK_MAP

    found = collisions(fig, backgrounds=set(DARK_INK_MAP))
    if found:
        lines = "\n".join(f"  - {c}" for c in found)
        raise FigureCollision(f"{name}: {len(found)} label collision(s)\n{lines}")
    return fig
