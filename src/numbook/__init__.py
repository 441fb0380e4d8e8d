"""numbook: run a book page's Python blocks at build time and put their outputs in the page.

Author syntax (Markdown):

* a fenced block with the info string ``python exec`` runs at build time; options:
  ``hide`` (runs, code not shown; its outputs are), ``check="the claim"`` (assertions
  guarding a claim in the prose; shown as a collapsed "Checked when this page was
  built" box), ``figure="fig-id" caption="..." alt="..."`` (the one matplotlib figure
  the block leaves open), ``timeout="SECONDS"`` (sets the page's CPU time limit);
* `` `{py} expression` `` in prose is replaced by its value, formatted by
  `numbook.format.format_number`;
* ``[](#fig-id)`` / ``[](page.md#fig-id)`` become "Figure N.k";
* front matter ``number: N`` numbers the page's ``##`` sections "N.k" and its figures;
* in blocks, ``from numbook.api import table, figure_data, export, markdown, fmt``.

Layout: the core is a plain library (`book` orchestrates `parse`, `cache`, `pool` /
`runner`, `figures`, `numbering`, `render`); `plugin` is the thin MkDocs host, `extension`
with `markdown_host` and `zensical` the Python-Markdown one. The plugins that shape the site
around the pages (maths, lean pages, citations, workbooks) are the `booksite` package's.
"""
