"""Find a page's executable cells, figure references and numbered headings.

The parser is a small line scanner, not a Markdown renderer: it knows fenced code
blocks (backticks or tildes, any indentation, CommonMark closing rules), code spans,
empty-text links and level-2 ATX headings. That is all numbook needs, and it lets the
same parse serve any Markdown engine.

Rules an author can rely on:

* a fence whose info string is ``python exec [options]`` is a block that runs;
* a fence *inside* another fence is just text (so the guide can show the syntax inside
  a ````` ````markdown ````` fence);
* `` `{py} expr` `` (a single-backtick code span starting with ``{py}``) in prose is an
  inline value; inside fences or longer code spans (`` `` `{py} x` `` ``) it is literal;
* ``[](#id)``, ``[](page.md#id)`` and ``[](page.md)`` are references to be numbered;
* ``\\label{id}`` inside a ``$$ … $$`` display formula numbers the formula and gives it
  that id (`EquationLabel`);
* a figure's ``caption`` and ``alt`` may hold ``{py:expression}`` pieces, evaluated
  after the block ran (`template_parts`);
* line numbers are those of the source file, front matter included.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Callable

from .cells import Aside, BlockOptions, CellError, CodeCell, EquationLabel, FigRef, Heading, InlineCell, ParsedPage

FLAG_OPTIONS = {"hide"}
VALUE_OPTIONS = {"check", "figure", "caption", "alt", "timeout", "kind"}
#: How a block is shown (`numbook.render.block_kind`): its code in view, folded after what it
#: made, or in the page's one setup fold.
KINDS = ("teach", "present", "setup")
KNOWN_OPTIONS = FLAG_OPTIONS | VALUE_OPTIONS

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_HEADING = re.compile(r"^ {0,3}##(?=[ \t]|$)[ \t]*(?P<text>.*?)[ \t]*$")
_TITLE = re.compile(r"^ {0,3}#(?=[ \t]|$)[ \t]*(?P<text>.*?)[ \t]*$")
_ATTR_LIST = re.compile(r"[ \t]*\{:?(?P<body>[^{}]*)\}[ \t]*$")
_FIG_REF = re.compile(r"\[\]\((?P<page>[^()\s#]*)(?:#(?P<id>[^()\s#]+))?\)")
_ATTR_ID = re.compile(r"(?:^|\s)#(?P<id>[^\s#{}]+)")
_TEMPLATE_OPEN = "{py:"
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_.:-]*$")
_LABEL = re.compile(r"\\label\{(?P<id>[^{}]*)\}")
_CODE_SPAN = re.compile(r"(`+).*?\1", re.S)


class OptionError(ValueError):
    """A block's info string is malformed; the message says how."""


def template_parts(text: str) -> list[tuple[str, bool]]:
    """Split a caption or alt text into literal pieces and ``{py:expression}`` pieces.

    Returns ``[(text, is_expression), ...]``. Braces inside the expression nest (a dict
    or an f-string is fine) and quoted strings in it are skipped, so the expression ends
    at the ``}`` that closes ``{py:``. Raises OptionError for an unclosed or empty
    expression, or one that is not valid Python.
    """
    parts: list[tuple[str, bool]] = []
    pos = 0
    while True:
        start = text.find(_TEMPLATE_OPEN, pos)
        if start < 0:
            break
        if start > pos:
            parts.append((text[pos:start], False))
        i = start + len(_TEMPLATE_OPEN)
        depth, quote = 1, ""
        while i < len(text):
            c = text[i]
            if quote:
                if c == "\\":
                    i += 1
                elif c == quote:
                    quote = ""
            elif c in "'\"":
                quote = c
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        if depth:
            raise OptionError(f"`{text[start:]}` has no closing brace: write {{py:expression}}")
        expr = text[start + len(_TEMPLATE_OPEN) : i].strip()
        if not expr:
            raise OptionError("empty expression `{py:}`")
        try:
            compile(expr, "<option>", "eval", dont_inherit=True)
        except SyntaxError as exc:
            raise OptionError(f"`{{py:{expr}}}` is not a Python expression: {exc.msg}") from None
        parts.append((expr, True))
        pos = i + 1
    if pos < len(text):
        parts.append((text[pos:], False))
    return parts


def parse_info(info: str) -> BlockOptions | None:
    """Parse a fence info string. Returns None when it is not a ``python exec`` block.

    Raises OptionError for an exec block whose options are wrong: bad quoting,
    unknown or repeated options, a flag with a value, a figure without caption or alt.
    """
    stripped = info.strip()
    if not re.match(r"^python[ \t]+exec(?:[ \t]|$)", stripped):
        return None
    try:
        tokens = shlex.split(stripped)
    except ValueError as exc:
        raise OptionError(f"cannot read the options of `{stripped}`: {exc}") from None
    values: dict[str, str | bool] = {}
    for token in tokens[2:]:
        key, eq, value = token.partition("=")
        if key not in KNOWN_OPTIONS:
            known = ", ".join(sorted(KNOWN_OPTIONS))
            raise OptionError(f"unknown option {key!r} (known options: {known})")
        if key in values:
            raise OptionError(f"option {key!r} given twice")
        if key in FLAG_OPTIONS:
            if eq:
                raise OptionError(f"option {key!r} is a flag and takes no value")
            values[key] = True
        else:
            if not eq:
                raise OptionError(f'option {key!r} needs a value: {key}="..."')
            if not value.strip():
                raise OptionError(f"option {key!r} is empty")
            values[key] = value
    timeout = None
    if "timeout" in values:
        try:
            timeout = float(values["timeout"])  # type: ignore[arg-type]
        except ValueError:
            raise OptionError(f"timeout must be a number of seconds, got {values['timeout']!r}") from None
        if not timeout > 0:
            raise OptionError("timeout must be positive")
    kind = values.get("kind")
    if kind is not None:
        if kind not in KINDS:
            raise OptionError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if "check" in values:
            raise OptionError("a check is shown as its mark: kind does not apply to it")
        if "hide" in values:
            raise OptionError("hide and kind both say how the block is shown: give one")
        if kind == "setup" and "figure" in values:
            raise OptionError("a setup block cannot make a figure: its code goes to the page's setup fold")
    fig = values.get("figure")
    if fig is not None:
        if not _ID.match(str(fig)):
            raise OptionError(f"figure id {fig!r} must be a letter followed by letters, digits, '-', '_'")
        if "alt" not in values:
            raise OptionError(f"figure {fig!r} has no alt text: add alt=\"...\" describing it")
        if "caption" not in values:
            raise OptionError(f"figure {fig!r} has no caption: add caption=\"...\"")
        for key in ("caption", "alt"):
            try:
                template_parts(str(values[key]))
            except OptionError as exc:
                raise OptionError(f"in {key}: {exc}") from None
    else:
        for key in ("caption", "alt"):
            if key in values:
                raise OptionError(f"option {key!r} only makes sense with figure=\"...\"")
    return BlockOptions(
        hide=bool(values.get("hide", False)),
        check=values.get("check"),  # type: ignore[arg-type]
        kind=kind,  # type: ignore[arg-type]
        figure=fig,  # type: ignore[arg-type]
        caption=values.get("caption"),  # type: ignore[arg-type]
        alt=values.get("alt"),  # type: ignore[arg-type]
        timeout=timeout,
    )


def _declared_figure(info: str) -> str | None:
    """The figure id a refused block's info string declares: references to it are not
    reported as unknown (the block's own error says what is wrong)."""
    try:
        ids = [t[len("figure="):] for t in shlex.split(info) if t.startswith("figure=")]
    except ValueError:
        return None
    return ids[0] if ids and _ID.match(ids[0]) else None


def _dedent(line: str, indent: str) -> str:
    n = 0
    while n < len(indent) and n < len(line) and line[n] in " \t":
        n += 1
    return line[n:]


def parse_page(text: str, path: str, line_offset: int = 0) -> ParsedPage:
    """Parse Markdown ``text`` (front matter already removed).

    ``path`` is the display path used in messages (``docs/page.md``); ``line_offset`` is
    the number of source lines before ``text`` (the front matter), added to every line.
    """
    page = ParsedPage()
    lines = text.splitlines(keepends=True)
    offsets = []
    pos = 0
    for line in lines:
        offsets.append(pos)
        pos += len(line)
    offsets.append(pos)

    prose: list[int] = []  # indices of lines outside any fence
    i = 0
    while i < len(lines):
        raw = lines[i].rstrip("\r\n")
        m = _FENCE_OPEN.match(raw)
        if m and not (m.group("fence")[0] == "`" and "`" in m.group("info")):
            fence = m.group("fence")
            char, length = fence[0], len(fence)
            closing = re.compile(r"^[ \t]*" + re.escape(char) + "{" + str(length) + r",}[ \t]*$")
            j = i + 1
            while j < len(lines) and not closing.match(lines[j].rstrip("\r\n")):
                j += 1
            end_line = min(j + 1, len(lines))  # exclusive
            try:
                options = parse_info(m.group("info"))
            except OptionError as exc:
                page.errors.append(CellError(path, line_offset + i + 1, str(exc),
                                             span=(offsets[i], offsets[end_line]),
                                             figure=_declared_figure(m.group("info"))))
                options = None
            if options is not None:
                body = [_dedent(lines[k].rstrip("\r\n"), m.group("indent")) for k in range(i + 1, j)]
                page.cells.append(
                    CodeCell(
                        index=len(page.cells),
                        code="\n".join(body) + ("\n" if body else ""),
                        options=options,
                        info=m.group("info").strip(),
                        fence_line=line_offset + i + 1,
                        first_line=line_offset + i + 2,
                        indent=m.group("indent"),
                        start=offsets[i],
                        end=offsets[end_line],
                    )
                )
            i = end_line
            continue
        prose.append(i)
        i += 1

    # Headings are whole prose lines.
    for k in prose:
        raw = lines[k].rstrip("\r\n")
        tm = _TITLE.match(raw)
        if tm and page.title is None:
            page.title = Heading(
                line=line_offset + k + 1,
                text_start=offsets[k] + tm.start("text"),
                line_end=offsets[k] + len(raw),
                text=_ATTR_LIST.sub("", tm.group("text")).rstrip().rstrip("#").rstrip(),
                has_id=False,
                attr_open=None,
            )
            continue
        hm = _HEADING.match(raw)
        if not hm:
            continue
        heading_text = hm.group("text")
        has_id, attr_open = False, None
        am = _ATTR_LIST.search(heading_text)
        heading_id = None
        if am:
            idm = _ATTR_ID.search(am.group("body"))
            has_id = idm is not None
            heading_id = idm.group("id") if idm else None
            brace = raw.rfind("{")
            attr_open = None if has_id else offsets[k] + brace + (2 if raw[brace + 1 : brace + 2] == ":" else 1)
            heading_text = heading_text[: am.start()]
        page.headings.append(
            Heading(
                line=line_offset + k + 1,
                text_start=offsets[k] + hm.start("text"),
                line_end=offsets[k] + len(raw),
                text=heading_text.rstrip().rstrip("#").rstrip(),
                has_id=has_id,
                attr_open=attr_open,
                id=heading_id,
            )
        )

    _scan_asides(text, lines, offsets, prose, line_offset, path, page)

    # Inline cells and figure references: scan runs of consecutive prose lines,
    # split at blank lines (a code span never crosses a paragraph).
    paragraphs: list[list[int]] = []
    for k in prose:
        if not lines[k].strip():
            continue
        if paragraphs and paragraphs[-1][-1] == k - 1:
            paragraphs[-1].append(k)
        else:
            paragraphs.append([k])
    inline: list[InlineCell] = []
    line_at = lambda off: line_offset + _line_of(offsets, off) + 1  # noqa: E731
    for para in paragraphs:
        start = offsets[para[0]]
        chunk = text[start : offsets[para[-1] + 1]]
        _scan_inline(chunk, start, line_at, path, page, inline)
        _scan_labels(chunk, start, line_at, path, page)

    # Merge blocks and inline cells into one document-ordered sequence.
    cells = sorted([*page.cells, *inline], key=lambda c: c.start)
    page.cells = [dataclasses.replace(c, index=n) for n, c in enumerate(cells)]
    return page


_ASIDE = re.compile(r"^[ \t]*<details\b(?P<attrs>[^>]*\bclass=\"(?:[^\"]*\s)?aside(?:\s[^\"]*)?\"[^>]*)>")
_SUMMARY = re.compile(r"^[ \t]*<summary>(?P<text>.*?)</summary>[ \t]*$")
_HTML_ID = re.compile(r"\bid=\"(?P<id>[^\"]*)\"")


def _scan_asides(
    text: str, lines: list[str], offsets: list[int], prose: list[int], line_offset: int, path: str,
    page: ParsedPage,
) -> None:
    """Asides: ``<details class="aside" id="…" markdown="1">`` then ``<summary>…</summary>``.

    Each needs an id (a course links to it) and a summary line that says what is inside.
    """
    is_prose = set(prose)
    for k in prose:
        m = _ASIDE.match(lines[k])
        if not m:
            continue
        line = line_offset + k + 1
        idm = _HTML_ID.search(m.group("attrs"))
        after = next((j for j in range(k + 1, len(lines)) if lines[j].strip()), None)
        sm = _SUMMARY.match(lines[after].rstrip("\r\n")) if after is not None and after in is_prose else None
        if idm is None or not _ID.match(idm.group("id")):
            page.errors.append(CellError(path, line, 'an aside needs an id (<details class="aside" id="…">) '
                                         "that starts with a letter: a course links to it"))
        elif sm is None or not sm.group("text").strip():
            page.errors.append(CellError(path, line, "an aside needs a summary that says what is inside, "
                                         "on the line after <details>: <summary>Look closer: …</summary>"))
        else:
            end = offsets[after] + lines[after].index("</summary>")
            page.asides.append(Aside(idm.group("id"), line, end))


def find_refs(text: str, line: int) -> list[FigRef]:
    """The references in Markdown a block produced (``numbook.api.markdown``), all at ``line``.

    Code spans are skipped as in prose; offsets index ``text``.
    """
    scratch = ParsedPage()
    _scan_inline(text, 0, lambda off: line, "", scratch, [])
    return scratch.refs


def _line_of(offsets: list[int], off: int) -> int:
    lo, hi = 0, len(offsets) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if offsets[mid] <= off:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _scan_inline(
    chunk: str,
    base: int,
    line_at: Callable[[int], int],
    path: str,
    page: ParsedPage,
    inline: list[InlineCell],
) -> None:
    """Find inline cells and figure references in one paragraph, skipping code spans."""
    i, n = 0, len(chunk)
    while i < n:
        c = chunk[i]
        if c == "\\":
            i += 2
            continue
        if c == "`":
            run = 1
            while i + run < n and chunk[i + run] == "`":
                run += 1
            close = _find_run(chunk, i + run, run)
            if close < 0:
                i += run  # unmatched: literal backticks
                continue
            content = chunk[i + run : close]
            if run == 1 and content.startswith("{py}"):
                expr = content[4:].replace("\n", " ").strip()
                line = line_at(base + i)
                if not expr:
                    page.errors.append(
                        CellError(path, line, "empty inline expression `{py}`", span=(base + i, base + close + 1))
                    )
                else:
                    inline.append(InlineCell(0, expr, line, base + i, base + close + 1))
            i = close + run
            continue
        if c == "[":
            m = _FIG_REF.match(chunk, i)
            if m and (m.group("id") or m.group("page").endswith(".md")):
                page.refs.append(
                    FigRef(m.group("page"), m.group("id") or "", line_at(base + i), base + m.start(), base + m.end())
                )
                i = m.end()
                continue
        i += 1


def _scan_labels(chunk: str, base: int, line_at: Callable[[int], int], path: str, page: ParsedPage) -> None:
    """Equation labels: ``\\label{id}`` in a ``$$ … $$`` display formula of one paragraph."""
    spans = [m.span() for m in _CODE_SPAN.finditer(chunk)]
    labelled: set[int] = set()  # the paragraph's formulas that have a label
    for m in _LABEL.finditer(chunk):
        if any(a <= m.start() < b for a, b in spans):
            continue
        line = line_at(base + m.start())
        opened = chunk.count("$$", 0, m.start())
        if opened % 2 == 0:
            page.errors.append(CellError(path, line, f"{m.group(0)} outside a $$ … $$ display formula"))
        elif opened in labelled:
            page.errors.append(CellError(path, line, f"{m.group(0)}: this formula has a label already"))
        elif not _ID.match(m.group("id")):
            page.errors.append(
                CellError(path, line, f"equation id {m.group('id')!r}: start with a letter, then letters, "
                          "digits, '-', '_', '.' or ':'")
            )
        else:
            labelled.add(opened)
            page.equations.append(EquationLabel(m.group("id"), line, base + m.start(), base + m.end()))


def _find_run(chunk: str, start: int, run: int) -> int:
    """Offset of the next run of exactly ``run`` backticks at or after ``start``, or -1."""
    i, n = start, len(chunk)
    while i < n:
        if chunk[i] == "`":
            j = i
            while j < n and chunk[j] == "`":
                j += 1
            if j - i == run:
                return i
            i = j
        else:
            i += 1
    return -1
