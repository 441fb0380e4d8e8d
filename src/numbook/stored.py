"""Files the build keeps from one run to the next (page runs, conversions, search entries),
and the hash by which a kept result knows a file it depended on is unchanged.

Each is written atomically (a temporary file, then ``os.replace``) and starts with the sha256
of the rest: a truncated or garbled file is detected when read, never used.
"""

from __future__ import annotations

import hashlib
import os
import tempfile


def sha256_file(path: str) -> str | None:
    """The hex sha256 of a file's bytes, or None if it cannot be read (a dependency that went away)."""
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def write_checked(path: str, body: bytes) -> None:
    """Write ``body`` to ``path`` behind its checksum, all at once or not at all."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_checked(path: str) -> bytes:
    """The body written by `write_checked`; ValueError if the file is damaged (OSError as open's)."""
    with open(path, "rb") as f:
        checksum, _, body = f.read().partition(b"\n")
    if hashlib.sha256(body).hexdigest().encode() != checksum:
        raise ValueError("checksum mismatch")
    return body
