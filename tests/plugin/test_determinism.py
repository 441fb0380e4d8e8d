"""Two clean builds give byte-identical sites."""

from __future__ import annotations

from pathlib import Path

from .test_figures import FIGURE_PAGE, OTHER_PAGE


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_two_clean_builds_are_identical(make_site, tmp_path, monkeypatch):  # j
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    pages = {
        "index.md": FIGURE_PAGE,
        "other.md": OTHER_PAGE,
        "data.md": """
            ```python exec
            import numpy as np
            from numbook.api import export, table
            rng = np.random.default_rng(0)
            w = rng.normal(size=(3, 3))
            table(w, header=["a", "b", "c"])
            export("w", w=w)
            print(w.sum())
            ```
        """,
    }
    site = make_site(pages, theme="material", extensions=["admonition", "pymdownx.details", "attr_list"])
    site.build(site_dir=tmp_path / "one", cache_dir=str(tmp_path / "cache-one"))
    site.build(site_dir=tmp_path / "two", cache_dir=str(tmp_path / "cache-two"))
    one, two = tree(tmp_path / "one"), tree(tmp_path / "two")
    assert sorted(one) == sorted(two)
    assert any(name.endswith(".svg") for name in one)
    different = [name for name in one if one[name] != two[name]]
    assert different == []
    assert not any(str(tmp_path).encode() in content for content in one.values())  # no absolute paths
