"""numbook.reading: what a page's main line and its folds show, from its Markdown, and how long
that takes to read. Every expected number is counted by hand in the comments beside it."""

from __future__ import annotations

import pytest

from numbook.reading import Pace, ReadingLength, Tally, Timing, best_pace, misses, reading_length

PAGE = """---
title: T
---

# A title here

Two sentences of prose, with $x_i$ maths and `code` left out; the value `{py} 1 + 1` counts.

```python exec
ignored = "words in code"
total = 1 + 2

print(total)
```

```python exec figure="fig-a" caption="A caption of five words." alt="Not counted here"
plot = "figure code"
```

```python exec hide
hidden = "setup code"
```

```python exec hide
table([[1, 2]], header=["a", "b"])
```

```python exec check="a claim"
assert True
```

| Name | Size |
|---|--:|
| one | 1 |

$$\\label{eq-x} a = b + c$$

=== "NumPy"

    ```python
    shown = 1
    ```

=== "PyTorch"

    ```python
    not_shown = 1
    also_not_shown = 2
    ```

<details class="aside" id="a" markdown="1">
<summary>Look closer: five words summary</summary>

Inside the aside, seven words here.

```python exec
folded_teaching = 1
```

<details class="example" markdown="1">
<summary>Nested fold</summary>

Deeper still.

$$ y = 2 $$

</details>

</details>

```sh
uv run mkdocs serve
```

The end.
"""


@pytest.fixture(scope="module")
def length() -> ReadingLength:
    return reading_length(PAGE)


def test_the_main_line_counts_prose_figures_tables_equations_and_code_in_view(length):
    assert length.main == Tally(
        # "A title here" 3 + prose 13 (the inline value is one word) + the caption 5
        # + the table's labels "Name Size one" 3 + the tab titles "NumPy" "PyTorch" 2
        # + "Look closer: five words summary" 5 + "The end" 2
        words=3 + 13 + 5 + 3 + 2 + 5 + 2,
        figures=1,  # fig-a
        tables=2,  # the hidden block's table() and the Markdown table
        equations=1,  # eq-x
        # the teaching block's 3 non-blank lines, the NumPy tab's 1, the sh block's 1
        code_lines=3 + 1 + 1,
    )


def test_folds_are_counted_apart(length):
    assert length.folded == Tally(
        # "Inside the aside, seven words here" 6 + "Nested fold" 2 + "Deeper still" 2
        words=6 + 2 + 2,
        equations=1,  # y = 2, in the nested fold
        code_lines=1,  # folded_teaching
    )


def test_minutes_add_words_at_a_speed_and_an_allowance_for_each_thing(length):
    pace = Pace(words_per_minute=33, minutes_per_figure=2, minutes_per_table=0.5,
                minutes_per_equation=1, minutes_per_code_line=0.25)
    # main: 33 words / 33 + 1 figure x 2 + 2 tables x 0.5 + 1 equation x 1 + 5 code lines x 0.25
    assert length.minutes(pace) == pytest.approx(1 + 2 + 1 + 1 + 1.25)
    # with the folds: 43 words / 33 + 2 + 1 + 2 equations x 1 + 6 code lines x 0.25
    assert length.minutes(pace, with_folds=True) == pytest.approx(43 / 33 + 2 + 1 + 2 + 1.5)


def test_presentation_and_setup_code_is_not_in_view_and_kind_decides():
    page = """
```python exec
table({"a": [1]})
markdown("| x | y |\\n|---|---|\\n| 1 | 2 |")
```

```python exec kind=setup
setup = 1
```

```python exec kind=teach
shown = table({"a": [1]})
```

```python exec
switch("w", label="Which", options={"a": "A"}, tables=[{"a": table_spec([[1]])}])
```
"""
    # tables: the first block's table() and its markdown() table, the teaching block's table(),
    # the switch widget; code in view: the kind=teach block's one line
    assert reading_length(page).main == Tally(tables=4, code_lines=1)


def test_a_later_tab_marked_selected_is_the_one_in_view():
    page = """
=== "First"

    ```python
    a = 1
    ```

===+ "Second"

    ```python
    b = 1
    c = 2
    ```
"""
    # the tab titles "First" "Second" 2 words; the second tab's 2 code lines
    assert reading_length(page).main == Tally(words=2, code_lines=2)


def test_tallies_add_up_field_by_field():
    assert Tally(1, 2, 3, 4, 5) + Tally(10, 20, 30, 40, 50) == Tally(11, 22, 33, 44, 55)


def test_a_miss_is_the_count_over_the_middle_of_the_timed_range_less_one():
    pace = Pace(words_per_minute=100)
    # 110 words are 1.1 minutes: the middle of 1 to 1.2; 100 words are 1 minute, twice 0.5
    timings = [Timing(Tally(words=110), 1, 1.2), Timing(Tally(words=100), 0.5, 0.5)]
    assert misses(pace, timings) == pytest.approx([0, 1])


def test_the_best_pace_recovers_allowances_that_timed_every_pass_exactly():
    timings = [  # timed at 100 words a minute, figure 0.5, table 0.25, equation 1, code line 0.05
        Timing(Tally(words=1000), 10, 10),
        Timing(Tally(figures=4), 2, 2),
        Timing(Tally(tables=8), 2, 2),
        Timing(Tally(equations=3), 3, 3),
        Timing(Tally(code_lines=20), 1, 1),
        Timing(Tally(words=500, figures=2), 5.5, 6.5),  # 5 + 1 minutes, the middle of 5.5 to 6.5
    ]
    best = best_pace(timings)
    assert best.words_per_minute == pytest.approx(100)
    assert (best.minutes_per_figure, best.minutes_per_table, best.minutes_per_equation,
            best.minutes_per_code_line) == pytest.approx((0.5, 0.25, 1, 0.05))


def test_an_allowance_the_fit_would_make_negative_is_held_at_zero():
    # 100 words in 1 minute, and 100 words with a figure in half a minute: fitted freely, a
    # figure would take -0.5 minutes. Held at 0, words alone: relative misses 100a - 1 and
    # 200a - 1 (a minutes a word) are least in squares at a = 300 / 50,000, 500/3 words a minute
    best = best_pace([Timing(Tally(words=100), 1, 1), Timing(Tally(words=100, figures=1), 0.5, 0.5)])
    assert best.minutes_per_figure == 0
    assert best.words_per_minute == pytest.approx(500 / 3)
