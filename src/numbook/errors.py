"""Turning every problem of a build into one message an author can act on."""

from __future__ import annotations

from collections.abc import Sequence

from .cells import CellError


class NumbookError(Exception):
    """Raised by the core when a build must stop; the MkDocs layer turns it into a PluginError."""

    def __init__(self, errors: Sequence[CellError]) -> None:
        self.errors = list(errors)
        super().__init__(format_errors(self.errors))


def format_errors(errors: Sequence[CellError]) -> str:
    """All errors, grouped by page: ``docs/page.md:LINE: reason`` then the traceback, indented."""
    pages = sorted({e.page for e in errors})
    head = f"numbook: {len(errors)} problem(s) on {len(pages)} page(s): {', '.join(pages)}"
    parts = [head]
    for e in sorted(errors, key=lambda e: (e.page, e.line)):
        parts.append(f"\n{e.location()}: {e.reason}")
        if e.traceback:
            parts.append("\n".join("    " + line for line in e.traceback.splitlines()))
    return "\n".join(parts)
