"""bookpdf.layout's moves, on small chapter bodies (no typesetter needed): a figure floats past
the text after it, never past another figure; an aside is kept whole and floats only when it
fits a page (one taller, kept whole, would start a page of its own and leave a hole: it floats
and may break)."""

from __future__ import annotations

from bs4 import BeautifulSoup

from bookpdf.layout import move_aside_later, move_later


def order(soup: BeautifulSoup) -> list[str]:
    return [t.get("data-paper-block") or t.get_text() for t in soup.find_all(recursive=False)]


def test_a_figure_moves_past_the_paragraph_after_it_but_not_past_another_figure():
    soup = BeautifulSoup('<p>a</p><figure data-paper-block="f1"></figure><p>b</p>'
                         '<figure data-paper-block="f2"></figure>', "html.parser")
    assert move_later(soup, "f1")
    assert order(soup) == ["a", "b", "f1", "f2"]
    assert not move_later(soup, "f1")
    assert order(soup) == ["a", "b", "f1", "f2"]


def test_an_aside_with_one_figure_is_kept_whole_and_floats_past_the_next_paragraph():
    soup = BeautifulSoup('<section class="paper-fold"><p>x</p><figure data-paper-block="f1"></figure>'
                         '</section><p>after</p>', "html.parser")
    assert move_aside_later(soup, "f1")
    assert order(soup)[0] == "after"
    assert "paper-keep" in soup.find("section")["class"]


def test_an_aside_taller_than_a_page_floats_but_may_break():
    soup = BeautifulSoup('<section class="paper-fold" id="a"><p>x</p><figure data-paper-block="f1"></figure>'
                         '<figure data-paper-block="f2"></figure></section><p>after</p>', "html.parser")
    assert move_aside_later(soup, "f2", fits=lambda aside: aside != "a")
    assert order(soup)[0] == "after"
    assert "paper-keep" not in soup.find("section")["class"]
