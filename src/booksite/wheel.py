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

import hashlib
import os
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
    key = _inputs_digest(root, packages, repr((name, metadata, os.environ.get("SOURCE_DATE_EPOCH"))))
    if key in _LAST:
        return _LAST[key]
    config = {"project": metadata, "tool": {"hatch": {"build": {"targets": {"wheel": {"packages": packages}}}}}}
    with tempfile.TemporaryDirectory(prefix="numbook-wheel-") as out:
        path = Path(next(WheelBuilder(str(root), config=config).build(directory=out, versions=["standard"])))
        wheel = Wheel(path.name, path.read_bytes(), tuple(Path(p).name for p in packages))
    _LAST.clear()
    _LAST[key] = wheel
    return wheel


#: The last wheel built in this process, by its inputs' digest: `mkdocs serve` builds the site
#: again at every save, and zipping the packages took a tenth of a second of each (profiled).
_LAST: dict[str, Wheel] = {}


def _inputs_digest(root: Path, packages: list[str], options: str) -> str:
    """sha256 over what the wheel is made from: every file in the package folders (more than
    hatchling packs, never less), with its mode; the files that tell it what to pack; the
    licence files it takes from the project's root; and ``options``."""
    digest = hashlib.sha256(options.encode())
    files = [root / name for name in ("pyproject.toml", ".gitignore")]
    files += sorted(f for pattern in _ROOT_FILES_PACKED for f in root.glob(pattern))
    for package in packages:
        files += sorted(f for f in (root / package).rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    for f in files:
        digest.update(str(f.relative_to(root)).encode() + b"\0")
        digest.update(hashlib.sha256(f.read_bytes()).digest() + oct(f.stat().st_mode).encode() if f.is_file() else b"-")
    return digest.hexdigest()


#: The files hatchling puts in a wheel's metadata from the project's root (hatchling.metadata.core).
_ROOT_FILES_PACKED = ("LICEN[CS]E*", "COPYING*", "NOTICE*", "AUTHORS*")
