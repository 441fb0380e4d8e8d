"""Make the pages mkdocs-jupyter renders from notebooks fit a self-contained site.

mkdocs-jupyter turns a notebook into HTML that expects a browser to fetch things from
other hosts and to typeset maths itself: it writes a MathJax loader (with an empty
``src`` unless a CDN address is configured), a Mermaid loader that imports from a CDN,
about 590 KB of JupyterLab CSS inlined into every notebook page, and leaves the TeX of
Markdown cells as raw ``$…$``. On each notebook page this plugin

* wraps ``$…$`` and ``$$…$$`` in the markup `pymdownx.arithmatex` writes, so the
  ``numbook-katex`` plugin that runs after it renders them like any other page's maths;
* removes the MathJax and Mermaid loaders (a notebook that draws a Mermaid diagram
  stops the build instead of silently showing its source);
* moves the inlined stylesheets into one shared file, so a reader downloads them once;
* makes code cells that scroll sideways reachable by keyboard;
* puts a visible link to download the ``.ipynb`` under the title (mkdocs-jupyter
  publishes the file with ``include_source: true``; Material no longer links it).

It knows nothing about the book's subject. List it after ``mkdocs-jupyter`` and before
``numbook-katex`` in ``mkdocs.yml``.
"""

from __future__ import annotations

import hashlib
import html
import logging
import posixpath
import re
from pathlib import Path

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin

log = logging.getLogger("mkdocs.plugins.numbook.notebooks")

# Regions whose text is code, not prose: TeX is never looked for inside them.
_VERBATIM = re.compile(r"<(pre|code|script|style|textarea)\b.*?</\1\s*>", re.S | re.I)
_DISPLAY_MATH = re.compile(r"\$\$(?P<tex>.+?)\$\$", re.S)
# One `$` opens (not escaped, not followed by a space), the next `$` closes (not preceded
# by a space, not followed by a digit), as in Jupyter's own rule ("$5 and $6" is no maths).
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?![\s$])(?P<tex>[^$]+?)(?<![\s\\])\$(?!\d)")
_STYLE = re.compile(r'<style type="text/css">(?P<css>.*?)</style>\s*', re.S)
_MATHJAX = re.compile(
    r'<!-- Load mathjax -->\s*<script src="[^"]*">\s*</script>\s*<!-- MathJax configuration -->\s*'
    r'<script type="text/x-mathjax-config">.*?</script>\s*<!-- End of mathjax configuration -->',
    re.S,
)
_MERMAID = re.compile(r'<script type="module">\s*document\.addEventListener\("DOMContentLoaded".*?mermaid.*?</script>', re.S)
_H1_END = re.compile(r"</h1>", re.I)


class NotebooksConfig(base.Config):
    css_dir = c.Type(str, default="assets/notebooks")
    """Where the shared notebook stylesheet is written, relative to the site."""
    download_text = c.Type(str, default="Download this notebook")
    """Text of the link to the ``.ipynb`` file shown under each notebook page's title."""


def wrap_math(text: str) -> str:
    """Mark the TeX in prose (outside code, scripts and styles) the way arithmatex does."""
    pieces, pos = [], 0
    for verbatim in _VERBATIM.finditer(text):
        pieces.append(_wrap_prose(text[pos : verbatim.start()]))
        pieces.append(verbatim.group(0))
        pos = verbatim.end()
    pieces.append(_wrap_prose(text[pos:]))
    return "".join(pieces)


def _wrap_prose(prose: str) -> str:
    prose = _DISPLAY_MATH.sub(lambda m: f'<span class="arithmatex">\\[{m["tex"]}\\]</span>', prose)
    return _INLINE_MATH.sub(lambda m: f'<span class="arithmatex">\\({m["tex"]}\\)</span>', prose)


def stylesheet_name(css: str) -> str:
    """A file name that changes when the CSS does (so browsers may cache it for good)."""
    return f"jupyter-{hashlib.sha256(css.encode()).hexdigest()[:12]}.css"


class NotebooksPlugin(BasePlugin[NotebooksConfig]):
    """Clean up mkdocs-jupyter's pages: local maths, no loaders from other hosts, shared CSS."""

    def on_pre_build(self, *, config) -> None:
        self.stylesheets: dict[str, str] = {}

    def on_page_content(self, html_text: str, *, page, config, files) -> str:
        if not page.file.src_uri.endswith(".ipynb"):
            return html_text
        where = f"docs/{page.file.src_uri}"
        if 'class="jp-Mermaid' in html_text:
            raise PluginError(f"numbook-notebooks: {where}: Mermaid diagrams load a script from another host; draw the figure with matplotlib instead")
        html_text = _MATHJAX.sub("", html_text)
        html_text = _MERMAID.sub("", html_text)
        if "cdnjs.cloudflare.com" in html_text or '<script src="">' in html_text:
            raise PluginError(f"numbook-notebooks: {where}: a script loader that this plugin does not know how to remove is left on the page")
        html_text = self._share_styles(html_text, page)
        # Long code lines scroll sideways: keyboard users must be able to reach the box.
        html_text = html_text.replace('<div class="highlight-ipynb', '<div tabindex="0" class="highlight-ipynb')
        html_text = wrap_math(html_text)
        return self._add_download_link(html_text, page)

    def _share_styles(self, html_text: str, page) -> str:
        sheets = [m["css"] for m in _STYLE.finditer(html_text)]
        if not sheets:
            return html_text
        css = "\n".join(sheet.strip() for sheet in sheets) + "\n"
        name = stylesheet_name(css)
        self.stylesheets[name] = css
        href = posixpath.relpath(f"{self.config.css_dir}/{name}", posixpath.dirname(page.file.dest_uri) or ".")
        link = f'<link rel="stylesheet" href="{html.escape(href)}">\n'
        first = _STYLE.search(html_text).start()
        return html_text[:first] + link + _STYLE.sub("", html_text[first:])

    def _add_download_link(self, html_text: str, page) -> str:
        name = posixpath.basename(page.file.src_uri)
        link = (
            f'<p class="numbook-download"><a class="md-button" href="{html.escape(name)}" download>'
            f"{html.escape(self.config.download_text)} ({html.escape(name)})</a></p>\n"
        )
        found = _H1_END.search(html_text)
        if found is None:
            return link + html_text
        return html_text[: found.end()] + "\n" + link + html_text[found.end() :]

    def on_post_build(self, *, config) -> None:
        out = Path(config.site_dir) / self.config.css_dir
        for name, css in sorted(self.stylesheets.items()):
            out.mkdir(parents=True, exist_ok=True)
            (out / name).write_text(css, encoding="utf-8")
        if self.stylesheets:
            log.debug("numbook-notebooks: wrote %s", ", ".join(sorted(self.stylesheets)))
