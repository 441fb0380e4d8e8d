"""booksite: the MkDocs plugins that shape the published site around numbook's pages.

None of them runs a block or knows what a page's code computes; each works on what MkDocs
hands it and on the project's files (CITATION.cff, the notebooks, the engine's source; cite
also reads numbook's list of figures), and numbook works without them:

* ``numbook-katex`` (`katex`): the maths typeset at build time, with KaTeX's fonts served by
  the site, and each numbered equation given its anchor;
* ``numbook-lean`` (`lean`): the lean page (highlighting spans that change nothing the
  reader sees removed, tables boxed, folds' content held until opened, scripts deferred);
* ``numbook-cite`` (`cite`): the citation box, meta tags and figure citations, from
  ``CITATION.cff``;
* ``numbook-notebooks`` (`notebooks`, `wheel`): the workbook pages, their downloads and
  the engine's wheel they install.

Their plugin names are the book's since before they left numbook's package (mkdocs.yml and
the Zensical host name them). They share numbook's problem boxes and signed stored files.
"""

#: The environment variables these plugins read, and why none is an input of a page's outputs
#: (tests/plugin/test_inputs.py checks the list against the code).
VARIABLES = {
    "MIKE_DOCS_VERSION": "the edition numbook-cite names while mike deploys; its boxes are made at every build",
    "SOURCE_DATE_EPOCH": "the build's date in the citations and the wheel's file dates; made at every build",
}
