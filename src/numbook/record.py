"""Where `numbook.api` calls made inside a running block are recorded.

The runner installs a fresh `Recorder` before each cell and reads it afterwards;
outside a build there is none and the api functions simply return their values.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Recorder:
    items: list[dict[str, str]] = field(default_factory=list)
    figure_data: tuple[list[str], list[list[object]]] | None = None
    exports: set[str] = field(default_factory=set)
    variants: list[dict] = field(default_factory=list)  # other versions of the block's figure
    variant_figures: list[object] = field(default_factory=list)  # their Figure objects (not cached)
    narrow_svg: str | None = None  # the block's figure as a phone shows it (`numbook.api.narrow`)
    #: the block's other figures for the ``figure_check``, each with its files' suffix
    #: ("narrow", a variant's key, "key.narrow")
    other_figures: list[tuple[str, object]] = field(default_factory=list)


current: Recorder | None = None
