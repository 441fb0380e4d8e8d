"""Errors stop `mkdocs build` with page:line and traceback; `mkdocs serve` shows them instead."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from .conftest import build_error

BROKEN = """
# Broken

```python exec
def helper(n):
    return 10 / n

value = helper(0)
```
"""


def test_exception_names_page_line_and_traceback(make_site):  # g
    site = make_site({"index.md": BROKEN})
    message = build_error(site)
    assert "docs/index.md:5: block raised ZeroDivisionError: division by zero" in message
    assert 'File "docs/index.md", line 7, in <module>' in message  # the call
    assert 'File "docs/index.md", line 5, in helper' in message  # the failing line
    assert "return 10 / n" in message  # the source line, from the Markdown file
    assert "numbook/runner.py" not in message  # plugin frames are trimmed


def test_unknown_option_and_bad_inline(make_site):  # g
    site = make_site({
        "a.md": """
            # A

            ```python exec hidden
            x = 1
            ```
        """,
        "b.md": """
            # B

            ```python exec
            x = 1
            ```

            Oops: `{py} x +* 2` and `{py} undefined_name`.
        """,
    })
    message = build_error(site)
    assert "docs/a.md:3: unknown option 'hidden'" in message
    assert "docs/b.md:7: inline value `{py} x +* 2` failed: SyntaxError" in message


def test_every_failing_page_is_reported(make_site):  # g
    site = make_site({
        "one.md": BROKEN,
        "two.md": """
            Fine text.

            ```python exec check="two is three"
            assert 2 == 3
            ```
        """,
        "fine.md": """
            ```python exec
            print("ok")
            ```
        """,
    })
    message = build_error(site)
    assert "docs/one.md:5: block raised ZeroDivisionError" in message
    assert 'docs/two.md:4: check failed for the claim "two is three"' in message
    assert "fine.md" not in message


def test_serve_shows_errors_in_the_page_and_keeps_going(make_site, caplog):  # g
    site = make_site({
        "index.md": """
            # Served

            ```python exec
            print("before")
            ```

            ```python exec
            raise ValueError("<bad> thing")
            ```

            ```python exec
            print("after")
            ```

            Inline after the failure: `{py} 1 + 1`.
        """,
        "bad.md": """
            ```python exec nonsense
            pass
            ```

            A link to [](#nowhere_at_all) and a value `{py} undefined_name`.

            ## Twice {#twice}

            ## Twice again {#twice}
        """,
        "ok.md": """
            ```python exec
            print("ok page ran")
            ```
        """,
    })
    site.build(serve=True, strict=True)  # strict counts warnings and errors, but not these
    page = site.main()
    assert '<pre class="numbook-output"><code class="language-text">before' in page
    assert '<div class="admonition failure numbook-error" id="numbook-problem-1">' in page
    assert '<p class="admonition-title">Error at docs/index.md:8</p>' in page
    assert "block raised ValueError: &lt;bad&gt; thing" in page
    assert "<bad>" not in page
    assert 'print(&quot;after&quot;)' in page and "language-text\">after" not in page  # shown, not run
    assert "<code>1 + 1</code>" in page
    # The summary under the title links to the box.
    summary = page.split('<div class="admonition failure numbook-problems" role="alert">', 1)[1].split("</div>", 1)[0]
    assert page.index("numbook-problems") < page.index("numbook-error")
    assert '<li><a href="#numbook-problem-1">docs/index.md:8</a>: block raised ValueError' in summary

    bad = site.main("bad")
    assert '<p class="admonition-title">Error at docs/bad.md:1</p>' in bad
    assert "unknown option &#x27;nonsense&#x27;" in bad
    # In a sentence: a mark, its Markdown characters left alone (no <em> from the underscores).
    assert ('<code class="numbook-error" id="numbook-problem-2">docs/bad.md:5: reference to unknown figure, '
            "section or equation id &#x27;nowhere&#95;at&#95;all&#x27;</code>") in bad
    # A problem with no place in the text (a duplicate heading id) is in the summary only.
    assert "docs/bad.md:9: id &#x27;twice&#x27; is already used on this page, line 7" in bad
    assert "ok page ran" in site.main("ok")

    # The terminal still says where, at ERROR, once per build.
    errors = [r for r in caplog.records if r.levelname == "ERROR" and r.name == "mkdocs.plugins.numbook"]
    assert len(errors) == 1
    assert "docs/index.md:8: block raised ValueError" in errors[0].getMessage()
    assert "docs/bad.md:1: unknown option" in errors[0].getMessage()


def test_serve_still_aborts_on_other_warnings_in_strict_mode(make_site):
    """Only the problems a page shows are let through: MkDocs' own warnings still count."""
    from mkdocs.exceptions import Abort

    site = make_site({"index.md": "# Home\n\n[a missing page](missing.md)\n"})
    with pytest.raises(Abort, match="strict mode"):
        site.build(serve=True, strict=True)


# A figure that is referenced above its block, refused (no alt text), made without its data,
# raising, and not run (after the failure): each page cites all of its own.
REFUSED = """
    # Refused

    [](#fig-refused) and [](#fig-after-refused).

    ```python exec figure="fig-refused" caption="No alt text"
    pass
    ```

    ```python exec figure="fig-after-refused" caption="Fine" alt="A line"
    pass
    ```
"""
NO_DATA = """
    # No data

    [](#fig-no-data) and [](#fig-not-run).

    ```python exec figure="fig-no-data" caption="No data" alt="A line"
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    ```

    ```python exec figure="fig-not-run" caption="Not run" alt="A line"
    pass
    ```
"""
RAISES = """
    # Raises

    [](#fig-raises) is missing.

    ```python exec figure="fig-raises" caption="Raises" alt="A line"
    raise ValueError("no figure today")
    ```
"""


def test_a_figure_that_failed_is_no_unknown_id_to_its_references(make_site):
    """The block's own error says why the figure is missing: a reference to it above the block
    used to come first, as an "unknown id", hiding the cause. A refused block keeps its number."""
    site = make_site({"refused.md": REFUSED, "raises.md": RAISES})
    message = build_error(site)
    assert "docs/refused.md:5: figure 'fig-refused' has no alt text" in message
    assert "docs/raises.md:6: block raised ValueError: no figure today" in message
    assert "unknown" not in message and "refused.md:3" not in message and "raises.md:3" not in message


def test_serve_keeps_the_anchors_of_figures_that_failed(make_site):
    """Under a strict `mkdocs serve`, a missing anchor is a warning that refuses the rebuild,
    and MkDocs' server then answers no request until one succeeds: the page that shows a
    figure's error must still have the figure's id. `mkdocs build` stops as before."""
    site = make_site({"refused.md": REFUSED, "nodata.md": NO_DATA})
    with open(site.root / "mkdocs.yml", "a", encoding="utf-8") as config:
        config.write("validation:\n  anchors: warn\n")
    site.build(serve=True, strict=True)  # no "no such anchor" warning, so no abort
    refused = site.main("refused")
    assert '<div class="admonition failure numbook-error" id="fig-refused">' in refused
    assert '<a href="#fig-refused">Figure 1</a> and <a href="#fig-after-refused">Figure 2</a>' in refused
    no_data = site.main("nodata")
    assert '<div class="admonition failure numbook-error" id="fig-no-data">' in no_data
    assert '<figure class="numbook-figure" id="fig-not-run">' in no_data
    assert '<a href="#fig-no-data">Figure 1</a> and <a href="#fig-not-run">Figure 2</a>' in no_data
    message = build_error(site)
    assert "docs/refused.md:5: figure 'fig-refused' has no alt text" in message
    assert "docs/nodata.md:5: figure 'fig-no-data' has no data" in message


def test_hanging_block_is_stopped_at_its_line(make_site):  # g
    """An endless loop uses CPU time: the kernel stops it at the page's CPU limit."""
    site = make_site({
        "index.md": """
            # Hangs

            ```python exec
            x = 1
            ```

            ```python exec
            while True:
                pass
            ```
        """,
    }, plugin={"timeout": 2})
    message = build_error(site)
    assert "docs/index.md:7: timed out: the page used its CPU time limit of 2 s" in message


def test_block_timeout_option_lowers_the_limit(make_site):
    site = make_site({"index.md": """
        ```python exec timeout="1"
        while True:
            pass
        ```
    """}, plugin={"timeout": 60})
    message = build_error(site)
    assert "docs/index.md:1: timed out: the page used its CPU time limit of 1 s" in message


def test_block_timeout_option_raises_the_limit(make_site):
    site = make_site({"index.md": """
        ```python exec timeout="10"
        import time
        start = time.process_time()
        while time.process_time() - start < 1.5:
            pass
        print("computed")
        ```
    """}, plugin={"timeout": 1})
    site.build()
    assert "computed" in site.main()


def test_a_waiting_block_is_stopped_by_the_wall_clock_backstop(make_site):
    """A block that uses no CPU (a sleep, a lock, input) never reaches the CPU limit."""
    site = make_site({"index.md": """
        ```python exec
        import time
        time.sleep(3600)
        ```
    """}, plugin={"timeout": 30, "wall_timeout": 2})
    message = build_error(site)
    assert "docs/index.md:1: timed out waiting: in 2 s of wall-clock time the page used only 0.0 s of CPU time" in message
    assert "its CPU time limit is 30 s" in message


def test_a_block_that_waits_after_computing_is_stopped_a_backstop_later(make_site):
    """The backstop looks at the last ``wall_timeout`` seconds, not at fixed rounds: a page
    that computed first and then waits is stopped about one backstop after it began to wait."""
    site = make_site({"index.md": """
        ```python exec
        import time
        t = time.process_time()
        while time.process_time() - t < 1.5:
            pass
        time.sleep(3600)
        ```
    """}, plugin={"timeout": 30, "wall_timeout": 2, "workers": 1})
    start = time.monotonic()
    message = build_error(site)
    assert "timed out waiting: in 2 s of wall-clock time the page used only" in message
    assert time.monotonic() - start < 30  # 1.5 s of CPU time (however slowly it came) and 2 s of waiting


def _first_stop(cpu_at, window: float, step: float, until: float, ready=lambda t: False) -> float | None:
    """When `waiting` first stops a page whose CPU time at wall time t is ``cpu_at(t)``, and
    which is ready to run when ``ready(t)``, sampled every ``step`` seconds, or None."""
    from numbook.pool import waiting

    samples, t = [], 0.0
    while t <= until:
        samples.append((t, cpu_at(t), ready(t)))
        if waiting(samples, window) is not None:
            return t
        t += step
    return None


def test_the_default_backstop_stops_a_sleeping_block_within_90_s():
    """The default (60 s, sampled every 5 s) on a simulated clock: a page that computed for
    100 s and then sleeps is stopped at most 65 s after it began to sleep; one that computes
    at 2 % of a core, on a machine fifty times over-booked, never is, nor one that the
    machine runs even less but that is ready to run whenever the host looks."""
    from numbook.book import WALL_TIMEOUT, Settings
    from numbook.config import NumbookConfig
    from numbook.pool import SAMPLES_PER_BACKSTOP

    assert WALL_TIMEOUT == 60 == dict(NumbookConfig._schema)["wall_timeout"].default
    assert Settings("", "", "", workers=1, timeout=60).wall_timeout == WALL_TIMEOUT
    step = WALL_TIMEOUT / SAMPLES_PER_BACKSTOP
    stopped = _first_stop(lambda t: min(t, 100.0), WALL_TIMEOUT, step, 400)
    assert stopped is not None and 100 + WALL_TIMEOUT <= stopped <= 100 + WALL_TIMEOUT + step < 100 + 90
    assert _first_stop(lambda t: 0.02 * t, WALL_TIMEOUT, step, 3600) is None
    assert _first_stop(lambda t: 0.001 * t, WALL_TIMEOUT, step, 3600, ready=lambda t: True) is None
    assert _first_stop(lambda t: 0.0, WALL_TIMEOUT, step, 400) == WALL_TIMEOUT  # waiting from the start


def test_a_page_on_a_busy_machine_is_not_stopped(make_site):
    """Other processes take the CPU: the page's wall-clock time passes its CPU limit and its
    waiting backstop (3 s, in which a machine this busy may give it almost no CPU time), but
    it is computing (ready to run whenever it is looked at), and the build succeeds."""
    site = make_site({"index.md": """
        ```python exec
        import time
        wall, cpu = time.monotonic(), time.process_time()
        while time.process_time() - cpu < 1.0:
            pass
        print(f"wall {time.monotonic() - wall:.3f} cpu {time.process_time() - cpu:.3f}")
        ```
    """}, plugin={"timeout": 2, "workers": 1, "wall_timeout": 3})
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(4 * (os.cpu_count() or 1))
    ]
    try:
        site.build()
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    wall, cpu = map(float, re.search(r"wall ([\d.]+) cpu ([\d.]+)", site.main()).groups())
    assert cpu < 2 < wall  # the machine was busy enough that a clock limit would have stopped it


@pytest.mark.parametrize("strict", [False, True])
def test_cli_build_fails_strict_or_not(make_site, strict):
    site = make_site({"index.md": BROKEN})
    cmd = [sys.executable, "-m", "mkdocs", "build", "-q"] + (["--strict"] if strict else [])
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(cmd, cwd=site.root, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode != 0
    assert "docs/index.md:5: block raised ZeroDivisionError" in proc.stderr


def test_a_dying_worker_is_reported(make_site):
    site = make_site({"index.md": """
        # Dies

        ```python exec
        import os
        os._exit(3)
        ```
    """})
    message = build_error(site)
    assert "docs/index.md:3: the worker running this page died (exit code 3)" in message
