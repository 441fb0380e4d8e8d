"""A page's Markdown conversion is reused only while everything it was made from is unchanged
(`numbook.rendermemo`), and a reused page is byte for byte the page a conversion makes."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml
from mkdocs.exceptions import Abort

from .test_determinism import tree

PAGES = {
    "index.md": """
        # Home

        See [the other page](other.md#results) and the term MLP.

        ```python exec
        print(6 * 7)
        ```
    """,
    "other.md": """
        # Other

        ## Results

        The answer is `{py} 6 * 7`.
    """,
}


def memo_site(make_site, pages=PAGES, **kwargs):
    """Two pages, each with the glossary appended by pymdownx.snippets (a file it reads)."""
    site = make_site(pages, extensions=["abbr", "toc"], **kwargs)
    config = yaml.safe_load(site.root.joinpath("mkdocs.yml").read_text())
    config["markdown_extensions"].append({"pymdownx.snippets": {
        "auto_append": ["includes/terms.md"], "base_path": [str(site.docs)], "check_paths": True}})
    config["exclude_docs"] = "includes/\n"
    site.root.joinpath("mkdocs.yml").write_text(yaml.safe_dump(config))
    site.page("includes/terms.md", "*[MLP]: multilayer perceptron\n")
    return site


def test_a_second_build_reuses_every_conversion_and_writes_the_same_site(make_site, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    site = memo_site(make_site)
    first = site.build(site_dir=tmp_path / "one")
    assert (first.memo.hits, first.memo.misses) == (0, 2)
    second = site.build(site_dir=tmp_path / "two")
    assert (second.memo.hits, second.memo.misses) == (2, 0)
    one, two = tree(tmp_path / "one"), tree(tmp_path / "two")
    assert one == two
    assert '<abbr title="multilayer perceptron">MLP</abbr>' in one["index.html"].decode()
    assert 'href="other/#results"' in one["index.html"].decode()


def test_an_edited_page_converts_again_and_the_others_do_not(make_site):
    site = memo_site(make_site)
    site.build()
    site.page("other.md", PAGES["other.md"].replace("The answer", "The reply"))
    plugin = site.build()
    assert (plugin.memo.hits, plugin.memo.misses) == (1, 1)
    assert "The reply is" in site.main("other")


def test_a_changed_output_converts_the_page_again(make_site):
    site = memo_site(make_site)
    site.build()
    site.page("index.md", PAGES["index.md"].replace("6 * 7", "6 * 8"))
    plugin = site.build()
    assert plugin.memo.misses == 1
    assert "48" in site.main() and "42" not in site.main()


def test_a_file_an_extension_read_is_part_of_the_key(make_site):
    site = memo_site(make_site)
    site.build()
    site.page("includes/terms.md", "*[MLP]: many-layer perceptron\n")
    plugin = site.build()
    assert plugin.memo.misses == 2  # both pages append the glossary
    assert '<abbr title="many-layer perceptron">MLP</abbr>' in site.main()


def test_a_link_whose_target_went_away_is_checked_again(make_site, caplog):
    site = memo_site(make_site)
    site.build(strict=True)
    (site.docs / "other.md").rename(site.docs / "renamed.md")
    with pytest.raises(Abort):
        site.build(strict=True)
    assert any("'other.md' is not found" in r.getMessage() for r in caplog.records)


def test_a_reused_page_logs_again_what_its_conversion_logged(make_site, caplog):
    pages = {**PAGES, "index.md": PAGES["index.md"].replace("other.md#results", "missing.md")}
    site = memo_site(make_site, pages)
    site.build()
    with caplog.at_level(logging.INFO, logger="mkdocs"):
        plugin = site.build()
    assert plugin.memo.hits == 2
    assert any("missing.md" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)
    with pytest.raises(Abort):  # strict still fails on the reused page's warning
        site.build(strict=True)


def test_a_damaged_entry_is_converted_again(make_site):
    site = memo_site(make_site)
    site.build()
    entry = next(Path(site.root, ".cache/numbook/markdown").glob("index.md.json"))
    entry.write_bytes(entry.read_bytes()[:-40])
    plugin = site.build()
    assert (plugin.memo.hits, plugin.memo.misses) == (1, 1)
    assert "42" in site.main()


def test_the_option_turns_it_off(make_site):
    site = memo_site(make_site, plugin={"markdown_cache": False})
    plugin = site.build()
    assert plugin.memo is None
    assert not Path(site.root, ".cache/numbook/markdown").exists()
