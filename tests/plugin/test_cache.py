"""The cache: nothing changed or prose edited -> nothing runs; engine edits re-run exactly the importers."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from .conftest import build_error

PAGE_A = """
# A

Some prose.

```python exec
import engine
print("engine says", engine.VALUE)
```
"""

PAGE_B = """
# B

```python exec
import json
import logging
with open("src/tables/data.json") as f:
    data = json.load(f)
print("b sum", sum(data))
```
"""

PAGE_C = """
# C

```python exec
print("c is independent", 6 * 7)
```
"""


def make(make_site):
    site = make_site({"a.md": PAGE_A, "b.md": PAGE_B, "c.md": PAGE_C})
    site.write("src/engine.py", "VALUE = 1\n")
    site.write("src/tables/data.json", "[1, 2, 3]\n")
    return site


def entries(site) -> list[Path]:
    return sorted((site.root / ".cache" / "numbook").glob("*.json"))


def test_nothing_changed_executes_nothing(make_site, caplog):  # h
    site = make(make_site)
    first = site.build()
    assert sorted(first.book.executed) == ["a.md", "b.md", "c.md"]
    assert first.book.from_cache == []
    caplog.set_level(logging.INFO, logger="mkdocs.plugins.numbook")
    caplog.clear()
    again = site.build()
    assert again.book.executed == []
    assert sorted(again.book.from_cache) == ["a.md", "b.md", "c.md"]
    assert (again.pages_executed, again.pages_from_cache) == (0, 3)
    assert "numbook: 0 pages executed, 3 from cache" in caplog.messages
    assert "engine says 1" in site.main("a")  # outputs served from the cache


def test_prose_edit_executes_nothing(make_site):  # h
    site = make(make_site)
    site.build()
    site.page("a.md", PAGE_A.replace("Some prose.", "Some prose,\n\nnow longer, moving the block down."))
    plugin = site.build()
    assert plugin.book.executed == []
    assert "now longer" in site.main("a") and "engine says 1" in site.main("a")


def test_code_edit_executes_that_page_only(make_site):  # h
    site = make(make_site)
    site.build()
    site.page("c.md", PAGE_C.replace("6 * 7", "6 * 8"))
    plugin = site.build()
    assert plugin.book.executed == ["c.md"]
    assert "c is independent 48" in site.main("c")


def test_engine_edit_reexecutes_exactly_the_importing_page(make_site):  # h
    site = make(make_site)
    site.build()
    site.write("src/engine.py", "VALUE = 2\n")  # same size, same second: no stale bytecode either
    plugin = site.build()
    assert plugin.book.executed == ["a.md"]
    assert "engine says 2" in site.main("a")


def test_data_file_edit_reexecutes_the_page_that_read_it(make_site):  # h
    site = make(make_site)
    site.build()
    site.write("src/tables/data.json", "[1, 2, 4]\n")
    plugin = site.build()
    assert plugin.book.executed == ["b.md"]
    assert "b sum 7" in site.main("b")


def test_damaged_entries_are_recomputed_not_served(make_site):  # h
    site = make(make_site)
    site.build()
    by_page = {p.name.split(".md.")[0]: p for p in entries(site)}
    # truncated
    raw = by_page["a"].read_bytes()
    by_page["a"].write_bytes(raw[: len(raw) // 2])
    # valid JSON, but tampered: the output says something the code never printed
    raw = by_page["c"].read_bytes()
    assert b"c is independent 42" in raw
    by_page["c"].write_bytes(raw.replace(b"c is independent 42", b"c is independent 99"))
    plugin = site.build()
    assert sorted(plugin.book.executed) == ["a.md", "c.md"]
    assert plugin.book.from_cache == ["b.md"]
    assert "engine says 1" in site.main("a")
    assert "c is independent 42" in site.main("c") and "99" not in site.main("c")
    # and the recomputed entries are sound again
    assert site.build().book.executed == []


def test_garbage_entry_is_recomputed(make_site):  # h
    site = make(make_site)
    site.build()
    for p in entries(site):
        p.write_bytes(b"\x00\xff not json at all")
    plugin = site.build()
    assert sorted(plugin.book.executed) == ["a.md", "b.md", "c.md"]


def test_failure_is_never_cached(make_site):  # h
    site = make_site({"x.md": """
        ```python exec
        import flag
        assert flag.OK, "not yet"
        print("passed")
        ```
    """})
    site.write("src/flag.py", "OK = False\n")
    assert "not yet" in build_error(site)
    assert entries(site) == []
    assert "not yet" in build_error(site)  # runs again, fails again: nothing was stored
    site.write("src/flag.py", "OK = True\n")
    plugin = site.build()
    assert plugin.book.executed == ["x.md"]
    assert len(entries(site)) == 1
    entry = entries(site)[0].read_text()
    body = json.loads(entry.split("\n", 1)[1])
    assert body["run"]["error"] is None
    assert body["run"]["deps"] == {"src/flag.py": body["run"]["deps"]["src/flag.py"]}


def test_config_change_reexecutes(make_site):
    site = make(make_site)
    site.build()
    plugin = site.build(decimals=5)
    assert sorted(plugin.book.executed) == ["a.md", "b.md", "c.md"]


class _Installed:
    """A stand-in for an installed distribution: its RECORD (None: the installer wrote none)."""

    def __init__(self, record: str | None, version: str = "1.0") -> None:
        self.record, self.version = record, version

    def read_text(self, name: str) -> str | None:
        return self.record if name == "RECORD" else None


def test_a_reinstalled_numpy_or_matplotlib_changes_the_environment(monkeypatch):
    from importlib import metadata

    from numbook import cache

    installed = {"numpy": _Installed("numpy/__init__.py,sha256=aaa,10\n"), "matplotlib": _Installed(None, "3.9")}

    def distribution(name: str) -> _Installed:
        if name not in installed:
            raise metadata.PackageNotFoundError(name)
        return installed[name]

    monkeypatch.setattr(cache.metadata, "distribution", distribution)
    before = cache.environment_fingerprint()
    assert cache.environment_fingerprint() == before  # the same installation, the same key
    installed["numpy"] = _Installed("numpy/__init__.py,sha256=bbb,10\n")  # one file differs, same version
    after_numpy = cache.environment_fingerprint()
    assert after_numpy != before
    installed["matplotlib"] = _Installed(None, "3.10")  # no RECORD: its version decides
    assert cache.environment_fingerprint() != after_numpy
    del installed["matplotlib"]
    assert cache._installed("matplotlib") == "absent"
