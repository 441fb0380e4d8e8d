"""The book's one colour legend, shared by the maths (KaTeX macros), the figures and the CSS.

Plain Python on purpose: the site build reads the maths macros from here without importing
matplotlib (the colormaps built from these colours live in `bookfigures.colormaps`).

Why one module: a reader learns "orange-red means query" once, on the notation page, and
must find the same colour in every formula, figure and table. Everything that colours a
role reads it from here.

Two families of colours live here and must never overlap:

* **Ink** (`INK`, `INK_MUTED`, `INK_GRID`): axis text, ticks, spines, titles, grid lines.
  They are the keys of `DARK_INK_MAP`; the build plugin makes the dark-mode SVG by
  replacing each key with its value, so ink flips between modes.
* **Fixed colours** (role colours, colormaps, cell text, neutral data grey): they stay the
  same in both modes, so each must be legible on white *and* on Material's slate
  background (`#1e2129`) - role colours are chosen for a contrast ratio of at least 3:1
  against both, which bounds their relative luminance to about [0.15, 0.30].

Role colours were picked by searching that luminance band for hues that stay apart in
every form a reader meets them: as figure colours, and as the per-scheme text shades of
the maths (`TEXT_SHADES`), every pair is at least `MIN_ROLE_DIFFERENCE` apart in CIEDE2000
(`delta_e`); under simulated protanopia, deuteranopia and tritanopia (Machado et al.
2009) their CIELAB distance stays above ~14. Colour is still never the only cue (figures
also use letters, markers or text).
"""

from __future__ import annotations

import math

# --- roles -----------------------------------------------------------------------------

ROLE_COLORS: dict[str, str] = {
    "e": "#6d7781",  # slate grey: token/input rows (the raw material)
    "q": "#c2501f",  # red-orange: queries
    "k": "#0072b2",  # blue: keys
    "v": "#009e73",  # bluish green: values
    "a": "#cc71b1",  # pink-purple: attention weights
    "d": "#b98700",  # amber: updates (delta)
    "p": "#f42f56",  # crimson: updated rows
    "t": "#ac47ff",  # violet: the observed next token (the target a prediction is scored on)
}

ROLE_NAMES: dict[str, str] = {
    "e": "token/input rows",
    "q": "queries",
    "k": "keys",
    "v": "values",
    "a": "attention weights",
    "d": "updates (delta)",
    "p": "updated rows",
    "t": "target (observed next token)",
}

ROLES: tuple[str, ...] = tuple(ROLE_COLORS)

#: How a figure's legend names the arrays that no role colours (ids, scores, messages, logits),
#: drawn in thin muted ink: the legend has no colour for them, and a figure says so.
NO_ROLE = "no role colour"


def _tex_macro(hex_color: str) -> str:
    """KaTeX body for a one-argument role macro.

    The colour is written without its '#': inside a macro body KaTeX reads '#0' as a
    (bad) argument reference and fails with "Not a valid argument number"; a bare
    6-digit hex is accepted by \\textcolor (xcolor's HTML model) and survives any
    number of macro expansions.
    """
    return "\\textcolor{" + hex_color.lstrip("#") + "}{\\boldsymbol{#1}}"


TEX_MACROS: dict[str, str] = {"\\v" + role: _tex_macro(c) for role, c in ROLE_COLORS.items()}

# --- ink (flips between light and dark mode) ----------------------------------------------

INK = "#1f2328"  # titles, axis labels, tick labels, value labels
INK_MUTED = "#57606a"  # secondary text, spines, ticks, hatching of masked cells
INK_GRID = "#d0d7de"  # grid lines and cell outlines

DARK_INK_MAP: dict[str, str] = {
    INK: "#e6edf3",
    INK_MUTED: "#a3adb9",
    INK_GRID: "#3d444d",
}

INK_COLORS: tuple[str, ...] = tuple(DARK_INK_MAP)

# --- fixed colours (identical in both modes) --------------------------------------------

LIGHT_BACKGROUND = "#ffffff"
DARK_BACKGROUND = "#1e2129"  # Material for MkDocs "slate"

# Near-black rather than #111111: with it, every cell colour reaches 4.5:1 against either
# this or white (no "dead" mid-luminance band). Not #000000, which matplotlib leaves
# without an explicit SVG fill.
CELL_TEXT_DARK = "#020202"  # numbers written on light cells
CELL_TEXT_LIGHT = "#ffffff"  # numbers written on dark cells
NEUTRAL = "#818a94"  # non-highlighted data (e.g. non-target bars)
HIGHLIGHT = ROLE_COLORS["t"]  # the highlighted datum: the target token's bar, in its legend colour

# --- colour arithmetic (WCAG 2.x) ---------------------------------------------------------


def _channel(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def relative_luminance(hex_color: str) -> float:
    """WCAG relative luminance of an sRGB hex colour."""
    h = hex_color.lstrip("#")
    r, g, b = (_channel(int(h[i : i + 2], 16) / 255) for i in (0, 2, 4))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: str, b: str) -> float:
    """WCAG contrast ratio between two hex colours (1 to 21)."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)))
    return (lb + 0.05) / (la + 0.05)


def cell_text_color(cell_hex: str) -> str:
    """The fixed text colour (dark or light) that reads best on a cell of this colour."""
    dark = contrast_ratio(cell_hex, CELL_TEXT_DARK)
    light = contrast_ratio(cell_hex, CELL_TEXT_LIGHT)
    return CELL_TEXT_DARK if dark >= light else CELL_TEXT_LIGHT


def tint(hex_color: str, amount: float) -> str:
    """Mix a colour with white: amount 0 gives white, 1 the colour itself (opaque result)."""
    h = hex_color.lstrip("#")
    rgb = [int(h[i : i + 2], 16) for i in (0, 2, 4)]
    mixed = [round(255 + (c - 255) * amount) for c in rgb]
    return "#" + "".join(f"{c:02x}" for c in mixed)


def mix(hex_color: str, toward: str, amount: float) -> str:
    """Blend a colour toward another (amount 0: unchanged, 1: the other colour)."""
    a, b = hex_color.lstrip("#"), toward.lstrip("#")
    channels = [round(int(a[i : i + 2], 16) + (int(b[i : i + 2], 16) - int(a[i : i + 2], 16)) * amount) for i in (0, 2, 4)]
    return "#" + "".join(f"{c:02x}" for c in channels)


def text_color(hex_color: str, background: str, minimum: float = 4.5) -> str:
    """The role colour darkened or lightened just enough to read as body text (WCAG AA).

    Figures keep the role colour itself (3:1 against both schemes); maths in running text is
    small, so the page shows a per-scheme shade of the same hue instead.
    """
    toward = "#000000" if relative_luminance(background) > 0.5 else "#ffffff"
    for step in range(101):
        shade = mix(hex_color, toward, step / 100)
        if contrast_ratio(shade, background) >= minimum:
            return shade
    return toward


#: For each role colour, the shade that maths text uses in each colour scheme.
TEXT_SHADES: dict[str, dict[str, str]] = {
    color: {"light": text_color(color, LIGHT_BACKGROUND), "dark": text_color(color, DARK_BACKGROUND)}
    for color in ROLE_COLORS.values()
}


# --- colour difference (CIEDE2000) ---------------------------------------------------------

#: The smallest CIEDE2000 difference allowed between two legend colours that can appear
#: side by side (as figure colours, or as the maths shades of one colour scheme). About 2
#: is a just-noticeable difference; categorical colours need many times that to be told
#: apart at a glance in a small symbol.
MIN_ROLE_DIFFERENCE = 15.0


def srgb_to_lab(hex_color: str) -> tuple[float, float, float]:
    """CIELAB (D65 white) of an sRGB hex colour."""
    h = hex_color.lstrip("#")
    linear = [_channel(int(h[i : i + 2], 16) / 255) for i in (0, 2, 4)]
    m = ((0.4124564, 0.3575761, 0.1804375), (0.2126729, 0.7151522, 0.0721750), (0.0193339, 0.1191920, 0.9503041))
    white = (0.95047, 1.0, 1.08883)
    xyz = [sum(m[i][j] * linear[j] for j in range(3)) / white[i] for i in range(3)]
    eps = (6 / 29) ** 3
    fx, fy, fz = (t ** (1 / 3) if t > eps else t / (3 * (6 / 29) ** 2) + 4 / 29 for t in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e(a: str, b: str) -> float:
    """CIEDE2000 colour difference between two sRGB hex colours.

    Why this formula: plain distance in CIELAB overstates differences between saturated
    blues and understates them between greys; CIEDE2000 corrects for both, which is
    exactly where the legend's key and updated-row blues once nearly merged.
    """
    return ciede2000(srgb_to_lab(a), srgb_to_lab(b))


def ciede2000(lab1: tuple[float, float, float], lab2: tuple[float, float, float]) -> float:
    """CIEDE2000 difference of two CIELAB colours (Sharma, Wu & Dalal 2005, kL = kC = kH = 1)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean**7 / (c_mean**7 + 25**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dh = 0.0
    if c1p * c2p:
        dh = h2p - h1p
        dh = dh - 360 if dh > 180 else dh + 360 if dh < -180 else dh
    d_lp, d_cp = l2 - l1, c2p - c1p
    d_hp = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    l_mean, cp_mean = (l1 + l2) / 2, (c1p + c2p) / 2
    if not c1p * c2p:
        h_mean = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_mean = (h1p + h2p) / 2
    else:
        h_mean = (h1p + h2p + (360 if h1p + h2p < 360 else -360)) / 2
    t = (1 - 0.17 * math.cos(math.radians(h_mean - 30)) + 0.24 * math.cos(math.radians(2 * h_mean))
         + 0.32 * math.cos(math.radians(3 * h_mean + 6)) - 0.20 * math.cos(math.radians(4 * h_mean - 63)))
    rotation = 30 * math.exp(-(((h_mean - 275) / 25) ** 2))
    r_c = 2 * math.sqrt(cp_mean**7 / (cp_mean**7 + 25**7))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    s_c = 1 + 0.045 * cp_mean
    s_h = 1 + 0.015 * cp_mean * t
    r_t = -math.sin(math.radians(2 * rotation)) * r_c
    return math.sqrt((d_lp / s_l) ** 2 + (d_cp / s_c) ** 2 + (d_hp / s_h) ** 2 + r_t * (d_cp / s_c) * (d_hp / s_h))


def css_variables() -> str:
    """CSS custom properties for the roles, for the site's stylesheet (same in both schemes)."""
    lines = [f"  --role-{role}: {color};" for role, color in ROLE_COLORS.items()]
    return ":root {\n" + "\n".join(lines) + "\n}\n"
