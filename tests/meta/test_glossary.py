"""One glossary and one symbol table for the whole book.

* The glossary is one file, `docs/includes/glossary.md`, appended to every page by
  pymdownx.snippets (each use of a term gets its definition as a tooltip); no page keeps a
  copy of its own, every entry is a term the chapters use, and each term has one meaning.
* The Notation page names every parameter of every model, Part 4's included, and gives each
  letter one meaning (h counts heads, w is the window).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tinyformer.models import encdec

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GLOSSARY = DOCS / "includes" / "glossary.md"
ENTRY = re.compile(r"^\*\[(?P<term>[^\]]+)\]: (?P<definition>.+)$")
FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.M | re.S)


def glossary() -> dict[str, str]:
    entries: dict[str, str] = {}
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        m = ENTRY.match(line)
        if m:
            assert m["term"] not in entries, f"{m['term']} is defined twice"
            entries[m["term"]] = m["definition"]
    return entries


def chapter_prose() -> str:
    pages = [p for p in DOCS.rglob("*.md") if "includes" not in p.parts]
    return "\n".join(FENCE.sub("", p.read_text(encoding="utf-8")) for p in pages)


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_multi_constructor("", lambda loader, suffix, node: None)  # !ENV, !!python/...


def test_the_glossary_is_appended_to_every_page_from_one_file():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    extensions = {next(iter(e)) if isinstance(e, dict) else e: e for e in config["markdown_extensions"]}
    snippets = extensions["pymdownx.snippets"]["pymdownx.snippets"]
    assert snippets["auto_append"] == ["includes/glossary.md"] and snippets["base_path"] == ["docs"]
    # the browser shows an <abbr>'s title as its tooltip; Material's own tooltips (content.tooltips)
    # cost the decoder page 0.7 s of script on Lighthouse's phone, so they are left off
    assert "abbr" in extensions and "content.tooltips" not in config["theme"]["features"]
    assert "includes/" in config["exclude_docs"]  # the file is not a page of its own
    for page in DOCS.rglob("*.md"):
        if page != GLOSSARY:
            copies = [line for line in page.read_text(encoding="utf-8").splitlines() if ENTRY.match(line)]
            assert not copies, f"{page.relative_to(ROOT)} defines its own abbreviations: {copies[:3]}"


def test_every_glossary_term_is_used_and_defined_once():
    entries = glossary()
    assert len(entries) >= 30
    prose = chapter_prose()
    unused = [t for t in entries if not re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", prose)]
    assert not unused, f"glossary terms no page uses: {unused}"
    # a capitalised form says the same as the lower-case one
    for term, definition in entries.items():
        lower = term[0].lower() + term[1:]
        if lower != term and lower in entries:
            assert entries[lower] == definition, f"{term} and {lower} are defined differently"


def test_the_notation_page_names_every_parameter_of_part_4():
    notation = (DOCS / "notation.md").read_text(encoding="utf-8")
    for name in encdec.PARAM_SHAPES:
        prefix, _, rest = name.partition("_W_")
        if rest:  # enc_W_Q -> W_Q^{\mathrm{enc}}
            symbol = f"W_{rest}^{{\\mathrm{{{prefix}}}}}"
        elif name in ("W_vocab", "b_vocab"):
            symbol = f"{name[0]}_{{\\text{{vocab}}}}"
        else:  # src_embed -> E^{\mathrm{src}}_{\text{tok}}, tgt_pos -> E^{\mathrm{tgt}}_{\text{pos}}
            side, _, table = name.partition("_")
            symbol = f"E^{{\\mathrm{{{side}}}}}_{{\\text{{{'tok' if table == 'embed' else table}}}}}"
            assert f"`{name}`" in notation, f"the Notation page does not name the code's {name}"
        assert symbol in notation, f"the Notation page has no symbol for Part 4's {name} ({symbol})"


def test_each_letter_has_one_meaning_on_the_notation_page():
    notation = (DOCS / "notation.md").read_text(encoding="utf-8")
    symbols = re.search(r"## Symbols.*?\n\n(\|.*?)\n\n", notation, re.S).group(1)
    first_cells = [row.split("|")[1].strip() for row in symbols.splitlines()[2:]]
    letters = [cell for cell in first_cells if re.fullmatch(r"\$[a-zA-Z]\$", cell)]
    assert len(letters) == len(set(letters)), f"a letter has two rows: {letters}"
    assert "$h$" in letters and "heads" in symbols.split("| $h$ |")[1].split("\n")[0]
