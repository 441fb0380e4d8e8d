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

Role colours were picked by searching that luminance band for seven hues whose
pairwise CIELAB distance stays above ~14 under simulated protanopia, deuteranopia and
tritanopia (Machado et al. 2009); colour is still never the only cue (figures also use
letters, markers or text).
"""

from __future__ import annotations


# --- roles -----------------------------------------------------------------------------

ROLE_COLORS: dict[str, str] = {
    "e": "#6d7781",  # slate grey: token/input rows (the raw material)
    "q": "#c2501f",  # red-orange: queries
    "k": "#0072b2",  # blue: keys
    "v": "#009e73",  # bluish green: values
    "a": "#cc71b1",  # pink-purple: attention weights
    "d": "#b98700",  # amber: updates (delta)
    "p": "#0093fa",  # azure: updated rows
}

ROLE_NAMES: dict[str, str] = {
    "e": "token/input rows",
    "q": "queries",
    "k": "keys",
    "v": "values",
    "a": "attention weights",
    "d": "updates (delta)",
    "p": "updated rows",
}

ROLES: tuple[str, ...] = tuple(ROLE_COLORS)


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
HIGHLIGHT = "#7460d6"  # the highlighted datum (e.g. the target token's bar)

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


def css_variables() -> str:
    """CSS custom properties for the roles, for the site's stylesheet (same in both schemes)."""
    lines = [f"  --role-{role}: {color};" for role, color in ROLE_COLORS.items()]
    return ":root {\n" + "\n".join(lines) + "\n}\n"
