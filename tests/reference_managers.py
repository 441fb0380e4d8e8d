"""How reference managers read a page's metadata, modelled independently of numbook.cite."""

from __future__ import annotations

import re


def zotero_reads(author: str) -> tuple[str, str]:
    """(family, given) of a citation_author as Zotero's Embedded Metadata translator reads it:
    with a comma in the tag it is "Last, First", without one it is split at the last space
    (processHighwireCreators, then ZU.cleanAuthor, which first trims trailing punctuation)."""
    trimmed = re.sub(r"[\s,/\[\]:.]+$", "", author)
    if "," in author:
        family, _, given = trimmed.partition(",")
        return family.strip(), given.strip()
    given, _, family = trimmed.rpartition(" ")
    return family, given


def bibtex_formats(bibtex: str, style: str) -> list[str]:
    """The entries of ``bibtex`` as one of BibTeX's standard styles (pybtex's plain, unsrt,
    alpha) prints them; an entry that lacks a field the style requires raises."""
    from pybtex.database import parse_string
    from pybtex.plugin import find_plugin

    data = parse_string(bibtex, "bibtex")
    style_class = find_plugin("pybtex.style.formatting", style)
    return [entry.text.render_as("text") for entry in style_class().format_bibliography(data)]
