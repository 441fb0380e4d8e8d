"""numbook.permalinks: a build may add pages and anchors, never drop a published one
(unless the page is redirected, by mkdocs-redirects, to a page that has the anchors)."""

from __future__ import annotations

import json
import logging
import re

import yaml

from numbook import permalinks

from .conftest import logged

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


def checked_build(site, **kwargs) -> tuple[bool, str]:
    """(whether the build finished, its warnings and errors)."""
    from mkdocs.exceptions import Abort

    with logged(logging.WARNING) as messages:
        try:
            site.build(**kwargs)
            finished = True
        except Abort:
            finished = False
    return finished, "\n".join(messages)


def test_a_strict_build_fails_on_an_address_the_manifest_does_not_list_or_has_lost(make_site):
    """With `permalinks: permalinks.json`, `mkdocs build --strict` itself says when a new page or
    anchor needs recording (with the command) and when a published one is gone, as the book's
    site test does; `--update` records them, and `serve` is left alone."""
    site = make_site({"index.md": "# Home\n", "scores.md": PAGE}, theme="material",
                     plugin={"permalinks": "permalinks.json"}, extensions=["attr_list"])
    manifest = site.root / "permalinks.json"
    update = ["--update", "--manifest", str(manifest), "--config", str(site.root / "mkdocs.yml")]
    command = "uv run python -m numbook.permalinks --update"

    finished, said = checked_build(site, strict=True)  # no manifest yet: every address is new
    assert not finished and "permalinks.json does not list" in said and "/scores/#raw" in said and command in said
    assert permalinks.main(update) == 0  # (its own strict build does not stop at them)
    assert checked_build(site, strict=True) == (True, "")

    # a new page and a new section: the strict build names them and the command
    site.page("scores.md", PAGE + "\n## Softmax {#softmax}\n")
    site.page("more.md", "# More\n\n## Extra {#extra}\n")
    finished, said = checked_build(site, strict=True)
    assert not finished
    assert re.search(r"does not list 3 address\(es\).*\n  /more/\n  /more/#extra\n  /scores/#softmax\n", said), said
    assert said.count(command) == 1 and "drops" not in said
    assert checked_build(site)[0]  # not strict: a warning, and the site is built
    assert checked_build(site, serve=True) == (True, "")  # serving: not checked (every save would stop)
    assert permalinks.main(update) == 0
    assert checked_build(site, strict=True) == (True, "")

    # an anchor renamed: the published one is missing, with the fix
    site.page("scores.md", (PAGE + "\n## Softmax {#softmax}\n").replace("{#raw}", "{#raw-scores}"))
    finished, said = checked_build(site, strict=True)
    assert not finished and "drops 1 published address(es)" in said and "/scores/#raw: the anchor is gone" in said


def test_list_gives_each_pages_link_targets_the_link_to_write_and_what_it_reads(make_site, capsys):
    """An author looks up what to link to without building: `--list` numbers as a build does."""
    part = """\
---
number: 3
title: Scores
---

## Raw scores {#p3-raw}

$$\\label{eq-p3-sum}
s = q \\cdot k
$$

```python exec figure="fig-p3-bars" caption="Three bars" alt="Bars."
print(1)
```

## Scaled {#p3-scaled}

<details class="aside" id="p3-aside-why" markdown="1">
<summary>Look closer: why <em>scale</em></summary>

Inside.

</details>
"""
    site = make_site({"index.md": "# Home\n\n## About {#about}\n", "scores.md": part}, extensions=["attr_list"],
                     nav=[{"Home": "index.md"}, {"Scores": "scores.md"}])
    config = str(site.root / "mkdocs.yml")
    assert permalinks.main(["--list", "--config", config]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "docs/index.md · Home",
        "  [words](index.md#about)  section        About",  # no number: a link with words
        "",
        "docs/scores.md · Part 3 · Scores",
        "  [](scores.md#p3-raw)             Section 3.1    Raw scores",
        "  [](scores.md#eq-p3-sum)          Equation 3.1",
        "  [](scores.md#fig-p3-bars)        Figure 3.1     Three bars",
        "  [](scores.md#p3-scaled)          Section 3.2    Scaled",
        "  [words](scores.md#p3-aside-why)  aside          Look closer: why scale",
    ]
    assert permalinks.main(["--list", "--config", config, "scores.md"]) == 0
    assert capsys.readouterr().out.startswith("docs/scores.md · Part 3 · Scores\n")
