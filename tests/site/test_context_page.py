"""Part 3's page on context, cost and limits, read back from the built site.

Its cost tables must show what the engine's instrumented matrix products count for the same
passes (measured here with `count_macs`, not taken from `tinyformer.cost`), its doubling presets
likewise, and every answer of its eight questions must link the section or figure it rests on.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

from tinyformer import nn
from tinyformer.models import baselines, onehead
from tinyformer.ops import count_macs

PAGE = "part3-context"
WIDTHS = dict(d=4, d_k=3, d_v=2, h=8, C=20)  # Part 2's toy, read off its parameters below


class CaptionedTables(HTMLParser):
    """Every table of a page with the caption paragraph before it, as rows of cell texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, list[list[str]]] = {}
        self._last_em, self._text, self._caption = "", None, None
        self._rows: list[list[str]] | None = None
        self._in_em = False

    def handle_starttag(self, tag, attrs):
        if tag == "em":
            self._in_em, self._last_em = True, ""
        elif tag == "p":
            self._last_em = ""
        elif tag == "table":
            self._rows, self._caption = [], self._last_em
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in ("td", "th") and self._rows is not None:
            self._text = ""

    def handle_endtag(self, tag):
        if tag == "em":
            self._in_em = False
        elif tag in ("td", "th") and self._rows is not None and self._text is not None:
            self._rows[-1].append(self._text.strip())
            self._text = None
        elif tag == "table" and self._rows is not None:
            if self._caption:  # the first: a phone's narrow layout of the same table follows it
                self.tables.setdefault(self._caption, self._rows)
            self._rows, self._last_em = None, ""

    def handle_data(self, data):
        if self._in_em:
            self._last_em += data
        if self._text is not None:
            self._text += data


@pytest.fixture(scope="module")
def tables(built_site: Path) -> dict[str, dict[str, list[str]]]:
    parser = CaptionedTables()
    parser.feed((built_site / PAGE / "index.html").read_text(encoding="utf-8"))
    return {caption: {row[0]: row[1:] for row in rows[1:]} for caption, rows in parser.tables.items()}


def counted(run) -> dict[str, int]:
    with count_macs() as counter:
        run()
    return dict(counter.by_tag)


def stand_in(context: int) -> dict[str, np.ndarray]:
    """Parameters of the toy's shapes with a longer position table (counts depend on shapes only)."""
    toy = onehead.load_params()
    rng = np.random.default_rng(1)
    return {**toy, "P": rng.normal(size=(context, toy["P"].shape[1]))}


def as_int(text: str) -> int:
    return int(text.replace(",", "").replace("\u2009", ""))


#: The page's readable name of each product (the engine's tag is never shown to the reader).
READABLE = {"queries, keys, values": "qkv", "scores": "scores", "mixing": "mix", "update": "out_proj",
            "MLP hidden layer": "mlp", "MLP vocabulary layer": "vocab"}


def test_the_toy_has_the_widths_the_page_names():
    toy = onehead.load_params()
    assert (toy["W_Q"].shape[0], toy["W_Q"].shape[1], toy["W_V"].shape[1], toy["W1"].shape[1],
            toy["W2"].shape[1]) == tuple(WIDTHS.values())


def test_per_product_table_equals_the_instrumented_forward_pass(tables):
    table = tables["The toy on every row: MACs per product"]
    tag_of = READABLE
    assert set(table) == set(tag_of)
    toy = onehead.load_params()
    for column, n in ((0, 10), (1, 20)):
        macs = counted(lambda: onehead.forward(toy, np.arange(n) % WIDTHS["C"], readout="all"))
        assert set(macs) == set(tag_of.values())
        for label, tag in tag_of.items():
            assert as_int(table[label][column]) == macs[tag], (label, n)


def test_all_predictions_table_equals_the_instrumented_predictors(tables):
    table = tables["All n predictions of one sequence: MACs"]
    toy = onehead.load_params()
    for column, n in ((0, 10), (1, 20)):
        ids = np.arange(n) % WIDTHS["C"]
        window = {**toy, "W1": np.zeros((3 * WIDTHS["d"], WIDTHS["h"]))}
        whole = {**toy, "W1": np.zeros((n * WIDTHS["d"], WIDTHS["h"]))}
        expected = {
            "concatenation, w = 3": counted(lambda: baselines.window_concat_forward(window, ids, 3, 0)),
            "concatenation, w = n": counted(lambda: baselines.window_concat_forward(whole, ids, n, 0)),
            "running average": counted(lambda: baselines.prefix_mean_forward(toy, ids)),
            "attention": counted(lambda: onehead.forward(toy, ids, readout="all")),
        }
        for label, macs in expected.items():
            assert as_int(table[label][column]) == sum(macs.values()), (label, n)


def test_final_row_and_cached_step_tables_equal_the_instrumented_passes(tables):
    toy = onehead.load_params()
    ids = onehead.encode(onehead.RIVER_SENTENCE)
    table = tables["After a 10-token prompt: MACs per product"]
    full = counted(lambda: onehead.forward(toy, ids, readout="last"))
    prefill = counted(lambda: onehead.prefill(toy, ids))
    assert set(table) == {*READABLE, "all products"} and set(READABLE.values()) == set(full) == set(prefill)
    for label, tag in READABLE.items():
        assert [as_int(x) for x in table[label]] == [full[tag], prefill[tag]], label
    assert [as_int(x) for x in table["all products"]] == [sum(full.values()), sum(prefill.values())]
    _, cache = onehead.prefill(toy, ids)
    step = counted(lambda: onehead.step(toy, cache, onehead.TOKEN_ID["water"]))
    window_params = {**toy, "W1": np.zeros((3 * WIDTHS["d"], WIDTHS["h"]))}
    one_window = counted(lambda: baselines.window_concat_forward(window_params, ids[-1:], 3, 0))
    one_mean = counted(lambda: baselines.prefix_mean_forward(toy, ids[-1:]))
    per_new = tables["Work per new prediction"]
    row = {method: next(cells for label, cells in per_new.items() if label.startswith(method))
           for method in ("concatenation", "running average", "attention")}
    assert [as_int(row[k][-1]) for k in ("concatenation", "running average", "attention")] == \
        [sum(one_window.values()), sum(one_mean.values()), sum(step.values())]


def test_sequence_model_table_equals_the_instrumented_layers(tables):
    table = tables["One layer of each design, n = 10, d = 4"]  # every layer: rows of 4 in and out
    n, d, rng = 10, 4, np.random.default_rng(3)
    X = rng.normal(size=(n, d))
    expected = {
        "fixed window": counted(lambda: baselines.causal_conv_forward({"W": np.ones((3 * d, d)), "b": 0}, X)),
        "recurrent": counted(lambda: baselines.rnn_layer_forward(
            {"W_x": np.eye(d), "W_h": np.eye(d), "b": 0}, X)),
        "convolution": counted(lambda: baselines.causal_conv_forward({"W": np.ones((3 * d, d)), "b": 0}, X)),
        "attention": counted(lambda: nn.attention_forward(X, X, *np.ones((4, d, d)), nn.causal_mask(n))),
    }
    for label, macs in expected.items():
        assert as_int(table[label][3]) == sum(macs.values()), label
    assert [table[k][1] for k in expected] == ["never", "9", "5", "1"]


def test_doubling_presets_equal_the_instrumented_counts(built_site: Path):
    data = json.loads((built_site / "data" / "p3-doubling.json").read_text())
    assert data["widget"] == "switch" and data["default"] == "10"
    group_tags = {"projections (Q, K, V, W_O)": ("qkv", "out_proj"), "scores Q Kᵀ": ("scores",),
                  "mixing A V": ("mix",), "prediction MLP": ("mlp", "vocab")}
    for key, _ in data["options"]:
        n = int(key)
        at = {m: counted(lambda: onehead.forward(stand_in(m), np.arange(m) % WIDTHS["C"], "all")) for m in (n, 2 * n)}
        rows = {row[0]: row[1:] for row in data["tables"][0][key]["rows"]}
        for group, tags in group_tags.items():
            small, big = (sum(at[m][t] for t in tags) for m in (n, 2 * n))
            assert [as_int(rows[group][0]), as_int(rows[group][1])] == [small, big], (group, n)
            assert float(rows[group][2]) == pytest.approx(big / small, abs=0.005)
        totals = [sum(at[m].values()) for m in (n, 2 * n)]
        assert [as_int(x) for x in rows["all products"][:2]] == totals


class NarrowLayouts(HTMLParser):
    """How many tables each phone layout (`numbook-table__narrow`) of a page holds."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.layouts: list[int] = []
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        if tag != "div" and not (tag == "table" and self._depth):
            return
        if tag == "table":
            self.layouts[-1] += 1
        elif self._depth:
            self._depth += 1
        elif "numbook-table__narrow" in (dict(attrs).get("class") or "").split():
            self.layouts.append(0)
            self._depth = 1

    def handle_endtag(self, tag):
        if tag == "div" and self._depth:
            self._depth -= 1


def test_narrow_layouts_are_counted():
    parser = NarrowLayouts()
    parser.feed('<div class="numbook-table__narrow"><div><table></table></div><table></table></div>'
                '<table></table><div class="numbook-table__narrow"><table></table></div>')
    assert parser.layouts == [2, 1]


def test_no_table_is_split_into_pieces_on_a_phone(built_site: Path):
    """A table the page compares columns in keeps them together at 390 px: a table too wide for a
    phone may be shown turned on its side (one table), never cut into stacked pieces."""
    parser = NarrowLayouts()
    parser.feed((built_site / PAGE / "index.html").read_text(encoding="utf-8"))
    assert all(count == 1 for count in parser.layouts), parser.layouts


class QuestionLinks(HTMLParser):
    """The links inside each <details class="question"> of the questions section."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.in_section = False
        self.depth = 0
        self.answers: list[list[str]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "h2":
            self.in_section = a.get("id") == "p3-questions"
        if not self.in_section:
            return
        if tag == "details":
            if self.depth:  # a panel inside an answer (a check) is part of the answer
                self.depth += 1
            elif "question" in (a.get("class") or "").split():
                self.answers.append([])
                self.depth = 1
        elif tag == "a" and self.depth and a.get("href"):
            self.answers[-1].append(a["href"])

    def handle_endtag(self, tag):
        if tag == "details" and self.depth:
            self.depth -= 1


def ids_of(page: Path) -> set[str]:
    parser = QuestionLinks()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.ids


def test_every_answer_links_a_section_or_figure_that_exists(built_site: Path):
    page = built_site / PAGE / "index.html"
    parser = QuestionLinks()
    parser.feed(page.read_text(encoding="utf-8"))
    assert len(parser.answers) == 8
    for k, links in enumerate(parser.answers, 1):
        anchored = [href for href in links if "#" in href and not href.startswith("http")]
        assert anchored, f"answer {k} links no section or figure"
        for href in anchored:
            url = urlsplit(href)
            target = page if not url.path else (page.parent / url.path / "index.html").resolve()
            assert target.exists(), (k, href)
            assert url.fragment.startswith(("p3-", "fig-p3-")), (k, href)
            assert url.fragment in ids_of(target), (k, href)
