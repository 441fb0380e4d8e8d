"""Apply the house style (`figures/book.mplstyle`) while a figure is being built.

Why a context manager and not a global `plt.style.use`: chapter blocks run in one shared
namespace, and a figure must look the same whatever the block before it did to rcParams.
Everything that matters is baked into the artists at creation time (colours, fonts,
transparent patches), so the figure saves correctly even after the context has exited.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ParamSpec, TypeVar

import matplotlib

matplotlib.use("Agg")  # figures are built headless (build workers, tests)

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

P = ParamSpec("P")
R = TypeVar("R")


def style_path() -> Path:
    """Where the style sheet lives: $BOOK_MPLSTYLE, else `figures/book.mplstyle` at the repo root."""
    override = os.environ.get("BOOK_MPLSTYLE")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / "figures" / "book.mplstyle"


@functools.cache
def house_rc() -> dict:
    """The style sheet's rcParams (parsed once; a missing sheet is an error, not a silent default)."""
    path = style_path()
    if not path.is_file():
        raise FileNotFoundError(f"house style sheet not found: {path} (set BOOK_MPLSTYLE)")
    return dict(matplotlib.rc_params_from_file(path, use_default_template=False))


@contextmanager
def book_style() -> Iterator[None]:
    """Build figures inside this block to get the house style, leaving global rcParams untouched."""
    with plt.rc_context(house_rc()):
        yield


def _positions(fig: Figure) -> list[tuple[float, ...]]:
    return [tuple(ax.get_position().bounds) for ax in fig.axes]


def freeze_layout(fig: Figure, max_passes: int = 4, tol: float = 5e-4) -> Figure:
    """Settle constrained layout, then fix it.

    Constrained layout re-runs on every draw and, with square-celled (aspect-equal) grids,
    moves the axes by fractions of a point from one save to the next, so two saves would
    differ. Passes stop once the axes move less than `tol` (figure fraction); freezing
    then makes every later save identical.
    """
    before = _positions(fig)
    engine = fig.get_layout_engine()
    for _ in range(max_passes):
        if engine is None:
            fig.draw_without_rendering()
        else:
            engine.execute(fig)  # the layout alone: what a draw does first, without drawing the rest
        after = _positions(fig)
        moved = max((abs(a - b) for p, q in zip(before, after) for a, b in zip(p, q)), default=0.0)
        before = after
        if moved < tol:
            break
    fig.set_layout_engine("none")
    return fig


def styled(func: Callable[P, R]) -> Callable[P, R]:
    """Decorator: build a figure inside `book_style()` and freeze its layout."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with book_style():
            result = func(*args, **kwargs)
            if isinstance(result, Figure):
                freeze_layout(result)
            return result

    return wrapper


def new_figure(width: float, height: float, **kwargs) -> Figure:
    """A Figure not registered with pyplot, so build workers never accumulate open figures."""
    return Figure(figsize=(width, height), layout="constrained", **kwargs)
