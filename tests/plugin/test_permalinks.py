"""numbook.permalinks: a build may add pages and anchors, never drop a published one
(unless the page is redirected, by mkdocs-redirects, to a page that has the anchors)."""

from __future__ import annotations

import json

import yaml

from numbook import permalinks

PAGE = """\
# Scores

## Raw scores {#raw}

## Scaled scores

```python
x = 1
```

Text[^1].

[^1]: A footnote.

=== "One"

    first

=== "Two"

    second
"""


def throwaway(make_site, pages, redirects=None):
    site = make_site(pages, theme="material", extensions=["attr_list", "footnotes", "pymdownx.superfences",
                                        {"pymdownx.tabbed": {"alternate_style": True}}])
    config = yaml.safe_load((site.root / "mkdocs.yml").read_text())
    config["plugins"].append({"redirects": {"redirect_maps": redirects or {}}})
    (site.root / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    return site


def test_collect_lists_pages_and_citable_anchors(make_site):
    site = throwaway(make_site, {"index.md": "# Home\n", "scores.md": PAGE})
    site.build()
    pages = permalinks.collect(site.root / "site")
    assert set(pages) == {"", "scores/"}  # not 404.html, not assets
    # sections by explicit id and by slug; not the title, the tabs, the footnotes
    assert pages["scores/"] == ["raw", "scaled-scores"]


def test_new_anchors_pass_dropped_ones_fail_redirects_keep_them(make_site, tmp_path):
    site = throwaway(make_site, {"index.md": "# Home\n", "scores.md": PAGE})
    site.build()
    manifest = permalinks.collect(site.root / "site")

    # new page, new anchor: nothing listed is missing
    site.page("scores.md", PAGE + "\n## Softmax {#softmax}\n")
    site.page("more.md", "# More\n\n## Extra {#extra}\n")
    site.build()
    assert permalinks.missing(manifest, site.root / "site") == []

    # an anchor renamed: reported, with the fix
    site.page("scores.md", PAGE.replace("{#raw}", "{#raw-scores}"))
    site.build()
    [problem] = permalinks.missing(manifest, site.root / "site")
    assert problem.startswith("/scores/#raw: the anchor is gone") and '<span id="raw"></span>' in problem
    # ... kept beside the new one: fine again
    site.page("scores.md", PAGE.replace("## Raw scores {#raw}", "## Raw scores {#raw-scores}\n\n<span id=\"raw\"></span>"))
    site.build()
    assert permalinks.missing(manifest, site.root / "site") == []

    # the page moved without a redirect: reported
    (site.docs / "scores.md").rename(site.docs / "logits.md")
    site.build()
    [problem] = permalinks.missing(manifest, site.root / "site")
    assert problem.startswith("/scores/: the page is gone") and "redirect_maps" in problem
    # with mkdocs-redirects' redirect from the old address, the anchors are found on the new page
    throwaway_config = yaml.safe_load((site.root / "mkdocs.yml").read_text())
    throwaway_config["plugins"][-1] = {"redirects": {"redirect_maps": {"scores.md": "logits.md"}}}
    (site.root / "mkdocs.yml").write_text(yaml.safe_dump(throwaway_config, sort_keys=False))
    site.build()
    assert permalinks.missing(manifest, site.root / "site") == []
    assert "scores/" not in permalinks.collect(site.root / "site")  # a redirect is not a page


def test_update_adds_and_never_removes(make_site, tmp_path):
    site = throwaway(make_site, {"index.md": "# Home\n", "scores.md": PAGE})
    site.build()
    manifest = tmp_path / "permalinks.json"
    manifest.write_text(permalinks.dump({"scores/": ["raw"], "old/": ["kept"]}))
    code = permalinks.main(["--update", "--manifest", str(manifest), "--site", str(site.root / "site")])
    data = json.loads(manifest.read_text())
    assert data["pages"] == {"": [], "old/": ["kept"], "scores/": ["raw", "scaled-scores"]}
    assert "permalinks --update" in data["about"]
    assert code == 1  # old/ is listed but gone from the build: said, and not forgotten
    assert permalinks.main(["--check", "--manifest", str(manifest), "--site", str(site.root / "site")]) == 1
