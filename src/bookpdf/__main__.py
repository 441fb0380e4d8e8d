"""``python -m bookpdf``: build the site, then write its PDF edition into ``<site>/pdf/``.

``--site DIR`` typesets a site built already (by the same commit); ``--paper A4`` makes one
paper size only; ``--pages a.md b.md`` makes a book of those pages only (a quick look at one
chapter while writing it).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

from .plugin import NEXT
from .typeset import PAPERS, TypesetterMissing, read_config, typeset


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bookpdf", description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site to typeset (default: build one into site/)")
    parser.add_argument("--project", type=Path, default=Path("."), help="where mkdocs.yml and CITATION.cff are")
    parser.add_argument("--paper", choices=sorted(PAPERS), action="append", help="one paper size (repeatable)")
    parser.add_argument("--pages", nargs="+", metavar="PAGE.md", help="only these pages (a partial book)")
    args = parser.parse_args(argv)
    project = args.project.resolve()
    site = args.site.resolve() if args.site else None
    if site is None:
        site = project / "site"
        env = {**os.environ, NEXT: "1"}  # numbook-pdf: no "how to make the PDFs" in this build's log
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
                       cwd=project, check=True, env=env)
    start = time.perf_counter()
    config = read_config(project / "mkdocs.yml")
    if args.pages:
        config = dataclasses.replace(config, pages=tuple(p for p in config.pages if p[0] in args.pages))
    try:
        report = typeset(project, site.resolve(), args.paper, config=config)
    except TypesetterMissing as exc:
        print(f"bookpdf: no PDF made: {exc}", file=sys.stderr)
        return 2
    for out in report.outputs:
        first = out.first_page
        span = f"book pages {first}-{first + out.pages - 2}" if out.chapter else "the book"
        print(f"{out.path.relative_to(site)}\t{out.pages} pages\t{out.bytes / 1e6:.2f} MB\t{span}")
    for paper, holes in report.holes.items():
        for prefix, hole in holes:
            print(f"bookpdf: {paper}: {prefix}, its page {hole.page + 1} is {hole.empty:.0%} empty")
    seconds = time.perf_counter() - start
    print(f"bookpdf: {len(report.outputs)} PDFs in {seconds:.0f} s ("
          + ", ".join(f"{k} {v:.0f} s" for k, v in report.seconds.items()) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
