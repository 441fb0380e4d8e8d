"""Files the build keeps from one run to the next (page runs, conversions, search entries),
and the hash by which a kept result knows a file it depended on is unchanged.

Each is written atomically (a temporary file, then ``os.replace``) and starts with an HMAC
(SHA-256) of the rest, under a key of this user's kept outside the project
(``~/.local/state/numbook/cache-key``, readable by this user alone). A truncated or garbled
file, one rewritten by hand, and one made under another key (a cache restored from another
machine or another user) are all the same to the build: not used, and made again. What is
kept is plain data (JSON); nothing read back is unpickled or run.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import os
import secrets
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

log = logging.getLogger("mkdocs.plugins.numbook")

_TAG = b"numbook-hmac-sha256 "
T = TypeVar("T")


def sha256_file(path: str) -> str | None:
    """The hex sha256 of a file's bytes, or None if it cannot be read (a dependency that went away)."""
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def memo_by_digest(maxsize: int) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Remember a function of a long text (and small, hashable options) in this process, by the
    text's sha256: `mkdocs serve` hands the same pages and figures to it at every save, and a key
    holds 32 bytes of its text, not a copy (a result may still hold parts of it). Only for a pure
    function whose result no caller changes; the ``maxsize`` used least recently go first."""

    def decorate(function: Callable[..., T]) -> Callable[..., T]:
        results: dict[tuple[Any, ...], T] = {}

        @functools.wraps(function)
        def memoized(text: str, *options: Any, **named: Any) -> T:
            key = (hashlib.sha256(text.encode()).digest(), options, tuple(sorted(named.items())))
            if key in results:
                results[key] = results.pop(key)  # now the most recently used
            else:
                if len(results) >= maxsize:
                    results.pop(next(iter(results)))
                results[key] = function(text, *options, **named)
            return results[key]

        return memoized

    return decorate


def key_path() -> Path:
    return Path.home() / ".local" / "state" / "numbook" / "cache-key"


@functools.lru_cache(maxsize=1)
def _key() -> bytes:
    """This user's key, made on first use. A key file others could have written is not trusted:
    the build then keys this process alone (nothing kept before is used, nor after)."""
    path = key_path()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32))
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise PermissionError(f"{path} is not a file of this user's alone (mode {stat.filemode(info.st_mode)})")
        key = path.read_text(encoding="ascii").strip()
        if len(key) < 32:
            raise ValueError(f"{path} holds no key")
        return key.encode()
    except (OSError, ValueError) as exc:
        log.warning("numbook: cannot use the cache key (%s): nothing the cache holds is used", exc)
        return secrets.token_bytes(32)


def mac(body: bytes) -> str:
    """The hex HMAC-SHA256 of ``body`` under this user's key."""
    return hmac.new(_key(), body, hashlib.sha256).hexdigest()


def write_checked(path: str, body: bytes) -> None:
    """Write ``body`` to ``path`` behind its HMAC, all at once or not at all."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_TAG + mac(body).encode() + b"\n" + body)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_checked(path: str) -> bytes:
    """The body written by `write_checked`; ValueError if the file is damaged or was not made
    under this user's key (OSError as open's)."""
    with open(path, "rb") as f:
        head, _, body = f.read().partition(b"\n")
    if not (head.startswith(_TAG) and hmac.compare_digest(head[len(_TAG):], mac(body).encode())):
        raise ValueError("not made under this user's key (damaged, rewritten, or from elsewhere)")
    return body
