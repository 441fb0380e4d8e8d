"""numbook.reading: words of a page's main line and of its folds, from its Markdown."""

from __future__ import annotations

from numbook.reading import reading_length

PAGE = """---
title: T
---

# A title here

Two sentences of prose, with $x_i$ maths and `code` left out; the value `{py} 1 + 1` counts.

```python exec
ignored = "words in code"
```

```python exec figure="fig-a" caption="A caption of five words." alt="Not counted here"
plot = "figure code"
```

<details class="aside" id="a" markdown="1">
<summary>Look closer: five words summary</summary>

Inside the aside, seven words here.

<details class="example" markdown="1">
<summary>Nested fold</summary>

Deeper still.

</details>

</details>

$$\\label{eq-x} a = b + c$$

The end.
"""


def test_main_line_and_folds_are_counted_apart():
    length = reading_length(PAGE)
    # main: "A title here" 3 + prose 13 (the inline value is one word) + the caption 5
    # + "Look closer: five words summary" 5 + "The end" 2
    assert length.main == 3 + 13 + 5 + 5 + 2
    # folded: "Inside the aside, seven words here" 6 + "Nested fold" 2 + "Deeper still" 2
    assert length.folded == 6 + 2 + 2
    assert length.minutes(28) == 1.0 and length.minutes(28, with_folds=True) == 38 / 28
