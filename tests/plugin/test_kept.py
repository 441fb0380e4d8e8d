"""Under `mkdocs serve` a page whose block was edited keeps its state before that block
(`numbook.pool.KeptPages`): the next save of that block, or of a later one, runs the page from
there (the blocks before it do not run again); the page is the page a run from the start
makes; a page whose engine changed, or that was edited above the state, runs from the start;
one state per page, inside the page's CPU limit, ending with serve."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from numbook.pool import kept_pages_supported

pytestmark = pytest.mark.skipif(not kept_pages_supported(), reason="kept pages need Linux (fork, prctl)")

# each block spends CPU time, notes that it ran, and adds to `total`
BLOCK = """
```python exec
import os, time
t = time.process_time()
while time.process_time() - t < {cpu}:
    pass
with open("runs.txt", "a") as f:
    f.write("{name} ")
total = globals().get("total", 0) + {value}
print("{name}", total, helper.SCALE * total, os.getpid())
```
"""
SETUP = """
```python exec
import helper
```
"""


def page(values: list[int], cpu: float | list[float] = 0.05) -> str:
    cpus = cpu if isinstance(cpu, list) else [cpu] * len(values)
    blocks = "".join(BLOCK.format(name=f"b{i}", value=v, cpu=c) for i, (v, c) in enumerate(zip(values, cpus)))
    return "# Kept\n" + SETUP + blocks


@pytest.fixture
def serve(make_site):
    """A site and a way to build it as `mkdocs serve` does (one plugin from build to build),
    after serve's first build."""
    site = make_site({"index.md": page([1, 2, 3, 4])})
    site.write("src/helper.py", "SCALE = 10\n")
    plugins = [site.build(serve=True)]
    runs(site)

    def build(**kwargs):
        plugin = site.build(serve=True, startup=False, **kwargs)
        plugins.append(plugin)
        return plugin

    yield site, build
    plugins[-1].on_shutdown()


def runs(site) -> list[str]:
    path = Path(site.root, "runs.txt")
    text = path.read_text().split() if path.exists() else []
    path.unlink(missing_ok=True)
    return text


def outputs(html_text: str) -> list[str]:
    """What the blocks printed, without their process ids."""
    found = [line for line in html_text.split("\n") if line.startswith('<pre class="numbook-output">')]
    return [line.rsplit(" ", 1)[0] for line in found]


def fresh(make_site, text: str, name: str) -> list[str]:
    site = make_site({"index.md": text}, name=name)
    site.write("src/helper.py", "SCALE = 10\n")
    site.build()
    return outputs(site.main())


def test_an_edited_block_runs_from_the_state_before_it(serve, make_site):
    site, build = serve
    site.page("index.md", page([1, 2, 3, 40]))  # b3 (the fifth block) edited: the page runs, keeping a state there
    plugin = build()
    assert runs(site) == ["b0", "b1", "b2", "b3"] and plugin.kept.resumed["index.md"] == 0
    site.page("index.md", page([1, 2, 3, 41]))  # edited again: from the kept state
    plugin = build()
    assert runs(site) == ["b3"] and plugin.kept.resumed["index.md"] == 4
    served = outputs(site.main())
    site.page("index.md", page([1, 2, 3, 41, 5]))  # a block added after it: from the state too
    build()
    assert runs(site) == ["b3", "b4"]
    # the pages a run from the start makes (built last: MkDocs gives every build in a process
    # the same plugin, and a build ends what serve kept)
    assert served == fresh(make_site, page([1, 2, 3, 41]), "fresh")
    assert outputs(site.main()) == fresh(make_site, page([1, 2, 3, 41, 5]), "fresh-2")


def test_an_error_shows_and_clears_from_the_kept_state(serve):
    site, build = serve
    site.page("index.md", page([1, 2, 3, 40]))
    build()
    runs(site)
    site.page("index.md", page([1, 2, 3, 40]).replace('print("b3"', 'raise ValueError("no")\nprint("b3"'))
    build()
    assert runs(site) == ["b3"]
    assert "ValueError: no" in site.main()
    site.page("index.md", page([1, 2, 3, 41]))
    build()
    assert runs(site) == ["b3"]
    assert "ValueError" not in site.main() and "b3 47 470" in site.main()


def test_a_page_whose_engine_changed_runs_from_the_start(serve):
    site, build = serve
    site.page("index.md", page([1, 2, 3, 40]))
    build()
    runs(site)
    site.write("src/helper.py", "SCALE = 100\n")
    site.page("index.md", page([1, 2, 3, 41]))
    plugin = build()
    assert runs(site) == ["b0", "b1", "b2", "b3"] and plugin.kept.resumed["index.md"] == 0
    assert "b3 47 4700" in site.main()
    site.page("index.md", page([1, 2, 3, 42]))  # and it keeps its state again, at the same block
    build()
    assert runs(site) == ["b3"]


def test_an_edit_above_the_state_runs_from_the_start_and_keeps_the_state_there(serve):
    site, build = serve
    site.page("index.md", page([1, 2, 3, 40]))
    build()
    runs(site)
    site.page("index.md", page([1, 20, 3, 40]))
    build()
    assert runs(site) == ["b0", "b1", "b2", "b3"]
    site.page("index.md", page([1, 21, 3, 40]))
    build()
    assert runs(site) == ["b1", "b2", "b3"]


def test_the_cpu_limit_counts_the_blocks_before_the_state(make_site):
    """The kept state's child starts with no CPU time used: the page's limit still counts the
    time of the blocks before the state (b3 alone would fit in 3 s; the page does not)."""
    cpu = [0.7, 0.7, 0.7, 0.0]
    site = make_site({"index.md": page([1, 2, 3, 4], cpu=cpu)}, plugin={"timeout": 3})
    site.write("src/helper.py", "SCALE = 10\n")
    plugin = site.build(serve=True)
    try:
        site.page("index.md", page([1, 2, 3, 40], cpu=cpu))
        plugin = site.build(serve=True, startup=False)
        assert plugin.kept.pages["index.md"].position == 4
        runs(site)
        site.page("index.md", page([1, 2, 3, 41], cpu=cpu[:3] + [1.5]))
        plugin = site.build(serve=True, startup=False)
        assert plugin.kept.resumed["index.md"] == 4
        assert "used its CPU time limit of 3 s" in site.main()
        assert runs(site) == []
    finally:
        plugin.on_shutdown()


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def test_one_state_per_page_and_serve_ending_ends_it(serve):
    site, build = serve
    before = set(_children(os.getpid()))
    for value in (40, 41, 42):
        site.page("index.md", page([1, 2, 3, value]))
        plugin = build()
    [state] = set(_children(os.getpid())) - before  # the page's kept state, and nothing else
    assert list(plugin.kept.pages) == ["index.md"] and plugin.kept.pages["index.md"].pid == state
    assert _children(state) == []  # its runner ended with its run
    plugin.on_shutdown()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{state}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{state}").exists()


def test_a_build_keeps_nothing(make_site):
    site = make_site({"index.md": page([1])})
    site.write("src/helper.py", "SCALE = 10\n")
    assert site.build().kept is None


def test_only_the_pages_edited_last_are_kept(make_site):
    from numbook.pool import MAX_KEPT_PAGES

    names = [f"p{k}.md" for k in range(MAX_KEPT_PAGES + 1)]
    site = make_site({n: page([1, 2], cpu=0.0) for n in names})
    site.write("src/helper.py", "SCALE = 10\n")
    plugin = site.build(serve=True)
    try:
        for n in names:  # every page edited while serving
            site.page(n, page([1, 3], cpu=0.0))
        plugin = site.build(serve=True, startup=False)
        assert len(plugin.kept.pages) == MAX_KEPT_PAGES
    finally:
        plugin.on_shutdown()


def test_a_kept_state_that_died_means_a_run_from_the_start(serve):
    site, build = serve
    site.page("index.md", page([1, 2, 3, 40]))
    plugin = build()
    runs(site)
    os.kill(plugin.kept.pages["index.md"].pid, 9)  # as if the system had ended it
    site.page("index.md", page([1, 2, 3, 41]))
    plugin = build()
    assert runs(site) == ["b0", "b1", "b2", "b3"]
    assert "b3 47 470" in site.main()


KEEPER = """
import sys
sys.path.insert(0, {tests!r})
from plugin.conftest import Site
from pathlib import Path
site = Site(Path({root!r}))
site.build(serve=True)
site.page("index.md", {edited!r})
plugin = site.build(serve=True, startup=False)
print(plugin.kept.pages["index.md"].pid, flush=True)
sys.stdin.read()  # until killed
"""


def test_a_killed_serve_leaves_no_process_and_no_directory(make_site, tmp_path):
    """`mkdocs serve` killed outright (no clean-up runs): its kept states end with it, and no
    numbook-* directory is left in the temporary directory (a kept state has no name there)."""
    import signal
    import subprocess
    import sys

    site = make_site({"index.md": page([1, 2, 3, 4])})
    site.write("src/helper.py", "SCALE = 10\n")
    temporary = tmp_path / "tmp"  # its own temporary directory (other builds may share /tmp)
    temporary.mkdir()
    script = KEEPER.format(tests=str(Path(__file__).parents[1]), root=str(site.root), edited=page([1, 2, 3, 40]))
    host = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "TMPDIR": str(temporary)})
    try:
        state = int(host.stdout.readline())
        assert Path(f"/proc/{state}").exists()
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{state}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{state}").exists() or "Z" in Path(f"/proc/{state}/stat").read_text().split(")")[1][:3]
    assert list(temporary.glob("numbook-*")) == []
