"""How long a page takes to read: what its main line shows, and what its folds hold.

A page's *main line* is what a reader meets with every fold closed; its *folds* (asides,
worked answers, the folds an author writes) are what they may open. For each, the page's
Markdown gives a `Tally` of what a reader reads there:

* **words** of prose: headings, paragraphs, lists, captions, the labels of tables written in
  Markdown, the summary line of each fold; not front matter, code, maths or HTML tags. An
  inline value (`` `{py} …` ``) is one word. A word is a run of letters or digits with at least
  one letter, as in the browser measurement of ``tests/site/reading.py``;
* **figures**: blocks with ``figure=`` and Markdown images;
* **tables**: tables written in Markdown, each ``table(…)`` call of a block, a block's
  ``markdown(…)`` that writes a table, and each widget a block declares (``switch``,
  ``compute``: a table or a figure with controls);
* **equations**: display formulas, ``$$ … $$``;
* **code lines**: the non-blank lines of code a reader sees: a teaching block (one that
  makes nothing to show, not ``hide``, not a check; or ``kind="teach"``), and a plain fenced
  block. Presentation and setup code is folded, so it is not counted; only the first tab of a
  group of tabs (``=== "…"``) is in view.

What a block makes is read from its code, not from running it: a call written on the page.
`Pace` turns a tally into minutes: words at a reading speed, and a stated allowance for each
figure, table, equation and code line. `Timing` is a reader's timed pass over pages whose tally is
known; `misses` says how far a pace's count falls from each timing, and `best_pace` is the pace
that comes nearest them all, for judging stated round allowances against.

Why from the Markdown: a page's reading time is shown on another page (the book's home), at
build time, before any page is rendered.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import astuple, dataclass, fields
from pathlib import Path

import numpy as np

from .parse import OptionError, parse_info
from .stored import memo_by_digest

_FRONT_MATTER = re.compile(r"\A---\n.*?\n(?:---|\.\.\.)\n", re.S)
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<code>.*?)^(?P=indent)(?P=fence)[ \t]*$", re.S | re.M
)
_DISPLAY_MATHS = re.compile(r"\$\$.*?\$\$", re.S)
_INLINE_MATHS = re.compile(r"(?<![\\$])\$[^$\n]+?\$")
_INLINE_VALUE = re.compile(r"`\{py\}[^`]*`")
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_TAG = re.compile(r"<[^>\n]+>")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)+\|?[ \t]*$", re.M)
_WORD = re.compile(r"[\w'’-]*[^\W\d_][\w'’-]*")
_DETAILS_TAG = re.compile(r"<(/?)details\b[^>]*>")
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.S)
_EXEC = re.compile(r"\s*python[ \t]+exec(?:[ \t]|$)")
_TAB = re.compile(r"^(?P<indent>[ \t]*)===(?P<mark>[+!]?)[ \t]+(?P<title>.*)$")

# What a block makes, as calls in its code (numbook.api and numbook.widgets).
_TABLE_CALL = re.compile(r"(?<![\w.])table\(")
_WIDGET_CALL = re.compile(r"(?<![\w.])(?:switch|compute)\(")
_MARKDOWN_CALL = re.compile(r"(?<![\w.])markdown\(")
_MARKDOWN_TABLE = re.compile(r"\|[ \t]*:?-+:?[ \t]*\|")

# A fence is replaced by marks a word count cannot see (private-use characters), one per thing
# it shows, so that the marks fall into the main line or a fold with the text around them.
_FIGURE, _TABLE, _CODE_LINE = "\ue000", "\ue001", "\ue002"


@dataclass(frozen=True)
class Tally:
    """What a reader reads in one stretch of a page."""

    words: int = 0
    figures: int = 0
    tables: int = 0
    equations: int = 0
    code_lines: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


@dataclass(frozen=True)
class Pace:
    """How long each thing takes a reader: words at a speed, an allowance for each of the rest."""

    words_per_minute: float
    minutes_per_figure: float = 0.0
    minutes_per_table: float = 0.0
    minutes_per_equation: float = 0.0
    minutes_per_code_line: float = 0.0

    def minutes(self, tally: Tally) -> float:
        return (tally.words / self.words_per_minute + tally.figures * self.minutes_per_figure
                + tally.tables * self.minutes_per_table + tally.equations * self.minutes_per_equation
                + tally.code_lines * self.minutes_per_code_line)


@dataclass(frozen=True)
class ReadingLength:
    main: Tally  # with every fold closed
    folded: Tally  # inside folds (asides, worked answers), summaries excluded

    def minutes(self, pace: Pace, *, with_folds: bool = False) -> float:
        return pace.minutes(self.main + self.folded if with_folds else self.main)


def _code_lines(code: str) -> int:
    return sum(1 for line in code.splitlines() if line.strip())


def _shown_by(fence: re.Match[str]) -> str:
    """What a fenced block puts in view: its caption as text, and a mark per thing it shows."""
    code, info = fence.group("code"), fence.group("info")
    if not _EXEC.match(info):  # plain code: all of it in view
        return _CODE_LINE * _code_lines(code)
    try:
        options = parse_info(info)
    except OptionError:  # the build refuses such a page: there is nothing to read
        return ""
    if options is None or options.check is not None or options.kind == "setup":
        return ""
    made = _TABLE * (len(_TABLE_CALL.findall(code)) + len(_WIDGET_CALL.findall(code)))
    if _MARKDOWN_CALL.search(code) and _MARKDOWN_TABLE.search(code):
        made += _TABLE
    caption = ""
    if options.figure:
        made += _FIGURE
        caption = options.caption or ""
    teaching = options.kind == "teach" or (options.kind is None and not options.hide and not made)
    return f"\n{caption}\n{made}" + (_CODE_LINE * _code_lines(code) if teaching else "") + "\n"


def _replace_fences(markdown: str) -> str:
    def shown(fence: re.Match[str]) -> str:
        indent = fence.group("indent")
        return "\n".join(indent + line for line in _shown_by(fence).split("\n"))

    return _FENCE.sub(shown, markdown)


def _tab_body(lines: list[str], title: int, indent: str) -> tuple[list[str], int]:
    """The body of the tab titled on line `title` (its indented lines), and where it ends."""
    start = end = title + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(indent + "    ")):
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1  # trailing blank lines belong to what follows
    return lines[start:end], end


def _selected_tabs_only(markdown: str) -> str:
    """Drop the body of every tab a reader does not see: all but the selected one of a group."""
    lines = markdown.split("\n")
    kept: list[str] = []
    i = 0
    while i < len(lines):
        tab = _TAB.match(lines[i])
        if not tab:
            kept.append(lines[i])
            i += 1
            continue
        indent = tab.group("indent")
        group = []  # (title, body lines, selected) of each tab of the group
        while tab:
            body, end = _tab_body(lines, i, indent)
            group.append((lines[i], body, tab.group("mark") == "+"))
            i = end
            after = next((k for k in range(end, len(lines)) if lines[k].strip()), len(lines))
            tab = _TAB.match(lines[after]) if after < len(lines) else None
            if tab and (tab.group("indent") != indent or tab.group("mark") == "!"):
                tab = None  # a tab that starts a group of its own
            if tab:
                i = after
        chosen = next((k for k, (_, _, selected) in enumerate(group) if selected), 0)
        for k, (title, body, _) in enumerate(group):
            kept.append(title)
            if k == chosen:
                kept.extend(body)
    return "\n".join(kept)


def _tally(markdown: str) -> Tally:
    equations = len(_DISPLAY_MATHS.findall(markdown))
    text = _INLINE_VALUE.sub(" value ", markdown)
    text = _CODE_SPAN.sub(" ", text)
    text = _DISPLAY_MATHS.sub(" ", text)
    text = _INLINE_MATHS.sub(" ", text)
    images = len(_IMAGE.findall(text))
    text = _IMAGE.sub(" ", text)
    text = _TAG.sub(" ", text)
    return Tally(
        words=len(_WORD.findall(text)),
        figures=text.count(_FIGURE) + images,
        tables=text.count(_TABLE) + len(_TABLE_RULE.findall(text)),
        equations=equations,
        code_lines=text.count(_CODE_LINE),
    )


@memo_by_digest(maxsize=64)  # Home asks for each chapter's twice
def reading_length(markdown: str) -> ReadingLength:
    """What a page's main line and its folds hold, from its Markdown source."""
    text = _selected_tabs_only(_replace_fences(_FRONT_MATTER.sub("", markdown)))
    main_parts, folded_parts = [], []
    depth, pos, opened = 0, 0, 0
    for m in _DETAILS_TAG.finditer(text):
        if not m.group(1):  # <details …>
            if depth == 0:
                main_parts.append(text[pos : m.start()])
                opened = m.end()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:  # the outermost fold closes: its summary is in the main line
                inside = text[opened : m.start()]
                summary = _SUMMARY.search(inside)
                if summary:
                    main_parts.append(summary.group(1))
                folded_parts.append(_SUMMARY.sub(" ", inside, count=1))
                pos = m.end()
    main_parts.append(text[pos:] if depth == 0 else text[pos:opened])
    return ReadingLength(main=_tally("\n".join(main_parts)), folded=_tally("\n".join(folded_parts)))


def page_reading_length(path: str | Path) -> ReadingLength:
    return reading_length(Path(path).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Timing:
    """A reader's timed first pass: the minutes it took (a range, low to high) and what the count
    found in the main lines of the pages read."""

    main: Tally
    low: float
    high: float

    @property
    def middle(self) -> float:
        return (self.low + self.high) / 2


def misses(pace: Pace, timings: list[Timing]) -> list[float]:
    """How far the count falls from each timing, as a fraction of the middle of its range:
    +0.1 counts a tenth more minutes than the reader took."""
    return [pace.minutes(t.main) / t.middle - 1 for t in timings]


def best_pace(timings: list[Timing]) -> Pace:
    """The non-negative allowances whose misses have the least sum of squares.

    A non-negative least-squares fit with five unknowns: the best fit is the unconstrained fit
    on the allowances it leaves above zero, so trying every subset of the five and keeping the
    best fit that has no negative allowance finds it exactly. A words-per-minute of infinity
    means words cost nothing.
    """
    # each timing, as a row of its counts divided by its minutes: the fit's misses are relative
    rows = np.array([astuple(t.main) for t in timings], dtype=float)
    scaled = rows / np.array([[t.middle] for t in timings])
    target = np.ones(len(timings))
    best, best_error = np.zeros(scaled.shape[1]), float(target @ target)
    for size in range(1, scaled.shape[1] + 1):
        for kept in itertools.combinations(range(scaled.shape[1]), size):
            fitted, *_ = np.linalg.lstsq(scaled[:, kept], target, rcond=None)
            if (fitted < 0).any():
                continue
            per_item = np.zeros(scaled.shape[1])
            per_item[list(kept)] = fitted
            error = float(np.sum((scaled @ per_item - target) ** 2))
            if error < best_error:
                best, best_error = per_item, error
    minutes_per_word, *allowances = best
    return Pace(1 / minutes_per_word if minutes_per_word > 0 else float("inf"), *allowances)
