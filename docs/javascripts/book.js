// Small reader-facing fixes, re-applied on every page Material loads.
// Wide tables, formulas and figures scroll inside the column: make each scrolling box
// reachable and named for keyboard and screen-reader users (axe: scrollable-region-focusable).
const SCROLL_BOXES = [
  [".md-typeset__scrollwrap", "Table"],
  [".katex-display", "Formula"],
  [".numbook-figure__scroll", "Figure"],
];

function nameScrollBoxes() {
  for (const [selector, what] of SCROLL_BOXES) {
    document.querySelectorAll(selector).forEach((box) => {
      const scrolls = box.scrollWidth > box.clientWidth + 1;
      if (!scrolls && selector !== ".md-typeset__scrollwrap") {
        ["tabindex", "role", "aria-label"].forEach((a) => box.removeAttribute(a));
        return;
      }
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", `${what} (scrolls sideways)`);
    });
  }
}

document$.subscribe(nameScrollBoxes);
// a figure's width is known before its image loads (width/height attributes), but turning
// the phone or resizing the window changes what overflows
window.addEventListener("resize", nameScrollBoxes, { passive: true });
