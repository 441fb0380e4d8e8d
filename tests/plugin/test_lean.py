"""numbook-lean removes code-token spans that look like plain text, and nothing else."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from types import SimpleNamespace

from booksite.lean import unwrap_plain_tokens

CODE = (
    '<div class="highlight"><pre><span></span><code><span class="n">scores</span><span class="w"> </span>'
    '<span class="o">=</span> <span class="n">q</span><span class="p">.</span><span class="n">dot</span>'
    '<span class="p">(</span><span class="n">k</span><span class="p">)</span>\n</code></pre></div>'
)
PROSE = '<p>A <span class="n">name</span> outside code stays wrapped.</p>'


class Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.classes: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_starttag(self, tag, attrs) -> None:
        self.classes.extend(v for k, v in attrs if k == "class")


def parse(html_text: str) -> Text:
    text = Text()
    text.feed(html_text)
    return text


def test_plain_spans_go_and_the_text_stays():
    out = unwrap_plain_tokens(CODE + PROSE, ["n", "w"])
    before, after = parse(CODE + PROSE), parse(out)
    assert "".join(after.parts) == "".join(before.parts)
    # the coloured tokens keep their spans; names and whitespace lose theirs, outside <pre> nothing changes
    assert [c for c in after.classes if c in {"n", "w"}] == ["n"]
    assert after.classes.count("o") == 1 and after.classes.count("p") == 3
    assert out.endswith(PROSE)


def test_no_classes_means_no_change():
    assert unwrap_plain_tokens(CODE, []) == CODE


def test_tables_below_the_first_screen_get_a_box_and_the_first_screen_is_left_alone():
    from booksite.lean import wrap_tables

    table = "<table>\n<thead><tr><th>a</th></tr></thead>\n<tbody><tr><td>1</td></tr></tbody>\n</table>"
    # a formula's MathML copy is not counted as text the reader sees
    formula = '<span class="katex"><span class="katex-mathml"><math><mi>' + "x" * 500 + '</mi></math></span><span class="katex-html">x</span></span>'
    page = f"<h1>T</h1><p>{'w' * 40} {formula}</p>{table}<p>{'w' * 100}</p>{table}<p>{'w' * 10}</p>"
    out = wrap_tables(page, "box", after=120)
    assert out.count('<div class="box"><table>') == 1
    # the first table (within 120 characters of text) is untouched, the second is boxed whole
    assert out.index(table) < out.index('<div class="box">')
    assert out.endswith(f'<div class="box">{table}</div><p>{"w" * 10}</p>')
    # a table with attributes (not Markdown's) is left as it is
    assert wrap_tables('<p>x</p><table class="own"><tr><td>1</td></tr></table>', "box") == '<p>x</p><table class="own"><tr><td>1</td></tr></table>'


def test_focusable_code_gives_every_code_block_a_tab_stop_once():
    from booksite.lean import LeanPlugin

    plugin = LeanPlugin()
    plugin.load_config({"focusable_code": True, "plain_classes": []})
    page = SimpleNamespace(
        content='<pre><span></span><code>a</code></pre><pre class="x"><code tabindex="0">b</code></pre><p><code>inline</code></p>'
    )
    plugin._make_lean({}, page=page, config=None, nav=None)
    out = page.content
    assert out.count('<code tabindex="0">') == 2  # both blocks, the second not twice
    assert "<p><code>inline</code></p>" in out  # inline code is no tab stop


def test_folds_hold_their_content_as_text_and_keep_summary_text_and_order():
    from booksite.lean import fold_details

    check = '<details class="numbook-check">\n<summary>claim</summary>\n<pre><code>assert x</code></pre>\n</details>'
    data = '<details class="numbook-data"><summary>data</summary><table><tr><td>1</td></tr></table></details>'
    other = '<details class="note"><summary>n</summary><p>kept</p></details>'
    opened = '<details class="numbook-check" open><summary>o</summary><p>shown</p></details>'
    anchored = '<details class="numbook-check"><summary>a</summary><p id="target">linked</p></details>'
    page = "<p>x</p>" + check + data + other + opened + anchored
    out = fold_details(page, ["numbook-check", "numbook-data"])
    # same text in the same order once the holders are read back as HTML: only they were added
    held = re.sub(r'<script type="text/html" data-numbook-fold>(.*?)</script>', r"\1", out, flags=re.S)
    assert parse(held).parts == parse(page).parts
    assert out.count('<script type="text/html" data-numbook-fold>') == 2
    assert ('<summary>claim</summary><script type="text/html" data-numbook-fold>\n<pre><code>assert x</code></pre>\n'
            '</script></details>') in out
    # a held table comes in the box the theme gives the page's tables when it loads
    assert ('<summary>data</summary><script type="text/html" data-numbook-fold><div class="md-typeset__scrollwrap">'
            '<div class="md-typeset__table"><table><tr><td>1</td></tr></table></div></div></script>') in out
    # other classes, open folds and folds with an anchor inside stay as they were
    assert out.endswith(other + opened + anchored)


def test_a_fold_holding_a_script_or_a_comment_is_not_held():
    """Inside the holder, `</script` would end it and `<!--` can make the HTML parser skip its end."""
    from booksite.lean import fold_details

    for body in ('<script type="application/json">{}</script>', "<!-- a note --><p>x</p>", "<SCRIPT>1</SCRIPT>"):
        page = f'<details class="f"><summary>s</summary>{body}</details>'
        assert fold_details(page, ["f"]) == page


def test_a_fold_inside_a_fold_goes_with_the_outer_one():
    from booksite.lean import fold_details

    inner = '<details class="f"><summary>i</summary><p>deep</p></details>'
    page = f'<details class="f"><summary>o</summary><p>a</p>{inner}</details><p>after</p>'
    out = fold_details(page, ["f"])
    assert out == (f'<details class="f"><summary>o</summary><script type="text/html" data-numbook-fold><p>a</p>{inner}</script>'
                   '</details><p>after</p>')
    assert fold_details(page, []) == page


def test_scripts_after_the_last_inline_script_are_deferred_in_order():
    from booksite.lean import defer_scripts

    page = (
        '<head><script src="early.js"></script><script>var inline = 1;</script></head><body>'
        '<script id="__config" type="application/json">{"a": 1}</script>'
        '<script src="bundle.js"></script><script src="own.js" async></script>'
        '<script type="module" src="m.js"></script><script src="x.js" defer></script><script src="last.js"></script></body>'
    )
    out = defer_scripts(page)
    assert '<script src="early.js"></script>' in out  # an inline script after it may need it
    assert '<script src="bundle.js" defer></script>' in out and '<script src="last.js" defer></script>' in out
    assert out.index("bundle.js") < out.index("last.js")
    for kept in ('<script src="own.js" async>', '<script type="module" src="m.js">', '<script src="x.js" defer>',
                 '<script id="__config" type="application/json">'):
        assert kept in out
    assert out.count(" defer") == 3


def test_images_on_the_first_screen_load_at_once_and_later_ones_stay_lazy():
    from booksite.lean import eager_first_screen

    first = '<img src="a.svg#only-light" alt="a" loading="lazy" decoding="async">'
    dark = '<img src="a.svg#only-dark" alt="a" loading="lazy" decoding="async">'
    later = '<img src="b.svg#only-light" alt="b" loading="lazy" decoding="async">'
    html_text = f"<p>{'x' * 100}</p>{first}{dark}<p>{'y' * 3000}</p>{later}"
    out = eager_first_screen(html_text, 2500)
    assert '<img src="a.svg#only-light" alt="a" decoding="async">' in out  # on the first screen
    assert dark in out  # hidden in the default scheme: a light reader never fetches it
    assert later in out  # below it: still lazy


def test_the_search_index_reads_code_without_its_spans_and_indexes_the_same():
    """search_plain_code hands Material's search parser the code without Pygments' spans: it
    parses a fraction of the tags, and the entries it makes are the same."""
    from material.plugins.search.plugin import SearchIndex

    from booksite.lean import plain_code

    content = '<h2 id="s">Scores</h2>\n' + CODE + PROSE + "<pre><code>" + '<span class="k">for</span> x' + "</code></pre>"
    lite = plain_code(content)
    assert lite.count("<span") == PROSE.count("<span")
    assert "".join(parse(lite).parts) == "".join(parse(content).parts)  # the same text

    def entries(html_text: str) -> list[dict]:
        page = SimpleNamespace(meta={}, content=html_text, toc=[], url="p/", title="P", file=None)
        index = SearchIndex()
        index.add_entry_from_context(page)
        return index.entries

    assert entries(lite) == entries(content)


def test_search_entries_are_reused_while_the_page_is_unchanged(tmp_path):
    """SearchMemo gives Material's index the entries it made last time for an unchanged page,
    in the same order and form, and parses a changed or damaged one again."""
    from material.plugins.search.plugin import SearchIndex

    from booksite.lean import SearchMemo

    parsed: list[str] = []

    def index_of(pages: list[SimpleNamespace]) -> list[dict]:
        index = SearchIndex(lang=["en"])
        original = index.add_entry_from_context
        index.add_entry_from_context = lambda page: (parsed.append(page.url), original(page))
        SearchMemo(str(tmp_path / "memo")).install(index)
        for page in pages:
            index.add_entry_from_context(page)
        return index.entries

    def page(url: str, content: str) -> SimpleNamespace:
        return SimpleNamespace(meta={}, content=content, toc=[], url=url, title=url.upper(), file=SimpleNamespace(src_uri=url + ".md"))

    pages = [page("a", '<h2 id="x">X</h2><p>alpha</p>'), page("b", "<p>beta</p>")]
    first = index_of(pages)
    assert parsed == ["a", "b"]
    assert index_of(pages) == first and parsed == ["a", "b"]  # nothing parsed again
    assert [list(e) for e in first] == [["location", "title", "text"]] * len(first)

    pages[1].content = "<p>gamma</p>"
    entry = tmp_path / "memo" / "a.md.json"
    entry.write_bytes(entry.read_bytes().replace(b"alpha", b"alpho"))  # the checksum no longer matches
    third = index_of(pages)
    assert parsed == ["a", "b", "a", "b"]
    assert third[0] == first[0] and "gamma" in third[-1]["text"]


def test_each_line_of_code_gets_a_span_and_the_code_its_text():
    """The line spans that let the stylesheet mark a wrapped line's continuation change no
    character of the code: the same text, the same newlines; a docstring that spans two lines
    is closed and opened again so that every line holds balanced markup; blank lines, a
    citation's text (a <code> with a class) and code outside <pre> stay as they were."""
    from booksite.lean import mark_code_lines

    code = ('<div class="highlight"><pre><span></span><code tabindex="0"><span class="k">def</span> f(x):\n'
            '    <span class="sd">"""Two\n    lines."""</span>\n\n'
            '    return g(x,\n' + " " * 13 + 'y)  <span class="c1"># aligned</span>\n</code></pre></div>')
    other = '<pre><code class="numbook-cite-text">a\nb</code></pre><p><code>x</code></p>'
    out = mark_code_lines(code + other)
    assert "".join(parse(out).parts) == "".join(parse(code + other).parts)
    assert out.endswith(other)
    body = out[out.index("<code"):out.index("</code>")]
    lines = body.split("\n")
    assert len(lines) == code[code.index("<code"):code.index("</code>")].count("\n") + 1
    marked = [line for line in lines if 'class="numbook-line' in line]
    assert len(marked) == 5  # every line but the blank one and the empty end
    for line in marked:
        assert line.count("<span") == line.count("</span>")  # balanced on each line
    assert '<span class="sd">    lines."""</span>' in body  # the docstring's second line, reopened
    assert 'style="--indent:4"' in body
    # a deep indentation has its own span, and its line may wrap at any character
    assert ('<span class="numbook-line numbook-line--deep" style="--indent:13"><span class="numbook-indent">'
            + " " * 13 + "</span>y)") in body


def test_the_plugin_marks_lines_only_when_asked():
    from booksite.lean import LeanPlugin

    code = '<pre><span></span><code>x = 1\n</code></pre>'
    for wanted in (False, True):
        plugin = LeanPlugin()
        plugin.load_config({"mark_lines": wanted})
        page = SimpleNamespace(content=code)
        plugin._make_lean({}, page=page, config=None, nav=None)
        assert ('class="numbook-line"' in page.content) is wanted
