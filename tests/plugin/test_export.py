"""Page data for widgets: JSON files beside the page, with their URL in the page."""

from __future__ import annotations

import json
import re

from .conftest import build_error


def test_export_writes_json_beside_the_page(make_site):  # f
    site = make_site({"part/lesson.md": """
        ```python exec hide
        import numpy as np
        from numbook.api import export
        export("weights", matrix=np.array([[1.0, 0.5], [0.25, 2.0]]), tokens=["a", "b"], scale=np.float64(0.5))
        ```
    """})
    site.build()
    path = site.site_file("part/data/weights.json")
    data = json.loads(path.read_text())
    assert data == {"matrix": [[1.0, 0.5], [0.25, 2.0]], "scale": 0.5, "tokens": ["a", "b"]}
    assert list(data) == sorted(data)  # deterministic key order
    page = site.main("part/lesson")
    marker = re.search(r'<div class="numbook-export" data-numbook-export="weights" data-src="([^"]+)"', page)
    assert marker and marker.group(1) == "../data/weights.json"  # relative to part/lesson/


def test_export_refuses_nan(make_site):
    site = make_site({"index.md": """
        ```python exec hide
        from numbook.api import export
        export("bad", x=[1.0, float("nan")])
        ```
    """})
    message = build_error(site)
    assert "docs/index.md:3" in message and "JSON cannot represent" in message
