"""Pages run in parallel worker processes, each a fresh process."""

from __future__ import annotations

SLEEPY = """
```python exec
import os, time
time.sleep(1)
print("pid", os.getpid())
```
"""


def test_pages_run_at_the_same_time(make_site):  # i
    site = make_site({"one.md": SLEEPY, "two.md": SLEEPY}, plugin={"workers": 2})
    plugin = site.build()
    (s1, e1), (s2, e2) = plugin.book.timings["one.md"], plugin.book.timings["two.md"]
    assert e1 - s1 >= 1 and e2 - s2 >= 1
    overlap = min(e1, e2) - max(s1, s2)
    assert overlap > 0.5, f"pages did not overlap: {plugin.book.timings}"
    pids = {site.main("one").split("pid ")[1][:8], site.main("two").split("pid ")[1][:8]}
    assert len(pids) == 2


def test_one_worker_runs_pages_one_after_another(make_site):
    site = make_site({"one.md": SLEEPY, "two.md": SLEEPY}, plugin={"workers": 1})
    plugin = site.build()
    (s1, e1), (s2, e2) = sorted(plugin.book.timings.values())
    assert s2 >= e1


def test_pages_do_not_share_state(make_site):
    site = make_site({
        "one.md": """
            ```python exec
            import numpy as np
            np.leaked_by_page_one = True
            shared = 1
            ```
        """,
        "two.md": """
            ```python exec
            import numpy as np
            print("leak" if hasattr(np, "leaked_by_page_one") else "clean", "shared" in globals())
            ```
        """,
    }, plugin={"workers": 1})
    site.build()
    assert "clean False" in site.main("two")


def test_pages_are_rendered_while_later_pages_still_run(make_site):
    """MkDocs reads a page as soon as its own run is done, not after every page's."""
    site = make_site({"a.md": SLEEPY, "b.md": SLEEPY, "c.md": SLEEPY}, plugin={"workers": 1})
    site.write("when_read.py", """
        import time

        def on_page_content(html, page, config, **kwargs):
            with open(config.config_file_path.replace("mkdocs.yml", "read.txt"), "a") as f:
                f.write(f"{page.file.src_uri} {time.monotonic()}\\n")
    """)
    path = site.root / "mkdocs.yml"
    path.write_text(path.read_text(encoding="utf-8") + "hooks: [when_read.py]\n", encoding="utf-8")
    plugin = site.build()
    read = {page: float(t) for page, t in (line.split() for line in (site.root / "read.txt").read_text().splitlines())}

    timings = plugin.book.timings
    assert [p for p, _ in sorted(timings.items(), key=lambda kv: kv[1])] == ["a.md", "b.md", "c.md"]  # MkDocs' order
    assert read["a.md"] < timings["c.md"][0]  # a.md was on its way to the reader before c.md began
    assert read["b.md"] < timings["c.md"][1]
    assert all(read[p] >= end for p, (_, end) in timings.items())  # never before its own run
