"""A warm build of the book (every page's runs, conversions and search entries reused) writes
the very site a cold build writes: the caches save time and change nothing."""

from __future__ import annotations

from pathlib import Path

from .conftest import build_book


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_warm_build_is_the_cold_build_byte_for_byte(built_site, book_cache, tmp_path):
    plugin = build_book(tmp_path / "warm", book_cache)
    assert plugin.pages_executed == 0
    assert plugin.memo.misses == 0 and plugin.memo.hits >= 10
    cold, warm = tree(built_site), tree(tmp_path / "warm")
    assert sorted(cold) == sorted(warm)
    assert [name for name in cold if cold[name] != warm[name]] == []
