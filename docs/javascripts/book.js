// Small reader-facing fixes, re-applied on every page Material loads.
// Wide tables scroll inside the column: make each scrolling box reachable and named for
// keyboard and screen-reader users (axe: scrollable-region-focusable).
document$.subscribe(() => {
  document.querySelectorAll(".md-typeset__scrollwrap").forEach((box) => {
    box.setAttribute("tabindex", "0");
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", "Table (scrolls sideways)");
  });
});
