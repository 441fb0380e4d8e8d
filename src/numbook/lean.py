"""Lighter pages: fewer DOM elements for the same look.

Pygments wraps every token of highlighted code in a ``<span class="…">``, including the
tokens a theme paints exactly like plain code text (Material: names, ``.n``, take
``--md-code-fg-color``; whitespace, ``.w``, has no rule at all). On a chapter with many
code blocks those spans are a sixth of the page's elements, and every element is paid for
at each style and layout pass of the reader's browser. This plugin removes the spans of the
classes it is told are plain (``plain_classes``), inside ``<pre>`` blocks only, leaving
their text: what the reader sees does not change.

It also puts each plain ``<table>`` that starts below the first screen (after
``first_screen_chars`` characters of the page's text) in a ``<div class="numbook-table">``
(``table_class``), which the page's stylesheet gives ``content-visibility: auto``. A block
with ``content-visibility`` can be drawn for a frame at its guessed height while the page
loads; for a table, whose height no guess comes near, that shifts the text below it, which
is harmless off screen but a visible jump (and a layout shift) on the first screen.

With Material's ``content.lazy`` feature, Material makes a scrolling code block reachable by
keyboard (``tabindex``) only once the block comes near the screen; ``focusable_code`` gives
every ``<pre><code>`` its ``tabindex="0"`` in the page itself, so none is ever out of reach.

It knows nothing about the book's subject; it runs on every page, after the other plugins
that write code blocks and tables (list it last in ``mkdocs.yml``).
"""

from __future__ import annotations

import re

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.plugins import BasePlugin

_PRE = re.compile(r"<pre\b.*?</pre\s*>", re.S | re.I)
_CODE_IN_PRE = re.compile(r"(<pre\b[^>]*>(?:<span></span>)?)<code(?![^>]*\btabindex=)")
_PLAIN_TABLE = re.compile(r"<table>(?:(?!<table\b).)*?</table>", re.S)


class LeanConfig(base.Config):
    plain_classes = c.ListOfItems(c.Type(str), default=["n", "w"])
    """Pygments token classes that the theme draws like plain code text."""
    table_class = c.Optional(c.Type(str))
    """Class of a ``div`` put around each plain ``<table>`` below the first screen; none: no ``div``."""
    focusable_code = c.Type(bool, default=False)
    """Give each ``<pre><code>`` a ``tabindex="0"`` (for Material's ``content.lazy``)."""
    first_screen_chars = c.Type(int, default=2500)
    """Characters of text that surely fill a phone's first screen."""


def unwrap_plain_tokens(html_text: str, classes: list[str]) -> str:
    """Drop ``<span class="X">text</span>`` for X in ``classes`` inside ``<pre>``, keeping the text."""
    if not classes:
        return html_text
    span = re.compile(rf'<span class="(?:{"|".join(map(re.escape, classes))})">([^<]*)</span>')
    return _PRE.sub(lambda block: span.sub(r"\1", block.group(0)), html_text)


# a tag, or a formula's MathML copy (KaTeX writes each formula twice; the reader sees one)
_TAG = re.compile(r'<span class="katex-mathml">.*?</math></span>|<[^>]*>', re.S)


def text_offset(html_text: str, chars: int) -> int:
    """Where in ``html_text`` its text (tags left out) reaches ``chars`` characters."""
    seen = pos = 0
    for tag in _TAG.finditer(html_text):
        if seen + tag.start() - pos >= chars:
            break
        seen += tag.start() - pos
        pos = tag.end()
    return min(len(html_text), pos + max(0, chars - seen))


def wrap_tables(html_text: str, css_class: str, after: int = 0) -> str:
    """Put each ``<table>`` written without attributes that starts after ``after`` characters
    of text in a ``div`` of ``css_class``."""
    start = text_offset(html_text, after)

    def wrap(table: re.Match) -> str:
        return table.group(0) if table.start() < start else f'<div class="{css_class}">{table.group(0)}</div>'

    return _PLAIN_TABLE.sub(wrap, html_text)


class LeanPlugin(BasePlugin[LeanConfig]):
    """Remove markup that changes nothing the reader sees; give tables a steady box."""

    def on_page_content(self, html_text: str, *, page, config, files) -> str:
        html_text = unwrap_plain_tokens(html_text, self.config.plain_classes)
        if self.config.focusable_code:
            html_text = _CODE_IN_PRE.sub(r'\1<code tabindex="0"', html_text)
        if self.config.table_class:
            html_text = wrap_tables(html_text, self.config.table_class, self.config.first_screen_chars)
        return html_text
