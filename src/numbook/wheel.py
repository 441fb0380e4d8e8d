"""Build a wheel of some packages of a project, reproducibly, for a site to publish.

A notebook downloaded from the site runs outside the project's checkout, where the
project's own packages are not importable. The site therefore publishes them as a small
wheel that the notebook installs. The wheel is built from the same source folders the
project imports (one source of truth), by hatchling, the project's build backend: its
files are sorted and stamped with ``SOURCE_DATE_EPOCH`` (or hatchling's fixed date), so
one commit always gives the same bytes.

The wheel's version, Python requirement and licence are the project's own (its
``pyproject.toml``); its dependencies are those of the project's that it names, with the
project's version specifiers.
"""

from __future__ import annotations

import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


@dataclass(frozen=True)
class Wheel:
    filename: str
    content: bytes
    top_level: tuple[str, ...]  # the import names it provides, e.g. ("tinyformer",)


def project_table(root: Path) -> dict:
    """The ``[project]`` table of ``root/pyproject.toml``."""
    path = root / "pyproject.toml"
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))["project"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: cannot read its [project] table ({exc})") from exc


def pinned_dependencies(project: dict, names: list[str]) -> list[str]:
    """The project's requirement for each named package (``numpy`` -> ``numpy>=1.26``)."""
    declared = {canonicalize_name(Requirement(r).name): r for r in project.get("dependencies", [])}
    missing = [name for name in names if canonicalize_name(name) not in declared]
    if missing:
        raise ValueError(f"the wheel requires {', '.join(missing)}, which pyproject.toml does not list as dependencies")
    return [declared[canonicalize_name(name)] for name in names]


def build_wheel(root: Path, *, name: str, packages: list[str], requires: list[str], summary: str = "") -> Wheel:
    """Build the wheel of ``packages`` (folders relative to ``root``) in memory."""
    from hatchling.builders.wheel import WheelBuilder

    missing = [p for p in packages if not (root / p / "__init__.py").is_file()]
    if not packages:
        raise ValueError(f"{name}: no packages to put in it")
    if missing:
        raise ValueError(f"not a Python package folder: {', '.join(missing)}")
    project = project_table(root)
    metadata = {
        "name": name,
        "version": project["version"],
        "description": summary,
        "requires-python": project.get("requires-python", ">=3"),
        "dependencies": pinned_dependencies(project, requires),
    }
    if "license" in project:
        metadata["license"] = project["license"]
    config = {"project": metadata, "tool": {"hatch": {"build": {"targets": {"wheel": {"packages": packages}}}}}}
    with tempfile.TemporaryDirectory(prefix="numbook-wheel-") as out:
        path = Path(next(WheelBuilder(str(root), config=config).build(directory=out, versions=["standard"])))
        return Wheel(path.name, path.read_bytes(), tuple(Path(p).name for p in packages))
