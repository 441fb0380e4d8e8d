"""The widgets in a real Chromium at phone width: driven by keyboard and pointer, every number
shown compared with the engine's value for the same input, and checked for accessibility with
the widgets open, in both colour schemes, and without JavaScript.

The largest differences found between a shown number and the engine are reported at the end
of the run (see `WIDGET_DIFFS` in conftest.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect

from tinyformer.models import encdec, onehead
from tinyformer.nn import layernorm_forward, sgd_step, softmax

from .conftest import WIDGET_DIFFS

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
NUMBER = re.compile(r"[−-]?\d+\.\d+(?:×10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?")
SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def number(text: str) -> float:
    """A number as the book writes it ("−0.125", "3×10⁻⁷") back to a float."""
    text = text.strip().replace("−", "-")
    if "×10" in text:
        mantissa, exponent = text.split("×10")
        return float(mantissa) * 10.0 ** int(exponent.translate(SUPERSCRIPT))
    return float(text)


def numbers(text: str) -> list[float]:
    return [number(m) for m in NUMBER.findall(text)]


def shown_matches(label: str, text: str, value: float, decimals: int) -> None:
    """The text shows `value` rounded to `decimals` places (half a unit in the last place)."""
    shown = number(text)
    diff = abs(shown - value)
    WIDGET_DIFFS[label] = max(WIDGET_DIFFS.get(label, 0.0), diff)
    assert diff <= 0.5 * 10.0**-decimals + 1e-12, f"{label}: shows {text}, the engine has {value!r}"


@pytest.fixture
def phone(browser, served_site):
    """A phone-sized tab that fails the test on any console error or page error."""
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.base = served_site
    yield page
    context.close()
    assert not errors, errors


START_ALL_WIDGETS = """() => window.bookWidgets.startAll(true)"""  # they start lazily, near the screen
ALL_WIDGETS_READY = """() => [...document.querySelectorAll('[data-numbook-widget]')]
    .every(w => w.dataset.numbookReady === 'yes')"""


def open_widgets(page, path: str) -> None:
    page.goto(page.base + path, wait_until="networkidle")
    page.evaluate(START_ALL_WIDGETS)
    page.wait_for_function(ALL_WIDGETS_READY)


def test_a_widget_starts_when_it_comes_near_the_screen(phone):
    """Far down the page a widget still shows the build's default table; scrolled to, it starts."""
    phone.goto(phone.base + "/part3-decoder/", wait_until="networkidle")
    state = phone.evaluate("() => document.getElementById('widget-p3-cache-length').dataset.numbookReady")
    assert state == "waiting"
    phone.locator("#widget-p3-cache-length").scroll_into_view_if_needed()
    phone.wait_for_function("() => document.getElementById('widget-p3-cache-length').dataset.numbookReady === 'yes'")


WIDGET_PARTS = {"include": [["[data-numbook-widget]"], ["figure[data-numbook-variants]"],
                            ["figure[data-numbook-variants] + details.numbook-code + details.numbook-data"]]}


def no_serious_violations(page, context: dict | None = WIDGET_PARTS) -> list[str]:
    """axe's serious and critical findings, on the widgets and the figures they drive by default."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, context=context)
    return [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
            for v in results.response["violations"] if v["impact"] in {"serious", "critical"}]


def page_fits(page) -> None:
    """At phone width only a widget's own table box may scroll sideways, never the page."""
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width}px wide at {PHONE['width']}px"


# --- the one-page lesson: three editable scores ---------------------------------------------

SCORE_INPUTS = [
    (0.2, 2.0, 0.5),  # the teaching inputs (the default)
    (1000, 0, -1000),  # huge scores: no overflow
    (1000, 1000.5, 999),
    (3, 3, 3),  # equal scores: one third each
    (0, 0, 0),
    (-2.5, 0.1, 7.25),
    (40, -40, 0),  # tiny weights, written in scientific notation
]


def read_compute(widget) -> dict[str, list[tuple[str, float]]]:
    """Each output column and scalar: (text shown, full-precision value the script computed)."""
    cells = widget.locator("td[data-column], td[data-scalar]")
    out: dict[str, list[tuple[str, float]]] = {}
    for k in range(cells.count()):
        cell = cells.nth(k)
        key = cell.get_attribute("data-column") or cell.get_attribute("data-scalar")
        out.setdefault(key, []).append((cell.inner_text(), float(cell.get_attribute("data-value"))))
    return out


def compare_compute(widget, label: str, inputs, expected: dict, decimals: int) -> dict:
    """Every number a compute widget shows, and the unrounded value behind it, against the engine's."""
    shown = read_compute(widget)
    assert set(shown) == set(expected)
    for key, want in expected.items():
        for (text, value), w in zip(shown[key], want, strict=True):
            shown_matches(f"{label}: {key}", text, float(w), decimals)
            diff = abs(value - float(w))
            unrounded = f"{label}: unrounded, browser vs engine"
            WIDGET_DIFFS[unrounded] = max(WIDGET_DIFFS.get(unrounded, 0.0), diff)
            assert diff <= 1e-12, f"{key} at {inputs}: browser {value!r}, engine {float(w)!r}"
    return shown


def check_scores(widget, scores, values: np.ndarray, decimals: int) -> None:
    x = np.asarray(scores, dtype=float)
    weights = softmax(x)  # the engine
    expected = {"exp(score − max)": np.exp(x - x.max()), "weight": weights,
                "mixture, coordinate 1": [weights @ values[:, 0]], "mixture, coordinate 2": [weights @ values[:, 1]]}
    shown = compare_compute(widget, "one-page scores", scores, expected, decimals)
    browser_weights = [v for _, v in shown["weight"]]
    assert abs(sum(browser_weights) - 1.0) <= 1e-12 and all(0 <= w <= 1 for w in browser_weights)


def test_one_page_scores_follow_the_engine_as_the_reader_types(phone, built_site: Path):
    data = json.loads((built_site / "data" / "one-scores.json").read_text())
    values = np.array(data["params"]["values"])
    open_widgets(phone, "/cross-attention-one-page/")
    widget = phone.locator("#widget-one-scores")
    inputs = widget.locator("input[type=number]")
    assert [float(inputs.nth(k).input_value()) for k in range(3)] == list(SCORE_INPUTS[0])  # teaching inputs
    for scores in SCORE_INPUTS:
        for k, score in enumerate(scores):
            inputs.nth(k).focus()
            phone.keyboard.press("Control+A")
            phone.keyboard.type(str(score))
        check_scores(widget, scores, values, data["decimals"])
        status = widget.locator("[role=status]").inner_text()
        assert "NaN" not in status and "∞" not in status
    # the arrow key steps a score by the page's step
    inputs.nth(0).focus()
    phone.keyboard.press("ArrowUp")
    check_scores(widget, (40 + data["step"], -40, 0), values, data["decimals"])
    # an empty box is reported, not computed
    inputs.nth(1).focus()
    phone.keyboard.press("Control+A")
    phone.keyboard.press("Backspace")
    assert inputs.nth(1).get_attribute("aria-invalid") == "true"
    assert "Type a number" in widget.locator("[role=status]").inner_text()
    assert "–" in widget.locator("td[data-column='weight']").first.inner_text()
    # back to the teaching inputs, by keyboard
    widget.locator("button").focus()
    phone.keyboard.press("Enter")
    check_scores(widget, SCORE_INPUTS[0], values, data["decimals"])
    page_fits(phone)
    assert no_serious_violations(phone) == []


def test_the_guides_softmax_follows_the_engine_as_the_reader_types(phone, built_site: Path):
    """The example widget of "How this book is built" is a real one: typed into, it keeps to the engine."""
    data = json.loads((built_site / "data" / "softmax-scores.json").read_text())
    open_widgets(phone, "/how-this-book-is-built/")
    widget = phone.locator("#widget-softmax-scores")
    inputs = widget.locator("input[type=number]")
    assert [float(inputs.nth(k).input_value()) for k in range(3)] == data["inputs"]
    for scores in [tuple(data["inputs"]), *SCORE_INPUTS]:
        for k, score in enumerate(scores):
            inputs.nth(k).focus()
            phone.keyboard.press("Control+A")
            phone.keyboard.type(str(score))
        x = np.asarray(scores, dtype=float)
        weights = softmax(x)  # the engine
        shown = compare_compute(widget, "guide's softmax", scores,
                                {"exp(score − max)": np.exp(x - x.max()), "weight": weights}, data["decimals"])
        assert abs(sum(v for _, v in shown["weight"]) - 1.0) <= 1e-12
    page_fits(phone)


# --- Part 2: the sentence switch, the score notes --------------------------------------------


@pytest.fixture(scope="module")
def sentences():
    params = onehead.load_params()
    return {"river": onehead.forward(params, onehead.encode(onehead.RIVER_SENTENCE)),
            "cheque": onehead.forward(params, onehead.encode(onehead.CHEQUE_SENTENCE))}


def data_table(page, figure_id: str):
    """The table of the data behind a figure, its fold opened as a reader opens it (until
    then numbook-lean keeps the table out of the page, and a switch changes it there)."""
    details = page.locator(f"#{figure_id} + details.numbook-code + details.numbook-data")
    if not details.evaluate("d => d.open"):
        details.locator("summary").press("Enter")  # by keyboard: the pointer stays off the widgets
    return details.locator("table")


def table_cells(table) -> list[list[str]]:
    return table.evaluate("t => [...t.tBodies[0].rows].map(r => [...r.cells].map(c => c.textContent))")


def check_part2(page, key: str, out: dict, files: dict, site: Path) -> None:
    n = len(out["tokens"])
    scores_table = page.locator("#widget-p2-sentence-scores table")
    rows = table_cells(scores_table)
    assert len(rows) == n
    for i, row in enumerate(rows):
        assert row[0] == f"{i + 1} {out['tokens'][i]}"
        for j, text in enumerate(row[1:]):
            if out["mask"][i, j]:
                shown_matches("Part 2 score grid", text, out["scores"][i, j], 3)
            else:
                assert text == "", f"masked cell {i + 1},{j + 1} shows {text!r}"
    b = out["tokens"].index("bank")
    update = table_cells(page.locator("#widget-p2-sentence-update table"))
    a, V = out["weights"][b, : b + 1], out["V"][: b + 1]
    for j in range(b + 1):
        want = [a[j], *V[j], *(a[j] * V[j])]
        for text, w in zip(update[j][1:], want, strict=True):
            shown_matches("Part 2 bank update", text, w, 3)
    total, *blank, h1, h2 = update[b + 1][1:]
    shown_matches("Part 2 bank update: weight sum", total, a.sum(), 3)
    assert blank == ["", ""]
    for text, w in zip((h1, h2), out["message"][b], strict=True):
        shown_matches("Part 2 bank update", text, w, 3)
    # the heatmap: image, alt text, caption and the data behind it follow the choice
    figure = page.locator("#fig-p2-attn")
    for img, scheme in zip(figure.locator("img").all(), ("light", "dark"), strict=True):
        assert img.get_attribute("src").endswith(f"/{files[key][scheme]}#only-{scheme}")
        assert f"for the {key} sentence" in img.get_attribute("alt")
        # the box follows the variant's own image: its size, and the width it scrolls below
        svg = (site / "figures" / files[key][scheme]).read_text()
        width_pt = float(re.search(r'<svg[^>]*\swidth="([0-9.]+)pt"', svg).group(1))
        assert int(img.get_attribute("width")) == round(width_pt * 4 / 3)
        assert img.evaluate("i => i.style.minWidth") == f"{files[key]['min_width']}px"
    j = out["tokens"].index(key)
    alt = figure.locator("img").first.get_attribute("alt")
    shown_matches("Part 2 heatmap alt text", alt.rsplit("gives it ", 1)[1].rstrip("."), out["weights"][b, j], 2)
    shown_matches("Part 2 heatmap alt text", re.search(r"Row 1 gives weight (\S+) to itself", alt).group(1),
                  out["weights"][0, 0], 2)
    data_rows = table_cells(data_table(page, "fig-p2-attn"))
    for i, row in enumerate(data_rows):
        for jj, text in enumerate(row[1:]):
            if out["mask"][i, jj]:
                shown_matches("Part 2 heatmap data", text, out["weights"][i, jj], 3)
    bars = page.locator("#fig-p2-next-token img").first.get_attribute("alt")
    top = int(np.argmax(out["probs"][0]))
    assert f"after the {key} sentence" in bars and f"belongs to {onehead.VOCAB[top]}" in bars
    shown_matches("Part 2 prediction alt text", NUMBER.search(bars.split("probability ", 1)[1]).group(),
                  out["probs"][0, top], 3)
    shown_matches("Part 2 prediction alt text", NUMBER.search(bars.split("logit ", 1)[1]).group(),
                  out["logits"][0, top], 2)
    order = np.argsort(-out["probs"][0])
    runners_up = ", ".join(onehead.VOCAB[i] for i in order[1:4])
    assert f"Next come {runners_up}, from " in bars, bars
    high, low = numbers(bars.split("Next come", 1)[1])
    shown_matches("Part 2 prediction alt text", f"{high}", out["probs"][0, order[1]], 3)
    shown_matches("Part 2 prediction alt text", f"{low}", out["probs"][0, order[3]], 3)
    # the data behind the bars: every logit and probability of the vocabulary
    prediction_rows = table_cells(data_table(page, "fig-p2-next-token"))
    assert [r[0] for r in prediction_rows] == list(onehead.VOCAB)
    for row, logit, p in zip(prediction_rows, out["logits"][0], out["probs"][0], strict=True):
        shown_matches("Part 2 prediction data", row[1], logit, 3)
        shown_matches("Part 2 prediction data", row[2], p, 3)


def test_part2_sentence_switch_moves_every_linked_view_and_explains_each_score(phone, sentences, built_site):
    files = json.loads((built_site / "figures" / "fig-p2-attn.variants.json").read_text())
    open_widgets(phone, "/part2-one-head/")
    check_part2(phone, "river", sentences["river"], files, built_site)
    # keyboard: focus the first switch's checked radio, arrow to the next option
    phone.locator("#widget-p2-sentence-scores input[value=river]").focus()
    phone.keyboard.press("ArrowRight")
    phone.wait_for_function("() => document.querySelector('#fig-p2-next-token img').alt.includes('cheque')")
    for name in ("scores", "update", "prediction"):  # the group moved together
        assert phone.locator(f"#widget-p2-sentence-{name} input[value=cheque]").is_checked()
    check_part2(phone, "cheque", sentences["cheque"], files, built_site)
    caption = phone.locator("#fig-p2-next-token .numbook-caption")
    caption.scroll_into_view_if_needed()  # figures are drawn only near the screen (content-visibility)
    expect(caption).to_contain_text("cheque sentence", use_inner_text=True)

    # the score notes: Tab reaches the grid, arrows move, the note gives q · k / √d_k
    out = sentences["cheque"]
    grid = phone.locator("#widget-p2-sentence-scores table")
    grid.locator("td[tabindex='0']").focus()
    b, j = out["tokens"].index("bank"), out["tokens"].index("cheque")
    for _ in range(b):
        phone.keyboard.press("ArrowDown")
    for _ in range(j):
        phone.keyboard.press("ArrowRight")
    note = phone.locator("#widget-p2-sentence-scores [role=status]").inner_text()
    assert note.startswith(f"{b + 1} bank reading {j + 1} cheque")
    check_note(note, out, b, j)
    # pointing at another cell shows its own arithmetic
    grid.locator("tbody tr").nth(9).locator("td").nth(2).hover()
    check_note(phone.locator("#widget-p2-sentence-scores [role=status]").inner_text(), out, 9, 2)
    page_fits(phone)
    assert no_serious_violations(phone) == []


def check_note(note: str, out: dict, i: int, j: int) -> None:
    q, k = out["Q"][i], out["K"][j]
    values = numbers(note.split(":", 1)[1])
    d = len(q)
    want = [x for pair in zip(q, k) for x in pair] + [np.sqrt(d), q @ k, np.sqrt(d), out["scores"][i, j]]
    assert len(values) == len(want), note
    for v, w in zip(values, want):
        diff = abs(v - w)
        WIDGET_DIFFS["Part 2 score notes"] = max(WIDGET_DIFFS.get("Part 2 score notes", 0.0), diff)
        assert diff <= 0.5e-3 + 1e-12, f"{note}: {v} vs the engine's {w}"


# --- Part 4: learning-rate presets ----------------------------------------------------------


def pair_losses(p) -> list[tuple[float, np.ndarray]]:
    return [encdec.loss_and_grads(p, s, t)[:2] for s, t in encdec.PAIRS]


def test_part4_learning_rate_presets_switch_the_figure_and_its_data(phone, built_site: Path):
    params = encdec.load_params()
    _, _, grads, _ = encdec.loss_and_grads(params, *encdec.PAIRS[0])
    before = pair_losses(params)
    data = json.loads((built_site / "data" / "p4-lr.json").read_text())
    files = json.loads((built_site / "figures" / "fig-p4-step-losses.variants.json").read_text())
    open_widgets(phone, "/part4-cross-attention/")
    widget = phone.locator("#widget-p4-lr")
    keys = [k for k, _ in data["options"]]
    assert widget.locator("input:checked").get_attribute("value") == data["default"]
    widget.locator("input:checked").focus()
    for key in [data["default"], *keys]:
        if widget.locator("input:checked").get_attribute("value") != key:
            widget.locator(f"input[value='{key}']").focus()
            phone.keyboard.press("Space")  # select the focused option with the keyboard
        after = pair_losses(sgd_step(params, grads, float(key)))
        expected = []
        for (b_mean, b_per), (a_mean, a_per) in zip(before, after):
            expected += [[b, a, a - b] for b, a in zip(b_per, a_per)] + [[b_mean, a_mean, a_mean - b_mean]]
        phone.wait_for_function(f"() => document.querySelector('#fig-p4-step-losses img').alt.includes('rate {key}')")
        alt = phone.locator("#fig-p4-step-losses img").first.get_attribute("alt")
        means = numbers(alt.split("The river mean", 1)[1])
        for v, w in zip(means, [before[0][0], after[0][0], before[1][0], after[1][0]], strict=True):
            shown_matches("Part 4 learning-rate figure alt text", f"{v:.4f}", w, 4)
        src = phone.locator("#fig-p4-step-losses img").first.get_attribute("src")
        assert src.endswith("/" + files[key]["light"] + "#only-light"), src
        # the data behind the figure: each position's loss and the mean, before and after
        figure_rows = table_cells(data_table(phone, "fig-p4-step-losses"))
        assert len(figure_rows) == len(expected)
        for row, want in zip(figure_rows, expected):
            for text, w in zip(row[2:], want, strict=True):  # before, after, change
                shown_matches("Part 4 learning-rate figure data", text, w, 4)
    page_fits(phone)
    assert no_serious_violations(phone) == []


# --- Part 3: the LayerNorm calculator and the cache-length selector ------------------------

LN_ROWS = [
    (0.5, 0.5, 0.5, 0.5),  # four equal values: var = 0, only eps keeps the denominator finite
    (-2.0, 2.0, 0.0, 0.0),  # the ends of the sliders
    (1.0, 1.0, 1.0, 1.01),  # nearly equal: var comparable to eps
    (2.0, 2.0, 2.0, 2.0),
    (-1.37, 0.42, 0.0, 1.99),
    (0.61, -0.03, 0.99, 0.02),  # the page's row again
]


def set_slider(page, slider, value: float) -> None:
    """Move a range input as a reader's drag would end: set it, then the input event."""
    slider.evaluate("(el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', {bubbles: true})); }",
                    value)


def check_layernorm(widget, row, decimals: int) -> None:
    x = np.asarray(row, dtype=float)[None, :]
    normed, cache = layernorm_forward(x, np.ones(4), np.zeros(4))  # the engine, eps = 1e-5
    expected = {"x − μ": x[0] - cache["mean"][0, 0], "LN(x)": normed[0], "mean μ": [cache["mean"][0, 0]],
                "variance σ²": [cache["var"][0, 0]], "√(σ² + ε)": [1 / cache["inv"][0, 0]]}
    compare_compute(widget, "Part 3 LayerNorm calculator", row, expected, decimals)


def test_part3_layernorm_calculator_follows_the_engine(phone, built_site: Path):
    data = json.loads((built_site / "data" / "p3-layernorm.json").read_text())
    assert data["function"] == "layernorm" and data["control"] == "slider" and data["params"] == {"eps": 1e-5}
    open_widgets(phone, "/part3-decoder/")
    widget = phone.locator("#widget-p3-layernorm")
    sliders = widget.locator("input[type=range]")
    assert sliders.count() == 4
    start = [float(sliders.nth(k).input_value()) for k in range(4)]
    assert start == data["inputs"]
    check_layernorm(widget, start, data["decimals"])  # the page's starting row
    # the keyboard moves one slider by one step, and its written value follows
    sliders.nth(0).focus()
    phone.keyboard.press("ArrowRight")
    moved = [round(start[0] + data["step"], 2), *start[1:]]
    assert float(sliders.nth(0).input_value()) == moved[0]
    assert number(widget.locator(".numbook-slider-value").first.inner_text()) == moved[0]
    check_layernorm(widget, moved, data["decimals"])
    for row in LN_ROWS:
        for k, value in enumerate(row):
            set_slider(phone, sliders.nth(k), value)
        assert [float(sliders.nth(k).input_value()) for k in range(4)] == list(row)
        check_layernorm(widget, row, data["decimals"])
    widget.get_by_role("button").click()  # back to the page's row
    check_layernorm(widget, start, data["decimals"])
    page_fits(phone)
    assert no_serious_violations(phone) == []


def test_part3_cache_length_selector_shows_the_engine_cache(phone, built_site: Path):
    from tinyformer import cost
    from tinyformer.models import decoder_stack, twoblock

    params = twoblock.load_params()
    cfg = decoder_stack.config_from_params(params)
    prompt = twoblock.encode(twoblock.SENTENCE)
    generated = decoder_stack.generate(params, prompt, 3)
    fed = generated["ids"][:-1]  # the tokens the loop fed in: positions 1 to 11
    data = json.loads((built_site / "data" / "p3-cache-length.json").read_text())
    assert [key for key, _ in data["options"]] == [str(n) for n in range(1, len(fed) + 1)] == \
        [str(n) for n in range(1, 12)]
    open_widgets(phone, "/part3-decoder/")
    widget = phone.locator("#widget-p3-cache-length")
    for n in (1, 5, 9, 11):
        widget.locator(f"input[value='{n}']").check()
        counts, rows = (table_cells(widget.locator("table").nth(k)) for k in range(2))
        heads_blocks = cfg.n_layers * cfg.n_heads
        want = [heads_blocks * n * n, heads_blocks * n * (n + 1) // 2, heads_blocks * n,
                cost.kv_cache_numbers(n, cfg)]
        assert [int(r[1]) for r in counts] == want
        _, cache = decoder_stack.prefill(params, fed[:n])
        assert decoder_stack.cache_size(cache)["numbers"] == want[-1]
        engine = np.hstack([np.hstack([cache["K"][l][h], cache["V"][l][h]])
                            for l in range(cfg.n_layers) for h in range(cfg.n_heads)])
        assert len(rows) == n and rows[-1][0].endswith(twoblock.VOCAB[int(fed[n - 1])])
        for i, cells in enumerate(rows):
            for j, text in enumerate(cells[1:]):
                shown_matches("Part 3 cache selector: cached keys and values", text, engine[i, j], 3)
    page_fits(phone)
    assert no_serious_violations(phone) == []


def test_part3_doubling_presets_show_the_engine_counts(phone, built_site: Path):
    """Each preset's table against MACs counted in the engine's own passes at n and at 2n."""
    from tinyformer.ops import count_macs

    toy = onehead.load_params()
    groups = {"projections (Q, K, V, W_O)": ("qkv", "out_proj"), "scores Q Kᵀ": ("scores",),
              "mixing A V": ("mix",), "prediction MLP": ("mlp", "vocab")}

    def counted(n: int) -> dict[str, int]:
        longer = {**toy, "P": np.zeros((n, toy["P"].shape[1]))}  # the toy's shapes, room for n positions
        with count_macs() as counter:
            onehead.forward(longer, np.arange(n) % toy["E_tok"].shape[0], readout="all")
        return dict(counter.by_tag)

    data = json.loads((built_site / "data" / "p3-doubling.json").read_text())
    open_widgets(phone, "/part3-context/")
    widget = phone.locator("#widget-p3-doubling")
    assert widget.locator("input:checked").get_attribute("value") == data["default"]
    widget.locator("input:checked").focus()
    for key, _ in data["options"]:
        if widget.locator("input:checked").get_attribute("value") != key:
            widget.locator(f"input[value='{key}']").focus()
            phone.keyboard.press("Space")
        n = int(key)
        small, big = counted(n), counted(2 * n)
        rows = {r[0]: r[1:] for r in table_cells(widget.locator("table"))}
        want = {g: (sum(small[t] for t in tags), sum(big[t] for t in tags)) for g, tags in groups.items()}
        want["all products"] = (sum(small.values()), sum(big.values()))
        assert set(rows) == set(want)
        for group, (a, b) in want.items():
            assert [int(x.replace(",", "")) for x in rows[group][:2]] == [a, b], (key, group)
            shown_matches("Part 3 doubling presets: factor", rows[group][2], b / a, 2)
    page_fits(phone)
    assert no_serious_violations(phone) == []


# --- every widget page: dark scheme, and no JavaScript ----------------------------------------

WIDGET_PAGES = ["/cross-attention-one-page/", "/part2-one-head/", "/part3-decoder/", "/part3-context/",
                "/part4-cross-attention/", "/how-this-book-is-built/"]


@pytest.mark.parametrize("scheme", ["default", "slate"])
@pytest.mark.parametrize("path", WIDGET_PAGES)
def test_widgets_open_pass_axe_in_both_schemes(browser, served_site, path, scheme):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.base = served_site
    open_widgets(page, path)
    page.evaluate(f"() => document.body.setAttribute('data-md-color-scheme', '{scheme}')")
    switch = page.locator(".numbook-switch input")
    if switch.count():  # open a variant other than the default
        switch.last.focus()
        page.keyboard.press("Space")
    noted = page.locator("[data-note]")
    if noted.count():
        noted.first.focus()
    assert no_serious_violations(page) == []
    context.close()


@pytest.mark.parametrize("path", WIDGET_PAGES)
def test_without_javascript_the_default_numbers_stay(browser, served_site, built_site: Path, path):
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    page = context.new_page()
    page.goto(served_site + path, wait_until="networkidle")
    widgets = page.locator("[data-numbook-widget]")
    assert widgets.count() > 0
    for k in range(widgets.count()):
        widget = widgets.nth(k)
        assert widget.locator("table").count() > 0 or widget.get_attribute("data-numbook-widget") == "switch"
        assert widget.locator("input").count() == 0  # no controls without the script
        assert widget.locator(".numbook-widget-label").count() == 1
    for figure in page.locator("figure[data-numbook-variants] img").all():
        assert figure.get_attribute("src").split("/")[-1].count(".") == 2  # the figure itself, not a variant
    context.close()
