"""The `figure_check` option: a project's own function, called on every figure a block makes.

numbook knows nothing of what it checks; it calls ``function(fig, name)`` on the block's
figure, its narrow layout and each switch variant (and theirs), after they are saved, and a
check that raises stops the build at the block, like a failed claim.
"""

from __future__ import annotations

import json

from .conftest import build_error

PAGE = """
# Checked figures

```python exec figure="fig-wide" caption="A line" alt="A line"
import matplotlib.pyplot as plt
from numbook.api import narrow, variant

def line(title):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set_title(title)
    fig.data_table = (["x", "y"], [[0, 0], [1, 1]])
    return fig

variant("high", line("high"), alt="High", narrow=line("high, narrow"))
narrow(line("narrow"))
line("main")
```
"""

# records every call; fails on a figure whose title says "bad"
CHECK = """
import json, os

def check(fig, name):
    title = fig.axes[0].get_title()
    with open(os.path.join(os.path.dirname(__file__), "calls.jsonl"), "a") as f:
        f.write(json.dumps([name, title]) + "\\n")
    if "bad" in title:
        raise AssertionError(f"{name}: the title {title!r} is not allowed")
"""


def _calls(site) -> list[list[str]]:
    path = site.root / "src" / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_every_figure_layout_and_variant_is_checked_with_its_name(make_site):
    site = make_site({"index.md": PAGE}, plugin={"figure_check": "figcheck:check"})
    site.write("src/figcheck.py", CHECK)
    site.build()
    assert sorted(_calls(site)) == sorted([["fig-wide", "main"], ["fig-wide.narrow", "narrow"],
                                           ["fig-wide.high", "high"], ["fig-wide.high.narrow", "high, narrow"]])
    assert site.site_file("figures/fig-wide.narrow.light.svg").is_file()


def test_a_check_that_fails_stops_the_build_at_the_block(make_site):
    site = make_site({"index.md": PAGE.replace('narrow(line("narrow"))', 'narrow(line("bad narrow"))')},
                     plugin={"figure_check": "figcheck:check"})
    site.write("src/figcheck.py", CHECK)
    message = build_error(site)
    assert "docs/index.md:3" in message
    assert "figure check figcheck:check failed: fig-wide.narrow: the title 'bad narrow' is not allowed" in message


def test_the_page_depends_on_its_check(make_site):
    """Editing the check re-runs the pages it checked (it is imported where they run)."""
    site = make_site({"index.md": PAGE}, plugin={"figure_check": "figcheck:check"})
    site.write("src/figcheck.py", CHECK)
    assert site.build().pages_executed == 1
    assert site.build().pages_executed == 0  # cached
    site.write("src/figcheck.py", CHECK.replace('"bad"', '"high"'))
    message = build_error(site)
    assert "failed: fig-wide.high: the title 'high' is not allowed" in message


def test_without_the_option_nothing_is_called_and_a_malformed_one_is_refused(make_site):
    site = make_site({"index.md": PAGE})
    site.write("src/figcheck.py", CHECK)
    site.build()
    assert _calls(site) == []
    site = make_site({"index.md": PAGE}, plugin={"figure_check": "figcheck.check"}, name="malformed")
    assert "figure_check must look like 'module:function'" in build_error(site)
    site = make_site({"index.md": PAGE}, plugin={"figure_check": "nowhere:check"}, name="missing")
    assert "figure_check 'nowhere:check' cannot be loaded" in build_error(site)


def test_a_figure_whose_check_fails_ends_the_page_at_its_block(make_site):
    """Serving, the page shows the failure at the figure's block, and the blocks after it did
    not run (nothing they print, no inline value)."""
    after = '\n```python exec\nprint("after the figure")\n```\n\nThe value is `{py} 6 * 7`.\n'
    page = PAGE.replace('narrow(line("narrow"))', 'narrow(line("bad narrow"))') + after
    site = make_site({"index.md": page}, plugin={"figure_check": "figcheck:check"})
    site.write("src/figcheck.py", CHECK)
    site.build(serve=True)  # serving: the page shows its error instead of stopping the build
    main = site.main()
    assert "bad narrow" in main and "is not allowed" in main
    assert "after the figure" not in main.replace("print(&quot;after the figure&quot;)", "")  # its output
    assert "<code>6 * 7</code>" in main  # the inline value after it did not run either
    plugin = site.build(serve=True)
    assert plugin.book.errors and plugin.book.errors[0].line == 3
