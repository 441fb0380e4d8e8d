"""How reference managers read a page's metadata, modelled independently of booksite.cite."""

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


def zotero_reads_coins(context_object: str) -> dict:
    """What Zotero's COinS translator takes from a COinS ``title`` (an OpenURL ContextObject,
    key/encoded-value), as its OpenURL parser reads one: ``rft.au`` is a person's name
    ("Last, First" when it has a comma), ``rft.aucorp`` an organisation kept whole (a
    single-field creator, written here with ``None`` as its given name)."""
    from urllib.parse import parse_qsl

    item: dict = {"creators": []}
    for key, value in parse_qsl(context_object, keep_blank_values=True):
        if key == "rft.genre":
            item["itemType"] = {"book": "book", "bookitem": "bookSection"}.get(value, value)
        elif key == "rft.btitle":
            item["bookTitle" if "rft.atitle" in context_object else "title"] = value
        elif key == "rft.atitle":
            item["title"] = value
        elif key == "rft.au":
            item["creators"].append(zotero_reads(value) if "," in value else tuple(reversed(value.rsplit(" ", 1))))
        elif key == "rft.aucorp":
            item["creators"].append((value, None))
        elif key in ("rft.date", "rft.edition", "rft.pub"):
            item[key[4:]] = value
        elif key == "rft_id":
            item["url"] = value
    return item
