"""Render the page's maths to HTML at build time with KaTeX, so readers download no maths engine.

`pymdownx.arithmatex` (generic mode) wraps each formula in `<span class="arithmatex">\\(…\\)</span>`
or `<div class="arithmatex">\\[…\\]</div>`. This plugin replaces those wrappers with KaTeX's
HTML+MathML, serves KaTeX's stylesheet and fonts from the site, and stops the build on bad TeX
with the page, the line and KaTeX's message (under `mkdocs serve` the page shows them instead).
A display formula with ``\\label{id}`` (which KaTeX lacks) gets that id and a link to itself,
so it can be cited; numbook numbers it with ``\\tag``. It knows nothing about the book's subject: shared
macros come from a dotted "module:attribute" path named in `mkdocs.yml`.

A rendered formula is kept out of the search index (``search_exclude``), and out of the search
plugin's way altogether: until the search plugin has read the page (``on_page_context``, priority
0) each formula waits as an HTML comment, and only then is put in place. The index is the same
(an excluded element adds nothing to it), but the search plugin's HTML parser, which would
walk every one of KaTeX's spans to skip them, reads a third less of a chapter.
"""

from __future__ import annotations

import html
import importlib
import logging
import re
from functools import lru_cache
from pathlib import Path

import pykatex
from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files

from numbook.preview import log_shown_on_page
from numbook.render import ShownProblem, problem_box, problem_mark, problems_summary

log = logging.getLogger("mkdocs.plugins.numbook.katex")

ASSETS = Path(__file__).parent / "katex_assets"
SITE_DIR = "assets/katex"
_FORMULA = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">(?P<open>\\\(|\\\[)(?P<tex>.*?)(?:\\\)|\\\])</(?P=tag)>',
    re.S,
)
_TITLE = re.compile(r"\s*<h1\b.*?</h1>", re.S | re.I)
_HEX_COLOUR = re.compile(r"#(?=[0-9a-fA-F]{6}\b)")
_LABEL = re.compile(r"\\label\{(?P<id>[^{}]*)\}")
_HELD = re.compile(r"<!--numbook-katex (\d+)-->")


class KatexConfig(base.Config):
    macros = c.Type(str, default="")
    """Dotted path `module:attribute` to a dict {"\\name": "body with #1"} of one-argument macros."""
    colors = c.Type(str, default="")
    """Dotted path `module:attribute` to a dict {"#rrggbb": {"light": "#…", "dark": "#…"}}: a colour
    used by the macros is shown in the shade of the reader's colour scheme (body-text contrast)."""
    dark_selector = c.Type(str, default='[data-md-color-scheme="slate"]')
    """CSS selector of the dark colour scheme (Material's "slate" by default)."""
    search_exclude = c.Type(bool, default=True)
    """Keep rendered formulas out of the search index (KaTeX writes each one three times)."""


def load_macros(spec: str) -> dict:
    """Import the table named by `module:attribute` (empty spec: an empty table)."""
    if not spec:
        return {}
    module_name, _, attribute = spec.partition(":")
    try:
        table = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise PluginError(f"numbook-katex: cannot load macros {spec!r}: {error}") from error
    return dict(table)


def color_variables(shades: dict[str, dict[str, str]], dark_selector: str) -> tuple[dict[str, str], str]:
    """CSS variables, one per colour, that switch shade with the colour scheme; and their stylesheet."""
    names = {color.lower(): f"--katex-color-{i}" for i, color in enumerate(shades)}
    light = "".join(f"{names[c.lower()]}:{s['light']};" for c, s in shades.items())
    dark = "".join(f"{names[c.lower()]}:{s['dark']};" for c, s in shades.items())
    return names, f":root{{{light}}}\n{dark_selector}{{{dark}}}\n"


def use_color_variables(rendered: str, names: dict[str, str]) -> str:
    """Point KaTeX's inline colours at the scheme-aware variables."""
    for color, name in names.items():
        rendered = rendered.replace(f"color:{color};", f"color:var({name});")
    return rendered


_MATHML = re.compile(r"<math\b.*?</math>", re.S)
_ANNOTATION = re.compile(r'(<annotation encoding="application/x-tex">).*?(</annotation>)', re.S)
_TAG = re.compile(r"<(/?)([a-zA-Z][\w-]*)([^>]*?)(/?)>")
#: MathML's token elements hold text only (MathML Core, 2.1.2): never another element.
_TOKENS = {"mi", "mn", "mo", "mtext", "ms"}
_WIDTH = re.compile(r'\s+width="[^"]*"')


def tidy_mathml(rendered: str, tex: str) -> str:
    """KaTeX's MathML made valid and light, for screen readers and copying.

    KaTeX puts the group of ``\\boldsymbol{x_i}`` inside an ``<mi>`` (``<mi><msub>…</msub></mi>``),
    which MathML does not allow and a validator rejects; such a token becomes the ``<mrow>`` it
    stands for. A numbered equation's table gives its side cells ``width="50%"``, which is no
    attribute of ``<mtd>`` (the MathML is not what is seen: KaTeX's HTML is); it is dropped.
    Its TeX annotation repeats the macro preamble in every formula; it keeps the formula's own TeX.
    """

    def tidy(math: re.Match[str]) -> str:
        text = math.group(0)
        out, stack, pos = [], [], 0
        for tag in _TAG.finditer(text):
            closing, name, attrs, empty = tag.groups()
            out.append(text[pos : tag.start()])
            pos = tag.end()
            if empty:
                out.append(tag.group(0))
            elif not closing:
                if name == "mtd":
                    attrs = _WIDTH.sub("", attrs)
                holds_element = name in _TOKENS and text.startswith("<", pos) and not text.startswith("</", pos)
                stack.append("mrow" if holds_element else name)
                out.append(f"<{stack[-1]}{attrs}>")
            else:
                out.append(f"</{stack.pop() if stack else name}>")
        out.append(text[pos:])
        tidied = "".join(out)
        return _ANNOTATION.sub(lambda m: m.group(1) + html.escape(tex, quote=False) + m.group(2), tidied)

    return _MATHML.sub(tidy, rendered)


def macro_preamble(macros: dict[str, str]) -> str:
    """TeX `\\def`s for the macros (pykatex has no `macros` option); `#` of colours doubled."""
    parts = []
    for name, body in macros.items():
        arity = max((int(n) for n in re.findall(r"#(\d)", _HEX_COLOUR.sub("", body))), default=0)
        params = "".join(f"#{i}" for i in range(1, arity + 1))
        parts.append(rf"\def{name}{params}{{{_HEX_COLOUR.sub('##', body)}}}")
    return "".join(parts)


@lru_cache(maxsize=4096)  # a formula is finished once per process (`mkdocs serve` rebuilds)
def _tidied(rendered: str, tex: str, color_names: tuple[tuple[str, str], ...]) -> str:
    return tidy_mathml(use_color_variables(rendered, dict(color_names)), tex)


@lru_cache(maxsize=None)
def render(tex: str, display: bool, preamble: str) -> str:
    """KaTeX HTML+MathML for one formula; raises pykatex.ParseError on bad TeX."""
    return pykatex.renderToString(
        preamble + tex, displayMode=display, output="htmlAndMathml", throwOnError=True, strict="ignore"
    )


def describe(error: Exception, preamble_length: int) -> str:
    """KaTeX's message with its position counted from the author's formula, not our preamble."""
    message = str(error)
    found = re.search(r" at position (\d+):", message)
    if not found:
        return message.split(": …", 1)[0]
    position = int(found[1]) - preamble_length
    return f"{message[: found.start()]} at character {position} of the formula"


def source_line(markdown: str, tex: str) -> int | None:
    """The line of the page source where a formula starts, for error messages."""
    first = tex.strip().splitlines()[0].strip() if tex.strip() else ""
    if not first:
        return None
    for number, line in enumerate(markdown.splitlines(), start=1):
        if first in line:
            return number
    return None


def labelled(rendered: str, equation_id: str) -> str:
    """A display formula that carries an id (from its ``\\label``), with a link to itself."""
    ident = html.escape(equation_id)
    return (
        f'<div class="numbook-equation" id="{ident}">{rendered}'
        f'<a class="headerlink" href="#{ident}" title="Link to this equation">&para;</a></div>'
    )


class KatexPlugin(BasePlugin[KatexConfig]):
    """Build-time KaTeX for `pymdownx.arithmatex` in generic mode."""

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.serving = command == "serve"

    def on_pre_build(self, *, config) -> None:
        self.errors: list[str] = []
        self._held: dict[str, list[str]] = {}  # page -> its formulas, until search has read it

    def on_config(self, config):
        self.preamble = macro_preamble(load_macros(self.config.macros))
        self.color_names, self.color_css = color_variables(
            load_macros(self.config.colors), self.config.dark_selector
        )
        for css in (f"{SITE_DIR}/katex.min.css", f"{SITE_DIR}/colors.css"):
            if css not in config.extra_css:
                config.extra_css.append(css)
        return config

    def on_files(self, files: Files, *, config) -> Files:
        for path in sorted(ASSETS.rglob("*")):
            if path.suffix in {".css", ".woff2"}:
                uri = f"{SITE_DIR}/{path.relative_to(ASSETS).as_posix()}"
                files.append(File.generated(config, uri, abs_src_path=str(path)))
        files.append(File.generated(config, f"{SITE_DIR}/colors.css", content=self.color_css))
        return files

    def on_page_content(self, html_text: str, *, page, config, files) -> str:
        errors: list[str] = []
        shown: list[ShownProblem] = []
        source = page.file.content_string if page.file.abs_src_path else ""

        def replace(match: re.Match, ids: list[str]) -> str:
            tex = html.unescape(match["tex"])
            display = match["open"] == "\\["
            labels = _LABEL.findall(tex) if display else []
            ids.extend(labels[:1])
            tex = _LABEL.sub("", tex) if labels else tex  # KaTeX has no \label: the id goes on the HTML
            try:
                out = render(tex, display, self.preamble)
            except pykatex.ParseError as error:
                line = source_line(source, tex)
                where = f"docs/{page.file.src_uri}" + (f":{line}" if line else "")
                reason = f"bad TeX: {describe(error, len(self.preamble))}"
                errors.append(f"{where}: {reason}\n    {tex.strip()}")
                problem = ShownProblem(where, reason, tex.strip(), f"numbook-tex-problem-{len(shown) + 1}", display)
                shown.append(problem)
                return problem_box(problem) if display else problem_mark(problem)
            out = _tidied(out, tex, tuple(self.color_names.items()))
            if self.config.search_exclude:
                out = out.replace('class="katex"', 'class="katex" data-search-exclude', 1)
                held.append(out)
                out = f"<!--numbook-katex {len(held) - 1}-->"
            return labelled(out, labels[0]) if labels else out

        held = self._held[page.file.src_uri] = []
        ids: list[str] = []
        html_text = _FORMULA.sub(lambda m: replace(m, ids), html_text)
        if ids and getattr(page, "present_anchor_ids", None) is not None:
            page.present_anchor_ids.update(ids)  # MkDocs checks links to them after every page's content
        if shown:
            title = _TITLE.match(html_text)  # the summary goes under the page's title
            at = title.end() if title else 0
            html_text = html_text[:at] + problems_summary(shown, what="bad formula") + html_text[at:]
        for error in errors:
            if self.serving:
                log_shown_on_page(log, f"numbook-katex: {error}")
            else:
                log.error("numbook-katex: %s", error)
        self.errors.extend(errors)
        return html_text

    @event_priority(-50)  # after the search plugin (0), before numbook-lean (-100)
    def on_page_context(self, context, *, page, config, nav):
        """Put each formula in place of its comment, now that search has read the page."""
        held = self._held.pop(page.file.src_uri, None)
        if held and page.content is not None:
            page.content = _HELD.sub(lambda m: held[int(m.group(1))], page.content)
        return context

    def on_post_build(self, *, config) -> None:
        """Fail the build once, listing every bad formula of every page."""
        if self.errors and not self.serving:
            raise PluginError("numbook-katex: bad TeX stops the build:\n" + "\n".join(self.errors))
