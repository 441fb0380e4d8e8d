"""The plugin's options in ``mkdocs.yml`` (``plugins: - numbook: {...}``)."""

from __future__ import annotations

from mkdocs.config import base
from mkdocs.config import config_options as c


class NumbookConfig(base.Config):
    #: Run the blocks. Off: blocks are shown as plain code and inline values as code
    #: (the benchmark's "bare build"); nothing runs, nothing is cached.
    enabled = c.Type(bool, default=True)
    #: Where page results are cached, relative to the directory of mkdocs.yml.
    #: Safe to delete at any time.
    cache_dir = c.Type(str, default=".cache/numbook")
    #: Reuse each page's Markdown conversion (under ``cache_dir``) while its final Markdown,
    #: the Markdown extensions and what they read are unchanged (`numbook.rendermemo`): a
    #: warm build or a save under ``mkdocs serve`` converts only the pages that changed.
    markdown_cache = c.Type(bool, default=True)
    #: Under ``mkdocs serve``, a page whose block was edited keeps its state before that block
    #: (one process per page, waiting): the next save of that block, or of a later one, runs
    #: the page from there instead of from the start. False: every edited page runs from the
    #: start, as in a build. Linux only.
    keep_pages = c.Type(bool, default=True)
    #: Pages executed at the same time, each in its own process. Default: the CPU count.
    workers = c.Optional(c.Type(int))
    #: Seconds of CPU time a page may use before it is stopped and reported. CPU time,
    #: not the clock: a machine busy with other work slows a page but never fails it. A
    #: block's ``timeout="SECONDS"`` option sets the limit for its page instead (the
    #: largest, when several blocks give one): more for a slow page, less while previewing
    #: code that may never stop.
    timeout = c.Type((int, float), default=60)
    #: The backstop for a block that waits (on input, a lock, a sleep): a page that used almost
    #: no CPU time (under 1 %) in the last this many seconds of wall-clock time is stopped. A
    #: page that computes is never stopped by it, however busy the machine.
    wall_timeout = c.Type((int, float), default=60)
    #: Digits after the decimal point for every float in tables and inline values
    #: (see ``numbook.format``).
    decimals = c.Type(int, default=3)
    #: Directories (relative to mkdocs.yml) holding the project's own modules: put on
    #: ``sys.path`` for blocks and watched by ``mkdocs serve``. (What the cache tracks is not
    #: limited to them: every file under the project that a page's process reads.)
    watch = c.ListOfItems(c.Type(str), default=["src"])
    #: The environment variables the project's code reads (the figures' ``BOOK_MPLSTYLE``):
    #: their values are inputs of every page, of the page cache, of kept pages and of the
    #: stored conversions. One list for the whole project: a test of the book checks that
    #: every variable its code reads is named here.
    env = c.ListOfItems(c.Type(str), default=[])
    #: ``"module:attribute"`` naming a dict ``{"#rrggbb": "#rrggbb"}`` that turns a
    #: light figure into its dark variant. Default: a small map from black inks to light.
    dark_colors = c.Optional(c.Type(str))
    #: The word an empty link to a numbered page is filled with: ``[](part4.md)`` on a
    #: page linking to ``number: 4`` reads "Part 4".
    page_label = c.Type(str, default="Part")
    #: A page of the docs (``figures.md``) at whose end numbook lists every figure of the
    #: book: number, caption, page and section, a link, and downloads of both SVG variants
    #: and the data (`numbook.gallery`). Unset: no gallery.
    figure_gallery = c.Optional(c.Type(str))
    #: The H1 of a page whose front matter has both ``number`` and ``title``: the plugin
    #: writes it, so every part's title reads alike ("Part 2 · One attention head").
    #: A page may keep its own ``# `` line only if it reads exactly this.
    heading_format = c.Type(str, default="{label} {number} · {title}")
    #: Pages the book announces before they are written: ``{path: number}``. Until such a
    #: page is published (written and in the nav), ``[](path)`` reads ``planned_text`` as
    #: plain text; afterwards the same reference is a link. Its number must then agree
    #: with the page's front matter.
    planned = c.Type(dict, default={})
    #: How a reference to an announced page reads; ``{label}`` is e.g. "Part 1".
    planned_text = c.Type(str, default="{label} (coming soon)")
    #: The smallest size, in CSS pixels, at which a figure may show its smallest text. A
    #: figure that would shrink further to fit a narrow column keeps this legible width
    #: and scrolls sideways instead. 0 turns it off.
    figure_min_text_px = c.Type((int, float), default=0)
    #: ``"module:function"`` called as ``function(fig, name)`` on every figure a block makes,
    #: its phone layout and its switch variants included, after it is saved; ``name`` is
    #: the stem of its files (``fig-id``, ``fig-id.narrow``, ``fig-id.key``, ...). An
    #: exception it raises stops the build, like a failed check, with the block's line.
    #: numbook knows nothing of what it checks (the book checks its labels for collisions).
    #: The module is imported where the page runs, so the cache tracks it like the page's
    #: own imports. Unset: no check.
    figure_check = c.Optional(c.Type(str))
    #: ``page.md#anchor``: the section that explains checks. The one-line legend before a
    #: page's first check mark links to it. Unset: the legend has no link.
    check_help = c.Optional(c.Type(str))
    #: ``{package: page}``: a teaching block's calls into ``package`` (its functions and
    #: classes) get a "Source" line linking to ``page#module.name``, a page that shows each
    #: one's code under that id. Empty: no source links.
    source_links = c.Type(dict, default={})
    #: A manifest of every page address and anchor id the site has published
    #: (``permalinks.json``, relative to mkdocs.yml; `numbook.permalinks`). At the end of
    #: ``mkdocs build`` (not ``serve``) numbook warns, which fails a strict build, when the
    #: site publishes an address the manifest does not list (with the command that records
    #: it) or drops one the manifest lists. Unset: no check.
    permalinks = c.Optional(c.Type(str))
