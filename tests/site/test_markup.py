"""The built book is valid HTML where the book itself writes it: the W3C Nu Html Checker (the
validator behind validator.w3.org) finds no error in it.

The checker is Java (``vnu.jar``, from the npm package ``vnu-jar``): `.ci/run` installs it under
``~/.cache/book-vnu``; elsewhere set ``VNU_JAR`` or run
``npm install --prefix ~/.cache/book-vnu vnu-jar@26.9.27``. Without Java or the jar the test is
skipped on a developer's machine, never in CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

VNU_JAR = Path(os.environ.get("VNU_JAR") or Path.home() / ".cache/book-vnu/node_modules/vnu-jar/build/dist/vnu.jar")

#: Errors whose source is Material for MkDocs' own templates, with why they stay (the Guide
#: lists them too). Each is matched on the message and the markup it points at.
MATERIAL = {
    # base.html writes autocomplete="off" on its two checkbox toggles (drawer, search), so that
    # Firefox does not restore them open on going back; they sit outside any template block,
    # so only a copy of the whole base.html could drop the attribute.
    ("Attribute “autocomplete” is only allowed when the input type is", 'data-md-toggle='),
    # partials/toc.html labels the table of contents' toggle on a page whose navigation has no
    # such toggle (a page without sections).
    ("The value of the “for” attribute of the “label” element must be the ID of a non-hidden form control",
     'for="__toc"'),
}


def material_error(message: dict) -> bool:
    return any(text in message["message"] and markup in message.get("extract", "") for text, markup in MATERIAL)


def test_w3c_nu_finds_no_error_in_the_books_own_markup(built_site: Path):
    java = shutil.which("java")
    if not (java and VNU_JAR.exists()):
        why = f"needs Java and the W3C Nu checker at {VNU_JAR} (see this test's docstring)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but the test {why}: .ci/run must install it")
        pytest.skip(why)
    result = subprocess.run(
        [java, "-jar", str(VNU_JAR), "--skip-non-html", "--errors-only", "--format", "json", str(built_site)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]  # 1: it found errors
    messages = json.loads(result.stderr)["messages"]
    ours = [m for m in messages if not material_error(m)]
    listing = "\n".join(
        f"{m['url'].split('/', 3)[-1]}:{m.get('lastLine')}: {m['message']}\n    {m.get('extract', '')[:160]}" for m in ours[:20]
    )
    assert not ours, f"{len(ours)} error(s) in the book's own markup:\n{listing}"
