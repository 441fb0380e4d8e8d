"""Tables that fit a phone: the narrow layout numbook makes from a table's own cells."""

from __future__ import annotations

import numpy as np

from numbook.api import table
from numbook import record
from numbook.tables import (CORNER, PHONE_COLUMN_PX, estimated_width, key_columns, narrow_layouts, table_layouts,
                            shown_length)


def test_a_cell_is_as_narrow_as_its_longest_word():
    assert shown_length("shad, shae, shaina") == len("shaina")
    assert shown_length("`x`") == 1 and shown_length(r"\*") == 1
    assert shown_length(r"$\ve{e_i}$") < len(r"\ve{e_i}")  # maths shows shorter than its TeX
    assert shown_length("&lt;bos&gt;") == len("<bos>")  # an escaped token name, as the reader sees it


def test_a_table_that_fits_keeps_one_layout():
    head, rows = ["", "a", "b"], [["x", "0.1", "0.2"], ["y", "0.3", "0.4"]]
    assert estimated_width(head, rows) < PHONE_COLUMN_PX
    assert narrow_layouts(head, rows, [False, True, True]) is None


def test_a_tall_narrow_table_turns_on_its_side():
    head = ["", *(f"coordinate{k}" for k in range(6))]  # long headers, two rows
    rows = [["x", *["0.1"] * 6], ["y", *["0.2"] * 6]]
    (layout,) = narrow_layouts(head, rows, [False] + [True] * 6)
    side_head, side_rows, _ = layout
    assert side_head == ["", "x", "y"] and [r[0] for r in side_rows] == head[1:]
    assert estimated_width(side_head, side_rows) <= PHONE_COLUMN_PX


def test_a_wide_table_splits_into_stacked_tables_that_repeat_the_row_labels():
    labels = [f"token{k}" for k in range(9)]
    head = ["", "name", "action", "thing", "function", "boundary", "pronoun"]
    rows = [[label, *["−1.0"] * 6] for label in labels]
    layouts = narrow_layouts(head, rows, [False] + [True] * 6)
    assert 2 <= len(layouts) <= 3
    assert sum(len(h) - 1 for h, _, _ in layouts) == 6  # every column, once
    for h, r, _ in layouts:
        assert [row[0] for row in r] == labels and estimated_width(h, r) <= PHONE_COLUMN_PX


def test_a_split_table_repeats_every_column_that_tells_its_rows_apart():
    """Two rows labelled "decoder" are told apart by the next column: each stacked table
    repeats both, so "decoder, masked" and "decoder, cross" stay apart in every part."""
    head = ["where", "kind", "what a row may read", "weights in the model"]
    rows = [["encoder", "self-attention", "every non-padding source token", "4 × 4"],
            ["decoder", "masked self-attention", "earlier target tokens and itself", "3 × 3"],
            ["decoder", "cross-attention", "every non-padding encoded source row", "3 × 4"]]
    assert key_columns(rows) == 2 and key_columns([r[1:] for r in rows]) == 1
    layouts = narrow_layouts(head, rows, [False] * 4)
    assert layouts is not None and len(layouts) == 2
    for h, r, _ in layouts:
        assert h[:2] == ["where", "kind"] and [row[:2] for row in r] == [row[:2] for row in rows]
        assert len({tuple(row[:2]) for row in r}) == len(rows)
    assert [h[2] for h, _, _ in layouts] == head[2:]  # every other column, once


def test_a_matrix_too_wide_either_way_scrolls():
    head = ["", *map(str, range(1, 31))]  # more than three phone-wide groups of columns
    rows = [[str(i), *["0.123"] * 30] for i in range(1, 31)]
    assert narrow_layouts(head, rows, [False] + [True] * 30) is None


def test_the_api_records_the_narrow_layout_beside_the_table():
    record.current = record.Recorder()
    try:
        table(np.full((3, 6), -1.0), header=["name", "action", "thing", "function", "boundary", "pronoun"],
              index=["Priya", "opened", "notebook"], decimals=1)
        (item,) = record.current.items
    finally:
        record.current = None
    assert item["narrow"] == table_layouts(np.full((3, 6), -1.0),
                                           header=["name", "action", "thing", "function", "boundary", "pronoun"],
                                           index=["Priya", "opened", "notebook"], decimals=1)[1]
    # three rows of six long-named columns: on its side, the names become the row labels
    assert item["narrow"].startswith(f"| {CORNER} | Priya | opened | notebook |") and "| pronoun |" in item["narrow"]
    # the header cell above the row labels is never empty: screen readers name a column by it
    assert item["markdown"].startswith(f"| {CORNER} | name | action |")
