"""The colour legend: legible on both page backgrounds, distinct for colour-blind readers,
and consistent between the maths macros, the style sheet and the dark-mode swap."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pykatex
import pytest

from bookfigures import colormaps as cm
from bookfigures import palette as pal
from bookfigures.style import house_rc

BACKGROUNDS = {"white": pal.LIGHT_BACKGROUND, "slate": pal.DARK_BACKGROUND}
HEX = re.compile(r"^#[0-9a-f]{6}$")


def test_contrast_formula_matches_wcag_reference_values():
    assert pal.contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert pal.contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert pal.relative_luminance("#1e2129") == pytest.approx(0.0152, abs=5e-4)


@pytest.mark.parametrize("role", pal.ROLES)
@pytest.mark.parametrize("background", BACKGROUNDS)
def test_role_colour_has_3_to_1_contrast_on_both_pages(role, background):
    ratio = pal.contrast_ratio(pal.ROLE_COLORS[role], BACKGROUNDS[background])
    assert ratio >= 3.0, f"{role} {pal.ROLE_COLORS[role]} on {background}: {ratio:.2f}"


@pytest.mark.parametrize("name", ["NEUTRAL", "HIGHLIGHT"])
def test_fixed_data_colours_are_legible_on_both_pages(name):
    for background in BACKGROUNDS.values():
        assert pal.contrast_ratio(getattr(pal, name), background) >= 3.0


def test_legend_covers_exactly_the_eight_roles():
    assert set(pal.ROLE_COLORS) == set("eqkvadpt") == set(pal.ROLE_NAMES)
    assert len(set(pal.ROLE_COLORS.values())) == 8
    assert all(HEX.match(c) for c in pal.ROLE_COLORS.values())


def test_highlighted_bar_uses_the_legend_colour_of_the_target():
    assert pal.HIGHLIGHT == pal.ROLE_COLORS["t"]


# Sharma, Wu & Dalal (2005), "The CIEDE2000 color-difference formula: implementation notes,
# supplementary test data and mathematical observations", Table 1 (pairs 1, 2, 3, 7, 9-13,
# 17-20, 25, 26, 31, 34): CIELAB inputs and the published difference.
SHARMA_PAIRS = [
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, 3.1571, -77.2803), (50.0, 0.0, -82.7485), 2.8615),
    ((50.0, 2.8361, -74.0200), (50.0, 0.0, -82.7485), 3.4412),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((50.0, 2.49, -0.001), (50.0, -2.49, 0.0009), 7.1792),
    ((50.0, 2.49, -0.001), (50.0, -2.49, 0.0010), 7.1792),
    ((50.0, 2.49, -0.001), (50.0, -2.49, 0.0011), 7.2195),
    ((50.0, 2.49, -0.001), (50.0, -2.49, 0.0012), 7.2195),
    ((50.0, -0.001, 2.49), (50.0, 0.0009, -2.49), 4.8045),
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
    ((50.0, 2.5, 0.0), (61.0, -5.0, 29.0), 22.8977),
    ((50.0, 2.5, 0.0), (56.0, -27.0, -3.0), 31.9030),
    ((50.0, 2.5, 0.0), (58.0, 24.0, 15.0), 19.4535),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((63.0109, -31.0961, -5.8663), (62.8187, -29.7946, -4.0864), 1.2630),
    ((22.7233, 20.0904, -46.6940), (23.0331, 14.9730, -42.5619), 2.0373),
    ((2.0776, 0.0795, -1.1350), (0.9033, -0.0636, -0.5514), 0.9082),
]


@pytest.mark.parametrize("lab1, lab2, expected", SHARMA_PAIRS)
def test_ciede2000_matches_the_published_test_data(lab1, lab2, expected):
    assert pal.ciede2000(lab1, lab2) == pytest.approx(expected, abs=5e-4)
    assert pal.ciede2000(lab2, lab1) == pytest.approx(expected, abs=5e-4)  # symmetric


def test_srgb_to_lab_matches_reference_values():
    assert pal.srgb_to_lab("#ffffff") == pytest.approx((100.0, 0.0, 0.0), abs=0.01)
    assert pal.srgb_to_lab("#000000") == pytest.approx((0.0, 0.0, 0.0), abs=0.01)
    assert pal.srgb_to_lab("#ff0000") == pytest.approx((53.24, 80.09, 67.20), abs=0.05)
    assert pal.srgb_to_lab("#0000ff") == pytest.approx((32.30, 79.19, -107.86), abs=0.05)


def _legend_forms() -> dict[str, dict[str, str]]:
    """Every form in which the legend's colours meet the reader, side by side."""
    forms = {"figures": dict(pal.ROLE_COLORS)}
    for scheme in ("light", "dark"):
        forms[f"maths, {scheme} scheme"] = {r: pal.TEXT_SHADES[c][scheme] for r, c in pal.ROLE_COLORS.items()}
    return forms


@pytest.mark.parametrize("form", sorted(_legend_forms()))
def test_every_pair_of_legend_roles_is_clearly_distinct(form):
    """Any two roles can share a formula (k_j = e_j W_K) or a figure: CIEDE2000 >= the floor."""
    colours = _legend_forms()[form]
    for a, b in itertools.combinations(sorted(colours), 2):
        difference = pal.delta_e(colours[a], colours[b])
        assert difference >= pal.MIN_ROLE_DIFFERENCE, (
            f"{form}: {pal.ROLE_NAMES[a]} {colours[a]} and {pal.ROLE_NAMES[b]} {colours[b]} "
            f"differ by only {difference:.1f}"
        )


def test_target_bar_stands_out_from_the_other_bars():
    assert pal.delta_e(pal.HIGHLIGHT, pal.NEUTRAL) >= pal.MIN_ROLE_DIFFERENCE


def test_the_floor_rejects_the_pair_that_once_merged():
    """The light-mode key shade and the old azure updated-row shade read as one colour."""
    assert pal.delta_e("#0072b2", "#0079cd") < pal.MIN_ROLE_DIFFERENCE


# Machado, Oliveira & Fernandes (2009), severity 1.0, applied to linear RGB.
CVD = {
    "normal": np.eye(3),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}


def _lab(hex_color: str, matrix: np.ndarray) -> np.ndarray:
    srgb = np.array([int(hex_color[i:i + 2], 16) for i in (1, 3, 5)]) / 255
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    rgb = np.clip(matrix @ linear, 0, 1)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ rgb / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


@pytest.mark.parametrize("vision", CVD)
def test_every_pair_of_roles_stays_distinct_under_colour_blindness(vision):
    """Delta E (CIE76) >= 12 between any two roles: distinguishable side by side."""
    lab = {r: _lab(c, CVD[vision]) for r, c in pal.ROLE_COLORS.items()}
    worst = min((float(np.linalg.norm(lab[a] - lab[b])), a + b)
                for a, b in itertools.combinations(pal.ROLES, 2))
    assert worst[0] >= 12.0, f"roles {worst[1]} nearly merge for {vision}: dE {worst[0]:.1f}"


def test_ink_text_reads_on_its_own_page():
    for light in (pal.INK, pal.INK_MUTED):  # text inks need 4.5:1 in each mode
        assert pal.contrast_ratio(light, pal.LIGHT_BACKGROUND) >= 4.5
        assert pal.contrast_ratio(pal.DARK_INK_MAP[light], pal.DARK_BACKGROUND) >= 4.5
    # grid lines are faint on purpose, but must not vanish
    assert pal.contrast_ratio(pal.INK_GRID, pal.LIGHT_BACKGROUND) >= 1.3
    assert pal.contrast_ratio(pal.DARK_INK_MAP[pal.INK_GRID], pal.DARK_BACKGROUND) >= 1.3


def _all_fixed_colours() -> set[str]:
    fixed = set(pal.ROLE_COLORS.values()) | {pal.CELL_TEXT_DARK, pal.CELL_TEXT_LIGHT,
                                             pal.NEUTRAL, pal.HIGHLIGHT}
    for cmap in (cm.ATTENTION_CMAP, cm.DIVERGING_CMAP):
        fixed |= {cm.cmap_hex(cmap, x) for x in np.linspace(0, 1, 1001)}
    return fixed


def test_dark_swap_touches_only_ink():
    keys, values = set(pal.DARK_INK_MAP), set(pal.DARK_INK_MAP.values())
    assert all(HEX.match(c) for c in keys | values)  # lowercase, as matplotlib writes SVG
    assert not keys & _all_fixed_colours(), "a data colour would be recoloured in dark mode"
    assert not keys & values, "a swapped colour would be swapped again"
    assert set(pal.INK_COLORS) == keys


def test_cell_text_reads_on_every_attention_and_diverging_colour():
    for cmap in (cm.ATTENTION_CMAP, cm.DIVERGING_CMAP):
        for x in np.linspace(0, 1, 101):
            cell = cm.cmap_hex(cmap, x)
            assert pal.contrast_ratio(cell, pal.cell_text_color(cell)) >= 4.5, (cmap.name, x)


@pytest.mark.parametrize("role", pal.ROLES)
def test_cell_text_reads_on_matrix_tints(role):
    for amount in np.linspace(0.1, 0.65, 12):
        cell = pal.tint(pal.ROLE_COLORS[role], amount)
        assert pal.contrast_ratio(cell, pal.cell_text_color(cell)) >= 4.5


def test_attention_colormap_darkens_monotonically():
    """More weight must always look darker (on either page), or the eye misreads the grid."""
    lum = [pal.relative_luminance(cm.cmap_hex(cm.ATTENTION_CMAP, x)) for x in np.linspace(0, 1, 101)]
    assert all(a > b for a, b in zip(lum, lum[1:]))


def test_tex_macros_cover_all_roles_with_bold_role_colour():
    assert set(pal.TEX_MACROS) == {"\\v" + r for r in "eqkvadpt"}
    for name, body in pal.TEX_MACROS.items():
        role = name[2:]
        assert "\\boldsymbol{#1}" in body and "#2" not in body
        assert pal.ROLE_COLORS[role].lstrip("#") in body


@pytest.mark.parametrize("name", sorted(pal.TEX_MACROS))
def test_tex_macro_renders_in_katex_with_its_colour(name):
    """Rendered exactly as the KaTeX plugin defines macros (a one-argument \\def)."""
    html = pykatex.renderToString(f"\\def{name}#1{{{pal.TEX_MACROS[name]}}}{name}{{\\alpha}}")
    assert f"color:{pal.ROLE_COLORS[name[2:]]}" in html
    assert "boldsymbol" in html  # Greek letters are bold too (\boldsymbol, not \mathbf)


def test_tex_macros_work_through_the_katex_plugin_preamble():
    katex = pytest.importorskip("booksite.katex")
    preamble = katex.macro_preamble(pal.TEX_MACROS)
    html = pykatex.renderToString(preamble + r"\vq{q_2} \cdot \vk{k_j}")
    assert f"color:{pal.ROLE_COLORS['q']}" in html and f"color:{pal.ROLE_COLORS['k']}" in html


def test_css_variables_carry_the_same_colours():
    css = pal.css_variables()
    for role, color in pal.ROLE_COLORS.items():
        assert f"--role-{role}: {color};" in css


def test_style_sheet_uses_the_palette_inks_and_keeps_text_as_text():
    rc = house_rc()
    assert rc["svg.fonttype"] == "none"
    assert rc["savefig.transparent"] is True
    assert rc["figure.facecolor"] == "none" and rc["axes.facecolor"] == "none"
    for key in ("text.color", "axes.labelcolor", "axes.titlecolor", "xtick.labelcolor",
                "ytick.labelcolor", "axes.edgecolor", "xtick.color", "ytick.color",
                "grid.color", "hatch.color", "legend.labelcolor"):
        assert "#" + rc[key].lstrip("#").lower() in pal.DARK_INK_MAP, key
    for key in ("font.size", "axes.labelsize", "xtick.labelsize", "ytick.labelsize",
                "legend.fontsize", "axes.titlesize"):
        assert float(rc[key]) >= 9, key


def test_maths_shades_read_as_body_text_in_both_schemes():
    """Maths in running text uses per-scheme shades of each role colour with WCAG AA contrast."""
    for color, shades in pal.TEXT_SHADES.items():
        assert pal.contrast_ratio(shades["light"], pal.LIGHT_BACKGROUND) >= 4.5, color
        assert pal.contrast_ratio(shades["dark"], pal.DARK_BACKGROUND) >= 4.5, color
        # a shade of the same colour: only mixed toward black or white, never a new hue
        for shade in shades.values():
            assert shade == color or shade in {
                pal.mix(color, end, step / 100) for end in ("#000000", "#ffffff") for step in range(101)
            }
    assert set(pal.TEXT_SHADES) == set(pal.ROLE_COLORS.values())
