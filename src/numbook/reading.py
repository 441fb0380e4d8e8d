"""How long a page takes to read: the words of its main line, and of its asides.

A page's *main line* is what a reader meets with every fold closed; its *asides* (and the other
folds an author writes, such as worked answers) are what they may open. Both are counted from
the page's Markdown, leaving out front matter, code, maths and HTML tags; a figure's caption
counts where its block stands, an inline value (`` `{py} …` ``) as one word. Tables a block
computes are not counted: the estimate is of the prose. A word is a run of letters or digits with at least one
letter, as in the browser measurement of ``tests/site/reading.py``.

Why from the Markdown: a page's reading time is shown on another page (the book's home), at
build time, before any page is rendered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_FRONT_MATTER = re.compile(r"\A---\n.*?\n(?:---|\.\.\.)\n", re.S)
_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})(?P<info>[^\n]*)\n.*?^\1\2[ \t]*$", re.S | re.M)
_CAPTION = re.compile(r"""\bcaption=(?:"(?P<double>[^"]*)"|'(?P<single>[^']*)')""")
_DISPLAY_MATHS = re.compile(r"\$\$.*?\$\$", re.S)
_INLINE_MATHS = re.compile(r"(?<![\\$])\$[^$\n]+?\$")
_INLINE_VALUE = re.compile(r"`\{py\}[^`]*`")
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_TAG = re.compile(r"<[^>\n]+>")
_WORD = re.compile(r"[\w'’-]*[^\W\d_][\w'’-]*")
_DETAILS_TAG = re.compile(r"<(/?)details\b[^>]*>")
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.S)


@dataclass(frozen=True)
class ReadingLength:
    main: int  # words with every fold closed
    folded: int  # words inside folds (asides, worked answers), summaries excluded

    def minutes(self, words_per_minute: float, *, with_folds: bool = False) -> float:
        return (self.main + (self.folded if with_folds else 0)) / words_per_minute


def _words(markdown: str) -> int:
    text = _INLINE_VALUE.sub(" value ", markdown)
    text = _CODE_SPAN.sub(" ", text)
    text = _DISPLAY_MATHS.sub(" ", text)
    text = _INLINE_MATHS.sub(" ", text)
    text = _TAG.sub(" ", text)
    return len(_WORD.findall(text))


def _caption_of(fence: re.Match[str]) -> str:
    """A block is read as the caption of the figure it makes (its code is not prose)."""
    m = _CAPTION.search(fence.group("info"))
    return "\n" + (m.group("double") or m.group("single") or "" if m else "") + "\n"


def reading_length(markdown: str) -> ReadingLength:
    """Words of a page's main line and of its folds, from its Markdown source."""
    text = _FENCE.sub(_caption_of, _FRONT_MATTER.sub("", markdown))
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
    return ReadingLength(main=_words("\n".join(main_parts)), folded=_words("\n".join(folded_parts)))


def page_reading_length(path: str | Path) -> ReadingLength:
    return reading_length(Path(path).read_text(encoding="utf-8"))
