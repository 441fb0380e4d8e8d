"""The paper rewrite of one page (bookpdf.content), on markup made by numbook's own functions.

No typesetter needed: these read and rewrite HTML only.
"""

from __future__ import annotations

import json
from pathlib import Path

from bs4 import BeautifulSoup

from bookpdf.content import PageRef, PaperRewriter, count_assertions, widget_note
from booksite.lean import fold_details
from numbook.render import _check_box, code_fold, figure_data_html, figure_html

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="200pt" height="100pt" viewBox="0 0 200 100"></svg>'


class _Figure:
    fig_id = "fig-demo"
    alt = "A demo"
    caption = "What the demo shows"
    variants = None
    narrow_svg = None
    svg = SVG
    header = ["x", "y"]
    rows = [["1", "2"]]


def page_html() -> str:
    """A page as the site publishes it: an aside with a check, a figure with its folds, tabs,
    a widget, links within the page, to another chapter of the book and to a web-only page."""
    check = _check_box("the weights add up to 1", [], "assert abs(w.sum() - 1) < 1e-12\nassert w.min() >= 0\n", None)
    figure = figure_html(_Figure(), "Figure 9.1", lambda p: f"../{p}", "figures/")
    code = code_fold("Code for Figure 9.1", [(None, "plot(w)")], "numbook-code", None)
    data = figure_data_html(_Figure(), "Figure 9.1", lambda p: f"../{p}", "figures/")
    article = f"""
<h1 id="part-9">Part 9 · Demo<a class="headerlink" href="#part-9">&para;</a></h1>
<h2 id="p9-first">9.1 First<a class="headerlink" href="#p9-first">&para;</a></h2>
<p>See <a href="#fig-demo">Figure 9.1</a>, <a href="../part8/#p8-x">Section 8.2</a> and
<a href="../reference/source/#f">the source</a>.</p>
<div class="numbook-checks">{check}</div>
<details class="aside" id="p9-aside"><summary>Look closer: the depth</summary>
<div class="numbook-aside-link"><a class="headerlink" href="#p9-aside">&para;</a></div>
<p>Inside the aside.</p>
</details>
{figure}
{code}
{data}
<div class="tabbed-set tabbed-alternate"><input checked id="numpy" name="t" type="radio"><input id="torch" name="t" type="radio">
<div class="tabbed-labels"><label for="numpy">NumPy (ran)</label><label for="torch">PyTorch (not run)</label></div>
<div class="tabbed-content"><div class="tabbed-block"><pre><code>a = 1</code></pre></div>
<div class="tabbed-block"><pre><code>a = torch.ones(1)</code></pre></div></div></div>
<div class="numbook-widget" id="widget-demo" data-numbook-widget="switch" data-src="../data/demo.json">
<table><thead><tr><th>x</th></tr></thead><tbody><tr><td>0.5</td></tr></tbody></table></div>
"""
    article = fold_details(article, ["numbook-check", "numbook-data", "numbook-code"])
    return (
        '<html lang="en"><head><meta name="citation_public_url" content="https://book.example/1.0/part9/"></head>'
        f'<body><article class="md-content__inner md-typeset">{article}'
        '<section class="numbook-cite"><code class="numbook-cite-text">Project (2026). Part 9.</code></section>'
        "</article></body></html>"
    )


def rewrite(tmp_path: Path):
    (tmp_path / "part9").mkdir()
    (tmp_path / "part9/index.html").write_text(page_html(), encoding="utf-8")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures/fig-demo.light.svg").write_text(SVG, encoding="utf-8")
    (tmp_path / "data").mkdir()
    (tmp_path / "data/demo.json").write_text(json.dumps({
        "widget": "switch", "label": "Learning rate", "default": "0.1",
        "options": [["0.1", "lr = 0.1"], ["0.2", "lr = 0.2"]]}), encoding="utf-8")
    pages = {"part8/": PageRef("part8/", "part8"), "part9/": PageRef("part9/", "part9")}
    chapter = PaperRewriter(tmp_path, pages["part9/"], pages, "https://book.example/1.0/").chapter()
    return chapter, BeautifulSoup(chapter.body, "html.parser")


def test_asides_print_open_with_their_summary_as_heading(tmp_path):
    _, soup = rewrite(tmp_path)
    aside = soup.find(id="part9--p9-aside")
    assert aside.name == "section" and "paper-aside" in aside["class"]
    assert aside.select_one(".paper-fold__title").get_text(strip=True) == "Look closer: the depth"
    assert "Inside the aside." in aside.get_text()
    assert soup.find("details") is None and soup.find("summary") is None


def test_a_check_prints_as_a_mark_with_its_count_of_assertions(tmp_path):
    chapter, soup = rewrite(tmp_path)
    mark = soup.select_one(".paper-checks .paper-check")
    assert mark.get_text() == "✓ 2 assertions"
    assert "the weights add up to 1" in mark["title"]
    assert (chapter.checks, chapter.assertions) == (1, 2)
    assert "w.sum()" not in soup.get_text()  # the code stays on the web


def test_code_and_data_folds_stay_out_and_the_figure_keeps_its_light_svg(tmp_path):
    _, soup = rewrite(tmp_path)
    assert "plot(w)" not in soup.get_text() and "Download the data" not in soup.get_text()
    images = soup.find_all("img")
    assert [img["src"] for img in images] == ["figures/fig-demo.light.svg"]
    assert images[0]["style"] == "width: 170.0pt; height: 85.0pt"  # 0.85 of its natural size
    assert soup.find("figure")["data-paper-block"] == "part9-1"


def test_every_tab_prints_under_its_label(tmp_path):
    _, soup = rewrite(tmp_path)
    assert [t.get_text() for t in soup.select(".paper-tab__label")] == ["NumPy (ran)", "PyTorch (not run)"]
    assert "a = torch.ones(1)" in soup.get_text()


def test_a_widget_prints_its_default_state_and_what_the_web_lets_the_reader_move(tmp_path):
    chapter, soup = rewrite(tmp_path)
    note = soup.select_one(".paper-widget .paper-widget-note")
    assert "chooses lr = 0.1 or lr = 0.2" in note.get_text() and "Printed: lr = 0.1" in note.get_text()
    assert note.find("a")["href"] == "https://book.example/1.0/part9/#widget-demo"
    assert soup.select_one(".paper-widget td").get_text() == "0.5"
    assert chapter.widgets == ["widget-demo"]


def test_links_stay_in_the_book_or_go_to_the_web_edition(tmp_path):
    chapter, soup = rewrite(tmp_path)
    links = {a.get_text(): a for a in soup.find_all("a")}
    assert links["Figure 9.1"]["href"] == "#part9--fig-demo"
    assert links["Section 8.2"]["href"] == "#part8--p8-x"
    assert links["Section 8.2"]["data-paper-chapter"] == "part8"  # gets its page number printed
    assert links["the source"]["href"] == "https://book.example/1.0/reference/source/#f"
    assert chapter.title == "Part 9 · Demo" and [s.title for s in chapter.sections] == ["9.1 First"]
    assert chapter.citation == "Project (2026). Part 9."
    assert soup.select(".headerlink, .numbook-cite") == []


def test_count_assertions_counts_statements_not_lines():
    assert count_assertions("assert a\nfor x in y:\n    assert x > 0, 'positive'\n") == 2
    assert count_assertions("assert (\n    a == b\n)\n") == 1


def test_widget_note_for_a_compute_widget_names_its_inputs_and_range():
    note = widget_note({"widget": "compute", "label": "LayerNorm", "input_label": "x",
                        "names": ["a", "b"], "control": "slider", "min": -2.0, "max": 2.0})
    assert note.startswith("LayerNorm: on the web the reader sets the x of a and b (a slider each from −2 to 2)")


def test_a_table_too_wide_for_the_page_continues_below_with_its_row_labels():
    from bookpdf.content import split_wide_table

    head = "".join(f"<th>column {k}</th>" for k in range(12))
    body = "".join(f"<td>{k}.123</td>" for k in range(12))
    soup = BeautifulSoup(f"<div><table><thead><tr><th></th>{head}</tr></thead>"
                         f"<tbody><tr><td>row a</td>{body}</tr></tbody></table></div>", "html.parser")
    split_wide_table(soup.table, budget=60)
    tables = soup.find_all("table")
    assert len(tables) > 1
    assert all(t.find("td").get_text() == "row a" for t in tables)  # each part keeps the labels
    shown = [th.get_text() for t in tables for th in t.find_all("th") if th.get_text()]
    assert shown == [f"column {k}" for k in range(12)]  # every column once, in order
