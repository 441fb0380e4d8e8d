"""Nothing the build reads back from its cache can run code or put words in a page.

Every file under ``.cache`` (page runs, stored conversions, search entries, the tag) is
tampered with, in several ways: cut short, one byte flipped, its words rewritten with the
old plain sha256 recomputed (content injection), rewritten under another HMAC key (a cache
restored from elsewhere), replaced by a pickle that would make a directory if it were ever
unpickled. The build must then write exactly the site an untouched cache gives, and the
pickle must never have run.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from .test_determinism import tree

MARK = b"secret-output-42"

PAGES = {
    "index.md": """
        # Home

        ## Numbers {#numbers}

        The answer is `{py} 6 * 7`.

        ```python exec
        print("secret-output-42")
        ```
    """,
    "other.md": """
        # Other

        Text about secret-output-42, not run.
    """,
}


class Pwn:
    """Unpickling this makes a directory: proof that code from the cache ran."""

    target = ""

    def __reduce__(self):
        return (os.mkdir, (self.target,))


def _with_header(body: bytes, header: bytes) -> bytes:
    return header + b"\n" + body


def _body(data: bytes) -> bytes:
    return data.partition(b"\n")[2]


def truncated(data: bytes, pwned: Path) -> bytes:
    return data[: len(data) // 2]


def flipped(data: bytes, pwned: Path) -> bytes:
    i = len(data) * 3 // 4
    return data[:i] + bytes([data[i] ^ 0x20]) + data[i + 1:]


def injected_sha256(data: bytes, pwned: Path) -> bytes:
    """What defeated a plain checksum: new words, the checksum recomputed."""
    body = _body(data).replace(MARK, b"INJECTED") + b" "
    return _with_header(body, hashlib.sha256(body).hexdigest().encode())


def injected_other_key(data: bytes, pwned: Path) -> bytes:
    """A cache made (or rewritten) under another user's key."""
    body = _body(data).replace(MARK, b"INJECTED") + b" "
    return _with_header(body, b"numbook-hmac-sha256 " + hmac.new(b"k" * 32, body, hashlib.sha256).hexdigest().encode())


def pickled(data: bytes, pwned: Path) -> bytes:
    Pwn.target = str(pwned)
    return pickle.dumps(Pwn())


WAYS: dict[str, Callable[[bytes, Path], bytes]] = {
    "truncated": truncated,
    "one byte flipped": flipped,
    "rewritten, sha256 recomputed": injected_sha256,
    "rewritten under another key": injected_other_key,
    "a pickle": pickled,
}


@pytest.fixture
def warm(make_site, tmp_path, monkeypatch):
    """A built site with a warm cache of every kind (page runs, conversions, search entries)."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    site = make_site(PAGES, theme="material")  # (numbook-lean keeps the entries of Material's search)
    config = (site.root / "mkdocs.yml").read_text()
    config = config.replace("plugins:\n", "plugins:\n- search\n- numbook-lean:\n    search_cache: .cache/numbook/search\n")
    (site.root / "mkdocs.yml").write_text(config)
    site.build(strict=True, site_dir=tmp_path / "clean")
    pristine = tmp_path / "pristine-cache"
    shutil.copytree(site.root / ".cache", pristine)
    folders = {p.parent.name for p in pristine.rglob("*.json")}
    assert folders == {"numbook", "markdown", "search"}, folders  # page runs, conversions, search entries
    return site, tree(tmp_path / "clean"), pristine


def check_build(site, clean: dict[str, bytes], site_dir: Path, pwned: Path) -> None:
    plugin = site.build(strict=True, site_dir=site_dir)
    assert not pwned.exists(), "a pickle from the cache was loaded"
    built = tree(site_dir)
    assert not [name for name, data in built.items() if b"INJECTED" in data], "tampered content was published"
    assert sorted(name for name in built.keys() | clean.keys() if built.get(name) != clean.get(name)) == []
    assert plugin.book.executed == ["index.md"]  # its entry was not trusted: the page ran again


@pytest.mark.parametrize("way", list(WAYS))
def test_every_file_of_the_cache_tampered_with(warm, tmp_path, way):
    site, clean, pristine = warm
    pwned = tmp_path / "pwned"
    files = sorted(p for p in (site.root / ".cache").rglob("*") if p.is_file())
    for path in files:
        path.write_bytes(WAYS[way](path.read_bytes(), pwned))
    check_build(site, clean, tmp_path / "tampered", pwned)


def test_each_file_of_the_cache_rewritten_alone(warm, tmp_path):
    """One file at a time, its words rewritten and its plain checksum recomputed: only what
    that file held is made again."""
    site, clean, pristine = warm
    pwned = tmp_path / "pwned"
    for n, name in enumerate(sorted(p.relative_to(pristine) for p in pristine.rglob("*") if p.is_file())):
        shutil.rmtree(site.root / ".cache")
        shutil.copytree(pristine, site.root / ".cache")
        path = site.root / ".cache" / name
        path.write_bytes(injected_sha256(path.read_bytes(), pwned))
        plugin = site.build(strict=True, site_dir=tmp_path / f"one-{n}")
        built = tree(tmp_path / f"one-{n}")
        assert not [f for f, data in built.items() if b"INJECTED" in data], name
        assert sorted(f for f in built.keys() | clean.keys() if built.get(f) != clean.get(f)) == [], name
        page_run = name.parent == Path("numbook") and name.name.startswith("index.md.")
        assert plugin.book.executed == (["index.md"] if page_run else []), name


def test_the_key_is_this_users_alone():
    from numbook.stored import key_path, mac

    mac(b"make the key")
    info = key_path().stat()
    assert info.st_mode & 0o077 == 0 and info.st_uid == os.getuid()
    assert key_path().parent.stat().st_mode & 0o077 == 0
