"""Benchmark writing with `mkdocs serve`: how long from saving a file to seeing it in the browser.

Starts the real `mkdocs serve` on a copy of the book (the book's own files are never touched),
then, several times over, saves one kind of edit and polls the served page over HTTP until the
edit shows. Every edit is made in the middle of the chapter (before the section heading nearest
its middle line), by default the book's heaviest page:
  prose          a sentence there changed (no block runs)
  code           a block added there (the blocks from there on run again)
  engine         a comment added to an engine module (the pages that import it run again)
  error appears  a block that raises added there (its box shows on the page)
  error clears   that block fixed (the box is gone, the block's output shows)
Reports, for each, the median and range of the wall time from saving to seeing, and of the CPU
time the serve process tree (its page workers and kept pages) used meanwhile (less disturbed
than wall time when the machine is shared), with the number of pages each rebuild executed,
and the proportional memory (PSS) of the serve process tree after the first build and at the end.

Usage: uv run python benchmarks/serve_bench.py [--runs 5] [--chapter docs/part3-decoder.md]
                                               [--engine src/tinyformer/models/decoder_stack.py]
                                               [--root CHECKOUT]  (another checkout: its book and plugin)
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "docs/part3-decoder.md"  # the page whose blocks use the most CPU time
ENGINE = "src/tinyformer/models/decoder_stack.py"
TICKS = os.sysconf("SC_CLK_TCK")


class Server:
    def __init__(self, root: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.root, self.url, self.log = root, f"http://127.0.0.1:{port}", root / "serve.log"
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"],
                # the plugin too comes from the copy (of --root's checkout), not from the installed one
                cwd=root, env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(root / "src")},
                stdout=out, stderr=subprocess.STDOUT,
            )

    def cpu(self) -> float:
        """CPU seconds of the serve process tree (a kept page's processes and what they reaped too)."""
        return tree_cpu(self.process.pid)

    def page(self, path: str) -> str | None:
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as response:
                return response.read().decode("utf-8")
        except OSError:
            return None  # not started yet, or the site directory is being rewritten

    def wait(self, path: str, seen: Callable[[str], bool], limit: float = 300) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                sys.exit(f"mkdocs serve exited:\n{self.log.read_text()[-3000:]}")
            page = self.page(path)
            if page is not None and seen(page):
                return
            time.sleep(0.05)
        sys.exit(f"{path}: edit not seen after {limit} s\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)  # as Ctrl-C: it removes its temporary site
        self.process.wait(timeout=60)


def _tree(pid: int) -> list[int]:
    """``pid`` and every live descendant."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process tree: each live process's own and its reaped children's."""
    total = 0
    for p in _tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])
        except (OSError, IndexError, ValueError):
            pass
    return total / TICKS


def tree_pss(pid: int) -> float:
    """Proportional memory (PSS) of a process tree, in MiB: shared pages split among their users."""
    total = 0
    for p in _tree(pid):
        try:
            total += sum(int(line.split()[1]) for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines()
                         if line.startswith("Pss:"))
        except OSError:
            pass
    return total / 1024


def middle(text: str) -> tuple[int, int]:
    """(offset of the section heading nearest the middle line, offset of the first sentence of
    prose after it): where the edits go."""
    lines = text.split("\n")
    headings = [i for i, line in enumerate(lines) if line.startswith("## ")]
    at = min(headings, key=lambda i: abs(i - len(lines) // 2))
    prose = next(i for i in range(at + 1, len(lines)) if re.match(r"[A-Z][a-z]+ [a-z]", lines[i]))
    offset = lambda i: sum(len(line) + 1 for line in lines[:i])  # noqa: E731
    return offset(at), offset(prose)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chapter", default=CHAPTER)
    parser.add_argument("--engine", default=ENGINE)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose book to serve")
    args = parser.parse_args()
    chapter_url = "/" + Path(args.chapter).stem + "/"

    with tempfile.TemporaryDirectory(prefix="serve-bench-") as tmp:
        root = Path(tmp)
        for name in ("docs", "overrides", "src", "figures"):
            shutil.copytree(args.root / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        # pyproject: the engine wheel's version and NumPy requirement; CITATION.cff: numbook-cite
        for name in ("mkdocs.yml", "pyproject.toml", "CITATION.cff"):
            shutil.copy(args.root / name, root / name)
        chapter, engine = root / args.chapter, root / args.engine
        original, engine_source = chapter.read_text(), engine.read_text()
        heading = middle(original)[0]

        def insert(block: str) -> str:
            return original[:heading] + block.lstrip("\n") + "\n" + original[heading:]

        server = Server(root)
        start = time.monotonic()
        server.wait("/", lambda page: True)
        print(f"first build (empty cache) served after {time.monotonic() - start:.1f} s")
        memory = [tree_pss(server.process.pid)]
        results: dict[str, list[tuple[float, float]]] = {}

        def measure(kind: str, save: Callable[[], None], seen: Callable[[str], bool]) -> None:
            cpu, start, logged = server.cpu(), time.monotonic(), len(server.log.read_text())
            save()
            server.wait(chapter_url, seen)
            if kind == "engine":  # the page looks the same: wait for the rebuild to finish
                while "Reloading browsers" not in server.log.read_text()[logged:]:
                    time.sleep(0.05)
            wall, used = time.monotonic() - start, server.cpu() - cpu
            executed = re.findall(r"numbook: (\d+) pages executed, \d+ from cache(?: \((.*) from block (\d+))?",
                                  server.log.read_text()[logged:])
            executed = [n + (f" ({page} from block {block})" if block else "") for n, page, block in executed]
            results.setdefault(kind, []).append((wall, used))
            print(f"{kind:14} {wall:6.2f} s wall {used:6.2f} s CPU   pages executed: {', '.join(executed)}")
            time.sleep(1)  # let the browser-reload poll settle before the next save

        for n in range(args.runs):
            code = f'\n```python exec\nprint("new", "block", {n})\n```\n'
            failing = f'\n```python exec\nraise ValueError("edit {n}")\n```\n'
            fixed = f'\n```python exec\nprint("fixed", "{n}")\n```\n'
            current = chapter.read_text()  # prose only: the blocks stay as they are
            at = middle(current)[1]
            edited = current[:at] + f"(edit {n}) " + current[at:]
            measure("prose", lambda: chapter.write_text(edited), lambda page: f"(edit {n})" in page)
            measure("code", lambda: chapter.write_text(insert(code)), lambda page: f"new block {n}" in page)
            measure("engine", lambda: engine.write_text(engine_source + f"\n# edit {n}\n"), lambda page: True)
            measure("error appears", lambda: chapter.write_text(insert(failing)),
                    lambda page: f"ValueError: edit {n}" in page and "numbook-error" in page)
            measure("error clears", lambda: chapter.write_text(insert(fixed)),
                    lambda page: f"fixed {n}" in page and "numbook-error" not in page)
        memory.append(tree_pss(server.process.pid))
        server.stop()

    print(f"\nmedian (min-max) of {args.runs} runs: wall s from saving to seeing | CPU s used meanwhile")
    for kind, runs in results.items():
        wall, cpu = [w for w, _ in runs], [c for _, c in runs]
        print(f"{kind:14} {statistics.median(wall):5.2f} ({min(wall):.2f}-{max(wall):.2f}) | "
              f"{statistics.median(cpu):5.2f} ({min(cpu):.2f}-{max(cpu):.2f})")
    print(f"PSS of the serve process tree: {memory[0]:.0f} MiB after the first build, {memory[1]:.0f} MiB at the end")


if __name__ == "__main__":
    main()
