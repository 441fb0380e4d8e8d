"""The page cache: a page's outputs are reused while nothing they depend on changed.

Key (sha256) = the page's path, its cells (code, options, inline expressions — not its
prose), the plugin's own source, the Python version, the installed NumPy and matplotlib
(their files as their installer recorded them, else their versions), the values of the
environment variables the build reads (the ``env`` option), and the config that shapes
outputs or decides whether they pass (``decimals``, ``link_packages``, ``figure_check``:
turning a check on runs every page under it). An entry also lists every project file the
page's process read, each with its sha256 when read: the entry is valid only while they all
still match, so editing an engine module re-runs exactly the pages that use it. A run during
which one of them changed is not stored.

Entries are JSON, written atomically (temporary file + ``os.replace``), and start
with a checksum of the rest: a truncated or garbled entry is detected, logged and
recomputed, never served. Only successful runs are stored.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sys
from collections.abc import Collection, Iterable
from dataclasses import asdict
from importlib import metadata

from .cells import CodeCell, InlineCell, PageRun
from .inputs import environment_values
from .stored import read_checked, sha256_file, write_checked

log = logging.getLogger("mkdocs.plugins.numbook")

FORMAT_VERSION = 1
_PLUGIN_DIR = os.path.dirname(os.path.abspath(__file__))
# a module of this package that shapes no output of a block: editing it re-runs nothing
_NOT_PLUGIN = {"rendermemo.py"}


def _installed(dist: str) -> str:
    """What is installed of ``dist``: its file list with hashes (``RECORD``) where the
    installer wrote one, else its version. Reading RECORD is a few times cheaper than
    ``metadata.version``, which parses the whole METADATA file, on every build."""
    try:
        found = metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return "absent"
    record = found.read_text("RECORD")
    if record:
        return "record " + hashlib.sha256(record.encode()).hexdigest()
    return "version " + str(found.version)


def environment_fingerprint(variables: Iterable[str] = ()) -> str:
    """Hash of what, besides a page's own code and the files it reads, decides its outputs:
    the installed libraries, numbook's source, and the environment variables ``variables``."""
    h = hashlib.sha256()
    h.update(f"format {FORMAT_VERSION}\npython {sys.version}\n".encode())
    for dist in ("numpy", "matplotlib"):
        h.update(f"{dist} {_installed(dist)}\n".encode())
    h.update(numbook_source(skip=_NOT_PLUGIN).encode())
    h.update(json.dumps(environment_values(variables), sort_keys=True).encode())
    return h.hexdigest()


def numbook_source(skip: Collection[str] = ()) -> str:
    """Hash of numbook's own modules (but those named in ``skip``)."""
    h = hashlib.sha256()
    for name in sorted(os.listdir(_PLUGIN_DIR)):
        if name.endswith(".py") and name not in skip:
            h.update(name.encode() + b"\0" + (sha256_file(os.path.join(_PLUGIN_DIR, name)) or "").encode())
    return h.hexdigest()


def page_key(src_uri: str, cells: Iterable[CodeCell | InlineCell], environment: str, settings: dict) -> str:
    """The cache key of one page: its path, cells, environment and output-shaping settings.

    Line numbers are left out on purpose: outputs do not depend on them, and adding a
    paragraph above a block must not re-run it.
    """
    parts = {
        "page": src_uri,
        "environment": environment,
        "settings": settings,
        "cells": [
            {"code": c.code, "options": _run_options(c)} if isinstance(c, CodeCell) else {"expr": c.expr}
            for c in cells
        ],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _run_options(cell: CodeCell) -> dict:
    """The options that shape what a block produces (how it is shown, ``kind``, does not)."""
    options = asdict(cell.options)
    del options["kind"]
    return options


class Cache:
    """A directory of page entries, ``<page-name>.<key>.json``."""

    def __init__(self, directory: str, root: str) -> None:
        self.directory = directory
        self.root = root  # dependency paths are stored relative to it, so a cache can move
        self._hashes: dict[str, str | None] = {}

    def _path(self, src_uri: str, key: str) -> str:
        return os.path.join(self.directory, f"{self._stem(src_uri)}.{key}.json")

    @staticmethod
    def _stem(src_uri: str) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]", "_", src_uri.replace("/", "__"))

    def _file_hash(self, path: str) -> str | None:
        if path not in self._hashes:
            self._hashes[path] = sha256_file(path)
        return self._hashes[path]

    def get(self, src_uri: str, key: str) -> PageRun | None:
        """The stored run if its entry is intact and its dependencies unchanged, else None."""
        path = self._path(src_uri, key)
        try:
            body = read_checked(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.info("numbook: cannot read cache entry %s (%s); recomputing", path, exc)
            return None
        except ValueError as exc:
            log.info("numbook: damaged cache entry %s (%s); recomputing", path, exc)
            return None
        try:
            data = json.loads(body)
            if data.get("format") != FORMAT_VERSION or data.get("key") != key:
                raise ValueError("entry for another key or format")
            run = PageRun.from_dict(data["run"])
        except Exception as exc:  # noqa: BLE001 - any damage means: do not serve it
            log.info("numbook: damaged cache entry %s (%s); recomputing", path, exc)
            return None
        if run.error is not None or run.changed:
            return None
        for dep, digest in run.deps.items():
            if self._file_hash(os.path.join(self.root, dep)) != digest:
                return None
        return run

    def put(self, src_uri: str, key: str, run: PageRun) -> None:
        """Store a successful run atomically, replacing older entries for the same page (not
        one whose inputs changed while it ran)."""
        if run.error is not None or run.changed:
            return
        data = run.to_dict()
        data["started"] = data["finished"] = 0.0
        body = json.dumps({"format": FORMAT_VERSION, "key": key, "run": data}, sort_keys=True).encode()
        final = self._path(src_uri, key)
        write_checked(final, body)
        prefix = self._stem(src_uri) + "."
        for name in os.listdir(self.directory):
            if name.startswith(prefix) and name != os.path.basename(final) and len(name) == len(prefix) + 64 + 5:
                try:
                    os.unlink(os.path.join(self.directory, name))
                except OSError:
                    pass
        tag = os.path.join(self.directory, "CACHEDIR.TAG")
        if not os.path.exists(tag):
            with open(tag, "w") as f:
                f.write("Signature: 8a477f597d28d172789f06886806bc55\n# numbook page cache; safe to delete\n")
