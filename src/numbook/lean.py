"""Lighter pages: fewer DOM elements for the same look.

Pygments wraps every token of highlighted code in a ``<span class="…">``, including the
tokens a theme paints exactly like plain code text (Material: names, ``.n``, take
``--md-code-fg-color``; whitespace, ``.w``, has no rule at all). On a chapter with many
code blocks those spans are a sixth of the page's elements, and every element is paid for
at each style and layout pass of the reader's browser. This plugin removes the spans of the
classes it is told are plain (``plain_classes``), inside ``<pre>`` blocks only, leaving
their text: what the reader sees does not change.

It knows nothing about the book's subject; it runs on every page, after the other plugins
that write code blocks (list it last in ``mkdocs.yml``).
"""

from __future__ import annotations

import re

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.plugins import BasePlugin

_PRE = re.compile(r"<pre\b.*?</pre\s*>", re.S | re.I)


class LeanConfig(base.Config):
    plain_classes = c.ListOfItems(c.Type(str), default=["n", "w"])
    """Pygments token classes that the theme draws like plain code text."""


def unwrap_plain_tokens(html_text: str, classes: list[str]) -> str:
    """Drop ``<span class="X">text</span>`` for X in ``classes`` inside ``<pre>``, keeping the text."""
    if not classes:
        return html_text
    span = re.compile(rf'<span class="(?:{"|".join(map(re.escape, classes))})">([^<]*)</span>')
    return _PRE.sub(lambda block: span.sub(r"\1", block.group(0)), html_text)


class LeanPlugin(BasePlugin[LeanConfig]):
    """Remove markup that changes nothing the reader sees."""

    def on_page_content(self, html_text: str, *, page, config, files) -> str:
        return unwrap_plain_tokens(html_text, self.config.plain_classes)
