"""Errors stop `mkdocs build` with page:line and traceback; `mkdocs serve` shows them instead."""

from __future__ import annotations

import os
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


def test_serve_shows_errors_in_the_page_and_keeps_going(make_site):  # g
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
        """,
        "ok.md": """
            ```python exec
            print("ok page ran")
            ```
        """,
    })
    site.build(serve=True)  # does not raise
    page = site.main()
    assert '<pre class="numbook-output"><code class="language-text">before' in page
    assert '<div class="admonition failure numbook-error">' in page
    assert "docs/index.md:8: block raised ValueError: &lt;bad&gt; thing" in page
    assert "<bad>" not in page
    assert 'print(&quot;after&quot;)' in page and "language-text\">after" not in page  # shown, not run
    assert "<code>1 + 1</code>" in page
    bad = site.main("bad")
    assert "numbook-error" in bad and "docs/bad.md:1: unknown option &#x27;nonsense&#x27;" in bad
    assert "ok page ran" in site.main("ok")


def test_hanging_block_is_stopped_at_its_line(make_site):  # g
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
    start = time.monotonic()
    message = build_error(site)
    assert time.monotonic() - start < 20
    assert "docs/index.md:7: timed out" in message
    assert "2 s" in message


def test_block_timeout_option_raises_the_limit(make_site):
    site = make_site({"index.md": """
        ```python exec timeout="10"
        import time
        time.sleep(1.5)
        print("slept")
        ```
    """}, plugin={"timeout": 1})
    site.build()
    assert "slept" in site.main()


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
