"""What each of the build's mechanisms buys: `mkdocs serve`'s loop, side by side with it switched off.

For each configuration a fresh Python process works on its own copy of the book, with the
numbook of ``--root`` (its ``src/`` first on ``sys.path``), and does what `mkdocs serve` does
in its build loop, without the file watcher and the browser: one build from a warm cache
("warm build"), then ``--runs`` rounds of the serve benchmark's edits in the middle of the
heaviest page (`serve_bench.py`), each followed by a rebuild with the same plugin objects and a
second's pause (an author reads the page before saving again):

  prose          a sentence changed (no block runs)
  code           a block added (the blocks from there on run again)
  error appears  a block that raises added there
  error clears   that block fixed

Reported per configuration: the median (and range) of each edit's rebuild, wall time and CPU
time of the whole process tree (page workers, kept states and the processes they reaped),
the warm build, and the proportional memory (PSS) of the process tree after the last edit.
Configurations run interleaved (A B C A B C ...), so that a machine shared with other work
disturbs them alike; ``--rounds`` repeats the whole set.

A configuration is ``all`` (everything as the book has it) or ``no-NAME`` for one of the
switches below; a switch the plugin of ``--root`` does not have is reported as such.

Usage: uv run python benchmarks/mechanisms.py [--root CHECKOUT | --root A=CHECKOUT --root B=OTHER]
                                              [--runs 5] [--rounds 2] [--configs all,no-kept,...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_bench import CHAPTER, ROOT, middle, tree_cpu, tree_pss  # noqa: E402 - the sibling benchmark
SERVE_URL = "http://127.0.0.1:8000/"
WORK = Path(tempfile.gettempdir()) / "mechanisms-work"  # the copies of the book the workers change

#: name -> what it switches off (an option of mkdocs.yml, or a function of the plugin replaced)
SWITCHES = {
    "kept": "kept page states under serve (numbook option keep_pages: false; before: checkpoint_interval: 0)",
    "aside": "figures drawn and checked in a forked process (FiguresAside)",
    "rendermemo": "stored Markdown conversions (RenderMemo.install a no-op)",
    "search": "numbook-lean's search_cache (the option removed)",
    "highlight": "Pygments highlighting remembered per process (remember_highlighting a no-op)",
    "katex": "KaTeX results remembered per process (katex.render and _tidied unwrapped)",
    "parse": "parsed pages remembered per process (book._parse_unchanged_page = parse_page)",
    "svg": "SVG measurements remembered per process (render._image_size unwrapped)",
    "jinja": "the theme's compiled templates kept from build to build (in memory; before: files under .cache)",
    "cite": "each page's description paragraph remembered per process (cite.opening_text unwrapped)",
    "wheel": "the engine's wheel remembered per process while its files are unchanged",
    "collect": "garbage collected after each serve build (plugin._collect_garbage_soon a no-op)",
}


# --- in the worker process ------------------------------------------------------------------


def _unwrap(module, names) -> bool:
    """Replace each memoised function ``names`` of ``module`` by the function it wraps."""
    found = False
    for attr in names:
        f = getattr(module, attr, None)
        if hasattr(f, "__wrapped__"):
            setattr(module, attr, f.__wrapped__)
            found = True
    return found


def _switch_off(name: str, config_text: str) -> tuple[str, bool]:
    """Apply one switch; returns mkdocs.yml's text and whether the plugin has the mechanism."""
    import importlib

    def module(dotted: str):
        try:
            return importlib.import_module(dotted)
        except ImportError:
            return None

    if name == "kept":
        options = module("numbook.config")
        source = Path(options.__file__).read_text() if options is not None else ""
        for option, off in (("keep_pages", "false"), ("checkpoint_interval", "0")):  # now, and before
            if option in source:
                return config_text.replace("  - numbook:\n", f"  - numbook:\n      {option}: {off}\n", 1), True
        return config_text, False
    if name == "search":
        text = re.sub(r"\n\s*search_cache:[^\n]*", "", config_text)
        return text, text != config_text
    if name == "aside":
        runner = module("numbook.runner")
        if runner is None or not hasattr(runner, "FiguresAside"):
            return config_text, False
        runner.FiguresAside = lambda: None  # the runner then draws each figure in place
        return config_text, True
    if name == "rendermemo":
        memo = module("numbook.rendermemo")
        if memo is None or not hasattr(memo, "RenderMemo"):
            return config_text, False
        memo.RenderMemo.install = lambda self, page: None
        return config_text, True
    if name == "highlight":
        plugin, memo = module("numbook.plugin"), module("numbook.rendermemo")
        found = False
        for m in (plugin, memo):
            if m is not None and hasattr(m, "remember_highlighting"):
                m.remember_highlighting = lambda: None
                found = True
        return config_text, found
    if name == "katex":
        return config_text, _unwrap(module("booksite.katex") or module("numbook.katex"), ("render", "_tidied"))
    if name == "parse":
        book = module("numbook.book")
        for memo in ("_parse_unchanged_page", "_parse_page"):  # now, and before
            if book is not None and hasattr(getattr(book, memo, None), "__wrapped__"):
                setattr(book, memo, book.parse_page)
                return config_text, True
        return config_text, False
    if name == "svg":
        return config_text, (_unwrap(module("numbook.render"), ("_image_size",))
                             or _unwrap(module("numbook.figures"), ("svg_size", "smallest_font")))
    if name == "jinja":
        plugin = module("numbook.plugin")
        if plugin is not None and hasattr(plugin, "TemplateCodeMemo"):
            plugin.TemplateCodeMemo = lambda: None  # no bytecode cache: every build compiles
            return config_text, True
        if plugin is None or "FileSystemBytecodeCache" not in Path(plugin.__file__).read_text():
            return config_text, False
        import jinja2

        jinja2.FileSystemBytecodeCache = lambda directory: None
        return config_text, True
    if name == "cite":
        return config_text, _unwrap(module("booksite.cite"), ("opening_text",))
    if name == "wheel":
        wheel = module("booksite.wheel")
        if wheel is None or not hasattr(wheel, "_LAST"):
            return config_text, False
        wheel._LAST = type("Forgetful", (dict,), {"__contains__": lambda self, key: False})()
        return config_text, True
    if name == "collect":
        plugin = module("numbook.plugin")
        if plugin is None or not hasattr(plugin, "_collect_garbage_soon"):
            return config_text, False
        plugin._collect_garbage_soon = lambda: None
        return config_text, True
    raise SystemExit(f"unknown switch {name!r}; known: {', '.join(SWITCHES)}")


def worker(args: argparse.Namespace) -> None:
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    import logging

    logging.getLogger("mkdocs").setLevel(logging.WARNING)
    root = Path.cwd()
    config_file = root / "mkdocs.yml"
    text = config_file.read_text()
    switched = {}
    for name in [c[3:] for c in args.config.split("+") if c.startswith("no-")]:
        text, switched[name] = _switch_off(name, text)
    config_file.write_text(text)

    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    site_dir = tempfile.mkdtemp(prefix="mechanisms-site-")

    def rebuild(first: bool = False) -> tuple[float, float, str]:
        config = load_config(config_file=str(config_file), site_dir=site_dir)
        config.site_url = SERVE_URL
        if first:
            config.plugins.on_startup(command="serve", dirty=False)
        me = os.getpid()
        cpu, wall = tree_cpu(me), time.perf_counter()
        note = ""
        try:
            build(config, serve_url=SERVE_URL)
        except Abort as exc:
            note = f"aborted: {exc}"
        wall, cpu = time.perf_counter() - wall, tree_cpu(me) - cpu
        plugin = config.plugins["numbook"]
        return wall, cpu, note or f"executed {plugin.pages_executed}"

    chapter = root / CHAPTER
    original = chapter.read_text()
    heading = middle(original)[0]

    def insert(block: str) -> str:
        return original[:heading] + block.lstrip("\n") + "\n" + original[heading:]

    results: dict[str, list] = {"warm build": [rebuild(first=True)]}
    pss_start = tree_pss(os.getpid())
    for n in range(args.runs):
        current = chapter.read_text()
        at = middle(current)[1]
        edits = [
            ("prose", current[:at] + f"(edit {n}) " + current[at:]),
            ("code", insert(f'\n```python exec\nprint("new", "block", {n})\n```\n')),
            ("error appears", insert(f'\n```python exec\nraise ValueError("edit {n}")\n```\n')),
            ("error clears", insert(f'\n```python exec\nprint("fixed", "{n}")\n```\n')),
        ]
        for kind, edited in edits:
            chapter.write_text(edited)
            results.setdefault(kind, []).append(rebuild())
            time.sleep(1)  # an author reads the page before the next save (as in serve_bench.py)
    pss = tree_pss(os.getpid())
    print("MECHANISMS " + json.dumps({"switched": switched, "results": results, "pss_mib": pss,
                                      "pss_start_mib": pss_start}), flush=True)
    # what `mkdocs serve` does when it ends
    config = load_config(config_file=str(config_file), site_dir=site_dir)
    config.plugins.on_shutdown()
    shutil.rmtree(site_dir, ignore_errors=True)


# --- the driver ----------------------------------------------------------------------------


def copy_book(source: Path, dest: Path, cache: Path | None) -> None:
    for name in ("docs", "overrides", "src", "figures"):
        if (source / name).is_dir():
            shutil.copytree(source / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("mkdocs.yml", "pyproject.toml", "CITATION.cff"):
        shutil.copy(source / name, dest / name)
    if cache is not None and cache.is_dir():
        shutil.copytree(cache, dest / ".cache" / "numbook")


def run_worker(source: Path, config: str, runs: int, cache: Path | None, keep_cache: Path | None = None) -> dict:
    # always the same directory for a checkout: an older plugin's stored conversions name the
    # files they read by absolute path
    work = WORK / hashlib.sha256(str(source).encode()).hexdigest()[:12]
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        copy_book(source, work, cache)
        env = {**os.environ, "PYTHONPATH": str(work / "src"), "NO_MKDOCS_2_WARNING": "1"}
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--worker", "--config", config, "--runs", str(runs)],
            cwd=work, env=env, capture_output=True, text=True,
        )
        if keep_cache is not None and (work / ".cache" / "numbook").is_dir():
            shutil.rmtree(keep_cache, ignore_errors=True)
            shutil.copytree(work / ".cache" / "numbook", keep_cache)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("MECHANISMS ")]
    if proc.returncode != 0 or not lines:
        sys.exit(f"{config}: the worker failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1].removeprefix("MECHANISMS "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", action="append", default=[],
                        help="the checkout whose book and plugin to measure (default: this one); give "
                             "NAME=CHECKOUT several times to compare checkouts, interleaved")
    parser.add_argument("--runs", type=int, default=5, help="rounds of edits per process")
    parser.add_argument("--rounds", type=int, default=1, help="times the whole set of configurations runs")
    parser.add_argument("--configs", default=",".join(["all", *(f"no-{s}" for s in SWITCHES)]),
                        help="comma-separated; 'no-a+no-b' switches off two at once; 'NAME:...' for one checkout only")
    parser.add_argument("--cache", type=Path, help="a folder for each checkout's warm .cache/numbook (made if missing)")
    parser.add_argument("--json", type=Path, help="write every measurement here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return

    roots = {}
    for item in args.root or [str(ROOT)]:
        name, _, path = item.rpartition("=")
        roots[name or "book"] = Path(path).resolve()
    caches = args.cache or Path(tempfile.gettempdir()) / "mechanisms-caches"
    for name, root in roots.items():
        cache = caches / name
        if not cache.is_dir():
            print(f"making a warm cache in {cache} (one cold build of {root}) ...", flush=True)
            run_worker(root, "all", 0, None, keep_cache=cache)
    configs = []  # "NAME:config" for one checkout; a bare config for each
    for c in args.configs.split(","):
        configs += [c] if ":" in c else [f"{name}:{c}" for name in roots]
    measured: dict[str, list[dict]] = {c: [] for c in configs}
    for r in range(args.rounds):
        for config in configs:
            name, _, switches = config.rpartition(":")
            start = time.monotonic()
            data = run_worker(roots[name or "book"], switches, args.runs, caches / (name or "book"))
            measured[config].append(data)
            print(f"round {r + 1} {config}: {time.monotonic() - start:.0f} s", flush=True)
            if args.json:  # after each, so that an interrupted campaign keeps what it measured
                args.json.write_text(json.dumps(measured, indent=1))
            report({config: [data]})
    report(measured)


def report(measured: dict[str, list[dict]]) -> None:
    kinds = ["warm build", "prose", "code", "error appears", "error clears"]
    print("\nmedian wall s (CPU s of the process tree) [min-max wall], over every round;"
          " PSS of the tree after the warm build -> after the edits")
    print(f"{'configuration':24}" + "".join(f"{k:>24}" for k in kinds) + f"{'PSS MiB':>16}")
    for config, datas in measured.items():
        missing = sorted({n for d in datas for n, has in d["switched"].items() if not has})
        cells = []
        for kind in kinds:
            runs = [r for d in datas for r in d["results"].get(kind, [])]
            if not runs:
                cells.append(f"{'-':>24}")
                continue
            wall, cpu = [r[0] for r in runs], [r[1] for r in runs]
            cells.append(f"{statistics.median(wall):6.2f} ({statistics.median(cpu):5.2f}) "
                         f"[{min(wall):.1f}-{max(wall):.1f}]".rjust(24))
        pss = statistics.median(d["pss_mib"] for d in datas)
        start = statistics.median(d.get("pss_start_mib", 0) for d in datas)
        label = config + (f" (n/a: {', '.join(missing)})" if missing else "")
        print(f"{label:24}" + "".join(cells) + f"{start:7.0f} -> {pss:5.0f}")


if __name__ == "__main__":
    main()
