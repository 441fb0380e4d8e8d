"""Keep pages full: a figure that does not fit at the foot of a page floats to a later place.

A figure (a widget, a table) is never split, so one that does not fit in what is left of a
page goes to the next page and leaves a hole, up to its own height. Printed books let such a
block float: the text goes on and the block follows a little later. CSS page floats are not in
WeasyPrint, so this does it by moving the block: lay out the chapter, find each page more than
a third empty whose next page starts with a movable block, move that block (with the checks
under it) past what follows it, one piece at a time (a paragraph, an aside, a code block, a
table; a heading together with the piece after it), never past another figure or widget
(their numbers stay in order) nor out of the aside that holds it, and lay the chapter out again, a few
rounds at most. A block that cannot move (the last of its aside) is set smaller instead, down
to `MIN_SHRINK` of its size, when that makes it fit where it stands; failing that, its aside
(if it fits a page) is kept in one piece and moves on past the text that follows it, as a box
set apart floats in a printed book.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bs4 import BeautifulSoup, Tag

#: A page whose content ends higher than this share of its height is a hole: a little under
#: the issue's bar of a third, which tests/site/test_pdf.py measures from the PDF itself.
MAX_EMPTY = 0.3
#: How many times a chapter is laid out again at most.
ROUNDS = 6
#: The smallest share of its size a block that cannot move is set at, to fit a page's foot.
MIN_SHRINK = 0.72
#: Room a block needs beyond its own height (the checks under it, an aside's padding).
SLACK = 0.05
#: The tallest aside kept in one piece to float, in pages' content heights.
MAX_ASIDE = 0.95
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


@dataclass(frozen=True)
class Hole:
    """A page left more than a third empty, and the movable block that starts the next page."""

    page: int  # index in the laid-out document
    empty: float  # share of the page's content height left empty
    block: str | None  # data-paper-block of the block that did not fit, if one did not
    room: float = 0.0  # the scale of its images that would make the block fit the hole


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


def first_block(page: Any) -> tuple[str, float, float] | None:
    """The movable block at the top of a page (its ``data-paper-block``), its height and the
    height of the images in it (shares of the page's content height), if it starts the page."""
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
            images = sum(d.margin_height() for d in child.descendants()
                         if "Replaced" in type(d).__name__ and hasattr(d, "margin_height"))
            return block, child.margin_height() / box.height, images / box.height
    return None


def holes(pages: Sequence[Any]) -> list[Hole]:
    """Pages more than a third empty, but for the last (a chapter's end)."""
    found = []
    for index in range(len(pages) - 1):
        empty = 1 - page_fill(pages[index])
        if empty > MAX_EMPTY:
            block = first_block(pages[index + 1])
            if block is None:
                found.append(Hole(index, empty, None))
            else:  # the images' scale that would make the block fit (its caption keeps its size)
                name, tall, images = block
                room = 1 - (tall - (empty - SLACK)) / images if images else 0.0
                found.append(Hole(index, empty, name, room))
    return found


def _movable(tag: Tag) -> bool:
    return tag.has_attr("data-paper-block")


def _with_checks(tag: Tag) -> Tag:
    """The last of the check strips that follow a block (its own claims), or the block."""
    last = tag
    while isinstance(nxt := last.find_next_sibling(), Tag) and "paper-checks" in nxt.get("class", []):
        last = nxt
    return last


def _next_piece(end: Tag) -> Tag | None:
    """The last element of the piece after ``end`` a block may move past, if any: a paragraph,
    an aside, a code block or a table (tables have no numbers to keep in order), with its
    checks; a heading with the piece after it. Never a figure or a widget."""
    after = end.find_next_sibling()
    if not isinstance(after, Tag) or (_movable(after) and "numbook-table-output" not in after.get("class", [])):
        return None
    if after.name in HEADINGS:
        return _next_piece(after)
    return _with_checks(after)


def move_later(soup: BeautifulSoup, block: str) -> bool:
    """Move a block (with the checks under it) past the piece of text that follows it; False
    if nothing may be moved past (the end of its aside, another movable block)."""
    tag = soup.find(attrs={"data-paper-block": block})
    return tag is not None and _move_tag_later(tag)


def move_aside_later(soup: BeautifulSoup, block: str, fits: Callable[[str], bool] = lambda _: True) -> bool:
    """Move the aside that ends with a block past the piece of text that follows it, kept in one
    piece if it fits a page (``fits``, given its id): a box set apart from the main line floats
    like a figure. One taller than a page, kept whole, would start a page of its own and leave
    a hole before it: it moves, and breaks where it must."""
    tag = soup.find(attrs={"data-paper-block": block})
    aside = tag.find_parent("section", class_="paper-fold") if tag is not None else None
    if aside is None:
        return False
    keep = (not aside.get("id") or fits(aside["id"])) and "paper-keep" not in aside["class"]
    if keep:
        aside["class"] = aside["class"] + ["paper-keep"]  # paper.css: not split
    return _move_tag_later(aside) or keep


def _move_tag_later(tag: Tag) -> bool:
    end = _with_checks(tag)
    anchor = _next_piece(end)
    if anchor is None:
        return False
    moving, node = [tag], tag
    while node is not end:
        node = node.find_next_sibling()
        moving.append(node)
    for piece in reversed(moving):
        anchor.insert_after(piece.extract())
    return True


def height(pages: Sequence[Any], element_id: str) -> float:
    """The height of the element with this id, summed over the pages it spans, in pages'
    content heights."""
    total = 0.0
    for page in pages:
        for child in _content_boxes(page):  # outermost first: the element's own box
            element = getattr(child, "element", None)
            if element is not None and element.get("id") == element_id and hasattr(child, "margin_height"):
                total += child.margin_height() / page._page_box.height
                break
    return total


def shrink(soup: BeautifulSoup, block: str, scale: float) -> bool:
    """Set a block's images smaller by ``scale`` (their style gives their size in points)."""
    tag = soup.find(attrs={"data-paper-block": block})
    images = tag.find_all("img", style=True) if tag is not None else []
    for img in images:
        img["style"] = re.sub(r"([\d.]+)pt", lambda m: f"{float(m.group(1)) * scale:.1f}pt", img["style"])
    return bool(images)


def fill_holes(body: str, lay_out: Callable[[str], Sequence[Any]]) -> tuple[str, list[Hole]]:
    """A chapter's body with its blocks moved until no page (but its last) is a hole it can fill.

    ``lay_out`` turns a body into laid-out pages. Returns the body and the holes left.
    """
    pages = lay_out(body)
    left = holes(pages)
    for _ in range(ROUNDS):
        if not any(h.block for h in left):
            break
        soup = BeautifulSoup(body, "html.parser")
        changed = False
        for hole in left:
            if not hole.block:
                continue
            if move_later(soup, hole.block):
                changed = True
            elif hole.room >= MIN_SHRINK:
                changed |= shrink(soup, hole.block, min(1.0, hole.room))
            else:
                changed |= move_aside_later(soup, hole.block, lambda aside: height(pages, aside) < MAX_ASIDE)
        if not changed:
            break
        body = str(soup)
        pages = lay_out(body)
        left = holes(pages)
    return body, left
