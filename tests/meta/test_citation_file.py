"""CITATION.cff: valid Citation File Format, and in step with the site and the package."""

from __future__ import annotations

import datetime
import json
import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = Path(__file__).with_name("cff-1.2.0.schema.json")


def cff() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def validator():
    from jsonschema import Draft7Validator, FormatChecker

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema, format_checker=FormatChecker())


def as_json(value):
    """YAML as JSON sees it (an unquoted date would be a date object, not a string)."""
    return json.loads(json.dumps(value, default=str))


def test_citation_file_is_valid_cff_1_2_0():
    data = cff()
    assert data["cff-version"] == "1.2.0"
    errors = sorted(validator().iter_errors(as_json(data)), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"authors": []}, "authors"),
        ({"date-released": "1 December 2026"}, "date-released"),
        ({"url": "not a url"}, "url"),
        ({"titel": "typo"}, "titel"),
    ],
)
def test_the_validator_rejects_broken_files(change, reason):
    """The schema check is real: each of these breaks the file and is caught, by field."""
    broken = {**as_json(cff()), **change}
    errors = list(validator().iter_errors(broken))
    assert errors
    assert any(reason in "/".join(map(str, e.path)) + e.message for e in errors), [e.message for e in errors]


def test_citation_file_agrees_with_the_site_and_the_package():
    """The book's address, title and version are written in three files; they must agree."""
    data = cff()
    site = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Lenient)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert data["url"] == site["site_url"]
    assert data["title"] == site["site_name"]
    assert str(data["version"]) == project["version"]
    datetime.date.fromisoformat(str(data["date-released"]))
    assert site["site_author"] == " and ".join(a["name"] for a in data["authors"])


def test_the_author_is_an_organisation_that_bibtex_keeps_whole():
    """A reference manager shows one corporate author, not a person called "book" or "authors"."""
    from booksite.cite import edition_from_cff, load_cff, page_citation

    edition = edition_from_cff(load_cff(ROOT / "CITATION.cff"), cff()["url"])
    (author,) = edition.authors
    name = cff()["authors"][0]["name"]
    assert "family-names" not in cff()["authors"][0] and not name.lower().startswith(("the ", "authors"))
    assert author.bibtex == "{" + name + "}"  # double braces in the field: one name, not first/last
    assert author.inverted == author.plain == name
    book = page_citation(edition, edition.url, edition.title, whole_book=True)
    assert re.search(r"^\s*author\s*=\s*\{\{" + re.escape(name) + r"\}\},$", book.bibtex, re.M)
    assert book.plain.startswith(f"{name} ({edition.year}).")


class _Lenient(yaml.SafeLoader):
    """mkdocs.yml has tags (!ENV, !!python/name) that only MkDocs resolves: read them as text."""


_Lenient.add_multi_constructor("!", lambda loader, suffix, node: None)
_Lenient.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
