"""Lighter pages: fewer DOM elements for the same look.

Pygments wraps every token of highlighted code in a ``<span class="…">``, including the
tokens a theme paints exactly like plain code text (Material: names, ``.n``, take
``--md-code-fg-color``; whitespace, ``.w``, has no rule at all). On a chapter with many
code blocks those spans are a sixth of the page's elements, and every element is paid for
at each style and layout pass of the reader's browser. This plugin removes the spans of the
classes it is told are plain (``plain_classes``), inside ``<pre>`` blocks only, leaving
their text: what the reader sees does not change.

Images on the first screen load at once (``eager_first_screen``): a lazy one is fetched only
after layout finds it on screen, which delays the page's largest paint.

It also puts each plain ``<table>`` that starts below the first screen (after
``first_screen_chars`` characters of the page's text) in a ``<div class="numbook-table">``
(``table_class``), which the page's stylesheet gives ``content-visibility: auto``. A block
with ``content-visibility`` can be drawn for a frame at its guessed height while the page
loads; for a table, whose height no guess comes near, that shifts the text below it, which
is harmless off screen but a visible jump (and a layout shift) on the first screen.

Folded ``<details>`` of the classes in ``fold_classes`` keep their content as text, in a
``<script type="text/html">``, until the reader opens one (or prints the page): a chapter with
sixty folded checks and data tables otherwise builds, styles and lays out thousands of elements
nobody has asked to see, and that work is most of what keeps its first screen from answering
(benchmarks/lighthouse.py). As text, not a ``<template>``, the browser does not even parse it
into elements while it reads the page (on the longest chapter a third of the HTML; Lighthouse's
blocking time there fell by about 100 ms, median of 6 runs). The summary stays in the page as it
was; the page's script (``lean.js``, added to the site) puts a fold's content in place when it
is opened and before printing; a fold with an ``id`` inside is not held back, since a link may
point there, nor one holding a script or a comment, which could end or bend the holder. The
text stays in the HTML, so the site's search finds it; a browser's find-in-page sees it once
the fold is open.

Each line of code is a ``<span class="numbook-line">`` (``mark_code_lines``): the stylesheet wraps
a line too long for its box and marks each of its continuation lines, so no code, and no
comment, runs past the right edge of a phone's screen (a line wrapped without a mark would
read as two lines of code). Blank lines stay bare text; a token that runs over several lines
(a docstring) is closed at each line's end and opened again on the next.

With Material's ``content.lazy`` feature, Material makes a scrolling code block reachable by
keyboard (``tabindex``) only once the block comes near the screen; ``focusable_code`` gives
every ``<pre><code>`` its ``tabindex="0"`` in the page itself, so none is ever out of reach.

It knows nothing about the book's subject; it changes each page's content last, when the
theme is about to render it (``on_page_context``, after every plugin that writes code
blocks and tables and after search has indexed the content).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from importlib import resources
from typing import Any

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files

from numbook.stored import read_checked, write_checked

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
    defer_scripts = c.Type(bool, default=False)
    """Load the scripts at the end of the page (the theme's and ``extra_javascript``) with ``defer``."""
    fold_classes = c.ListOfItems(c.Type(str), default=[])
    """Classes of ``<details>`` whose content waits as text until the reader opens one."""
    eager_first_screen = c.Type(bool, default=False)
    """Images that start within the first screen (``first_screen_chars``) load at once, not lazily."""
    search_plain_code = c.Type(bool, default=False)
    """Let the search plugin read code blocks without their highlighting spans (same index)."""
    script = c.Type(str, default="assets/numbook/lean.js")
    """Where the script that opens folds goes in the site (added only with ``fold_classes``)."""
    mark_lines = c.Type(bool, default=False)
    """Put each line of highlighted code in a ``<span class="numbook-line">`` (``mark_code_lines``)."""
    search_cache = c.Optional(c.Type(str))
    """A directory (relative to mkdocs.yml) where the search plugin's entries for each page are
    kept: a page whose content, address, title and table of contents are unchanged is not
    parsed again (Material's search; ignored for others). Safe to delete."""
    """Where the script that opens folds goes in the site (added only with ``fold_classes``)."""


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


_LAZY_IMG = re.compile(r'<img\b[^>]*\sloading="lazy"[^>]*>', re.I)


def eager_first_screen(html_text: str, after: int) -> str:
    """Drop ``loading="lazy"`` from the images that start within the first ``after`` characters
    of text: a lazy image is fetched only once layout shows it on screen, so on the first screen
    it holds back the page's largest paint instead of saving anything."""
    end = text_offset(html_text, after)

    def eager(img: re.Match) -> str:
        # Material's `#only-dark` image is hidden in the default (light) scheme: left lazy, a
        # light reader never fetches it (a dark reader fetches the light twin once, small).
        if img.start() >= end or '#only-dark"' in img.group(0):
            return img.group(0)
        return img.group(0).replace(' loading="lazy"', "")

    return _LAZY_IMG.sub(eager, html_text)


_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.S | re.I)
_CLASSIC_TYPES = {"", "text/javascript", "application/javascript"}


def _unquoted(attrs: str) -> str:
    """A tag's attributes with their quoted values emptied (so a value cannot look like a name)."""
    return re.sub(r'"[^"]*"', '""', attrs)


def defer_scripts(html_text: str) -> str:
    """Give ``defer`` to the external classic scripts after the page's last inline one.

    They keep their order and still run before ``DOMContentLoaded``, but no longer hold up
    the first paint: a browser that has parsed a long page before its first frame would
    otherwise fetch and run them first. Scripts before an inline one are left alone (it
    may use what they define), and so are ``async``, ``defer`` and module scripts.
    """
    scripts = list(_SCRIPT.finditer(html_text))

    def kind(attrs: str) -> str:
        found = re.search(r'\btype="([^"]*)"', attrs)
        return found.group(1).strip().lower() if found else ""

    def external(attrs: str) -> bool:
        return re.search(r"\ssrc=", _unquoted(attrs)) is not None

    inline = [m for m in scripts
              if not external(m.group(1)) and kind(m.group(1)) in _CLASSIC_TYPES | {"module"} and m.group(2).strip()]
    after = inline[-1].end() if inline else 0
    out, pos = [], 0
    for m in scripts:
        attrs = m.group(1)
        if m.start() < after or not external(attrs) or kind(attrs) not in _CLASSIC_TYPES:
            continue
        if re.search(r"\b(?:defer|async)\b", _unquoted(attrs)):
            continue
        out.append(html_text[pos : m.start()] + f"<script{attrs} defer>")
        pos = m.start() + len("<script") + len(attrs) + 1
    out.append(html_text[pos:])
    return "".join(out)


FOLD_ATTRIBUTE = "data-numbook-fold"
FOLD_HOLDER = f'<script type="text/html" {FOLD_ATTRIBUTE}>'
_UNHOLDABLE = re.compile(r'\bid="|<script|<!--', re.I)
_DETAILS_TAG = re.compile(r"<(/?)details\b[^>]*>", re.I)
_OPEN = re.compile(r"\sopen(?=[\s=/>])", re.I)
_SUMMARY_END = re.compile(r"</summary\s*>", re.I)


def _theme_table_box(table: re.Match) -> str:
    # Material puts each plain table in this box (a sideways scroller) when the page loads;
    # a held table is not in the page then, so it comes with the same box already.
    return f'<div class="md-typeset__scrollwrap"><div class="md-typeset__table">{table.group(0)}</div></div>'


def fold_details(html_text: str, classes: list[str]) -> str:
    """Put the content (after the summary) of each closed ``<details>`` of one of ``classes``
    in a ``<script type="text/html" data-numbook-fold>``; open ones, and ones with an ``id``, a
    script or a comment inside, stay."""
    if not classes:
        return html_text
    wanted = set(classes)
    out, pos = [], 0
    stack: list[tuple[int, bool]] = []  # (where its content starts, fold it)
    for tag in _DETAILS_TAG.finditer(html_text):
        if not tag.group(1):
            attrs = tag.group(0)
            names = re.search(r'\bclass="([^"]*)"', attrs)
            fold = bool(names and wanted & set(names.group(1).split())) and not _OPEN.search(_unquoted(attrs))
            stack.append((tag.end(), fold))
            continue
        if not stack:
            continue
        start, fold = stack.pop()
        if not fold or any(outer for _, outer in stack):
            continue  # an enclosing fold takes this one with it
        summary = _SUMMARY_END.search(html_text, start, tag.start())
        if summary is None:
            continue
        body_start = summary.end()
        body = html_text[body_start : tag.start()]
        if not body.strip() or _UNHOLDABLE.search(body):
            continue  # nothing to hold back, an anchor a link may need at once, or markup text cannot hold
        out.append(html_text[pos:body_start])
        out.append(f"{FOLD_HOLDER}{_PLAIN_TABLE.sub(_theme_table_box, body)}</script>")
        pos = tag.start()
    out.append(html_text[pos:])
    return "".join(out)


_CODE_BODY = re.compile(r"(<pre\b[^>]*>(?:<span></span>)?<code\b(?![^>]*\bclass=)[^>]*>)(.*?)(</code>)", re.S)
_TAG_OR_TEXT = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>|[^<]+")
LINE_CLASS = "numbook-line"


#: Indentation up to this many characters is never more than the stylesheet lets an indentation
#: take of a box a phone shows (a third of 29 characters at 320 px): it needs no span of its own.
SHALLOW_INDENT = 8


def _line_html(parts: list[str], tab_size: int = 8) -> str:
    """One line of code in its span, its indentation in characters in ``--indent`` (the
    stylesheet starts its continuation lines two characters further in). A deeper indentation
    (arguments aligned under an opening bracket) goes in a span of its own, ``numbook-indent``,
    that the stylesheet keeps from taking a narrow box's whole width, and the line is marked
    ``numbook-line--deep``: it wraps at any character, so its first words never leave the
    indentation alone on a line."""
    first = parts[0] if parts and not parts[0].startswith("<") else ""
    body = first.lstrip(" \t")
    leading = first[: len(first) - len(body)]
    indent = len(leading.expandtabs(tab_size))
    style = f' style="--indent:{indent}"' if indent else ""
    if indent <= SHALLOW_INDENT:
        return f'<span class="{LINE_CLASS}"{style}>{"".join(parts)}</span>'
    rest = "".join([body, *parts[1:]])
    return (f'<span class="{LINE_CLASS} numbook-line--deep"{style}><span class="numbook-indent">{leading}</span>'
            f"{rest}</span>")


def mark_code_lines(html_text: str) -> str:
    """Put each non-blank line of each ``<pre><code>`` (highlighted code: a ``<code>`` without a
    class) in a ``<span class="numbook-line">``, keeping the newlines between them as text. A
    tag open at a line's end (a docstring's span) is closed there and opened again on the next
    line, so that every line's span holds balanced markup."""

    def lines(block: re.Match) -> str:
        out: list[str] = []
        open_tags: list[tuple[str, str]] = []  # (name, opening tag) of what is open here
        parts: list[str] = []  # the current line's markup
        text = ""  # the current line's text

        def end_line() -> None:
            nonlocal parts, text
            closing = "".join(f"</{name}>" for name, _ in reversed(open_tags))
            if text.strip():
                out.append(_line_html([p for p in parts if p] + [closing]))
            else:
                out.append("".join(parts) + closing)
            parts, text = [t for _, t in open_tags], ""

        for token in _TAG_OR_TEXT.finditer(block.group(2)):
            if token.group(2) is not None:  # a tag
                if token.group(1):
                    if open_tags and open_tags[-1][0] == token.group(2).lower():
                        open_tags.pop()
                else:
                    open_tags.append((token.group(2).lower(), token.group(0)))
                parts.append(token.group(0))
                continue
            pieces = token.group(0).split("\n")
            for k, piece in enumerate(pieces):
                if k:
                    end_line()
                    out.append("\n")
                parts.append(piece)
                text += piece
        end_line()
        return block.group(1) + "".join(out) + block.group(3)

    return _CODE_BODY.sub(lines, html_text)


_PRE_SPAN = re.compile(r"</?span\b[^>]*>")
_SEARCH_ATTRIBUTE = re.compile(r'data-search-\w+="[^"]+"')  # what Material's search plugin strips


def _without_search_attributes(html_text: str) -> str:
    """``html_text`` without Material's search attributes, each with one white space before it.
    (The regular expression starts with its literal, which Python finds fast; one that starts
    with an optional space is tried at every character, a twentieth of a second per build.)"""
    kept, end = [], 0
    for m in _SEARCH_ATTRIBUTE.finditer(html_text):
        start = m.start() - (m.start() > end and html_text[m.start() - 1].isspace())
        kept.append(html_text[end:start])
        end = m.end()
    kept.append(html_text[end:])
    return "".join(kept)


def plain_code(html_text: str) -> str:
    """``html_text`` with every ``<span>`` tag inside ``<pre>`` dropped, their text kept: the
    code as a search index reads it (it keeps a code block's text, never its spans)."""
    return _PRE.sub(lambda block: _PRE_SPAN.sub("", block.group(0)), html_text)


_BARE_TABLE = re.compile(r"<table>")


def number_tables(html_text: str) -> str:
    """Give each plain ``<table>`` its number on the page, ``data-numbook-table="3"``, held
    folds' tables included: what the page's script names a table's scrolling box by ("Table 3
    (scrolls sideways)"), the same whichever folds the reader has opened."""
    count = iter(range(1, 1 << 30))
    return _BARE_TABLE.sub(lambda m: f'<table data-numbook-table="{next(count)}">', html_text)


#: (content, options) -> lean content, for the last pages made lean in this process.
_LEAN: dict[tuple[str, str], str] = {}


class LeanPlugin(BasePlugin[LeanConfig]):
    """Remove markup that changes nothing the reader sees; give tables a steady box; hold
    back the content of folds until they are opened."""

    def on_config(self, config):
        if self.config.fold_classes and self.config.script not in config.extra_javascript:
            config.extra_javascript.append(self.config.script)
        return config

    def on_pre_build(self, *, config) -> None:
        search = config.plugins.get("search") or config.plugins.get("material/search")
        index = getattr(search, "search_index", None)
        if self.config.search_cache and hasattr(index, "add_entry_from_context"):
            root = os.path.dirname(os.path.abspath(config.config_file_path or "mkdocs.yml"))
            SearchMemo(os.path.join(root, self.config.search_cache)).install(index)

    def on_files(self, files: Files, *, config) -> Files:
        if self.config.fold_classes:
            script = resources.files("booksite").joinpath("lean.js").read_text(encoding="utf-8")
            files.append(File.generated(config, self.config.script, content=script))
        return files

    # Just before the search plugin reads the page (priority 0): it parses every tag of the
    # content to index the text between them, and Pygments' spans inside code are a third to
    # a half of a chapter's tags. It reads the code without them (the index is the same);
    # the page gets its highlighted code back right after.
    @event_priority(10)
    def _before_search(self, context, *, page, config, nav):
        if self.config.search_plain_code and page.content is not None:
            self._highlighted = page.content
            page.content = plain_code(page.content)
        return context

    @event_priority(-1)
    def _after_search(self, context, *, page, config, nav):
        if getattr(self, "_highlighted", None) is not None:
            page.content = _without_search_attributes(self._highlighted)
            self._highlighted = None
        return context

    # The last change to a page's content before the theme renders it: after every plugin
    # that writes the content, and after search has indexed it (numbook puts its figures'
    # data tables in at -50).
    @event_priority(-100)
    def _make_lean(self, context, *, page, config, nav):
        if page.content is not None:
            page.content = self.lean(page.content)
        return context

    def lean(self, html_text: str) -> str:
        """The page's content made lean (the same content gives the same result: under `mkdocs
        serve` only the pages that changed are worked on again)."""
        key = (html_text, repr(dict(self.config)))
        if key not in _LEAN:
            original = html_text
            html_text = unwrap_plain_tokens(html_text, self.config.plain_classes)
            if self.config.focusable_code:
                html_text = _CODE_IN_PRE.sub(r'\1<code tabindex="0"', html_text)
            if self.config.mark_lines:
                html_text = mark_code_lines(html_text)
            if self.config.table_class:
                html_text = wrap_tables(html_text, self.config.table_class, self.config.first_screen_chars)
            if self.config.eager_first_screen:
                html_text = eager_first_screen(html_text, self.config.first_screen_chars)
            if len(_LEAN) >= 64:
                _LEAN.pop(next(iter(_LEAN)))
            _LEAN[(original, key[1])] = number_tables(fold_details(html_text, self.config.fold_classes))
        return _LEAN[key]

    on_page_context = CombinedEvent(_before_search, _after_search, _make_lean)

    def on_post_page(self, output: str, *, page, config) -> str:
        return defer_scripts(output) if self.config.defer_scripts else output


class SearchMemo:
    """The search entries of each page, kept while what they are made from is unchanged.

    Material's index parses each page's whole HTML to cut it into sections; a warm build or
    a save under ``mkdocs serve`` leaves most pages as they were. An entry is keyed by what
    the index reads of a page (content, address, title, table of contents, front matter) and
    by the index's options, and stored with a checksum: a damaged one is parsed again.
    """

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def install(self, index: Any) -> None:
        original = index.add_entry_from_context
        options = json.dumps(getattr(index, "config", {}), sort_keys=True, default=repr)

        def add_entry_from_context(page: Any) -> None:
            key = self._key(page, options)
            path = os.path.join(self.directory, re.sub(r"[^A-Za-z0-9_.-]", "_", page.file.src_uri) + ".json")
            stored = self._read(path, key)
            if stored is not None:
                index.entries.extend(stored)
                return
            before = len(index.entries)
            original(page)
            self._write(path, key, index.entries[before:])

        index.add_entry_from_context = add_entry_from_context

    @staticmethod
    def _key(page: Any, options: str) -> str:
        def toc(items: Any) -> list[Any]:
            return [[a.title, a.id, a.level, toc(a.children)] for a in items]

        parts = [page.url, page.title, toc(page.toc), page.meta, options]
        h = hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode())
        h.update(b"\0" + (page.content or "").encode())
        return h.hexdigest()

    @staticmethod
    def _read(path: str, key: str) -> list[Any] | None:
        try:
            data = json.loads(read_checked(path))
        except (OSError, ValueError):
            return None
        return data["entries"] if data.get("key") == key else None

    def _write(self, path: str, key: str, entries: list[Any]) -> None:
        write_checked(path, json.dumps({"key": key, "entries": entries}).encode())  # keys in the index's order
