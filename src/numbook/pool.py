"""Run pages in parallel, one fresh forked process per page, with time limits; under
`mkdocs serve`, keep one state of each page being edited (`KeptPages`).

Each child is forked from the host (the MkDocs process), which has imported NumPy and
matplotlib once, so a page starts in milliseconds and no page sees another's state. A child
talks to the host in lines of JSON over a socket pair made before the fork (no name in the
file system, nothing unpickled), and says which cell it runs, so a page is stopped and
reported at the right block. A page is limited by the CPU time it uses (``RLIMIT_CPU``), not
by the clock, so a busy machine never fails a build; a wall-clock backstop (`waiting`) stops
a page that waits (a lock, a pipe, a ``sleep``).
"""

from __future__ import annotations

import ctypes
import gc
import json
import linecache
import math
import os
import resource
import select
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from . import inputs
from .cells import CellError, CodeCell, InlineCell, PageRun
from .runner import PageJob, PageState, execute, job_from_data, job_to_data
from .stored import sha256_file

_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_PREIMPORTED = False

WAITING_CPU_SHARE = 0.01  # of the backstop's wall-clock time in CPU time: a page below it may be waiting
SAMPLES_PER_BACKSTOP = 12  # how often the host looks at a running page in a backstop's time
#: At most this many pages keep a state under `serve` (the ones edited last).
MAX_KEPT_PAGES = 2


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


# --- the processes ---------------------------------------------------------------------


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


def kept_pages_supported() -> bool:
    """A kept state needs fork and a child that ends with its parent (Linux's prctl)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def _end_with_parent() -> None:
    """Have the kernel kill this process when its parent ends (Linux; elsewhere nothing)."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it ended before the line above
        os._exit(1)


class Channel:
    """Lines of JSON over one end of a socket pair that a fork shared: no file name, no pickle."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = b""

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall(json.dumps(message).encode() + b"\n")

    def receive(self) -> list[dict[str, Any]] | None:
        """The messages that have arrived (reads what is there, after select said so); None at
        the end (every process that held the other end has ended)."""
        data = self.sock.recv(1 << 20)
        if not data:
            return None
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        return [json.loads(line) for line in lines]

    def next(self) -> dict[str, Any] | None:
        """The next message, waiting for it (a kept state waiting for work); None at the end."""
        while b"\n" not in self._buffer:
            data = self.sock.recv(1 << 20)
            if not data:
                return None
            self._buffer += data
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        self.sock.close()


def _fork(body: Callable[[Channel], None]) -> tuple[int, Channel]:
    """A child process that runs ``body`` with its end of a new channel, then exits (never
    returning into the host's code); returns its pid and the host's end."""
    host, child = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        host.close()
        try:
            body(Channel(child))
        finally:
            os._exit(0)
    child.close()
    return pid, Channel(host)


def _run_and_send(job: PageJob, channel: Channel, keeper: _Keeper | None = None) -> None:
    """Run the page and send its run, or how numbook itself crashed, to the host."""
    try:
        run = execute(job, progress=lambda i: channel.send({"cell": i}),
                      checkpoint=None if keeper is None else keeper.checkpoint)
        channel.send({"done": run.to_dict()})
    except BaseException:  # noqa: BLE001 - a crash must reach the host as a message
        try:
            channel.send({"crash": traceback.format_exc()})
        except Exception:  # noqa: BLE001
            pass


def _page_process(job: PageJob, keep_at: int | None) -> Callable[[Channel], None]:
    def body(channel: Channel) -> None:
        _end_with_parent()
        _limit_cpu(job.timeout)
        _run_and_send(job, channel, None if keep_at is None else _Keeper(channel, keep_at))
    return body


class _Keeper:
    """In a kept page's process: at the block ``keep_at`` it forks; the child runs on, and
    the process stays behind as the page's state before that block, until the host asks it
    to run an edited page from there (each time in a new child) or ends."""

    def __init__(self, channel: Channel, keep_at: int) -> None:
        self.channel, self.keep_at = channel, keep_at
        self.cpu_before = 0.0  # CPU time the page used before this state

    def checkpoint(self, job: PageJob, position: int, state: PageState) -> PageJob:
        if position != self.keep_at:
            return job
        self.keep_at = -1  # once: the child must not keep again
        self.cpu_before = sum(os.times()[:2])
        self.channel.send({"kept": position})
        edited = job
        while True:
            pid = os.fork()
            if pid == 0:
                return self._go_on(job, edited, state)
            self.channel.send({"runner": pid})
            _, status = os.waitpid(pid, 0)
            self.channel.send({"exited": [pid, status]})
            message = self.channel.next()
            if message is None or "resume" not in message:
                os._exit(0)  # the host ended, or dropped this page
            edited = job_from_data(message["resume"])

    def _go_on(self, job: PageJob, edited: PageJob, state: PageState) -> PageJob:
        """In the new child: the running page, from this state on, inside the page's CPU limit."""
        _end_with_parent()
        _limit_cpu(max(1.0, edited.timeout - self.cpu_before))
        if edited is not job:
            lines = edited.source.splitlines(True)
            linecache.cache[edited.display_path] = (len(edited.source), None, lines, edited.display_path)
            state.run.started = time.monotonic()
        return edited


# --- the host's side --------------------------------------------------------------------


@dataclass
class _Kept:
    """The host's view of a kept page."""

    pid: int  # the process holding the state (a child of the host)
    channel: Channel
    job: PageJob  # the job last run from it
    position: int | None = None  # the block it holds the state before (None: none yet)
    deps: dict[str, str] | None = None  # the files that run read, with their sha256


def _cell_text(cell: CodeCell | InlineCell) -> tuple:
    """What of a cell decides what it does (not where it stands in the file)."""
    if isinstance(cell, CodeCell):
        return ("code", cell.code, replace(cell.options, kind=""))
    return ("inline", cell.expr)


def unchanged_prefix(old: Sequence[CodeCell | InlineCell], new: Sequence[CodeCell | InlineCell]) -> int:
    """How many cells at the start of ``new`` are those of ``old``."""
    n = 0
    for a, b in zip(old, new):
        if _cell_text(a) != _cell_text(b):
            break
        n += 1
    return n


def _settings(job: PageJob) -> PageJob:
    return replace(job, cells=(), source="", display_path="")


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


class KeptPages:
    """Under `mkdocs serve`, the state of each page being edited, kept from build to build.

    Each build tells it every page's cells (`saw`); a page whose cells changed is being
    edited at its first changed cell. When such a page runs, it keeps its state before that
    cell; a later run of it starts from that state when the blocks before it are unchanged,
    every file its last run read is unchanged and its settings (limits, the environment's
    fingerprint) are the same; otherwise from the start, as in a build, keeping the state
    again. Either way the page is the one a run from the start gives: the state is the very
    state such a run has there.
    """

    def __init__(self) -> None:
        self.pages: dict[str, _Kept] = {}  # in the order last run
        self.cells: dict[str, tuple] = {}  # page -> its cells when last seen
        self.edited_at: dict[str, int] = {}  # page -> the first cell changed by its last edit
        self.resumed: dict[str, int] = {}  # page -> the block its last run started from

    def saw(self, src_uri: str, cells: Sequence[CodeCell | InlineCell]) -> None:
        """A build read the page with these cells."""
        before = self.cells.get(src_uri)
        self.cells[src_uri] = tuple(cells)
        if before is not None and [_cell_text(c) for c in before] != [_cell_text(c) for c in cells]:
            self.edited_at[src_uri] = unchanged_prefix(before, cells)

    def start(self, job: PageJob) -> tuple[int, Channel, bool]:
        """Start ``job``: from its kept state when that fits, else from the start (keeping a
        state where it is being edited). Returns the running pid, the channel and whether
        the page's process stays (kept)."""
        src = job.src_uri
        kept = self.pages.pop(src, None)
        if kept is not None and self._fits(kept, job):
            self._drain(kept)
            try:
                kept.channel.send({"resume": job_to_data(job)})
            except OSError:
                kept = None
            else:
                self.pages[src] = kept  # run last now
                kept.job, kept.deps = job, None  # (running: its deps are the run's to come)
                self.resumed[src] = kept.position
                return kept.pid, kept.channel, True
        if kept is not None:
            self._end(kept)
        at = self.edited_at.get(src)
        self.resumed[src] = 0
        if at is None or at >= len(job.cells):
            pid, channel = _fork(_page_process(job, None))
            return pid, channel, False
        idle = [p for p, k in self.pages.items() if k.deps is not None]  # (not one running now)
        while idle and len(self.pages) >= MAX_KEPT_PAGES:
            self._end(self.pages.pop(idle.pop(0)))  # the page run longest ago
        pid, channel = _fork(_page_process(job, at))
        self.pages[src] = _Kept(pid, channel, job)
        return pid, channel, True

    def _fits(self, kept: _Kept, job: PageJob) -> bool:
        if kept.position is None or kept.deps is None or _settings(kept.job) != _settings(job):
            return False
        if unchanged_prefix(kept.job.cells, job.cells) < kept.position:
            return False
        return all(sha256_file(os.path.join(job.root, dep)) == digest for dep, digest in kept.deps.items())

    @staticmethod
    def _drain(kept: _Kept) -> None:
        """Read what the kept state sent since its last run ended (that its runner exited)."""
        while select.select([kept.channel], [], [], 0)[0]:
            if kept.channel.receive() is None:
                break

    def finished(self, src_uri: str, run: PageRun) -> bool:
        """A kept page's run ended; returns whether its state stays (one was made)."""
        kept = self.pages.get(src_uri)
        if kept is None:
            return False
        if kept.position is None or (run.error is not None and not run.outputs) or run.changed:
            self.drop(src_uri)
            return False
        kept.deps = run.deps  # (and it is no longer running)
        return True

    def drop(self, src_uri: str) -> None:
        kept = self.pages.pop(src_uri, None)
        if kept is not None:
            self._end(kept)

    @staticmethod
    def _end(kept: _Kept) -> None:
        """End a kept page's processes (its runner ends with it)."""
        _kill(kept.pid)
        kept.channel.close()

    def close(self) -> None:
        for src_uri in list(self.pages):
            self.drop(src_uri)


@dataclass
class _Running:
    job: PageJob
    pid: int  # the process running the page now (for a kept page, maybe the kept state's child)
    channel: Channel
    kept: bool  # the page's process stays after the run (`KeptPages`)
    started: float = field(default_factory=time.monotonic)
    cell: int | None = None
    samples: list[tuple[float, float, bool]] = field(default_factory=list)  # (wall, CPU, ready to run)


def _cell_line(job: PageJob, index: int | None) -> int:
    for c in job.cells:
        if c.index == index:
            return c.fence_line if isinstance(c, CodeCell) else c.line
    return 1


class PagePool:
    """Pages running in forked workers, at most ``workers`` at a time, started in the order
    given; the host takes each page's run when it needs it and does other work meanwhile
    (MkDocs renders the pages that are done while later ones run).

    Workers are started, and finished ones replaced, only while the host is in `poll` or
    `wait`. The host's heap (MkDocs, Markdown, the theme, NumPy, matplotlib) is frozen before
    each fork: the garbage collector of a child then never walks the objects it inherited,
    which would cost time and touch (copy) their memory pages.
    """

    def __init__(self, jobs: Sequence[PageJob], workers: int, kept: KeptPages | None = None) -> None:
        self._kept = kept
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
        """Take what the workers sent, stop pages that wait, start waiting pages; block at
        most ``timeout`` seconds (None: until something happens, or the next look at the
        running pages' CPU time)."""
        if self._running:
            step = min(r.job.wall_timeout for r in self._running) / SAMPLES_PER_BACKSTOP
            ready, _, _ = select.select([r.channel for r in self._running], [], [],
                                        step if timeout is None else min(timeout, step))
            for r in list(self._running):
                if r.channel in ready:
                    self._receive(r)
            self._stop_waiting()
        self._start_free()

    def close(self) -> None:
        """Stop every page still running (a build that failed elsewhere); forget waiting ones."""
        self._pending.clear()
        for r in list(self._running):
            self._stop(r)
        self._running.clear()
        self._thaw()

    def _start_free(self) -> None:
        while self._pending and len(self._running) < self._workers:
            gc.freeze()  # what the host made since the last fork, too
            self._frozen = True
            job = self._pending.pop(0)
            started = self._kept.start(job) if self._kept else (*_fork(_page_process(job, None)), False)
            self._running.append(_Running(job, *started))
        if not self.busy:
            self._thaw()

    def _thaw(self) -> None:
        if self._frozen:
            gc.unfreeze()
            self._frozen = False

    def _stop(self, r: _Running) -> None:
        """End a running page's processes."""
        if r.kept:
            self._kept.drop(r.job.src_uri)
        _kill(r.pid)
        r.channel.close()

    def _finish(self, r: _Running, run: PageRun) -> None:
        self._results[r.job.src_uri] = run
        self._finished.add(r.job.src_uri)
        self._running.remove(r)
        if r.kept and self._kept.finished(r.job.src_uri, run):
            return  # the page's state stays, for the next edit
        r.channel.close()
        _reap(r.pid)

    def _receive(self, r: _Running) -> None:
        try:
            messages = r.channel.receive()
        except (OSError, ValueError):
            messages = None
        if messages is None:  # every process of the page ended without its run
            self._finish(r, PageRun(error=self._death(r, _reap(r.pid))))
            return
        for message in messages:
            if "cell" in message:
                r.cell = message["cell"]
            elif "runner" in message:  # a kept page's process handed the page to its child
                r.pid, r.samples = message["runner"], []
            elif "exited" in message and message["exited"][0] == r.pid:  # that child ended without its run
                return self._finish(r, PageRun(error=self._death(r, message["exited"][1])))
            elif "done" in message:
                return self._finish(r, PageRun.from_dict(message["done"]))
            elif "crash" in message:  # inside numbook itself
                line = _cell_line(r.job, r.cell)
                return self._finish(r, PageRun(error=CellError(r.job.display_path, line, "numbook crashed",
                                                               message["crash"], cell=r.cell)))
            elif "kept" in message and r.job.src_uri in self._kept.pages:
                self._kept.pages[r.job.src_uri].position = message["kept"]

    def _death(self, r: _Running, status: int | None) -> CellError:
        """What to report for a worker that ended (with this wait status) without sending its run."""
        code = None if status is None else os.waitstatus_to_exitcode(status)
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

    def _stop_waiting(self) -> None:
        """Stop each page that waited through the last ``wall_timeout`` seconds (`waiting`)."""
        now = time.monotonic()
        for r in list(self._running):
            seen = _cpu_and_state(r.pid)
            r.samples.append((now, *(seen or (0.0, False))))
            verdict = waiting(r.samples, r.job.wall_timeout, known=seen is not None)
            if verdict is not None:
                self._stop(r)
                self._finish(r, PageRun(error=CellError(
                    r.job.display_path,
                    _cell_line(r.job, r.cell),
                    f"timed out waiting: in {r.job.wall_timeout:g} s of wall-clock time the page {verdict} "
                    f"(its CPU time limit is {r.job.timeout:g} s), so it was stopped in this block, which "
                    "waits on something (input, a lock, a sleep); the plugin option wall_timeout sets this backstop",
                    cell=r.cell,
                )))


def waiting(samples: list[tuple[float, float, bool]], window: float, known: bool = True) -> str | None:
    """Whether a page is waiting, from its ``(wall, CPU, ready to run)`` samples, oldest
    first: how it waited (for the message) when in the last ``window`` seconds of wall-clock
    time it used less than `WAITING_CPU_SHARE` of them in CPU time and was never ready to run
    (a page the machine is too busy to run much is ready to run), else None. Samples older
    than the window (but the last before it) are dropped from the list. Where the system does
    not say (``known`` false), the window is a plain deadline.
    """
    now, cpu, _ = samples[-1]
    while len(samples) > 2 and samples[1][0] <= now - window:
        del samples[0]
    start, cpu_then, _ = samples[0]
    if now - start < window:
        return None
    if not known:
        return "did not finish"
    used = cpu - cpu_then
    if used >= WAITING_CPU_SHARE * window or any(ready for _, _, ready in samples[1:]):
        return None
    return f"used only {used:.1f} s of CPU time"


def _reap(pid: int) -> int | None:
    """Wait for a child that is ending (killing it after 5 s); its wait status."""
    deadline = time.monotonic() + 5
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done:
            return status
        if time.monotonic() > deadline:
            _kill(pid)
            return None
        time.sleep(0.01)


def _cpu_and_state(pid: int) -> tuple[float, bool] | None:
    """The CPU time (user + system) a live process has used, and whether it is running or ready
    to run (not sleeping, not waiting for a disk), where the system says (Linux)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), fields[0] == "R"
    except (OSError, ValueError, IndexError):
        return None
