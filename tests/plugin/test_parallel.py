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
