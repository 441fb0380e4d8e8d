"""Benchmark the book's build: how much the executable pages cost, measured, not guessed.

Reports the median wall time over several runs of
  bare    the same pages with the numbook plugin disabled (blocks shown as code, nothing runs),
  plain   every page's blocks run one after another in one plain Python process (no MkDocs),
  cold    a full build with an empty cache,
  warm    a build with nothing changed,
  prose   a build after editing one sentence of one page,
  code    a build after editing one block of one page,
each also as a ratio to the bare build (ratio of the medians, and the median of each run's
ratio to the bare build run just before it, which a noisy shared machine disturbs less); then the bytes each page transfers when a reader opens
it in Chromium (when /usr/bin/chromium exists); then, with --lighthouse, each page's
Lighthouse performance (mobile preset, served gzip-compressed; see benchmarks/lighthouse.py).

Usage: uv run python benchmarks/build_bench.py [--runs 5] [--json results.json]
                                               [--lighthouse [PATH|npx]] [--lighthouse-runs 3]
The book's own docs/ are never touched: every run works on a copy.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import lighthouse  # noqa: E402 - the sibling module, also a command of its own

BUILD = textwrap.dedent(
    """
    import os, sys
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    config = load_config({config!r}, docs_dir=sys.argv[1], site_dir=sys.argv[2])
    config.plugins["numbook"].config.cache_dir = sys.argv[3]
    config.plugins.on_startup(command="build", dirty=False)
    build(config)
    config.plugins.on_shutdown()
    plugin = config.plugins["numbook"]
    print(f"NUMBOOK_STATS executed={{plugin.pages_executed}} cached={{plugin.pages_from_cache}}")
    """
)

PLAIN = textwrap.dedent(
    """
    import ast, contextlib, io, pathlib, sys
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure
    from numbook.cells import CodeCell
    from numbook.parse import parse_page

    def save(figure):
        figure.savefig(io.BytesIO(), format="svg")
        plt.close(figure)

    for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.md")):
        namespace = {"__name__": "__page__"}
        for cell in parse_page(path.read_text(encoding="utf-8"), str(path)).cells:
            with contextlib.redirect_stdout(io.StringIO()):
                if isinstance(cell, CodeCell):
                    tree = ast.parse(cell.code)
                    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
                    exec(compile(tree, str(path), "exec"), namespace)
                    value = eval(compile(ast.Expression(last.value), str(path), "eval"), namespace) if last else None
                    if isinstance(value, Figure):
                        save(value)
                else:
                    eval(cell.expr, namespace)
            for number in plt.get_fignums():
                save(plt.figure(number))
    """
)


def run_build(docs: Path, site: Path, cache: Path, *, enabled: bool) -> tuple[float, str]:
    """Wall time of one build in a fresh process, as `mkdocs build` would pay it."""
    env = dict(os.environ, NUMBOOK_ENABLED="true" if enabled else "false", NO_MKDOCS_2_WARNING="1")
    if not enabled:  # the bare build is a throwaway: numbook lets it leave the blocks unrun
        env["NUMBOOK_ALLOW_UNEXECUTED"] = "1"
    script = BUILD.format(config=str(ROOT / "mkdocs.yml"))
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script, str(docs), str(site), str(cache)],
        env=env, capture_output=True, text=True, cwd=ROOT,
    )
    elapsed = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"build failed:\n{done.stdout}\n{done.stderr}")
    stats = next((line for line in done.stdout.splitlines() if line.startswith("NUMBOOK_STATS")), "")
    return elapsed, stats


def run_plain(docs: Path) -> float:
    """Wall time of running every page's blocks in one plain Python process."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PLAIN, str(docs)], capture_output=True, text=True, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"plain run failed:\n{done.stderr}")
    return elapsed


def edit_page(docs: Path, *, code: bool) -> Path:
    """Change one page: a sentence of prose, or the first executable block."""
    for page in sorted(docs.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        if "```python exec" not in text:
            continue
        if code:
            marker = text.index("```python exec")
            line_end = text.index("\n", marker)
            text = text[: line_end + 1] + f"_bench_edit = {time.time_ns()}\n" + text[line_end + 1 :]
        else:
            text += f"\n\nA sentence added by the benchmark ({time.time_ns()}).\n"
        page.write_text(text, encoding="utf-8")
        return page
    sys.exit("no page with an executable block to edit")


SEARCH_INDEX = "search/search_index.json"


def page_weights(site: Path) -> dict[str, int]:
    """Bytes each page transfers when opened in Chromium (HTML, CSS, JS, fonts, images).

    A page asks for the site's search index only when the reader reaches for search
    (overrides/partials/javascripts/search-on-demand.html), so that file is reported once,
    on its own.
    """
    if not Path("/usr/bin/chromium").exists():
        return {}
    sys.path.insert(0, str(ROOT))
    from tests.site.conftest import CHROMIUM_ARGS, QuietHandler, site_pages  # shared with the browser tests
    import functools
    import http.server
    import threading

    from playwright.sync_api import sync_playwright

    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    weights: dict[str, int] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for path in site_pages(site):
            context = browser.new_context()
            page = context.new_page()
            sizes: list[int] = []
            page.on("requestfinished", lambda request: sizes.append(request.sizes()["responseBodySize"]))
            page.goto(base + path, wait_until="networkidle")
            weights[path] = sum(sizes)
            context.close()
        browser.close()
    server.shutdown()
    return weights


def lighthouse_scores(site: Path, choice: str, runs: int) -> tuple[dict[str, dict[str, float]], tuple[float, float] | None]:
    """Median Lighthouse measures per page and the host's load average before and after them,
    or nothing (with a note) when Lighthouse is missing."""
    command = lighthouse.lighthouse_command(choice or None)
    if command is None:
        print("Lighthouse not found (pass --lighthouse PATH or npx, or set $LIGHTHOUSE): skipped", file=sys.stderr)
        return {}, None
    sys.path.insert(0, str(ROOT))
    from tests.site.conftest import site_pages

    return lighthouse.measure_site_and_load(site, site_pages(site), command, runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--lighthouse", nargs="?", const="", metavar="PATH|npx",
                        help="also measure every page with Lighthouse (default: $LIGHTHOUSE or `lighthouse` on PATH)")
    parser.add_argument("--lighthouse-runs", type=int, default=3)
    args = parser.parse_args()

    times: dict[str, list[float]] = {key: [] for key in ("bare", "plain", "cold", "warm", "prose", "code")}
    stats: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="book-bench-") as tmp:
        tmp = Path(tmp)
        for run in range(args.runs):
            docs, site, cache = tmp / f"docs{run}", tmp / f"site{run}", tmp / f"cache{run}"
            shutil.copytree(ROOT / "docs", docs)
            times["plain"].append(run_plain(docs))
            # The bare build runs right before the warm one, so slow drifts of a shared
            # machine (other load, CPU clocks) hit both sides of the ratio alike.
            for kind in ("cold", "bare", "warm", "prose", "code"):
                if kind == "bare":
                    times["bare"].append(run_build(docs, tmp / "bare", tmp / "unused", enabled=False)[0])
                    continue
                if kind in ("prose", "code"):
                    edit_page(docs, code=kind == "code")
                elapsed, stats[kind] = run_build(docs, site, cache, enabled=True)
                times[kind].append(elapsed)
        weights = page_weights(site)
        search_bytes = (site / SEARCH_INDEX).stat().st_size
        scores, load = lighthouse_scores(site, args.lighthouse, args.lighthouse_runs) if args.lighthouse is not None else ({}, None)

    medians = {key: statistics.median(values) for key, values in times.items()}
    bare = medians["bare"]
    print(f"Build benchmark: median of {args.runs} runs, pages of {ROOT / 'docs'}")
    # Each run's own ratio to the bare build of the same run, then their median: a slow
    # moment of a shared machine then slows both sides of one ratio, not one side only.
    paired = {key: statistics.median(t / b for t, b in zip(values, times["bare"])) for key, values in times.items()}
    print(f"{'build':<8}{'median s':>10}{'x bare':>9}{'paired x':>10}  numbook")
    for key, value in medians.items():
        print(
            f"{key:<8}{value:>10.2f}{value / bare:>9.2f}{paired[key]:>10.2f}"
            f"  {stats.get(key, '').removeprefix('NUMBOOK_STATS ')}"
        )
    print(f"target: cold <= bare + plain = {bare + medians['plain']:.2f} s; warm <= 1.10 x bare = {1.10 * bare:.2f} s"
          f" (paired {paired['warm']:.2f}); a code edit runs one page ({stats.get('code', '').removeprefix('NUMBOOK_STATS ')})")
    if weights:
        print(f"\n{'page':<48}{'bytes transferred':>18}")
        for path, size in weights.items():
            print(f"{path:<48}{size:>18,}")
        print(f"{'search index (fetched when the reader searches)':<48}{search_bytes:>18,}")
    if scores:
        print()
        print(lighthouse.report(scores, args.lighthouse_runs, load))
    if args.json:
        args.json.write_text(json.dumps({"median_s": medians, "paired_ratio": paired, "runs": times, "page_bytes": weights, "search_index_bytes": search_bytes, "lighthouse": scores}, indent=2))


if __name__ == "__main__":
    main()
