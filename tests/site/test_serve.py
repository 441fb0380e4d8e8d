"""Writing with `mkdocs serve`: a broken block or formula shows on its page and the preview keeps going.

The book's own `mkdocs.yml` has `strict: true`. This test runs the real `mkdocs serve` on a
throwaway copy of the book (the configuration unchanged but for one small page added to
the nav, so that each rebuild executes only that page), breaks the page in each way an
author can, and reads the served pages over HTTP: the problem must show on the page with
its page:line, another page edited at the same moment must update too (the rebuild was
not aborted), the terminal must print page:line, and the next rebuild after the fix must
show the fixed page.
"""

from __future__ import annotations

import html
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.slow

PAGE = "serve-check.md"
FIRST_BUILD_S = 240  # a cold cache runs every page of the book once; the machine may be busy
REBUILD_S = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ProblemText(HTMLParser):
    """The text of every element a preview uses to show a problem (box, mark, summary)."""

    CLASSES = {"numbook-error", "numbook-problems"}

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0  # > 0 while inside such an element
        self.pieces: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").split())
        if self.depth or classes & self.CLASSES:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if self.depth:
            self.depth -= 1
            if not self.depth:
                self.pieces.append("\n")

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.pieces.append(data)

    @classmethod
    def of(cls, page: str) -> str:
        parser = cls()
        parser.feed(page)
        return "".join(parser.pieces)


@dataclass
class Served:
    root: Path
    url: str
    log: Path
    process: subprocess.Popen

    def write(self, rel: str, text: str) -> None:
        (self.root / rel).write_text(text, encoding="utf-8")

    def get(self, path: str) -> str | None:
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as response:
                return response.read().decode("utf-8")
        except (urllib.error.URLError, OSError):
            return None  # mid-rebuild the site directory is briefly empty

    def wait_for(self, path: str, ready: Callable[[str], bool], what: str, deadline_s: float = REBUILD_S) -> str:
        """Poll ``path`` until ``ready(page)``; fail with the server's log after the deadline."""
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"mkdocs serve exited:\n{self.terminal()[-4000:]}"
            page = self.get(path)
            if page is not None and ready(page):
                return page
            time.sleep(0.2)
        pytest.fail(f"{what}: not seen at {path} after {deadline_s} s\n{self.terminal()[-4000:]}")

    def terminal(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def copy_of_the_book(dest: Path) -> Path:
    """The book's configuration and sources, with one small page added to the nav."""
    for name in ("docs", "overrides", "src"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(ROOT / "CITATION.cff", dest / "CITATION.cff")  # numbook-cite reads it on every build
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")  # the engine wheel's version and NumPy requirement
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    entry = "  - Notation: notation.md\n"
    assert entry in config, "the nav changed: update where this test adds its page"
    assert "\nstrict: true\n" in config, "this test is about the book's strict configuration"
    (dest / "mkdocs.yml").write_text(config.replace(entry, entry + f"  - Serve check: {PAGE}\n"), encoding="utf-8")
    (dest / "docs" / PAGE).write_text(fixed_page("start"), encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = copy_of_the_book(tmp_path_factory.mktemp("book"))
    log = root / "serve.log"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    for _attempt in range(3):  # the free port may be taken before mkdocs binds it
        port = free_port()
        with log.open("w") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"],
                cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
            )
        server = Served(root, f"http://127.0.0.1:{port}", log, process)
        try:
            deadline = time.monotonic() + FIRST_BUILD_S
            while process.poll() is None and time.monotonic() < deadline:
                if "Serving on" in server.terminal() and server.get("/") is not None:
                    break
                time.sleep(0.2)
            if process.poll() is None and "Serving on" in server.terminal():
                yield server
                return
            if "Address already in use" not in server.terminal():
                pytest.fail(f"mkdocs serve did not start:\n{server.terminal()[-4000:]}")
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)  # what Ctrl-C does: it removes its temporary site
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
    pytest.fail("no free port for mkdocs serve after 3 tries")


def fixed_page(tag: str) -> str:
    return f"""# Serve check

A small page that this test breaks and fixes.

```python exec
print("fixed", "{tag}")
```
"""


def broken(body: str) -> str:
    return f"# Serve check\n\nA small page that this test breaks and fixes.\n\n{body}"


def line_of(text: str, needle: str) -> int:
    """The 1-based line of ``needle`` in ``text`` (what an author reads in the editor)."""
    lines = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    assert len(lines) == 1, f"{needle!r} must occur once"
    return lines[0]


FENCE = "```"
# kind: (page text, the text on the line the problem is reported at, what the page must say)
PROBLEMS = {
    "raise": (
        broken(f'{FENCE}python exec\nvalue = 1\nraise ValueError("boom in a block")\n{FENCE}\n'),
        "raise ValueError",
        ["block raised ValueError: boom in a block", "Traceback (most recent call last)"],
    ),
    "check": (
        broken(f'{FENCE}python exec check="six times seven is forty-three"\nassert 6 * 7 == 43\n{FENCE}\n'),
        "assert 6 * 7 == 43",
        ['check failed for the claim "six times seven is forty-three"', "AssertionError"],
    ),
    "timeout": (
        broken(f'{FENCE}python exec timeout="2"\nwhile True:\n    pass\n{FENCE}\n'),
        'timeout="2"',
        ["timed out: the page used its CPU time limit of 2 s"],
    ),
    "option": (
        broken(f"{FENCE}python exec hidden\nvalue = 1\n{FENCE}\n"),
        "python exec hidden",
        ["unknown option 'hidden'"],
    ),
    "alt": (
        broken(
            f'{FENCE}python exec figure="fig-serve-check" caption="A line."\n'
            f"import matplotlib.pyplot as plt\nplt.plot([0, 1])\n{FENCE}\n"
        ),
        'figure="fig-serve-check"',
        ["figure 'fig-serve-check' has no alt text"],
    ),
    "inline": (
        broken("The answer is `{py} 6 *` exactly.\n"),
        "The answer is",
        ["inline value `{py} 6 *` failed: SyntaxError"],
    ),
    "tex": (
        broken("A formula:\n\n$$\n\\frac{1}{\\sqrt{2}\n$$\n"),
        "\\frac{1}",
        ["bad TeX"],
    ),
}


@pytest.mark.parametrize("kind", list(PROBLEMS))
def test_a_problem_shows_on_its_page_and_clears_after_the_fix(served: Served, kind: str):
    text, at, says = PROBLEMS[kind]
    where = f"docs/{PAGE}:{line_of(text, at)}"
    prose = f"Edited while {kind} was broken."

    terminal_before = len(served.terminal())
    served.write(f"docs/{PAGE}", text)
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    served.write("docs/index.md", index + f"\n{prose}\n")  # another page, edited at the same moment

    page = served.wait_for("/serve-check/", lambda p: "numbook-error" in p, f"the {kind} problem")
    shown = html.unescape(ProblemText.of(page))
    assert where in shown, f"{where} not shown:\n{shown}"
    for phrase in says:
        assert phrase in shown, f"{phrase!r} not shown:\n{shown}"
    assert 'class="admonition failure numbook-problems"' in page  # the summary under the title
    served.wait_for("/", lambda p: prose in p, "the prose edit of the home page")
    terminal = served.terminal()[terminal_before:]
    assert where in terminal, terminal[-3000:]
    assert "Aborted" not in terminal and "appear stuck" not in terminal, terminal[-3000:]

    served.write(f"docs/{PAGE}", fixed_page(kind))
    # "fixed <kind>" is what the block prints: in its code the two words are separate strings
    page = served.wait_for("/serve-check/", lambda p: f"fixed {kind}" in p, f"the page fixed after {kind}")
    assert "numbook-error" not in page and "numbook-problems" not in page
