"""Keep pages full: a figure that does not fit at the foot of a page floats to a later place.

A figure (or a widget) is never split, so one that does not fit in what is left of a page
goes to the next page and leaves a hole, up to its own height. Printed books let such a
figure float: the text goes on and the figure follows a paragraph or two later. CSS page
floats are not in WeasyPrint, so this does it by moving the block: lay out the chapter, find
each page more than a third empty whose next page starts with a movable block, move that
block after the paragraph that follows it (never past a heading or out of its aside), and
lay the chapter out again, a few rounds at most.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bs4 import BeautifulSoup, Tag

#: A page whose content ends higher than this share of its height is a hole (the issue's bar).
MAX_EMPTY = 1 / 3
#: How many times a chapter is laid out again at most.
ROUNDS = 4
#: What a moved block may be moved past: text that can fill a page's foot (an aside too:
#: it breaks across pages like prose).
FILLERS = ("p", "ul", "ol", "blockquote", "dl", "section")


@dataclass(frozen=True)
class Hole:
    """A page left more than a third empty, and the movable block that starts the next page."""

    page: int  # index in the laid-out document
    empty: float  # share of the page's content height left empty
    block: str | None  # data-paper-block of the block that did not fit, if one did not


def _content_boxes(page: Any) -> Iterable[Any]:
    root = page._page_box.children[0]  # the <html> box of this page (the margin boxes are siblings)
    yield from root.descendants()


def page_fill(page: Any) -> float:
    """The share of a laid-out page's content area that its content covers, top to bottom.

    Only what is drawn counts: lines of text, images, boxes without children (a block cut
    by the page's end reaches down to it, whatever it holds there).
    """
    box = page._page_box
    top = box.content_box_y()
    height = box.height
    bottom = top
    for child in _content_boxes(page):
        kind = type(child).__name__
        if not (kind == "LineBox" or "Replaced" in kind or not getattr(child, "children", None)):
            continue
        if not isinstance(getattr(child, "height", None), (int, float)):
            continue
        bottom = max(bottom, child.position_y + child.margin_height())
    return min(1.0, max(0.0, (bottom - top) / height)) if height else 1.0


def first_block(page: Any) -> str | None:
    """The movable block at the top of a page (its ``data-paper-block``), if it starts the page."""
    box = page._page_box
    limit = box.content_box_y() + box.height * 0.25
    for child in _content_boxes(page):
        element = getattr(child, "element", None)
        if element is None or not hasattr(child, "position_y"):
            continue
        if child.position_y > limit:
            return None
        block = element.get("data-paper-block")
        if block and child.element_tag in ("figure", "div"):
            return block
    return None


def holes(pages: Sequence[Any]) -> list[Hole]:
    """Pages more than a third empty, but for the last (a chapter's end)."""
    found = []
    for index in range(len(pages) - 1):
        empty = 1 - page_fill(pages[index])
        if empty > MAX_EMPTY:
            found.append(Hole(index, empty, first_block(pages[index + 1])))
    return found


def move_later(soup: BeautifulSoup, block: str) -> bool:
    """Move a block after the paragraph or aside (and its checks) that follows it; False if it cannot."""
    tag = soup.find(attrs={"data-paper-block": block})
    if tag is None:
        return False
    after = tag.find_next_sibling()
    if not isinstance(after, Tag) or after.name not in FILLERS or "paper-checks" in after.get("class", []):
        return False
    if after.name == "section" and "paper-fold" not in after.get("class", []):
        return False
    anchor = after
    while isinstance(nxt := anchor.find_next_sibling(), Tag) and "paper-checks" in nxt.get("class", []):
        anchor = nxt
    anchor.insert_after(tag.extract())
    return True


def fill_holes(body: str, lay_out: Callable[[str], Sequence[Any]]) -> tuple[str, list[Hole]]:
    """A chapter's body with its blocks moved until no page (but its last) is a hole it can fill.

    ``lay_out`` turns a body into laid-out pages. Returns the body and the holes left.
    """
    pages = lay_out(body)
    left = holes(pages)
    for _ in range(ROUNDS):
        movable = [h.block for h in left if h.block]
        if not movable:
            break
        soup = BeautifulSoup(body, "html.parser")
        if not any([move_later(soup, block) for block in movable]):
            break
        body = str(soup)
        pages = lay_out(body)
        left = holes(pages)
    return body, left
