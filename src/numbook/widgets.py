"""Widgets: the data a page's blocks hand to the site's widget script, and what shows without it.

A widget is declared where it should appear, by a block calling `switch(...)` or
`compute(...)` (both in `numbook.api`). Each writes ``data/<name>.json`` beside the page
and puts a ``<div class="numbook-widget" data-numbook-widget="KIND" data-src="URL">`` in
the page, holding the widget's default state as plain HTML: a reader without JavaScript
sees the default numbers, computed at build time like every other number.

The script (``docs/javascripts/widgets.js`` in this book) finds those divs, reads their
JSON and replaces the default by controls. Two kinds:

* **switch**: options whose every variant was computed at build time (two sentences,
  five learning rates). It swaps the numbers of its own tables, and the images, alt
  texts, captions and data of the figures it names (made with `numbook.api.variant`).
  Switches sharing a ``group`` on one page move together.
* **compute**: a small function of a few inputs that the browser evaluates as the reader
  types (softmax of three scores). The JSON carries the engine's outputs for the default
  inputs, so the script checks itself against the engine every time the page loads.

This module knows nothing about what the numbers mean.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from . import record
from .data import export_json
from .format import plain_value
from .tables import CORNER, indexed_rows

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _check_name(what: str, name: str) -> None:
    if not NAME.match(str(name)):
        raise ValueError(f"{what} {name!r}: use letters, digits, '-', '_' and '.'")


def declare(name: str, kind: str, fallback: str, values: Mapping[str, Any]) -> str:
    """Write ``data/<name>.json`` (``values`` plus ``"widget": kind``) and mark the widget's place.

    ``fallback`` is HTML (the caller escapes it): what the page shows without the script.
    Returns the JSON text. Shares its names with `numbook.api.export`.
    """
    _check_name("widget name", name)
    text = export_json({**values, "widget": kind})
    rec = record.current
    if rec is not None:
        if name in rec.exports:
            raise ValueError(f"widget or export {name!r} written twice on this page")
        rec.exports.add(name)
        rec.items.append({"type": "widget", "name": name, "json": text, "kind": kind, "fallback": fallback})
    return text


def table_spec(
    data: Any,
    header: Sequence[Any] | None = None,
    index: Sequence[Any] | None = None,
    decimals: int | None = None,
    notes: Sequence[Sequence[str | None]] | None = None,
    named: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """A table for a widget: like `numbook.api.table` (same inputs, same number rule), as data.

    ``notes`` (one per body cell, index column excluded, None for none) are shown when the
    reader focuses or hovers the cell: the arithmetic behind a number, say. ``named`` is the
    ``(row, column)`` of the cell the prose talks about (0-based, body rows, columns counted
    with the row labels): it is marked, and a table wider than a phone scrolls to it on load
    while its row labels stay in view.
    """
    head, rows, numeric = indexed_rows(data, header, index)
    width = len(numeric)
    spec: dict[str, Any] = {
        "header": [str(h) if h is not None else "" for h in (head or [""] * width)],
        "rows": [["" if x is None else plain_value(x, decimals) for x in r] for r in rows],  # plain text
        "align": ["right" if num else "left" for num in numeric],
        "index": index is not None,
    }
    if notes is not None:
        body = [r[1:] if index is not None else r for r in rows]
        if len(notes) != len(body) or any(len(n) != len(b) for n, b in zip(notes, body)):
            raise ValueError("notes must have one entry per body cell (index column excluded)")
        spec["notes"] = [[None if n is None else str(n) for n in row] for row in notes]
    if named is not None:
        row, column = (int(k) for k in named)
        if not (0 <= row < len(rows) and 0 <= column < width):
            raise ValueError(f"named cell {named} is outside the table ({len(rows)} rows, {width} columns)")
        spec["named"] = [row, column]
    return spec


def table_html(spec: Mapping[str, Any]) -> str:
    """A widget table as HTML, aligned like the Markdown tables of the rest of the page."""

    def cell(tag: str, text: str, align: str) -> str:
        style = ' style="text-align: right;"' if align == "right" else ""
        return f"<{tag}{style}>{text}</{tag}>"

    # the header over the row labels is never empty: a screen reader names a column by it
    head = "".join(cell("th", html.escape(h) if h else CORNER, a) for h, a in zip(spec["header"], spec["align"]))
    named = tuple(spec.get("named") or (-1, -1))

    def body_cell(i: int, j: int, text: str, align: str) -> str:
        shown = cell("td", html.escape(text), align)
        return shown.replace("<td", '<td class="numbook-named"', 1) if (i, j) == named else shown

    body = "\n".join(
        "<tr>" + "".join(body_cell(i, j, c, a) for j, (c, a) in enumerate(zip(r, spec["align"]))) + "</tr>"
        for i, r in enumerate(spec["rows"])
    )
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def switch(
    name: str,
    *,
    label: str,
    options: Mapping[str, str],
    default: str | None = None,
    group: str | None = None,
    figures: Sequence[str] = (),
    tables: Sequence[Mapping[str, Mapping[str, Any]]] = (),
) -> str:
    """A choice between variants that were all computed at build time.

    ``options`` maps each key to the words on its button; ``tables`` is a list of
    ``{key: table_spec(...)}``, one table per entry, shown in the widget; ``figures`` names
    figures of the page (made with `numbook.api.variant` for every key) that follow the
    choice. Switches with the same ``group`` on a page stay in step.
    """
    keys = list(options)
    if not keys:
        raise ValueError(f"switch {name!r} has no options")
    for key in keys:
        _check_name("switch option", key)
    default = keys[0] if default is None else default
    if default not in options:
        raise ValueError(f"switch {name!r}: default {default!r} is not one of {keys}")
    for k, t in enumerate(tables):
        if set(t) != set(keys):
            raise ValueError(f"switch {name!r}: table {k + 1} has variants {sorted(t)}, the options are {keys}")
    for fig_id in figures:
        _check_name("figure id", fig_id)
    shown = html.escape(f"{label}: {options[default]}")
    fallback = "\n".join([f'<p class="numbook-widget-label">{shown}</p>',
                          *(table_html(t[default]) for t in tables)])
    values = {"label": label, "options": [[k, options[k]] for k in keys], "default": default,
              "group": group or name, "figures": list(figures),
              "tables": [{k: t[k] for k in keys} for t in tables]}
    return declare(name, "switch", fallback, values)


def compute(
    name: str,
    *,
    function: str,
    label: str,
    inputs: Mapping[str, float],
    input_label: str,
    outputs: Mapping[str, Sequence[float]],
    scalars: Mapping[str, float] | None = None,
    params: Mapping[str, Any] | None = None,
    decimals: int = 3,
    bar: str | None = None,
    bar_color: str | None = None,
    step: float = 0.1,
    control: str = "number",
    minimum: float | None = None,
    maximum: float | None = None,
) -> str:
    """Inputs the reader edits and outputs the browser computes with the site's ``function``.

    ``inputs`` maps a row name to its default value; ``outputs`` (one value per input) and
    ``scalars`` are the engine's results for those defaults, shown without JavaScript and
    used by the script to check its own formula against the engine on every page load.
    ``bar`` names an output column (values in [0, 1]) also drawn as bars, in ``bar_color``;
    ``params`` are fixed data the function needs (the value rows a softmax mixes, say).
    ``control`` is "number" (a box to type in) or "slider" (from ``minimum`` to ``maximum``
    in steps of ``step``; every default must lie on that grid, so the page's numbers are
    the slider's starting position).
    """
    names = list(inputs)
    scalars = dict(scalars or {})
    if control not in ("number", "slider"):
        raise ValueError(f"compute {name!r}: control must be 'number' or 'slider', not {control!r}")
    if control == "slider":
        if minimum is None or maximum is None or not minimum < maximum or step <= 0:
            raise ValueError(f"compute {name!r}: a slider needs minimum < maximum and a positive step")
        for row, value in inputs.items():
            on_grid = abs((value - minimum) / step - round((value - minimum) / step)) < 1e-9
            if not (minimum <= value <= maximum and on_grid):
                raise ValueError(f"compute {name!r}: default {value!r} of {row!r} is not a slider position "
                                 f"({minimum} to {maximum} in steps of {step})")
    for col, values in outputs.items():
        if len(values) != len(names):
            raise ValueError(f"compute {name!r}: output {col!r} has {len(values)} values for {len(names)} inputs")
    if bar is not None and bar not in outputs:
        raise ValueError(f"compute {name!r}: bar column {bar!r} is not an output")
    columns = list(outputs)
    rows = [[n, float(inputs[n]), *(float(outputs[c][i]) for c in columns)] for i, n in enumerate(names)]
    main = table_spec(rows, header=["", input_label, *columns], decimals=decimals)
    parts = [f'<p class="numbook-widget-label">{html.escape(label)}</p>', table_html(main)]
    if scalars:
        parts.append(table_html(table_spec([[k, float(v)] for k, v in scalars.items()], header=["", "value"],
                                           decimals=decimals)))
    values = {
        "function": function, "label": label, "names": names, "inputs": [float(inputs[n]) for n in names],
        "input_label": input_label, "columns": columns, "scalars": list(scalars),
        "expected": {"columns": {c: [float(x) for x in outputs[c]] for c in columns},
                     "scalars": {k: float(v) for k, v in scalars.items()}},
        "params": dict(params or {}), "decimals": int(decimals), "bar": bar, "bar_color": bar_color,
        "step": float(step), "control": control,
        "min": None if minimum is None else float(minimum), "max": None if maximum is None else float(maximum),
    }
    return declare(name, "compute", "\n".join(parts), values)
