"""What a markup validator would reject in the built pages, checked without one."""

from __future__ import annotations

import re


def mathml_problems(page_html: str) -> list[str]:
    """What a MathML validator would reject in a page's formulas: a <math> that is not
    well-formed XML, or a token element (mi, mn, mo, mtext, ms) holding an element."""
    import xml.etree.ElementTree as ET

    problems = []
    for math in re.findall(r"<math\b.*?</math>", page_html, re.S):
        try:
            root = ET.fromstring(math)
        except ET.ParseError as error:
            problems.append(f"not well-formed ({error}): {math[:80]}")
            continue
        for element in root.iter():
            name = element.tag.rpartition("}")[2]
            if name in {"mi", "mn", "mo", "mtext", "ms"} and len(element):
                child = element[0].tag.rpartition("}")[2]
                problems.append(f"<{name}> holds <{child}>: {math[:80]}")
    return problems
