"""What a result is made from: the project files a process read, each hashed as it was read.

A page's run, and a page's Markdown conversion, depend on every project file their process
opens for reading, whatever opens it (an import, a block, matplotlib reading a style sheet,
pymdownx.snippets reading the glossary). One audit hook per process sees each ``open`` and,
while a `Reads` is active, hashes a file under the project's root when it is first opened,
before anything is made from it; `Reads.changed` says afterwards which ones changed meanwhile.
Left out: the build's outputs and caches, the installed packages (their versions are part of
every key), numbook itself (so is its source), and files opened only to be written.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from .stored import sha256_file

NUMBOOK_DIR = os.path.dirname(os.path.abspath(__file__))


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


class Reads:
    """Files under ``root`` (but not under ``skip``) opened for reading, each with its sha256
    when first opened."""

    def __init__(self, root: str, skip: Iterable[str] = ()) -> None:
        self.root = os.path.abspath(root)
        self.skip = tuple(os.path.abspath(d) for d in [sys.prefix, NUMBOOK_DIR, *skip])
        self.files: dict[str, str] = {}  # absolute path -> sha256

    def tracks(self, path: str) -> bool:
        return _inside(path, self.root) and not any(_inside(path, d) for d in self.skip)

    def note(self, path: str) -> None:
        """``path`` is about to be read: hash it now, the first time."""
        if path not in self.files and self.tracks(path):
            digest = sha256_file(path)
            if digest is not None:  # a directory, or a file that is not there
                self.files[path] = digest

    def relative(self) -> dict[str, str]:
        """The files read, relative to the root (a cache may move with its project)."""
        return {os.path.relpath(p, self.root): d for p, d in sorted(self.files.items())}

    def changed(self) -> list[str]:
        """The files read whose bytes are no longer the ones read (relative to the root)."""
        return sorted(os.path.relpath(p, self.root) for p, d in self.files.items() if sha256_file(p) != d)


_active: list[Reads] = []
_busy = False  # hashing a file opens it: that open is not another read
_installed = False


def _reading(args: tuple[Any, ...]) -> str | None:
    """The path an ``open`` audit event reads, or None (a write, a file descriptor)."""
    if not args or not isinstance(args[0], (str, bytes)):
        return None
    mode = args[1] if len(args) > 1 else None
    flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
    if isinstance(mode, str):
        reads = "r" in mode or ("a" in mode and "+" in mode)
    else:  # os.open: its flags say
        reads = flags & os.O_ACCMODE != os.O_WRONLY and not flags & os.O_TRUNC
    return os.path.abspath(os.fsdecode(args[0])) if reads else None


def _hook(event: str, args: tuple[Any, ...]) -> None:
    global _busy
    if event != "open" or not _active or _busy:
        return
    path = _reading(args)
    if path is None:
        return
    _busy = True
    try:
        for reads in _active:
            reads.note(path)
    finally:
        _busy = False


def start(reads: Reads) -> Reads:
    """Record into ``reads`` every project file this process opens for reading from now on."""
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
    _active.append(reads)
    return reads


@contextmanager
def recording(reads: Reads) -> Iterator[Reads]:
    """Record into ``reads`` every project file this process opens for reading meanwhile."""
    start(reads)
    try:
        yield reads
    finally:
        _active.remove(reads)


#: Files read while this process prepared itself for its page workers (`numbook.pool.preimport`):
#: every worker forked from it starts from what they made, so they are inputs of every page.
inherited: dict[str, str] = {}


#: The environment variables numbook itself reads, and why none is an input of a page's outputs
#: (the project's code names its own in the ``env`` option; tests/plugin/test_inputs.py checks both).
NUMBOOK_VARIABLES = {
    "NUMBOOK_ALLOW_UNEXECUTED": "lets a build publish unexecuted pages; part of every stored conversion's key",
    "SOURCE_DATE_EPOCH": "the date MkDocs writes in sitemap.xml; nothing numbook stores depends on it",
    "OPENBLAS_NUM_THREADS": "set for the page workers when unset (their BLAS threads), never read back",
    "OMP_NUM_THREADS": "as OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS": "as OPENBLAS_NUM_THREADS",
}


def environment_values(names: Iterable[str]) -> dict[str, str | None]:
    """The values of the environment variables the build reads (None: not set)."""
    return {name: os.environ.get(name) for name in sorted(set(names))}
