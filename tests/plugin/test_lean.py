"""numbook-lean removes code-token spans that look like plain text, and nothing else."""

from __future__ import annotations

from html.parser import HTMLParser

from numbook.lean import unwrap_plain_tokens

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
    from numbook.lean import wrap_tables

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
    from numbook.lean import LeanPlugin

    plugin = LeanPlugin()
    plugin.load_config({"focusable_code": True, "plain_classes": []})
    page = '<pre><span></span><code>a</code></pre><pre class="x"><code tabindex="0">b</code></pre><p><code>inline</code></p>'
    out = plugin.on_page_content(page, page=None, config=None, files=None)
    assert out.count('<code tabindex="0">') == 2  # both blocks, the second not twice
    assert "<p><code>inline</code></p>" in out  # inline code is no tab stop
