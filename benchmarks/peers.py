"""numbook against its peers, on the shared harness's synthetic book (one command).

The harness (``make_book.py``, ``bench.py``, ``check_book.py``, ``setup_env.sh``) lives
outside this repository; this script only drives it:

1. makes the harness's environment (its exact lock, via its ``setup_env.sh``) under
   ``WORK/venv``, once, and installs *this checkout's* numbook into it (editable, no
   deps), so the peers (markdown-exec, mkdocs-jupyter) never enter the book's own env;
2. writes the book with 6 pages (every form) and 12 pages (the growth check), plus a
   ``numbook_1w`` copy of the numbook form with ``workers: 1``;
3. times cold builds (P=6 and P=12) and warm builds (P=6), interleaved, so every
   ratio is paired (the median of per-round ratios);
4. checks that every build really ran the code (``check_book.py``), and prints the
   table in the form of issue #16 with its targets.

Usage:
  uv run python benchmarks/peers.py [--harness DIR] [--work DIR] [--runs 5]

``--harness`` (or ``$NUMBOOK_BENCH_HARNESS``) defaults to ``shared/bench`` beside the
main checkout (``../shared/bench``); ``--work`` (or ``$BENCH_WORK``) to
``.cache/bench`` in this checkout. A whole run takes 6 to 15 minutes on 2 cores (machine-dependent).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
P6_FORMS = ["bare", "markdown_exec", "mkdocs_jupyter", "numbook", "numbook_1w", "script"]
WARM_FORMS = ["bare", "markdown_exec", "mkdocs_jupyter", "numbook"]
P12_FORMS = ["bare", "markdown_exec", "numbook", "script"]


def default_harness() -> Path:
    """``../shared/bench`` next to this checkout, or next to the main checkout of a worktree."""
    candidates = [ROOT.parent / "shared" / "bench"]
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    ).stdout.strip()
    if common:
        candidates.append(Path(common).parent.parent / "shared" / "bench")
    return next((c for c in candidates if (c / "bench.py").is_file()), candidates[0])


def run(cmd: list[str], **kwargs) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kwargs)


def ensure_venv(harness: Path, venv: Path) -> Path:
    """The harness's pinned environment (made once per lock), with this checkout's numbook in it."""
    lock = (harness / "requirements.lock.txt").read_bytes()
    stamp = venv / "lock.sha256"
    digest = hashlib.sha256(lock).hexdigest()
    if not stamp.is_file() or stamp.read_text() != digest:
        shutil.rmtree(venv, ignore_errors=True)
        run(["sh", harness / "setup_env.sh", venv])
        stamp.write_text(digest)
    python = venv / "bin" / "python"
    run(["uv", "pip", "install", "-q", "--python", python, "--no-deps", "-e", ROOT])
    # The lock's packages are byte-compiled by setup_env.sh; an editable install is not,
    # and with PYTHONDONTWRITEBYTECODE set every build would compile numbook afresh.
    run([python, "-m", "compileall", "-q", ROOT / "src" / "numbook"])
    return python


def make_books(python: Path, harness: Path, books: Path) -> None:
    """Both books, written afresh, and the one-worker copy of the numbook form."""
    shutil.rmtree(books, ignore_errors=True)
    run([python, harness / "make_book.py", books / "p6"], cwd=harness, stdout=subprocess.DEVNULL)
    run([python, harness / "make_book.py", books / "p12", "-P", "12", "--forms", ",".join(P12_FORMS)],
        cwd=harness, stdout=subprocess.DEVNULL)
    commands_path = books / "p6" / "commands.json"
    commands = json.loads(commands_path.read_text())
    numbook = commands["forms"]["numbook"]
    one = Path(numbook["cwd"]).with_name("numbook_1w")
    shutil.copytree(numbook["cwd"], one)
    yml = one / "mkdocs.yml"
    text = yml.read_text()
    if "  - numbook\n" not in text:
        sys.exit(f"{yml}: cannot find the numbook plugin line to give it workers: 1")
    yml.write_text(text.replace("  - numbook\n", "  - numbook:\n      workers: 1\n"))
    commands["forms"]["numbook_1w"] = dict(numbook, cwd=str(one), description=numbook["description"] + ", workers: 1")
    commands_path.write_text(json.dumps(commands, indent=2) + "\n")


def bench(python: Path, harness: Path, book: Path, forms: list[str], mode: str, runs: int, out: Path) -> dict:
    ratios = ["numbook/markdown_exec", "numbook/mkdocs_jupyter", "numbook_1w/markdown_exec", "numbook/script"]
    ratio_args = [f"--ratio={r}" for r in ratios if set(r.split("/")) <= set(forms)]
    run([python, harness / "bench.py", book, "--forms", ",".join(forms), "--mode", mode, "--runs", str(runs),
         "--warmup", "1", "--interleave", "--json", out, *ratio_args], cwd=harness)
    run([python, harness / "check_book.py", book, "--forms", ",".join(forms)], cwd=harness)
    return json.loads(out.read_text())


def paired(result: dict, a: str, b: str) -> float:
    """Median over rounds of a's wall time over b's (the rounds of an interleaved run line up)."""
    return statistics.median(x["wall"] / y["wall"] for x, y in zip(result["runs"][a], result["runs"][b]))


def report(cold: dict, warm: dict, p12: dict) -> str:
    def wall(result: dict, form: str) -> float:
        return result["forms"][form]["wall"]["median"]

    def cpu(result: dict, form: str) -> float:
        return result["forms"][form]["cpu"]["median"]

    def cell(result: dict, form: str) -> str:
        return f"{wall(result, form):.2f} s (cpu {cpu(result, form):.2f})"

    def cpu_ratio(result: dict, a: str, b: str) -> float:
        return statistics.median(x["cpu"] / y["cpu"] for x, y in zip(result["runs"][a], result["runs"][b]))

    one_me = paired(cold, "numbook_1w", "markdown_exec")
    warm_bare = paired(warm, "numbook", "bare")
    lines = [
        "| | bare | markdown-exec | mkdocs-jupyter | plain script | numbook |",
        "|---|---|---|---|---|---|",
        f"| cold, 2 workers | {cell(cold, 'bare')} | {cell(cold, 'markdown_exec')} | {cell(cold, 'mkdocs_jupyter')} "
        f"| {cell(cold, 'script')} | {cell(cold, 'numbook')} |",
        f"| cold, 1 worker | | {cell(cold, 'markdown_exec')} | | | {cell(cold, 'numbook_1w')} "
        f"({one_me:.2f}× markdown-exec) |",
        f"| warm, nothing changed | {cell(warm, 'bare')} | {cell(warm, 'markdown_exec')} | "
        f"{cell(warm, 'mkdocs_jupyter')} | | {cell(warm, 'numbook')} ({warm_bare:.2f}× bare) |",
        f"| cold, 12 pages | {cell(p12, 'bare')} | {cell(p12, 'markdown_exec')} | | {cell(p12, 'script')} "
        f"| {cell(p12, 'numbook')} |",
        "",
        "Wall: median of the counted runs; cpu: user+sys of the whole process tree. Ratios: paired (per round).",
        "",
    ]
    growth = {f: wall(p12, f) / wall(cold, f) for f in ("numbook", "script", "markdown_exec")}
    growth_cpu = {f: cpu(p12, f) / cpu(cold, f) for f in growth}
    targets = [
        ("cold, 1 worker / markdown-exec", one_me, cpu_ratio(cold, "numbook_1w", "markdown_exec"), 1.0),
        ("cold, 2 workers / markdown-exec", paired(cold, "numbook", "markdown_exec"),
         cpu_ratio(cold, "numbook", "markdown_exec"), 0.6),
        ("cold, 2 workers / mkdocs-jupyter", paired(cold, "numbook", "mkdocs_jupyter"),
         cpu_ratio(cold, "numbook", "mkdocs_jupyter"), 0.2),
        ("warm / bare", warm_bare, cpu_ratio(warm, "numbook", "bare"), 1.1),
    ]
    lines.append("| target | wall, paired | cpu, paired | limit | met (wall) |")
    lines.append("|---|---:|---:|---:|---|")
    for name, value, value_cpu, limit in targets:
        lines.append(f"| {name} | {value:.2f} | {value_cpu:.2f} | {limit:.2f} | {'yes' if value <= limit else 'NO'} |")
    lines.append(
        f"| growth P=12 / P=6, numbook (limit: the script's) | {growth['numbook']:.2f} | {growth_cpu['numbook']:.2f} "
        f"| {growth['script']:.2f} (cpu {growth_cpu['script']:.2f}) | {'yes' if growth['numbook'] <= growth['script'] else 'NO'} |"
    )
    lines.append("")
    lines.append("growth P=12 / P=6 (wall): " + ", ".join(f"{f} {g:.2f}" for f, g in growth.items()))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--harness", type=Path, default=os.environ.get("NUMBOOK_BENCH_HARNESS"))
    parser.add_argument("--work", type=Path, default=os.environ.get("BENCH_WORK") or ROOT / ".cache" / "bench")
    parser.add_argument("--runs", type=int, default=5, help="counted rounds per timing (after 1 warm-up round)")
    parser.add_argument("--report-only", action="store_true", help="print the table of the last run's results")
    args = parser.parse_args()
    harness = (args.harness or default_harness()).resolve()
    if not (harness / "bench.py").is_file():
        sys.exit(f"no benchmark harness at {harness}: pass --harness DIR or set NUMBOOK_BENCH_HARNESS")
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    results = {name: work / f"{name}.json" for name in ("p6_cold", "p6_warm", "p12_cold")}
    if not args.report_only:
        python = ensure_venv(harness, work / "venv")
        books = work / "books"
        make_books(python, harness, books)
        bench(python, harness, books / "p6", P6_FORMS, "cold", args.runs, results["p6_cold"])
        bench(python, harness, books / "p6", WARM_FORMS, "warm", args.runs, results["p6_warm"])
        bench(python, harness, books / "p12", P12_FORMS, "cold", args.runs, results["p12_cold"])
    loaded = {name: json.loads(path.read_text()) for name, path in results.items()}
    print()
    print(report(loaded["p6_cold"], loaded["p6_warm"], loaded["p12_cold"]))


if __name__ == "__main__":
    main()
