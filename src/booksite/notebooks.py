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
  publishes the file with ``include_source: true``; Material no longer links it);
* gives repeated headings the ids its table of contents links to (``name``, ``name_1``…:
  mkdocs-jupyter lists them that way but writes one id for all of them);
* folds each code cell whose source the notebook hides (``jupyter.source_hidden``, as
  JupyterLab sets it) into a ``<details>`` block, as JupyterLab shows it collapsed.

With ``wheel:`` set, it also publishes packages of the project as a wheel (see
:mod:`booksite.wheel`) for notebooks that run outside the project's checkout: in each
published ``.ipynb`` it writes the wheel's address into the install cell (the line that
assigns ``url_variable``), and a notebook that imports the wheel's packages without such a
line stops the build. The address ends in ``#sha256=<the wheel's hash>``, so pip refuses a
wheel that changed after the build. It is absolute, in the edition the notebook belongs to
(numbook-cite's permanent address of the edition, else ``site_url``), when one is known, and
then the notebook's relative links to the site become absolute too, so a copy opened in a
local Jupyter still installs and links to its own edition; with neither, the path is relative
to the notebook. The download link, when JavaScript runs, writes in the address (hash
included) as seen from the site that served the page.

Around mkdocs-jupyter's cache (``.cache/mkdocs-jupyter``, which it writes in place and
reads back without a check, then publishes): each entry it writes is signed after the build
(a ``.mac`` file beside it: the HMAC of `numbook.stored`, under this user's key), and before
each build an entry without a valid signature (damaged by an interrupted write, rewritten,
or restored from elsewhere) is dropped, with a one-line warning, and the notebook is
converted again.

It knows nothing about the book's subject. List it after ``mkdocs-jupyter`` and before
``numbook-katex`` in ``mkdocs.yml``.
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import html
import json
import logging
import posixpath
import re
from importlib import resources
from pathlib import Path
from urllib.parse import urljoin

from markdown.extensions.toc import unique
from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File
from mkdocs.structure.toc import get_toc

from numbook.preview import log_recovered, log_shown_on_page
from numbook.render import ShownProblem, problems_summary
from numbook.stored import mac
from .wheel import Wheel, build_wheel

log = logging.getLogger("mkdocs.plugins.numbook.notebooks")

# Regions whose text is code, not prose: TeX is never looked for inside them.
_VERBATIM = re.compile(r"<(pre|code|script|style|textarea)\b.*?</\1\s*>", re.S | re.I)
_DISPLAY_MATH = re.compile(r"\$\$(?P<tex>.+?)\$\$", re.S)
# One `$` opens (not escaped, not followed by a space), the next `$` closes (not preceded
# by a space, not followed by a digit), as in Jupyter's own rule ("$5 and $6" is no maths).
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?![\s$])(?P<tex>[^$]+?)(?<![\s\\])\$(?!\d)")
_STYLE = re.compile(r'<style(?: type="text/css")?>(?P<css>.*?)</style>\s*', re.S)
# mkdocs-jupyter's template writes a stray attribute named "," on each copy button, and an
# aria-label, which HTML allows only on an element with a role: the button role the copy
# element takes when its script runs (GitHub's clipboard-copy) is written in the HTML instead
_STRAY_COMMA = re.compile(r'(<clipboard-copy)(?:\s+,="")?(?![^>]*\brole=)')
_MATHJAX = re.compile(
    r'<!-- Load mathjax -->\s*<script src="[^"]*">\s*</script>\s*<!-- MathJax configuration -->\s*'
    r'<script type="text/x-mathjax-config">.*?</script>\s*<!-- End of mathjax configuration -->',
    re.S,
)
_MERMAID = re.compile(r'<script type="module">\s*document\.addEventListener\("DOMContentLoaded".*?mermaid.*?</script>', re.S)
_H1_END = re.compile(r"</h1>", re.I)
# A heading as nbconvert writes it: its id, and the ¶ link to that id inside it.
_HEADING = re.compile(r'<h(?P<level>[1-6])(?P<attrs>[^>]*?) id="(?P<id>[^"]*)"(?P<body>.*?)</h(?P=level)>', re.S)
_DIV = re.compile(r"<div\b|</div\s*>", re.I)
DOWNLOAD_SCRIPT = "notebook-download.js"


class WheelConfig(base.Config):
    name = c.Optional(c.Type(str))
    """Distribution name of the wheel (``pip install`` name); none: no wheel is published."""
    packages = c.ListOfItems(c.Type(str), default=[])
    """Package folders it ships, relative to the folder of ``mkdocs.yml``."""
    requires = c.ListOfItems(c.Type(str), default=[])
    """The project's dependencies it needs, by name; versions come from ``pyproject.toml``."""
    summary = c.Type(str, default="")
    dir = c.Type(str, default="wheels")
    """Where the wheel is published, relative to the site."""
    url_variable = c.Type(str, default="WHEEL_URL")
    """The variable of a notebook's install cell that receives the wheel's address."""
    link_text = c.Type(str, default="Outside a checkout, the notebook installs what it needs from this site:")
    """Text before the link to the wheel, under the download button."""


class NotebooksConfig(base.Config):
    css_dir = c.Type(str, default="assets/notebooks")
    """Where the shared notebook stylesheet (and the download script) is written, relative to the site."""
    download_text = c.Type(str, default="Download this notebook")
    """Text of the link to the ``.ipynb`` file shown under each notebook page's title."""
    hidden_cell_summary = c.Type(str, default="Hidden code")
    """Summary of the fold that holds a code cell whose source the notebook hides."""
    wheel = c.SubConfig(WheelConfig)
    """Packages of the project to publish for notebooks that run outside its checkout."""


def unique_heading_ids(html_text: str) -> str:
    """Give repeated heading ids the suffixes Python-Markdown's table of contents uses.

    mkdocs-jupyter builds a page's table of contents with Python-Markdown (``intro``,
    ``intro_1``, …) but the page itself from nbconvert, which gives every heading with the
    same title the same id: the second entry of the contents then leads nowhere.
    """
    seen: set[str] = set()

    def rename(match: re.Match) -> str:
        old = match["id"]
        new = unique(old, seen)
        if new == old:
            return match.group(0)
        body = match["body"].replace(f'href="#{old}"', f'href="#{new}"')
        return f'<h{match["level"]}{match["attrs"]} id="{new}"{body}</h{match["level"]}>'

    return _HEADING.sub(rename, html_text)


def fold_hidden_cells(html_text: str, notebook: dict, summary: str) -> str:
    """Wrap the HTML of each code cell whose source is hidden in a closed ``<details>``.

    A fold with a visible summary (``numbook-fold``), not the small ✓ of a page's checks
    (``numbook-check``): a workbook's hidden cell holds several checks and no claim to name.
    """
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code" or not cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"):
            continue
        anchor = html_text.find(f'id="cell-id={html.escape(str(cell.get("id")))}"')
        start = html_text.rfind("<div", 0, anchor) if anchor >= 0 else -1
        if start < 0:
            continue
        depth, end = 0, -1
        for tag in _DIV.finditer(html_text, start):
            depth += -1 if tag.group(0).startswith("</") else 1
            if depth == 0:
                end = tag.end()
                break
        if end < 0:
            continue
        html_text = (
            f'{html_text[:start]}<details class="success numbook-fold">\n<summary>{html.escape(summary)}</summary>\n'
            f"{html_text[start:end]}\n</details>{html_text[end:]}"
        )
    return html_text


def _signature(path: Path) -> Path:
    return path.with_name(path.name + ".mac")


def drop_damaged_cache_entries(cache_dir: Path) -> list[Path]:
    """Delete the entries of mkdocs-jupyter's cache that it must not read back.

    mkdocs-jupyter writes each entry in place, reads it with a bare ``json.loads`` and
    publishes its HTML: a write cut short (a full disk, an interrupted build) crashes every
    later build, and a rewritten entry would be published as it is. An entry that is not
    signed by `sign_cache_entries` under this user's key, or that mkdocs-jupyter could not
    use, is deleted here instead, with a one-line warning that does not stop a strict build
    (the build has put it right); the notebook is then converted again.
    """
    dropped = []
    for path in sorted(cache_dir.glob("*.json")) if cache_dir.is_dir() else []:
        try:
            data = path.read_bytes()
            try:
                signature = _signature(path).read_text(encoding="ascii").strip()
            except OSError:
                signature = ""
            if not hmac.compare_digest(signature, mac(data)):
                raise ValueError("not signed under this user's key")
            entry = json.loads(data.decode("utf-8"))
            if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
                raise ValueError("no page content in it")
            get_toc(entry["toc_tokens"])
        except Exception as exc:  # noqa: BLE001 - whatever mkdocs-jupyter would trip over
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:100]
            log_recovered(log, f"numbook-notebooks: damaged mkdocs-jupyter cache entry {path} ({reason}); dropped, the notebook is converted again")
            path.unlink(missing_ok=True)
            _signature(path).unlink(missing_ok=True)
            dropped.append(path)
    return dropped


def sign_cache_entries(cache_dir: Path, trusted: set[Path]) -> None:
    """Sign the entries mkdocs-jupyter wrote in this build (those not ``trusted`` before it);
    drop the signatures of entries it deleted."""
    if not cache_dir.is_dir():
        return
    for path in sorted(cache_dir.glob("*.json")):
        if path not in trusted:
            _signature(path).write_text(mac(path.read_bytes()) + "\n", encoding="ascii")
    for signature in cache_dir.glob("*.json.mac"):
        if not signature.with_name(signature.name[: -len(".mac")]).exists():
            signature.unlink(missing_ok=True)


def cell_source(cell: dict) -> str:
    """A cell's source as one string (nbformat stores it as a string or a list of lines)."""
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def set_variable(notebook: dict, variable: str, value: str) -> int:
    """Make every code line ``variable = "…"`` of a notebook assign ``value``; count them."""
    assignment = re.compile(rf"""^(?P<lhs>[ \t]*{re.escape(variable)}[ \t]*=[ \t]*)(?P<q>["']).*?(?P=q)""", re.M)
    count = 0
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source, n = assignment.subn(lambda m: m["lhs"] + json.dumps(value), cell_source(cell))
        if n:
            cell["source"] = source.splitlines(keepends=True)
            count += n
    return count


_RELATIVE_LINK = re.compile(r"(\]\()(?![a-z][a-z0-9+.-]*:|#|/)([^)\s]+)(\))", re.I)


def absolute_links(notebook: dict, page_url: str) -> int:
    """Turn each relative Markdown link of the notebook's text cells into an absolute one,
    resolved against the address of the notebook's page; count them."""
    count = 0
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        source, n = _RELATIVE_LINK.subn(lambda m: m[1] + urljoin(page_url, m[2]) + m[3], cell_source(cell))
        if n:
            cell["source"] = source.splitlines(keepends=True)
            count += n
    return count


def _edition_url(config) -> str | None:
    """The permanent address of the edition being built: numbook-cite's, else ``site_url``."""
    cite = config.plugins.get("numbook-cite")
    edition = getattr(cite, "edition", None)
    if edition is not None and edition.url:
        return edition.url
    return config.site_url or None


def imports_any(notebook: dict, modules: tuple[str, ...]) -> bool:
    """Whether a code cell imports one of ``modules``."""
    pattern = re.compile(rf"^\s*(?:import|from)\s+(?:{'|'.join(map(re.escape, modules))})\b", re.M)
    return any(cell.get("cell_type") == "code" and pattern.search(cell_source(cell)) for cell in notebook.get("cells", []))


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


def _css_text(css: str) -> str:
    """A stylesheet's text. mkdocs-jupyter's template prints the highlighting rules as a
    Python list of strings (``['pre { … }']``), which no browser reads as CSS."""
    text = css.strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            rules = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return css
        if isinstance(rules, list) and all(isinstance(r, str) for r in rules):
            return "\n".join(rules)
    return css


def stylesheet_name(css: str) -> str:
    """A file name that changes when the CSS does (so browsers may cache it for good)."""
    return f"jupyter-{hashlib.sha256(css.encode()).hexdigest()[:12]}.css"


class NotebooksPlugin(BasePlugin[NotebooksConfig]):
    """Clean up mkdocs-jupyter's pages: local maths, no loaders from other hosts, shared CSS."""

    serving = False

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.serving = command == "serve"

    def on_pre_build(self, *, config) -> None:
        self.stylesheets: dict[str, str] = {}
        self.shown: dict[str, ShownProblem] = {}  # under `mkdocs serve`: a page's problem, shown on it
        self.notebooks: dict[str, str] = {}  # published .ipynb path in the site -> its source
        self.wheel: Wheel | None = None
        self.jupyter_cache: Path | None = None
        self.trusted: set[Path] = set()  # the cache's entries signed before this build
        jupyter = config.plugins.get("mkdocs-jupyter")
        if jupyter is not None and jupyter.config.get("cache"):
            # a relative cache_dir is relative to the working directory, as mkdocs-jupyter reads it
            self.jupyter_cache = Path(jupyter.config["cache_dir"]).resolve()
            drop_damaged_cache_entries(self.jupyter_cache)
            self.trusted = set(self.jupyter_cache.glob("*.json")) if self.jupyter_cache.is_dir() else set()

    def on_files(self, files, *, config):
        wanted = self.config.wheel
        if wanted.name is None:
            return files
        root = Path(config.config_file_path or "mkdocs.yml").resolve().parent
        try:
            self.wheel = build_wheel(root, name=wanted.name, packages=wanted.packages, requires=wanted.requires, summary=wanted.summary)
        except ValueError as exc:
            raise PluginError(f"numbook-notebooks: wheel: {exc}") from exc
        files.append(File.generated(config, f"{wanted.dir}/{self.wheel.filename}", content=self.wheel.content))
        script = resources.files("booksite").joinpath(DOWNLOAD_SCRIPT).read_text(encoding="utf-8")
        files.append(File.generated(config, f"{self.config.css_dir}/{DOWNLOAD_SCRIPT}", content=script))
        return files

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
        html_text = _STRAY_COMMA.sub(r'\1 role="button"', self._share_styles(html_text, page))
        # Long code lines scroll sideways: keyboard users must be able to reach the box.
        html_text = html_text.replace('<div class="highlight-ipynb', '<div tabindex="0" class="highlight-ipynb')
        html_text = unique_heading_ids(html_text)
        notebook = json.loads(Path(page.file.abs_src_path).read_text(encoding="utf-8"))
        html_text = fold_hidden_cells(html_text, notebook, self.config.hidden_cell_summary)
        html_text = wrap_math(html_text)
        return self._add_download_link(html_text, page, config, notebook)

    def _share_styles(self, html_text: str, page) -> str:
        sheets = [_css_text(m["css"]) for m in _STYLE.finditer(html_text)]
        if not sheets:
            return html_text
        css = "\n".join(sheet.strip() for sheet in sheets) + "\n"
        name = stylesheet_name(css)
        self.stylesheets[name] = css
        link = f'<link rel="stylesheet" href="{html.escape(self._site_relative(f"{self.config.css_dir}/{name}", page))}">\n'
        first = _STYLE.search(html_text).start()
        return html_text[:first] + link + _STYLE.sub("", html_text[first:])

    @staticmethod
    def _site_relative(path: str, page) -> str:
        """``path`` (relative to the site) as seen from ``page``."""
        return posixpath.relpath(path, posixpath.dirname(page.file.dest_uri) or ".")

    def _add_download_link(self, html_text: str, page, config, notebook: dict) -> str:
        name = posixpath.basename(page.file.src_uri)
        label = f"{html.escape(self.config.download_text)} ({html.escape(name)})"
        if self.wheel is None:
            block = f'<p class="numbook-download"><a class="md-button" href="{html.escape(name)}" download>{label}</a></p>\n'
        else:
            # pip refuses a wheel whose bytes do not hash to the #sha256= the address carries
            wheel = self._site_relative(f"{self.config.wheel.dir}/{self.wheel.filename}", page)
            pinned = f"{wheel}#sha256={hashlib.sha256(self.wheel.content).hexdigest()}"
            baked = self._publish_notebook(page, config, notebook, pinned)
            script = self._site_relative(f"{self.config.css_dir}/{DOWNLOAD_SCRIPT}", page)
            block = (
                f'<p class="numbook-download"><a class="md-button" href="{html.escape(name)}" download="{html.escape(name)}" '
                f'data-numbook-wheel="{html.escape(pinned)}" data-numbook-baked="{html.escape(baked)}">{label}</a></p>\n'
                f'<p class="numbook-wheel">{html.escape(self.config.wheel.link_text)} '
                f'<a href="{html.escape(wheel)}" download>{html.escape(self.wheel.filename)}</a></p>\n'
                f'<script src="{html.escape(script)}" defer></script>\n'
            )
        if page.file.src_uri in self.shown:
            block = problems_summary([self.shown[page.file.src_uri]]) + "\n" + block
        found = _H1_END.search(html_text)
        if found is None:
            return block + html_text
        return html_text[: found.end()] + "\n" + block + html_text[found.end() :]

    def _publish_notebook(self, page, config, notebook: dict, wheel_path: str) -> str:
        """Fill the install cell of the notebook the site publishes; return the address written.

        With a known address the notebook leaves the site self-contained: the wheel's address
        (with its hash) and every relative link in its text become absolute, in the edition it
        was published in (numbook-cite's permanent address, else ``site_url``), so a copy opened
        in a local Jupyter installs the engine of that edition and links to its pages.
        """
        where = f"docs/{page.file.src_uri}"
        base = _edition_url(config)
        address = wheel_path
        if base:
            address = urljoin(base, f"{self.config.wheel.dir}/{self.wheel.filename}") + wheel_path[wheel_path.find("#"):]
            absolute_links(notebook, urljoin(base, page.url))
        if not set_variable(notebook, self.config.wheel.url_variable, address) and imports_any(notebook, self.wheel.top_level):
            reason = (
                f"imports {' or '.join(self.wheel.top_level)} but has no install cell (a code line "
                f"`{self.config.wheel.url_variable} = \"\"` that the build fills in, and the install after it): "
                "outside the book's checkout it would stop at the import"
            )
            if not self.serving:
                raise PluginError(f"numbook-notebooks: {where}: {reason}")
            log_shown_on_page(log, f"numbook-notebooks: {where}: {reason}")
            self.shown[page.file.src_uri] = ShownProblem(where, reason)
        dest = posixpath.join(posixpath.dirname(page.file.dest_uri), posixpath.basename(page.file.src_uri))
        self.notebooks[dest] = json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n"  # as nbformat writes
        return address

    @event_priority(-100)  # after mkdocs-jupyter's own (it deletes the entries it did not use)
    def on_post_build(self, *, config) -> None:
        if self.jupyter_cache is not None:
            sign_cache_entries(self.jupyter_cache, self.trusted)
        site = Path(config.site_dir)
        out = site / self.config.css_dir
        for name, css in sorted(self.stylesheets.items()):
            out.mkdir(parents=True, exist_ok=True)
            (out / name).write_text(css, encoding="utf-8")
        if self.stylesheets:
            log.debug("numbook-notebooks: wrote %s", ", ".join(sorted(self.stylesheets)))
        # mkdocs-jupyter copied each source notebook on its page's `post_page`; the published
        # copy is the one with the wheel's address in it.
        for dest, text in sorted(self.notebooks.items()):
            path = site / dest
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
