"""Under `mkdocs serve` an edited page runs from the last state before its first changed block
(`numbook.pool.Checkpoints`): the blocks before it do not run again, the page is the page a run
from the start makes, and a page whose engine changed runs from the start."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from numbook.pool import checkpoints_supported

pytestmark = pytest.mark.skipif(not checkpoints_supported(), reason="checkpoints need Linux (fork, prctl)")

# each block spends CPU time (so that a checkpoint follows it), notes that it ran, and adds to `total`
BLOCK = """
```python exec
import os, time
t = time.process_time()
while time.process_time() - t < {cpu}:
    pass
with open("runs.txt", "a") as f:
    f.write("{name} ")
total = globals().get("total", 0) + {value}
print("{name}", total, helper.SCALE * total)
```
"""
SETUP = """
```python exec
import helper
```
"""


def page(values: list[int], cpu: float = 0.15) -> str:
    blocks = "".join(BLOCK.format(name=f"b{i}", value=v, cpu=cpu) for i, v in enumerate(values))
    return "# Kept\n" + SETUP + blocks


@pytest.fixture
def kept(make_site):
    """A site and a way to build it as `mkdocs serve` does: one plugin kept from build to build."""
    site = make_site({"index.md": page([1, 2, 3, 4])}, plugin={"checkpoint_interval": 0.1})
    site.write("src/helper.py", "SCALE = 10\n")
    plugins = []

    def build(**kwargs):
        plugin = site.build(serve=True, startup=False, **kwargs)
        plugins.append(plugin)
        return plugin

    start = site.build(serve=True)  # serve's first build keeps nothing: no page is being edited yet
    plugins.append(start)
    assert start.checkpoints is None
    Path(site.root, "runs.txt").unlink()
    site.page("index.md", page([1, 2, 3, 4, 5]))  # edited while serving: it runs again, and is kept
    yield site, build
    for plugin in plugins:
        plugin.on_shutdown()


def runs(site) -> list[str]:
    path = Path(site.root, "runs.txt")
    text = path.read_text().split() if path.exists() else []
    path.unlink(missing_ok=True)
    return text


def outputs(html_text: str) -> list[str]:
    return [line for line in html_text.split("\n") if line.startswith('<pre class="numbook-output">')]


def test_an_edited_block_runs_from_the_state_before_it(kept, make_site):
    site, build = kept
    first = build()
    assert runs(site) == ["b0", "b1", "b2", "b3", "b4"]
    assert first.checkpoints is not None
    site.page("index.md", page([1, 2, 3, 40, 5]))
    plugin = build()
    assert runs(site) == ["b3", "b4"]  # b0 to b2 kept
    assert plugin.checkpoints.resumed["index.md"] == 4  # the setup block and b0-b2 before it
    served = outputs(site.main())
    assert "b4 51 510" in served[-1]

    fresh = make_site({"index.md": page([1, 2, 3, 40, 5])}, name="fresh")
    fresh.write("src/helper.py", "SCALE = 10\n")
    fresh.build()
    assert outputs(fresh.main()) == served  # the same page a run from the start makes


def test_an_error_shows_and_clears_from_the_kept_state(kept):
    site, build = kept
    build()
    runs(site)
    broken = page([1, 2, 3, 4, 5]).replace('print("b3"', 'raise ValueError("no")\nprint("b3"')
    site.page("index.md", broken)
    build()
    assert runs(site) == ["b3"]
    assert "ValueError: no" in site.main()
    site.page("index.md", page([1, 2, 3, 4, 6]))
    build()
    assert runs(site) == ["b3", "b4"]
    assert "ValueError" not in site.main() and "b4 16 160" in site.main()


def test_a_page_whose_engine_changed_runs_from_the_start(kept):
    site, build = kept
    build()
    runs(site)
    site.write("src/helper.py", "SCALE = 100\n")
    site.page("index.md", page([1, 2, 3, 40, 5]))
    plugin = build()
    assert runs(site) == ["b0", "b1", "b2", "b3", "b4"]
    assert plugin.checkpoints.resumed["index.md"] == 0
    assert "b4 51 5100" in site.main()


def test_the_cpu_limit_counts_the_whole_page(kept):
    """Each process of a kept page starts with no CPU time used: the page's limit still
    counts the time of the blocks before it."""
    site, build = kept
    site.page("index.md", page([1, 2, 3, 4, 5], cpu=0.6))
    build(timeout=2)
    assert "used its CPU time limit of 2 s" in site.main()
    assert "b4" not in runs(site)  # 5 blocks of 0.6 s do not fit in 2 s


def test_serve_ending_ends_every_kept_process(kept):
    site, build = kept
    site.page("index.md", page([1, 2, 3]).replace("print(", "print(os.getpid())\nprint("))
    plugin = build()
    pids = [int(line.split(">")[-1]) for out in outputs(site.main()) for line in out.split("\n")[:1]]
    kept_states = [p for p in pids if Path(f"/proc/{p}").exists()]
    assert kept_states  # a block's process stayed behind as the state after it
    plugin.on_shutdown()
    deadline = time.monotonic() + 10
    while kept_states and time.monotonic() < deadline:
        kept_states = [p for p in kept_states if Path(f"/proc/{p}").exists()]
        time.sleep(0.05)
    assert kept_states == []


def test_a_build_keeps_nothing(make_site):
    site = make_site({"index.md": page([1])}, plugin={"checkpoint_interval": 0.1})
    site.write("src/helper.py", "SCALE = 10\n")
    assert site.build().checkpoints is None


def test_only_the_pages_run_last_are_kept(make_site):
    from numbook.pool import MAX_KEPT_PAGES

    names = [f"p{k}.md" for k in range(MAX_KEPT_PAGES + 1)]
    site = make_site({n: page([1], cpu=0.0) for n in names}, plugin={"checkpoint_interval": 0.1})
    site.write("src/helper.py", "SCALE = 10\n")
    assert site.build(serve=True).checkpoints is None  # serve's first build keeps nothing
    for n in names:  # every page edited while serving
        site.page(n, page([2], cpu=0.0))
    plugin = site.build(serve=True, startup=False)
    try:
        assert len(plugin.checkpoints.chains) == MAX_KEPT_PAGES
    finally:
        plugin.on_shutdown()


def test_a_kept_state_that_cannot_be_reached_means_a_run_from_the_start(kept):
    site, build = kept
    plugin = build()
    runs(site)
    for sock in Path(plugin.checkpoints.directory).glob("*.sock"):
        sock.unlink()  # as if a cleaner emptied /tmp
    site.page("index.md", page([1, 2, 3, 40, 5]))
    plugin = build()
    assert runs(site) == ["b0", "b1", "b2", "b3", "b4"]
    assert plugin.checkpoints.resumed["index.md"] == 0
    assert "b4 51 510" in site.main()
