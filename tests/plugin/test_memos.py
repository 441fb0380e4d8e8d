"""What `mkdocs serve` remembers from one build to the next, in its own memory, gives what
working it out afresh gives."""

from __future__ import annotations

import jinja2

from numbook.rendermemo import TemplateCodeMemo
from numbook.stored import memo_by_digest


def test_a_text_memo_forgets_the_text_used_least_recently():
    calls = []

    @memo_by_digest(maxsize=2)
    def length(text: str) -> int:
        calls.append(text)
        return len(text)

    for text in ["aa", "bbb", "aa", "cccc", "aa", "bbb"]:
        assert length(text) == len(text)
    assert calls == ["aa", "bbb", "cccc", "bbb"]  # "aa", used again, stayed; "bbb" did not


def test_a_kept_template_is_compiled_again_when_a_filter_asks_for_other_arguments():
    """The compiled code of ``x|shout`` depends on whether the filter takes the context."""
    memo = TemplateCodeMemo()
    templates = jinja2.DictLoader({"page.html": "{{ word|shout }}"})

    def plain(value):
        return value.upper()

    @jinja2.pass_context
    def with_context(context, value):
        return f"{value.upper()} in {context['where']}"

    first = jinja2.Environment(loader=templates, bytecode_cache=memo)
    first.filters["shout"] = plain
    assert first.get_template("page.html").render(word="hi", where="a") == "HI"
    second = jinja2.Environment(loader=templates, bytecode_cache=memo)  # the next build's
    second.filters["shout"] = with_context
    assert second.get_template("page.html").render(word="hi", where="a") == "HI in a"
    third = jinja2.Environment(loader=jinja2.DictLoader({"page.html": "{{ word|shout }}!"}), bytecode_cache=memo)
    third.filters["shout"] = plain
    assert third.get_template("page.html").render(word="hi") == "HI!"  # a changed source
