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

import ctypes
import gc
import hashlib
import linecache
import multiprocessing
import math
import os
import resource
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, wait
from typing import Any

from . import inputs
from .cells import CellError, CodeCell, InlineCell, PageRun
from .runner import PageJob, PageState, execute
from .stored import sha256_file


_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


_PREIMPORTED = False


def preimport(workers: int = 1, root: str | None = None) -> None:
    """Import what most pages need once, in the parent, before forking.

    Also draw one throwaway figure to SVG, so the SVG backend and the default font are
    loaded once here rather than in every child. If NumPy is not imported yet, its BLAS
    threads are limited so that ``workers`` pages side by side do not oversubscribe the
    CPUs (variables already set by the user win). The project files read meanwhile (under
    ``root``: a ``matplotlibrc`` there, say) are inputs of every page (`inputs.inherited`).
    """
    global _PREIMPORTED
    if _PREIMPORTED:
        return
    _PREIMPORTED = True
    with inputs.recording(inputs.Reads(root or os.getcwd())) as reads:
        _warm_up(workers)
    inputs.inherited.update(reads.files)


def _warm_up(workers: int) -> None:
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
        _run_and_send(job, conn)
    finally:
        conn.close()


def _run_and_send(job: PageJob, conn: Connection, checkpoint: Any = None) -> None:
    """Run the page and send its run, or how numbook itself crashed, to the host."""
    try:
        run = execute(job, progress=lambda i: conn.send(("cell", i)), checkpoint=checkpoint)
        conn.send(("done", run))
    except BaseException:  # noqa: BLE001 - a crash must reach the parent as a message
        try:
            conn.send(("crash", traceback.format_exc()))
        except Exception:  # noqa: BLE001
            pass


@dataclass
class _Running:
    job: PageJob
    process: Any  # a multiprocessing.Process, or the _ChainRunner of a page kept for serve
    conn: Connection
    started: float
    deadline: float  # when to look again whether the page is waiting (the backstop)
    cell: int | None = None
    cpu_mark: float = 0.0  # its CPU time when the backstop last looked
    result: PageRun | None = None
    chain: _Chain | None = None  # the page's kept processes (`Checkpoints`), if it has them


def _join_or_kill(process: Any, timeout: float) -> None:
    """Wait for a process to end, and end it if it has not after ``timeout`` seconds."""
    process.join(timeout=timeout)
    if process.is_alive():
        process.kill()
        process.join()


def _cell_line(job: PageJob, index: int | None) -> int:
    for c in job.cells:
        if c.index == index:
            return c.fence_line if isinstance(c, CodeCell) else c.line
    return 1


def run_pages(jobs: Sequence[PageJob], workers: int, checkpoints: Checkpoints | None = None) -> dict[str, PageRun]:
    """Run every job; returns src_uri -> PageRun (failures carry ``error``)."""
    pool = PagePool(jobs, workers, checkpoints)
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

    def __init__(self, jobs: Sequence[PageJob], workers: int, checkpoints: Checkpoints | None = None) -> None:
        self._ctx = multiprocessing.get_context("fork")
        self._checkpoints = checkpoints
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
            if r.chain is not None:
                self._checkpoints.drop(r.job.src_uri)
                continue
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
            now = time.monotonic()
            if self._checkpoints is not None:
                chain, runner = self._checkpoints.start(job, self._ctx)
                self._running.append(_Running(job, runner, chain.conn, now, now + job.wall_timeout, chain=chain))
                continue
            recv, send = self._ctx.Pipe(duplex=False)
            proc = self._ctx.Process(target=_child, args=(job, send), name=f"numbook:{job.src_uri}", daemon=True)
            proc.start()
            send.close()
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
        if r.chain is not None:  # the page's processes stay, for the next edit
            self._checkpoints.finished(r.chain, r.job, run)
            return
        r.conn.close()
        _join_or_kill(r.process, 5)

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
            elif r.chain is not None and kind in _CHAIN_MESSAGES:
                if kind == "exited" and payload[0] == r.process.pid:  # it ended without its run
                    r.process.exitcode = os.waitstatus_to_exitcode(payload[1])
                    self._finish(r, PageRun(error=self._death(r)))
                else:
                    self._checkpoints.note(r, kind, payload)
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
            if r.chain is not None:
                self._checkpoints.drop(r.job.src_uri)
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



# ---------------------------------------------------------------------------------------
# Checkpoints: `mkdocs serve` runs an edited page from its last unchanged state

#: Messages only the processes of a kept page send (besides "cell", "done", "crash").
_CHAIN_MESSAGES = {"checkpoint", "runner", "exited"}
#: At most this many kept states per page (each is a process, mostly sharing its memory).
MAX_CHECKPOINTS = 16
#: At most this many pages kept (the ones run last): a kept state costs tens of MiB.
MAX_KEPT_PAGES = 4
#: A resumed state forks its runner at once; one that has not after this long (wall-clock, so
#: generous for a crowded machine) is given up and the page runs from the start.
RESUME_ANSWER_SECONDS = 60.0


def checkpoints_supported() -> bool:
    """Kept pages need fork and a child that ends with its parent (Linux's prctl)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def _end_with_parent() -> None:
    """Have the kernel send this process SIGTERM when its parent ends (Linux)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _own_cpu() -> float:
    t = os.times()
    return t.user + t.system


def _cell_text(cell: CodeCell | InlineCell) -> tuple:
    """What of a cell decides what it does (not where it stands in the file)."""
    if isinstance(cell, CodeCell):
        return ("code", cell.code, replace(cell.options, kind=""))
    return ("inline", cell.expr)


def unchanged_prefix(old: PageJob, new: PageJob) -> int:
    """How many cells at the start of ``new`` are those of ``old``."""
    n = 0
    for a, b in zip(old.cells, new.cells):
        if _cell_text(a) != _cell_text(b):
            break
        n += 1
    return n


class _Keeper:
    """The checkpoints of one page, inside the processes that run it.

    At a checkpoint the running process forks: the child goes on with the page, the parent
    stays behind as the page's state before that cell, listening on a Unix socket. Asked to
    resume with an edited page, it ends the processes after it (its child ends its own, and
    so on) and forks a new child, which runs the edited page's cells from there. Each
    process ends when its parent does (SIGTERM), so ending the first ends them all.
    """

    def __init__(self, conn: Connection, directory: str, interval: float, tag: str) -> None:
        self.conn, self.directory, self.interval, self.tag = conn, directory, interval, tag
        self.count = 0
        self.cpu_before = 0.0  # CPU time the page used before this process began
        self.child: int | None = None
        self.sock: socket.socket | None = None
        self.edited_at: int | None = None  # the first changed cell of the page being resumed

    def checkpoint(self, job: PageJob, position: int, state: PageState) -> PageJob:
        used = _own_cpu()
        if self.cpu_before + used > job.timeout:  # the kernel's limit is this process's, in whole seconds
            os.kill(os.getpid(), signal.SIGXCPU)
        # the author is working on the cell edited last: the next edit will resume right there
        at_edit = position == self.edited_at
        if position > 0 and not at_edit and (used < self.interval or self.count >= MAX_CHECKPOINTS):
            return job
        state.settle(job)  # a kept state holds every output before it
        if state.run.error is not None:
            return job
        self.cpu_before += used
        self.count += 1
        path = os.path.join(self.directory, f"{self.tag}-{position}.sock")
        if os.path.exists(path):
            os.unlink(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(4)
        self.conn.send(("checkpoint", (position, path)))
        signal.signal(signal.SIGTERM, self._end)
        edited, self.edited_at = job, None
        while True:
            pid = os.fork()
            if pid == 0:
                return self._go_on(job, edited, state)
            self.child = pid
            edited, self.edited_at = self._wait()

    def _go_on(self, job: PageJob, edited: PageJob, state: PageState) -> PageJob:
        """In the new child: the running page, from this checkpoint on."""
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _end_with_parent()
        self.sock.close()
        self.sock, self.child = None, None
        _limit_cpu(max(1.0, edited.timeout - self.cpu_before))
        if edited is not job:
            lines = edited.source.splitlines(True)
            linecache.cache[edited.display_path] = (len(edited.source), None, lines, edited.display_path)
            state.run.started = time.monotonic()
        self.conn.send(("runner", os.getpid()))
        return edited

    def _wait(self) -> tuple[PageJob, int]:
        """As the page's state at this checkpoint: wait to be resumed; return the edited job and
        the position of its first changed cell."""
        while True:
            ready, _, _ = select.select([self.sock], [], [], 0.2)
            if self.child is not None:
                pid, status = os.waitpid(self.child, os.WNOHANG)
                if pid:
                    self.conn.send(("exited", (pid, status)))
                    self.child = None
            if ready:
                client, _ = self.sock.accept()
                with Connection(client.detach()) as request:
                    edited, edited_at = request.recv()
                self._end_child()
                return edited, edited_at

    def _end_child(self) -> None:
        if self.child is not None:
            try:
                os.kill(self.child, signal.SIGTERM)
                os.waitpid(self.child, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.child = None

    def _end(self, signum: int, frame: Any) -> None:
        self._end_child()
        if self.sock is not None:
            try:
                os.unlink(self.sock.getsockname())
            except OSError:
                pass
        os._exit(0)


def _kept_child(job: PageJob, conn: Connection, directory: str, interval: float, tag: str) -> None:
    """The first process of a kept page: its state before the first cell is the first checkpoint."""
    _end_with_parent()
    _limit_cpu(job.timeout)
    first = os.getpid()
    _run_and_send(job, conn, _Keeper(conn, directory, interval, tag).checkpoint)
    if os.getpid() != first:
        os._exit(0)  # a forked runner: no multiprocessing clean-up of its parent's children


@dataclass
class _ChainRunner:
    """The process running a kept page now (a grandchild of the host; its parent reaps it)."""

    pid: int
    exitcode: int | None = None

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def join(self, timeout: float | None = None) -> None:
        pass

    def is_alive(self) -> bool:
        return False


@dataclass
class _Chain:
    first: Any  # the multiprocessing.Process holding the state before the first cell
    conn: Connection  # what every process of the page sends
    job: PageJob  # the job last run
    deps: dict[str, str] | None = None  # the files that run depended on, with their sha256
    points: dict[int, str] = field(default_factory=dict)  # position -> socket of a kept state


class Checkpoints:
    """Pages kept alive between the builds of `mkdocs serve`, each as processes holding its
    state before some of its cells (one every ``interval`` seconds of CPU time at most). Only
    pages that run again while serving are kept (an edited page, not every page of the first
    build), at most `MAX_KEPT_PAGES` of them.

    An edited page runs from the last state before its first changed cell, when every file
    its last run depended on is unchanged and it runs under the same settings; otherwise it
    runs from the start, as in a build. Same outputs either way: the state at a checkpoint is
    the very state a run from the start has there.
    """

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.directory = tempfile.mkdtemp(prefix="numbook-")
        self.chains: dict[str, _Chain] = {}
        self.resumed: dict[str, int] = {}  # page -> the position its last run started from

    def start(self, job: PageJob, ctx: Any) -> tuple[_Chain, _ChainRunner]:
        """Start ``job``: from a kept state when one fits, else in a new kept page."""
        chain = self.chains.get(job.src_uri)
        position = self._resume_point(chain, job) if chain is not None else None
        if chain is not None and position is not None:
            self._drain(chain)
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
                    client.connect(chain.points[position])
                    with Connection(client.detach()) as request:
                        request.send((job, unchanged_prefix(chain.job, job)))
                runner = self._runner(chain)
            except (OSError, EOFError):  # the kept state is gone, or never answered: from the start
                position = None
        if chain is not None and position is not None:
            self.chains[job.src_uri] = self.chains.pop(job.src_uri)  # run last now
            chain.points = {p: path for p, path in chain.points.items() if p <= position}
            self.resumed[job.src_uri] = position
            return chain, runner
        self.drop(job.src_uri)
        while len(self.chains) >= MAX_KEPT_PAGES:
            self.drop(next(iter(self.chains)))  # the page run longest ago
        recv, send = ctx.Pipe(duplex=False)
        tag = hashlib.sha256(job.src_uri.encode()).hexdigest()[:12]
        first = ctx.Process(target=_kept_child, args=(job, send, self.directory, self.interval, tag),
                            name=f"numbook:{job.src_uri}", daemon=True)
        first.start()
        send.close()
        chain = self.chains[job.src_uri] = _Chain(first, recv, job)
        self.resumed[job.src_uri] = 0
        return chain, _ChainRunner(first.pid)  # until its first checkpoint hands the page on

    def _runner(self, chain: _Chain) -> _ChainRunner:
        """The process a resumed state forked to run the edited page (its first message)."""
        while True:
            if not chain.conn.poll(RESUME_ANSWER_SECONDS):
                raise OSError("a kept state did not answer")
            kind, payload = chain.conn.recv()
            if kind == "runner":
                return _ChainRunner(payload)
            self.note_chain(chain, kind, payload)

    def _resume_point(self, chain: _Chain, job: PageJob) -> int | None:
        if not chain.first.is_alive() or chain.deps is None:
            return None
        if replace(chain.job, cells=(), source="") != replace(job, cells=(), source=""):
            return None  # other settings or limits
        if any(sha256_file(os.path.join(job.root, dep)) != digest for dep, digest in chain.deps.items()):
            return None  # the engine, its parameters, ... changed: the kept states are stale
        prefix = unchanged_prefix(chain.job, job)
        usable = [p for p in chain.points if p <= prefix]
        return max(usable) if usable else None

    def _drain(self, chain: _Chain) -> None:
        """Read what the page's processes sent since its last run ended."""
        while chain.conn.poll():
            kind, payload = chain.conn.recv()
            self.note_chain(chain, kind, payload)

    def note(self, r: Any, kind: str, payload: Any) -> None:
        """A message from a running kept page."""
        if kind == "runner":
            r.process.pid, r.cpu_mark = payload, 0.0
        else:
            self.note_chain(r.chain, kind, payload)

    @staticmethod
    def note_chain(chain: _Chain, kind: str, payload: Any) -> None:
        if kind == "checkpoint":
            position, path = payload
            chain.points[position] = path

    def finished(self, chain: _Chain, job: PageJob, run: PageRun) -> None:
        """A kept page's run ended: a run that did not end in a block (a crash, a limit) ends
        the page's processes."""
        if run.error is not None and not run.outputs:
            self.drop(job.src_uri)
            return
        chain.job, chain.deps = job, run.deps

    def drop(self, src_uri: str) -> None:
        """End a kept page's processes (ending the first ends the others)."""
        chain = self.chains.pop(src_uri, None)
        if chain is None:
            return
        chain.first.terminate()
        _join_or_kill(chain.first, 10)
        chain.conn.close()

    def close(self) -> None:
        for src_uri in list(self.chains):
            self.drop(src_uri)
        shutil.rmtree(self.directory, ignore_errors=True)
