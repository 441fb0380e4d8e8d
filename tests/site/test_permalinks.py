"""The book keeps every address it has published (permalinks.json), whatever pages it adds."""

from __future__ import annotations

from pathlib import Path

from numbook import permalinks

from .conftest import ROOT


def test_the_build_keeps_every_published_page_and_anchor(built_site: Path):
    manifest = permalinks.load(ROOT / permalinks.MANIFEST)
    assert manifest, "permalinks.json is missing: run `uv run python -m numbook.permalinks --update`"
    # the manifest holds the citable addresses: sections and figures of the numbered parts too
    assert {"p2-qkv", "fig-p2-attn"} <= set(manifest["part2-one-head/"])
    dropped = permalinks.missing(manifest, built_site)
    assert not dropped, "\n".join(dropped)
