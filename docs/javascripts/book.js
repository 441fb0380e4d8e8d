// Small reader-facing fixes, re-applied on every page Material loads.
// Wide tables, formulas and figures scroll inside the column: make each scrolling box
// reachable and named for keyboard and screen-reader users (axe: scrollable-region-focusable).
const SCROLL_BOXES = [
  [".md-typeset__scrollwrap", "Table"],
  [".katex-display", "Formula"],
  [".numbook-figure__scroll", "Figure"],
];

function nameScrollBox(box, selector, what) {
  const scrolls = box.scrollWidth > box.clientWidth + 1;
  if (!scrolls && selector !== ".md-typeset__scrollwrap") {
    ["tabindex", "role", "aria-label"].forEach((a) => box.removeAttribute(a));
    return;
  }
  box.setAttribute("tabindex", "0");
  box.setAttribute("role", "region");
  box.setAttribute("aria-label", `${what} (scrolls sideways)`);
}

function nameScrollBoxes() {
  for (const [selector, what] of SCROLL_BOXES) {
    document.querySelectorAll(selector).forEach((box) => nameScrollBox(box, selector, what));
  }
}

document$.subscribe(() => {
  nameScrollBoxes();
  // a formula set in KaTeX's own fonts is wider once they have loaded
  document.fonts.ready.then(nameScrollBoxes);
});
// a figure's width is known before its image loads (width/height attributes), but turning
// the phone or resizing the window changes what overflows
window.addEventListener("resize", nameScrollBoxes, { passive: true });
// a box far from the screen is not laid out (content-visibility: auto, book.css) until it
// comes near: measure it again then, and only it
function nameScrollBoxesIn(shown) {
  for (const [selector, what] of SCROLL_BOXES) {
    const boxes = shown.matches(selector) ? [shown] : shown.querySelectorAll(selector);
    boxes.forEach((box) => nameScrollBox(box, selector, what));
  }
}
document.addEventListener("contentvisibilityautostatechange", (event) => nameScrollBoxesIn(event.target),
  { capture: true, passive: true });
// a fold's content is put in the page only when it is opened (numbook-lean)
document.addEventListener("numbook:unfold", (event) => nameScrollBoxesIn(event.target));
