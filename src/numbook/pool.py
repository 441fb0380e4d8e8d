"""Run pages in parallel, one fresh forked process per page, with a time limit.

The parent (the MkDocs process) has imported NumPy and matplotlib (Agg) once; each
child is forked from it, so a page starts in milliseconds with those imports done,
and no page can see another page's state. Children report which cell they are
running, so a page that runs too long is killed and reported at the right block.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from .cells import CellError, CodeCell, PageRun
from .runner import PageJob, execute


_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def preimport(workers: int = 1) -> None:
    """Import what most pages need once, in the parent, before forking.

    Also draw one throwaway figure to SVG, so the SVG backend and the default font are
    loaded once here rather than in every child. If NumPy is not imported yet, its BLAS
    threads are limited so that ``workers`` pages side by side do not oversubscribe the
    CPUs (variables already set by the user win).
    """
    if "numpy" not in sys.modules:
        threads = str(max(1, (os.cpu_count() or 1) // max(1, workers)))
        for var in _BLAS_THREADS:
            os.environ.setdefault(var, threads)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy  # noqa: F401

    from .figures import svg_of

    fig, ax = plt.subplots(figsize=(1, 1))
    ax.set_title("warm-up")
    svg_of(fig)
    plt.close(fig)


def _child(job: PageJob, conn: Connection) -> None:
    try:
        run = execute(job, progress=lambda i: conn.send(("cell", i)))
        conn.send(("done", run))
    except BaseException:  # noqa: BLE001 - a crash must reach the parent as a message
        try:
            conn.send(("crash", traceback.format_exc()))
        except Exception:  # noqa: BLE001
            pass
    finally:
        conn.close()


@dataclass
class _Running:
    job: PageJob
    process: Any
    conn: Connection
    deadline: float
    cell: int | None = None
    result: PageRun | None = None


def _cell_line(job: PageJob, index: int | None) -> int:
    for c in job.cells:
        if c.index == index:
            return c.fence_line if isinstance(c, CodeCell) else c.line
    return 1


def run_pages(jobs: Sequence[PageJob], workers: int) -> dict[str, PageRun]:
    """Run every job; returns src_uri -> PageRun (failures carry ``error``).

    The host's heap (MkDocs, Markdown, the theme, NumPy, matplotlib) is frozen before
    forking: the garbage collector of each child then never walks the objects it
    inherited, which would cost time and touch (copy) their memory pages.
    """
    gc.freeze()
    try:
        return _run_pages(jobs, workers)
    finally:
        gc.unfreeze()


def _run_pages(jobs: Sequence[PageJob], workers: int) -> dict[str, PageRun]:
    ctx = multiprocessing.get_context("fork")
    pending = list(jobs)
    running: list[_Running] = []
    results: dict[str, PageRun] = {}
    workers = max(1, workers)

    def finish(r: _Running, run: PageRun) -> None:
        results[r.job.src_uri] = run
        running.remove(r)
        r.conn.close()
        r.process.join(timeout=5)
        if r.process.is_alive():
            r.process.kill()
            r.process.join()

    while pending or running:
        while pending and len(running) < workers:
            job = pending.pop(0)
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(job, send), name=f"numbook:{job.src_uri}", daemon=True)
            proc.start()
            send.close()
            running.append(_Running(job, proc, recv, time.monotonic() + job.timeout))
        now = time.monotonic()
        timeout = max(0.0, min(r.deadline for r in running) - now)
        ready = wait([r.conn for r in running], timeout=timeout)
        for r in list(running):
            if r.conn not in ready:
                continue
            while r in running and r.conn.poll():
                try:
                    kind, payload = r.conn.recv()
                except (EOFError, OSError):
                    r.process.join(timeout=5)
                    code = r.process.exitcode
                    err = CellError(
                        r.job.display_path,
                        _cell_line(r.job, r.cell),
                        f"the worker running this page died (exit code {code}) while running this block",
                        cell=r.cell,
                    )
                    finish(r, PageRun(error=err))
                    break
                if kind == "cell":
                    r.cell = payload
                elif kind == "done":
                    finish(r, payload)
                else:  # crash inside numbook itself
                    err = CellError(
                        r.job.display_path, _cell_line(r.job, r.cell), "numbook crashed", payload, cell=r.cell
                    )
                    finish(r, PageRun(error=err))
        now = time.monotonic()
        for r in list(running):
            if now >= r.deadline:
                r.process.kill()
                r.process.join()
                err = CellError(
                    r.job.display_path,
                    _cell_line(r.job, r.cell),
                    f"timed out: the page ran longer than {r.job.timeout:g} s and was stopped in this block "
                    '(raise the limit with the block option timeout="SECONDS" or the plugin option timeout)',
                    cell=r.cell,
                )
                results[r.job.src_uri] = PageRun(error=err)
                running.remove(r)
                r.conn.close()
    return results
