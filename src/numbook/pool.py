"""Run pages in parallel, one fresh forked process per page, with time limits.

The parent (the MkDocs process) has imported NumPy and matplotlib (Agg) once; each
child is forked from it, so a page starts in milliseconds with those imports done,
and no page can see another page's state. Children report which cell they are
running, so a page that runs too long is stopped and reported at the right block.

A page is limited by the CPU time its own process uses (``RLIMIT_CPU``: the kernel stops
it), not by the clock: on a machine busy with other work a page takes longer but uses
the same CPU time, so a busy machine never fails a build. A wall-clock backstop catches a
block that waits forever (on a lock, a pipe, a ``sleep``): a page is stopped when a whole
``wall_timeout`` passes in which it used almost no CPU time. A page that computes, however
slowly a crowded machine lets it, keeps using CPU time and is never stopped by the clock
(where the system does not say how much CPU time a process used, the backstop is a plain
deadline).
"""

from __future__ import annotations

import gc
import multiprocessing
import math
import os
import resource
import signal
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


def _limit_cpu(seconds: float) -> None:
    """Have the kernel stop this process once it has used ``seconds`` of CPU time.

    At the soft limit the kernel sends SIGXCPU, whose default action ends the process; one
    second later the hard limit sends SIGKILL, should a block have caught SIGXCPU. No core
    file is written either way.
    """
    soft = max(1, math.ceil(seconds))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)


def _child(job: PageJob, conn: Connection) -> None:
    _limit_cpu(job.timeout)
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
    started: float
    deadline: float  # when to look again whether the page is waiting (the backstop)
    cell: int | None = None
    cpu_mark: float = 0.0  # its CPU time when the backstop last looked
    result: PageRun | None = None


def _cell_line(job: PageJob, index: int | None) -> int:
    for c in job.cells:
        if c.index == index:
            return c.fence_line if isinstance(c, CodeCell) else c.line
    return 1


def run_pages(jobs: Sequence[PageJob], workers: int) -> dict[str, PageRun]:
    """Run every job; returns src_uri -> PageRun (failures carry ``error``)."""
    pool = PagePool(jobs, workers)
    try:
        pool.wait()
        return pool.take_finished()
    finally:
        pool.close()


class PagePool:
    """Pages running in forked workers, at most ``workers`` at a time, started in the order
    given; the host takes each page's run when it needs it and does other work meanwhile
    (MkDocs renders the pages that are done while later ones run).

    Workers are started, and finished ones replaced, only while the host is in `poll` or
    `wait`: no thread runs beside the host, so every fork is of a single-threaded process.
    The host's heap (MkDocs, Markdown, the theme, NumPy, matplotlib) is frozen before each
    fork: the garbage collector of a child then never walks the objects it inherited,
    which would cost time and touch (copy) their memory pages.
    """

    def __init__(self, jobs: Sequence[PageJob], workers: int) -> None:
        self._ctx = multiprocessing.get_context("fork")
        self._pending = list(jobs)
        self._pages = {job.src_uri for job in jobs}
        self._running: list[_Running] = []
        self._results: dict[str, PageRun] = {}  # finished, not taken yet
        self._finished: set[str] = set()
        self._workers = max(1, workers)
        self._frozen = False
        self._start_free()

    @property
    def busy(self) -> bool:
        """Whether a page is still waiting or running."""
        return bool(self._pending or self._running)

    def wait(self, src_uri: str | None = None) -> None:
        """Block until ``src_uri`` (None: every page) is done; a page not given to the pool
        is not waited for."""
        if src_uri is not None and src_uri not in self._pages:
            self.poll()
            return
        while self.busy and (src_uri is None or src_uri not in self._finished):
            self.poll(timeout=None)

    def take_finished(self) -> dict[str, PageRun]:
        """The runs finished since the last call (failures carry ``error``)."""
        taken, self._results = self._results, {}
        return taken

    def poll(self, timeout: float | None = 0.0) -> None:
        """Take what the workers sent, stop pages past their time, start waiting pages;
        block at most ``timeout`` seconds (None: until something happens)."""
        if self._running:
            deadline = max(0.0, min(r.deadline for r in self._running) - time.monotonic())
            ready = wait([r.conn for r in self._running], timeout=deadline if timeout is None else min(timeout, deadline))
            for r in list(self._running):
                if r.conn in ready:
                    self._receive(r)
            self._stop_overdue()
        self._start_free()

    def close(self) -> None:
        """Stop every page still running (a build that failed elsewhere); forget waiting ones."""
        self._pending.clear()
        for r in list(self._running):
            r.process.kill()
            r.process.join()
            r.conn.close()
        self._running.clear()
        self._thaw()

    def _start_free(self) -> None:
        while self._pending and len(self._running) < self._workers:
            gc.freeze()  # what the host made since the last fork, too
            self._frozen = True
            job = self._pending.pop(0)
            recv, send = self._ctx.Pipe(duplex=False)
            proc = self._ctx.Process(target=_child, args=(job, send), name=f"numbook:{job.src_uri}", daemon=True)
            proc.start()
            send.close()
            now = time.monotonic()
            self._running.append(_Running(job, proc, recv, now, now + job.wall_timeout))
        if not self.busy:
            self._thaw()

    def _thaw(self) -> None:
        if self._frozen:
            gc.unfreeze()
            self._frozen = False

    def _finish(self, r: _Running, run: PageRun) -> None:
        self._results[r.job.src_uri] = run
        self._finished.add(r.job.src_uri)
        self._running.remove(r)
        r.conn.close()
        r.process.join(timeout=5)
        if r.process.is_alive():
            r.process.kill()
            r.process.join()

    def _receive(self, r: _Running) -> None:
        while r in self._running and r.conn.poll():
            try:
                kind, payload = r.conn.recv()
            except (EOFError, OSError):
                r.process.join(timeout=5)
                self._finish(r, PageRun(error=self._death(r)))
                return
            if kind == "cell":
                r.cell = payload
            elif kind == "done":
                self._finish(r, payload)
            else:  # crash inside numbook itself
                err = CellError(r.job.display_path, _cell_line(r.job, r.cell), "numbook crashed", payload, cell=r.cell)
                self._finish(r, PageRun(error=err))

    def _death(self, r: _Running) -> CellError:
        """What to report for a worker that ended without sending its run."""
        code = r.process.exitcode
        wall = time.monotonic() - r.started
        if code == -signal.SIGXCPU:
            reason = (
                f"timed out: the page used its CPU time limit of {r.job.timeout:g} s "
                f"({wall:.1f} s of wall-clock time) and was stopped in this block "
                '(raise the limit with the block option timeout="SECONDS" or the plugin option timeout)'
            )
        elif code is not None and code < 0:
            reason = (
                f"the worker running this page was killed by {signal.Signals(-code).name} "
                f"(exit code {code}) while running this block"
            )
        else:
            reason = f"the worker running this page died (exit code {code}) while running this block"
        return CellError(r.job.display_path, _cell_line(r.job, r.cell), reason, cell=r.cell)

    def _stop_overdue(self) -> None:
        now = time.monotonic()
        for r in list(self._running):
            if now < r.deadline:
                continue
            cpu = _cpu_seconds(r.process.pid)
            if cpu is not None and cpu - r.cpu_mark >= WAITING_CPU_SHARE * r.job.wall_timeout:
                r.cpu_mark, r.deadline = cpu, now + r.job.wall_timeout  # computing, slowly: look again later
                continue
            r.process.kill()
            r.process.join()
            used = f"used only {cpu - r.cpu_mark:.1f} s of CPU time" if cpu is not None else "did not finish"
            err = CellError(
                r.job.display_path,
                _cell_line(r.job, r.cell),
                f"timed out waiting: in {r.job.wall_timeout:g} s of wall-clock time the page {used} "
                f"(its CPU time limit is {r.job.timeout:g} s), so it was stopped in this block, which "
                "waits on something (input, a lock, a sleep); the plugin option wall_timeout sets this backstop",
                cell=r.cell,
            )
            self._finish(r, PageRun(error=err))


#: A page that used less than this share of the backstop's wall-clock time in CPU time is
#: waiting, not computing: a process that computes on a machine shared with twenty others
#: still gets several times more.
WAITING_CPU_SHARE = 0.01


def _cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) a live process has used, where the system says (Linux)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None

