"""The book on paper: a PDF per chapter and one for the whole book, typeset from a built site.

It reads the HTML that the site's build published (numbook's markup: figures, asides, checks,
folds, widgets, tables, KaTeX maths), rewrites each chapter's article for paper
(`content`), joins the chapters into one book with a title page and a table of contents
(`book`), and typesets it with WeasyPrint in every paper size asked for (`typeset`); each
chapter's PDF is cut from the book's pages, so its page numbers are the book's. It knows
nothing of the book's subject, and nothing of MkDocs beyond reading `mkdocs.yml`'s nav
(`plugin` adds the PDF links to each page and says how to make the PDFs).
"""
