"""Problems met while previewing with `mkdocs serve`: loud in the terminal, shown on the page, not fatal.

MkDocs' strict mode (the book sets ``strict: true``) adds a counting handler to the
``mkdocs`` logger for each build and aborts the build at its end if any WARNING or
ERROR was logged. Under ``serve`` an aborted rebuild publishes nothing, and MkDocs'
server answers no request until a rebuild succeeds: the browser seems stuck. A
problem that the page itself now shows is therefore logged at ERROR (red, with
page:line, as in ``mkdocs build``) but marked, and the marked records are left out
of that count. Only records logged through `log_shown_on_page` are affected, and only
while serving: ``mkdocs build`` still stops on every problem.
"""

from __future__ import annotations

import logging

from mkdocs.utils import CountHandler

SHOWN_ON_PAGE = "numbook_shown_on_page"
"""Attribute set on a log record whose problem the rebuilt page displays."""

ON_PAGE_NOTE = "(shown on the page too; `mkdocs serve` keeps running, `mkdocs build` stops here)"


RECOVERED = "numbook_recovered"
"""Attribute set on a log record whose problem the build has already put right."""


def counts_for_strict(record: logging.LogRecord) -> bool:
    """Filter for MkDocs' strict-mode counter: a problem shown on its page, or one the
    build has recovered from, is not counted."""
    return not (getattr(record, SHOWN_ON_PAGE, False) or getattr(record, RECOVERED, False))


def _exempt_from_strict_count() -> None:
    # The counter is created afresh for each build, so the filter is added at the moment
    # of logging (adding the same filter twice is a no-op).
    for handler in logging.getLogger("mkdocs").handlers:
        if isinstance(handler, CountHandler):
            handler.addFilter(counts_for_strict)


def log_recovered(logger: logging.Logger, message: str) -> None:
    """Log a WARNING about something the build has repaired by itself (a damaged cache
    entry, rebuilt): the reader of the log should know, but a strict build has no
    reason to stop."""
    _exempt_from_strict_count()
    logger.warning("%s", message, extra={RECOVERED: True})


def log_shown_on_page(logger: logging.Logger, message: str) -> None:
    """Log ``message`` at ERROR without making a strict `mkdocs serve` rebuild abort."""
    _exempt_from_strict_count()
    logger.error("%s\n%s", message, ON_PAGE_NOTE, extra={SHOWN_ON_PAGE: True})
