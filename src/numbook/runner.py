"""Run one page's cells, in order, in one namespace (this runs inside a worker process).

Each code cell is compiled with blank lines in front so that its line numbers are the
Markdown file's, and with the page's display path as file name: a traceback points at
``docs/page.md:LINE`` directly. Inline expressions are evaluated the same way.

The runner also records which project files the page depended on: every file under the
project's root that its process opened for reading (its modules, the engine's parameter
files, the figures' style sheet), each hashed when first opened (`numbook.inputs`), and
after the run which of them changed meanwhile. The cache uses them.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib
import importlib.machinery
import io
import linecache
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from contextlib import redirect_stdout
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from . import inputs, record
from .cells import BlockOptions, CellError, CellOutput, CodeCell, InlineCell, PageRun
from .figures import figure_output
from .format import format_value, plain_value, set_default_decimals
from .parse import template_parts



@dataclass(frozen=True)
class PageJob:
    """Everything a worker needs to run one page (plain data)."""

    src_uri: str  # path inside docs_dir, e.g. "part1/attention.md"
    display_path: str  # path shown in messages and tracebacks, e.g. "docs/part1/attention.md"
    source: str  # the whole source file, for tracebacks
    cells: tuple[CodeCell | InlineCell, ...]
    root: str  # project root (where mkdocs.yml lives): the working directory of blocks
    watch: tuple[str, ...]  # absolute directories holding project modules (put on sys.path)
    decimals: int
    timeout: float  # seconds of CPU time for the whole page
    wall_timeout: float  # seconds of wall-clock time: the backstop for a page that waits
    link_packages: tuple[str, ...] = ()  # a block's calls into these get "source" links
    figure_check: str | None = None  # "module:function" called on every figure made (config.py)
    environment: str = ""  # the cache's fingerprint of what else decides outputs (numbook's source, ...)
    outputs: tuple[str, ...] = ()  # directories under root the build writes (site, cache): not inputs


def job_to_data(job: PageJob) -> dict[str, Any]:
    """The job as plain data (JSON), for a kept page's process (`numbook.pool`)."""
    data = dataclasses.asdict(job)
    data["cells"] = [{"code" if isinstance(c, CodeCell) else "inline": dataclasses.asdict(c)} for c in job.cells]
    return data


def job_from_data(data: dict[str, Any]) -> PageJob:
    """The job `job_to_data` gave."""
    cells = tuple(
        CodeCell(**{**c["code"], "options": BlockOptions(**c["code"]["options"])}) if "code" in c
        else InlineCell(**c["inline"])
        for c in data["cells"]
    )
    tuples = {name: tuple(data[name]) for name in ("watch", "link_packages", "outputs")}
    return PageJob(**{**data, **tuples, "cells": cells})


class _FreshLoader(importlib.machinery.SourceFileLoader):
    """Compile project modules from their source, never from a possibly stale .pyc."""

    def get_code(self, fullname: str) -> Any:  # noqa: D102
        return self.source_to_code(self.get_data(self.path), self.path)


class _FreshFinder:
    def __init__(self, reads: inputs.Reads) -> None:
        self.reads = reads

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if (
            spec is not None
            and spec.origin
            and isinstance(spec.loader, importlib.machinery.SourceFileLoader)
            and self.reads.tracks(os.path.abspath(spec.origin))
        ):
            spec.loader = _FreshLoader(spec.loader.name, spec.loader.path)
        return spec


def prepare_process(job: PageJob) -> inputs.Reads:
    """Make this (forked) process ready to run ``job``; returns what records the files it reads.

    Project modules already imported by the parent are dropped so the page imports them
    fresh from disk, and so the import is seen as an input. numbook's own stay: they must be
    the ones the runner uses (a fresh ``numbook.record`` would lose what blocks record), and
    numbook's source is part of every cache key.
    """
    os.chdir(job.root)
    reads = inputs.Reads(job.root, job.outputs)
    reads.files.update((p, d) for p, d in inputs.inherited.items() if reads.tracks(p))
    for d in reversed(job.watch):
        if d not in sys.path:
            sys.path.insert(0, d)
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if f and reads.tracks(os.path.abspath(f)):
            del sys.modules[name]
    sys.meta_path.insert(0, _FreshFinder(reads))
    importlib.invalidate_caches()
    sys.dont_write_bytecode = True
    set_default_decimals(job.decimals)
    linecache.cache[job.display_path] = (len(job.source), None, job.source.splitlines(True), job.display_path)
    return inputs.start(reads)


def _trim(tb: TracebackType | None, job: PageJob) -> list[traceback.FrameSummary]:
    frames = traceback.extract_tb(tb)
    keep = []
    for fr in frames:
        if fr.filename == job.display_path:
            keep.append(fr)
        elif os.path.isabs(fr.filename) and inputs.Reads(job.root).tracks(os.path.abspath(fr.filename)):
            keep.append(fr)  # the project's code (not numbook's, not an installed package's)
    return keep


def _error(job: PageJob, cell: CodeCell | InlineCell, exc: BaseException) -> CellError:
    frames = _trim(exc.__traceback__, job)
    text = "".join(traceback.format_exception_only(type(exc), exc))
    if frames:
        text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) + text
    line = cell.fence_line if isinstance(cell, CodeCell) else cell.line
    if isinstance(exc, SyntaxError) and exc.filename == job.display_path and exc.lineno:
        line = exc.lineno
    else:
        in_page = [fr.lineno for fr in frames if fr.filename == job.display_path and fr.lineno]
        if in_page:
            line = in_page[-1]
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(cell, InlineCell):
        reason = f"inline value `{{py}} {cell.expr}` failed: {detail}"
    elif cell.options.check:
        reason = f'check failed for the claim "{cell.options.check}": {detail}'
    else:
        reason = f"block raised {detail}"
    return CellError(job.display_path, line, reason, text.rstrip("\n"), cell.index)


class _BlockProblem(Exception):
    """A block ran but broke a numbook rule (figure without option, etc.)."""


class _OptionExpressionError(Exception):
    """A ``{py:expression}`` in a figure's caption or alt text failed."""

    def __init__(self, option: str, expr: str, exc: BaseException) -> None:
        super().__init__(option, expr)
        self.option, self.expr, self.exc = option, expr, exc


def _fill(text: str, option: str, cell: CodeCell, job: PageJob, namespace: dict[str, Any]) -> str:
    """``text`` with each ``{py:expression}`` replaced by its value (numbers by the rule).

    The result is plain text: the renderer escapes the whole caption or alt text.
    """
    out = []
    for piece, is_expr in template_parts(text):
        if not is_expr:
            out.append(piece)
            continue
        try:
            code = compile("\n" * (cell.fence_line - 1) + piece, job.display_path, "eval", dont_inherit=True)
            out.append(plain_value(eval(code, namespace)))
        except (Exception, SystemExit) as exc:  # noqa: BLE001
            raise _OptionExpressionError(option, piece, exc) from exc
    return "".join(out)


def _run_code(cell: CodeCell, job: PageJob, namespace: dict[str, Any]) -> Any:
    """Execute a block; return the value of its last line if that is an expression.

    That value matters only when it is a matplotlib Figure (as a notebook shows the
    figure a cell ends with): figure helpers may return Figures not known to pyplot.
    """
    source = "\n" * (cell.first_line - 1) + cell.code
    tree = ast.parse(source, job.display_path)
    last = tree.body.pop().value if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, job.display_path, "exec", dont_inherit=True), namespace)
    if last is None:
        return None
    return eval(compile(ast.Expression(last), job.display_path, "eval", dont_inherit=True), namespace)


def called_sources(code: str, namespace: dict[str, Any], packages: Sequence[str]) -> list[dict[str, str]]:
    """Each function or class of ``packages`` that ``code`` calls: ``{"name": as the code
    calls it, "target": "module.qualname" where it is defined}``.

    Only module-level functions and classes count (a page of source shows each under its
    name), and only calls through plain names and attribute chains (``nn.softmax(...)``,
    ``encdec.generate(...)``) are looked up, in the namespace the block ran in: nothing is
    evaluated that the block did not already evaluate.
    """
    if not packages:
        return []
    found: list[dict[str, str]] = []
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, ast.Call):
            continue
        chain, func = [], node.func
        while isinstance(func, ast.Attribute):
            chain.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name) or func.id not in namespace:
            continue
        obj = namespace[func.id]
        for attr in reversed(chain):
            obj = getattr(obj, attr, None)
        module = getattr(obj, "__module__", None) or ""
        qualname = getattr(obj, "__qualname__", None)
        if not (callable(obj) and qualname and "." not in qualname and "<" not in qualname):
            continue
        if any(module == p or module.startswith(p + ".") for p in packages):
            target = f"{module}.{qualname}"
            if all(f["target"] != target for f in found):
                found.append({"name": ast.unparse(node.func), "target": target})
    return found


def _block_figures(value: Any) -> list[Any]:
    """The figures a block made: those pyplot holds open, plus a Figure it ended with."""
    figs: list[Any] = []
    if "matplotlib.pyplot" in sys.modules:
        plt = sys.modules["matplotlib.pyplot"]
        figs = [plt.figure(n) for n in plt.get_fignums()]
    mfig = sys.modules.get("matplotlib.figure")
    if mfig is not None and isinstance(value, mfig.Figure) and not any(value is f for f in figs):
        figs.append(value)
    return figs


def _load_check(spec: str) -> Callable[[Any, str], Any]:
    module_name, _, attr = spec.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise _BlockProblem(f"figure_check {spec!r} cannot be loaded: {exc}") from None


def _check_figures(spec: str, fig_id: str, figures: Sequence[tuple[str, Any]]) -> None:
    """Run the ``figure_check`` on each figure of a block; its first failure stops the page.

    The check's module is imported here, in the page's process, so the page depends on it
    like on any module its blocks import (the cache re-runs the page when it changes).
    """
    check = _load_check(spec)
    for suffix, fig in figures:
        name = f"{fig_id}.{suffix}" if suffix else fig_id
        try:
            check(fig, name)
        except Exception as exc:  # noqa: BLE001 - any failure of the check fails the figure
            detail = str(exc) or type(exc).__name__
            where = "" if name in detail else f" for {name}"
            raise _BlockProblem(f"figure check {spec} failed{where}: {detail}") from None


def _collect_figure(cell: CodeCell, rec: record.Recorder, value: Any, job: PageJob, namespace: dict[str, Any]) -> Any:
    """The block's figure, drawn and checked."""
    figs = [f for f in _block_figures(value) if f is value or not any(f is v for v in rec.variant_figures)]
    try:
        if cell.options.figure:
            if len(figs) != 1:
                raise _BlockProblem(
                    f"block has figure={cell.options.figure!r} and must make exactly one figure "
                    f"(left open in pyplot, or the value of its last line), it made {len(figs)}"
                )
            options = dataclasses.replace(
                cell.options,
                caption=_fill(str(cell.options.caption), "caption", cell, job, namespace),
                alt=_fill(str(cell.options.alt), "alt", cell, job, namespace),
            )
            try:
                output = figure_output(figs[0], options, rec.figure_data, rec.variants, rec.narrow_svg)
            except ValueError as exc:
                raise _BlockProblem(str(exc)) from None
            if job.figure_check:  # after saving: whatever it does to a figure cannot change its files
                _check_figures(job.figure_check, str(cell.options.figure), [("", figs[0]), *rec.other_figures])
            return output
        if rec.variants:
            raise _BlockProblem("variant() called in a block that has no figure option")
        if rec.narrow_svg is not None:
            raise _BlockProblem("narrow() called in a block that has no figure option")
        if figs:
            raise _BlockProblem(
                f"block left {len(figs)} matplotlib figure(s) open but has no figure option: "
                'add figure="id" caption="..." alt="..." (or close it with plt.close())'
            )
        if rec.figure_data is not None:
            raise _BlockProblem("figure_data() called in a block that has no figure option")
        return None
    finally:
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")


@dataclass
class PageState:
    """A page part-way through its run: what a later block can see of the earlier ones."""

    run: PageRun
    namespace: dict[str, Any]
    exports: set[str]
    reads: inputs.Reads  # the project files the page read (the audit hook fills it)


#: Called before each cell with the job, the position of the cell about to run and the state:
#: returns the job to go on with (a checkpoint that was resumed with an edited page returns it).
Checkpoint = Callable[[PageJob, int, PageState], PageJob]


def execute(
    job: PageJob, progress: Callable[[int], None] = lambda i: None, checkpoint: Checkpoint | None = None
) -> PageRun:
    """Run the page's cells; stop at the first failure (later cells depend on earlier ones)."""
    reads = prepare_process(job)
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": job.display_path, "__builtins__": builtins}
    state = PageState(PageRun(started=time.monotonic()), namespace, set(), reads)
    return run_cells(job, state, 0, progress, checkpoint)


def run_cells(
    job: PageJob,
    state: PageState,
    position: int,
    progress: Callable[[int], None] = lambda i: None,
    checkpoint: Checkpoint | None = None,
) -> PageRun:
    """Run ``job.cells[position:]`` on ``state`` (the earlier cells ran already)."""
    run, namespace, exports = state.run, state.namespace, state.exports
    while position < len(job.cells):
        if checkpoint is not None:
            job = checkpoint(job, position, state)
        cell = job.cells[position]
        position += 1
        progress(cell.index)
        rec = record.Recorder(exports=exports)
        record.current = rec
        out = CellOutput(index=cell.index)
        try:
            if isinstance(cell, CodeCell):
                buf = io.StringIO()
                try:
                    with redirect_stdout(buf):
                        value = _run_code(cell, job, namespace)
                finally:
                    out.stdout = buf.getvalue()
                out.figure = _collect_figure(cell, rec, value, job, namespace)
                out.items = rec.items
                out.sources = called_sources(cell.code, namespace, job.link_packages)
            else:
                code = compile("\n" * (cell.line - 1) + cell.expr, job.display_path, "eval", dont_inherit=True)
                value = eval(code, namespace)
                if rec.items or rec.figure_data is not None:
                    raise _BlockProblem("an inline value cannot make tables, exports or Markdown; use a block")
                out.value = format_value(value)
        except _BlockProblem as exc:
            line = cell.fence_line if isinstance(cell, CodeCell) else cell.line
            run.error = CellError(job.display_path, line, str(exc), "", cell.index)
        except _OptionExpressionError as exc:
            err = _error(job, cell, exc.exc)
            detail = f"{type(exc.exc).__name__}: {exc.exc}" if str(exc.exc) else type(exc.exc).__name__
            err.line = cell.fence_line
            err.reason = f"{exc.option} expression `{{py:{exc.expr}}}` failed: {detail}"
            run.error = err
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - every failure is reported
            run.error = _error(job, cell, exc)
        finally:
            record.current = None
        if run.error is not None:
            run.outputs.append(out)  # keep what the failing block printed, for the error view
            break
        run.outputs.append(out)
    run.deps = state.reads.relative()
    run.changed = state.reads.changed()  # read, then changed before the run ended: not kept
    run.finished = time.monotonic()
    return run
