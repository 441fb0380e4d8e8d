"""``numbook-pdf``: the PDF edition's place in the site.

In a build that gets its PDFs, every page learns the PDFs that hold it (``pdf_edition`` in
the template context: its chapter's and the whole book's, in each paper size), which the
citation box lists (and the edition menu offers, from its ``data-pdf-edition`` links). The PDFs are typeset after the site is built, by ``python -m
bookpdf`` (or by this plugin when ``make`` is on, as ``mike deploy`` needs); a build without
them links none and says how to make them.
"""

from __future__ import annotations

import logging
import os
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin
from mkdocs.structure.pages import Page

from .typeset import INSTALL_HINT, OUTPUT_DIR, PAPERS, TypesetterMissing, page_path, typeset, _prefix

log = logging.getLogger("mkdocs.plugins.numbook.pdf")
#: Set by ``python -m bookpdf`` for the build it typesets next.
NEXT = "BOOKPDF_TYPESETS_NEXT"
#: The environment variables this package reads, and why no stored result depends on them
#: (those that shape a page's blocks are named in numbook's ``env`` option instead).
VARIABLES = {NEXT: "whether the pages link the PDFs: the theme's citation box, made at every build"}


class PdfConfig(base.Config):
    make = c.Type(bool, default=False)  # typeset at the end of the build (mike deploy: BOOK_PDF=true)
    dir = c.Type(str, default=OUTPUT_DIR)
    papers = c.Type(list, default=list(PAPERS))
    leave_out = c.Type(list, default=[])  # pages (glob patterns) the book does not hold
    front_title = c.Optional(c.Type(str))  # the home page's heading in the book


class PdfPlugin(BasePlugin[PdfConfig]):
    def in_book(self, src_uri: str) -> bool:
        return src_uri.endswith(".md") and not any(fnmatch(src_uri, p) for p in self.config.leave_out)

    def will_have_pdfs(self) -> bool:
        """Whether this build's site gets its PDFs: typeset at its end, or by `python -m bookpdf`
        next. Any other build (a preview, a plain build) links none: they would not be there."""
        return self.config.make or bool(os.environ.get(NEXT))

    def on_page_context(self, context: dict[str, Any], *, page: Page, config: MkDocsConfig, nav: Any) -> dict[str, Any]:
        if not self.will_have_pdfs():
            context["pdf_edition"] = None
            return context
        papers = [(paper, PAPERS[paper][1]) for paper in self.config.papers if paper in PAPERS]
        folder = self.config.dir.strip("/")
        chapter = None
        if self.in_book(page.file.src_uri):
            prefix = _prefix(page_path(page.file.src_uri))
            chapter = [(paper, f"{folder}/{prefix}-{suffix}.pdf") for paper, suffix in papers]
        context["pdf_edition"] = {
            "chapter": chapter,
            "book": [(paper, f"{folder}/book-{suffix}.pdf") for paper, suffix in papers],
        }
        return context

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        if not self.config.make:
            if os.environ.get(NEXT):
                return  # `python -m bookpdf` typesets this build next
            log.info("The PDF edition is not made by this build: `uv run --group pdf python -m bookpdf` "
                     "builds the site and writes it into %s/ (or set BOOK_PDF=true)", self.config.dir)
            return
        project = Path(config.config_file_path).parent
        try:
            report = typeset(project, Path(config.site_dir), log=log.info)
        except TypesetterMissing as exc:
            raise PluginError(f"numbook-pdf: make is on but {exc}") from exc
        log.info("numbook-pdf: %d PDFs written to %s/", len(report.outputs), self.config.dir)
