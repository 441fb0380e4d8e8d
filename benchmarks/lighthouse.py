"""Lighthouse performance of every page of a built site, served gzip-compressed on 127.0.0.1.

Lighthouse is not a Python package: install it from npm outside the repository, e.g.

    npm install --prefix ~/.cache/book-lighthouse lighthouse@12
    export LIGHTHOUSE=~/.cache/book-lighthouse/node_modules/.bin/lighthouse

or let this script run ``npx --yes lighthouse@12`` (``--lighthouse npx``). It drives Debian's
Chromium (``CHROME_PATH=/usr/bin/chromium``, headless, no sandbox) with Lighthouse's mobile
preset: a simulated mid-range phone on a slow 4G link, with the CPU slowed 4x. Scores move
with the machine's load, so every page is measured ``runs`` times, pages interleaved, and the
medians are reported.

Headless Chromium sometimes holds back a page's first frame for about a second after the page
has finished loading: its compositor stops offering frames to a renderer it judges unresponsive
(GoogleChrome/lighthouse#17148, open, seen on PageSpeed Insights too). Lighthouse's simulation
then stretches that second into 2 to 3 s of LCP and the score falls by 0.15 to 0.25 whatever
the page does; on a 2-core machine a third of the runs of a long chapter can be hit. A run whose
page loaded before it painted (observed load < observed first contentful paint: the signature
that issue gives) is counted, shown, and measured again (``--retries``, at most that many times
per page); the scores are the medians of the runs it did not hit, and the median of every run
is reported beside them.

Usage: uv run python benchmarks/lighthouse.py SITE_DIR [--runs 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
COMPRESSIBLE = {".html", ".css", ".js", ".svg", ".json", ".xml", ".csv", ".txt", ".ipynb"}
# what is reported per page: Lighthouse audit id -> column name
AUDITS = {
    "dom-size": "DOM elements",
    "total-blocking-time": "TBT ms",
    "largest-contentful-paint": "LCP ms",
    "first-contentful-paint": "FCP ms",
    "speed-index": "SI ms",
    "cumulative-layout-shift": "CLS",
}


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    """A static file server that compresses text, as any production host does."""

    def send_head(self):  # noqa: ANN201 - stdlib signature
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.suffix in COMPRESSIBLE and path.is_file()) or not self.path.split("?")[0].endswith(("/", path.name)):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        pass


@contextmanager
def serve(site: Path) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(GzipHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def lighthouse_command(choice: str | None) -> list[str] | None:
    """The command that runs Lighthouse: --lighthouse, $LIGHTHOUSE, `lighthouse` on PATH; None if absent."""
    choice = choice or os.environ.get("LIGHTHOUSE") or shutil.which("lighthouse")
    if choice == "npx":
        return ["npx", "--yes", "lighthouse@12"] if shutil.which("npx") else None
    if choice and Path(choice).exists():
        return [choice]
    return None


def measure(command: list[str], url: str) -> dict[str, float]:
    """One Lighthouse run (mobile preset, performance only) of one URL."""
    with tempfile.TemporaryDirectory(prefix="book-lighthouse-") as tmp:
        report = Path(tmp) / "report.json"
        done = subprocess.run(
            [
                *command, url, "--only-categories=performance", "--output=json", f"--output-path={report}", "--quiet",
                "--chrome-flags=--headless --no-sandbox --disable-gpu --disable-dev-shm-usage",
            ],
            env=dict(os.environ, CHROME_PATH=os.environ.get("CHROME_PATH", CHROMIUM)),
            capture_output=True, text=True,
        )
        if done.returncode or not report.exists():
            raise RuntimeError(f"lighthouse failed on {url}:\n{done.stderr[-2000:]}")
        data = json.loads(report.read_text(encoding="utf-8"))
    result = {"score": data["categories"]["performance"]["score"]}
    for audit in AUDITS:
        result[audit] = data["audits"][audit]["numericValue"]
    # Lighthouse's own measure of the host CPU (higher is faster): the 4x slowdown is applied
    # to this machine's timings, so scores from two machines compare only beside it
    result["benchmark-index"] = data["environment"]["benchmarkIndex"]
    observed = data["audits"]["metrics"]["details"]["items"][0]
    result["frame-held"] = float(held_first_frame(observed))
    return result


def held_first_frame(observed: dict[str, float]) -> bool:
    """Did Chromium hold back the first frame until after the page had loaded
    (lighthouse#17148)? From the unthrottled timings Lighthouse observed."""
    return observed["observedLoad"] < observed["observedFirstContentfulPaint"]


def measure_site(site: Path, pages: list[str], command: list[str], runs: int, retries: int = 3) -> dict[str, dict[str, float]]:
    """Medians over `runs` rounds (a round visits every page once) of the runs whose first
    frame was not held back, each page measured again up to `retries` times when one was."""
    samples: dict[str, list[dict[str, float]]] = {page: [] for page in pages}
    with serve(site) as base:
        for _ in range(runs):
            for page in pages:
                samples[page].append(measure(command, base + page))
        for page in pages:
            for _ in range(retries):
                if sum(not s["frame-held"] for s in samples[page]) >= runs:
                    break
                samples[page].append(measure(command, base + page))
    return {page: summarise(runs_) for page, runs_ in samples.items()}


def measure_site_and_load(site: Path, pages: list[str], command: list[str], runs: int,
                          retries: int = 3) -> tuple[dict[str, dict[str, float]], tuple[float, float]]:
    """`measure_site`, with the host's 1-minute load average before and after it (for `report`)."""
    before = os.getloadavg()[0]
    medians = measure_site(site, pages, command, runs, retries)
    return medians, (before, os.getloadavg()[0])


def summarise(runs: list[dict[str, float]]) -> dict[str, float]:
    clean = [run for run in runs if not run["frame-held"]] or runs
    summary = {key: statistics.median(run[key] for run in clean) for key in runs[0]}
    summary["frame-held"] = sum(run["frame-held"] for run in runs)
    summary["runs"] = len(runs)
    summary["score-all-runs"] = statistics.median(run["score"] for run in runs)
    return summary


def report(medians: dict[str, dict[str, float]], runs: int, load: tuple[float, float] | None = None) -> str:
    """The table of medians; `load`: the host's 1-minute load average before and after the runs
    (Lighthouse's own Chromium is part of it), which the scores move with."""
    indexes = [m["benchmark-index"] for m in medians.values()]
    index = statistics.median(indexes)
    host = f"host CPU benchmarkIndex {index:,.0f} (pages {min(indexes):,.0f}-{max(indexes):,.0f}; higher is faster)"
    if load is not None:
        host += f", load average {load[0]:.2f} before and {load[1]:.2f} after, on {os.cpu_count()} CPUs"
    lines = [f"Lighthouse, mobile preset, gzip, median of {runs} runs; {host}",
             "held: runs whose first frame Chromium held back until after load (lighthouse#17148), measured again; "
             "score: median of the other runs; all: median of every run",
             f"{'page':<40}{'score':>7}{'all':>6}{'held':>6}" + "".join(f"{name:>14}" for name in AUDITS.values())]
    for page, m in medians.items():
        cells = "".join(f"{m[audit]:>14.3f}" if audit == "cumulative-layout-shift" else f"{m[audit]:>14,.0f}" for audit in AUDITS)
        held = f"{m['frame-held']:.0f}/{m['runs']:.0f}"
        lines.append(f"{page:<40}{m['score']:>7.2f}{m['score-all-runs']:>6.2f}{held:>6}{cells}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--retries", type=int, default=3, help="extra runs per page whose first frame was held back")
    parser.add_argument("--pages", nargs="*", help="URL paths (default: every page)")
    parser.add_argument("--lighthouse", help="path of the lighthouse command, or 'npx'")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    command = lighthouse_command(args.lighthouse)
    if command is None:
        sys.exit("Lighthouse not found: see this script's docstring")
    sys.path.insert(0, str(ROOT))
    from tests.site.conftest import site_pages

    medians, load = measure_site_and_load(args.site, args.pages or site_pages(args.site), command, args.runs, args.retries)
    print(report(medians, args.runs, load))
    if args.json:
        args.json.write_text(json.dumps(medians, indent=2))


if __name__ == "__main__":
    main()
