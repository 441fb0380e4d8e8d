// Small reader-facing fixes, re-applied on every page Material loads.
// Wide tables, formulas and figures scroll inside the column: make each scrolling box
// reachable and named for keyboard and screen-reader users (axe: scrollable-region-focusable).
// A table's box is always named (it scrolls whenever the table is wider than the column); a
// formula or figure only if it does scroll, which takes measuring it.
// Each box is named by what it holds, as the page numbers it: "Table 3", "Figure 2.4",
// "Equation (3.1)" (one name per box, so that no two regions of a page share one).
const TABLE_BOX = ".md-typeset__scrollwrap";
const MEASURED_BOXES = [
  [".katex-display", (box) => {
    const tag = box.querySelector(".tag")?.textContent.trim();
    return tag ? `Equation ${tag}` : `Formula ${[...document.querySelectorAll(".katex-display")].indexOf(box) + 1}`;
  }],
  [".numbook-figure__scroll", (box) => {
    const caption = box.closest("figure")?.querySelector("figcaption")?.textContent || "";
    return caption.split(":")[0].trim() || "Figure";
  }],
];

function tableName(box) {
  const number = box.querySelector("table")?.dataset.numbookTable;
  return number ? `Table ${number}` : "Table";
}

function name(box, what) {
  box.setAttribute("tabindex", "0");
  box.setAttribute("role", "region");
  box.setAttribute("aria-label", `${typeof what === "function" ? what(box) : what} (scrolls sideways)`);
}

// All measuring first, then all writing: a write between two reads would make the browser
// lay the page out again for the second read.
function nameMeasured(boxes) {
  const scrolls = boxes.map(([box]) => box.scrollWidth > box.clientWidth + 1);
  boxes.forEach(([box, what], i) => {
    if (scrolls[i]) name(box, what);
    else ["tabindex", "role", "aria-label"].forEach((a) => box.removeAttribute(a));
  });
}

function measuredBoxesIn(root) {
  return MEASURED_BOXES.flatMap(([selector, what]) =>
    [...(root.matches?.(selector) ? [root] : root.querySelectorAll(selector))].map((box) => [box, what]));
}

// Formulas and figures are laid out only near the screen (content-visibility: auto,
// book.css): measuring one far away would make the browser lay it out at load, the work that
// rule saves. Each is measured when it comes near (the browser says so with an event), and
// again when the page's width or fonts change, while it is near.
const near = new Set();
const hearsNearness = "ContentVisibilityAutoStateChangeEvent" in window;

function measureNear() {
  nameMeasured([...near].filter((block) => block.isConnected).flatMap(measuredBoxesIn));
}

// A figure scrolls when the column is narrower than its image's minimum width (the width at
// which its smallest text stays legible, written on the image): that needs no layout of the
// figure, so every figure that will scroll is named at load, near or not. (A figure's narrow
// layout on a phone has no minimum: book.css.)
const NARROW = matchMedia("(max-width: 37.49em)");

function nameFiguresThatWillScroll(root) {
  const column = root.querySelector("article")?.clientWidth || root.clientWidth;
  root.querySelectorAll(".numbook-figure__scroll").forEach((box) => {
    const narrow = NARROW.matches && box.closest(".numbook-figure--narrow");
    const need = narrow ? 0 : parseFloat(box.querySelector("img")?.style.minWidth) || 0;
    if (need > column) name(box, MEASURED_BOXES[1][1]);
  });
}

document$.subscribe(() => {
  near.clear();
  document.querySelectorAll(TABLE_BOX).forEach((box) => name(box, tableName));
  nameFiguresThatWillScroll(document);
  if (!hearsNearness) document.querySelectorAll(".md-typeset").forEach((root) => near.add(root));
  measureNear();
});
// a formula set in KaTeX's own fonts is wider once they have loaded (a font is fetched when a
// formula near the screen first needs it)
document.fonts.addEventListener("loadingdone", measureNear);
window.addEventListener("resize", measureNear, { passive: true });
document.addEventListener("contentvisibilityautostatechange", (event) => {
  if (event.skipped) {
    near.delete(event.target);
    return;
  }
  near.add(event.target);
  nameMeasured(measuredBoxesIn(event.target));
}, { capture: true, passive: true });
// a fold's content is put in the page only when it is opened (numbook-lean)
document.addEventListener("numbook:unfold", (event) => {
  event.target.querySelectorAll(TABLE_BOX).forEach((box) => name(box, tableName));
  nameMeasured(measuredBoxesIn(event.target));
});

// The edition menu (Material's version menu, filled from mike's versions.json) also offers this
// page's PDF edition, which the page's head declares (numbook-pdf: rel="alternate"). The menu is
// built after the page loads, and only in a mike deployment.
function addPdfToEditionMenu() {
  const list = document.querySelector(".md-version__list");
  if (!list || list.querySelector(".numbook-pdf-edition")) return Boolean(list);
  document.querySelectorAll('link[rel="alternate"][type="application/pdf"]').forEach((pdf) => {
    const item = document.createElement("li");
    item.className = "md-version__item numbook-pdf-edition";
    const link = document.createElement("a");
    link.className = "md-version__link";
    link.href = pdf.href;
    link.type = "application/pdf";
    link.textContent = pdf.title;
    item.append(link);
    list.append(item);
  });
  return true;
}
if (!addPdfToEditionMenu()) {
  const topic = document.querySelector(".md-header");
  if (topic) {
    const watch = new MutationObserver(() => { if (addPdfToEditionMenu()) watch.disconnect(); });
    watch.observe(topic, { childList: true, subtree: true });
  }
}
