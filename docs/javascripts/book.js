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

// A box the browser laid out while the page was still being read in, before this script ran,
// was announced to no one: it is near if its content is not skipped.
function boxesAlreadyNear() {
  const selector = MEASURED_BOXES.map(([s]) => s).join(", ");
  return [...document.querySelectorAll(selector)].filter((box) =>
    (box.firstElementChild || box).checkVisibility?.({ contentVisibilityAuto: true }) ?? true);
}

// A table wider than its box says so (book.css draws the words over it from this mark, and
// holds its row labels in view): "start" (more to the right), "middle", "end" (more to the
// left), or no mark when it fits. Measured when the box is laid out and whenever it or its
// table changes size (a ResizeObserver: a box far down the page, not laid out yet, costs
// nothing until the reader comes near it), and as the reader scrolls it.
const SCROLL_MARK = "data-book-scroll";

function markScroll(box) {
  const room = box.scrollWidth - box.clientWidth;
  const where = room <= 1 ? null : box.scrollLeft <= 1 ? "start" : box.scrollLeft >= room - 1 ? "end" : "middle";
  if (where === null) box.removeAttribute(SCROLL_MARK);
  else if (box.getAttribute(SCROLL_MARK) !== where) box.setAttribute(SCROLL_MARK, where);
}

const sized = "ResizeObserver" in window
  ? new ResizeObserver((entries) => entries.forEach((entry) => markScroll(entry.target.closest("[data-book-watched]"))))
  : null;

function watchScroll(box) {
  if (box.hasAttribute("data-book-watched")) return;
  box.setAttribute("data-book-watched", "");
  box.addEventListener("scroll", () => markScroll(box), { passive: true });
  if (!sized) return markScroll(box);
  sized.observe(box);
  if (box.firstElementChild) sized.observe(box.firstElementChild);
}
window.bookWatchScroll = watchScroll;  // widgets.js: a widget's table box

// Material names a section's part of the navigation by the button that opens it; for a
// section with a page of its own (Workbooks) that button holds only an arrow, so the part had
// no name and a screen reader met two unnamed navigation regions (axe: landmark-unique). The
// button gets the section's title, unseen, as its name (under Zensical's templates too).
function nameSectionToggles() {
  document.querySelectorAll("nav.md-nav[aria-labelledby]").forEach((nav) => {
    const toggle = document.getElementById(nav.getAttribute("aria-labelledby"));
    const title = nav.querySelector(":scope > .md-nav__title")?.textContent.trim();
    if (!toggle || !title || toggle.textContent.trim()) return;
    const words = document.createElement("span");
    words.className = "numbook-sr-only";
    words.textContent = title;
    toggle.append(words);
  });
}

// Material puts a code block's copy button in a <nav> of its own, as the block comes near the
// screen: a page with twenty blocks in view had twenty unnamed navigation regions, which a
// screen reader lists among the page's landmarks (axe: landmark-unique). Each becomes the
// plain box it looks like (Material styles it by its class).
function plainCodeNav(nav) {
  const box = document.createElement("div");
  box.className = nav.className;
  box.append(...nav.childNodes);
  nav.replaceWith(box);
}
new MutationObserver((changes) => {
  for (const change of changes) {
    for (const node of change.addedNodes) {
      if (node.nodeName === "NAV" && node.classList.contains("md-code__nav")) plainCodeNav(node);
    }
  }
}).observe(document.body, { childList: true, subtree: true });

document$.subscribe(() => {
  nameSectionToggles();
  document.querySelectorAll("nav.md-code__nav").forEach(plainCodeNav);
  near.clear();
  document.querySelectorAll(TABLE_BOX).forEach((box) => { name(box, tableName); watchScroll(box); });
  nameFiguresThatWillScroll(document);
  if (!hearsNearness) document.querySelectorAll(".md-typeset").forEach((root) => near.add(root));
  else boxesAlreadyNear().forEach((box) => near.add(box));
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
  event.target.querySelectorAll(TABLE_BOX).forEach((box) => { name(box, tableName); watchScroll(box); });
  nameMeasured(measuredBoxesIn(event.target));
});

// The glossary, by touch, keyboard and mouse. Every use of a glossary term is an
// <abbr title="definition"> (the glossary is appended to each page), and numbook makes each
// one a tab stop. A browser shows a title only to a mouse resting on it: here one small box,
// made once, shows the definition of the term that is tapped, focused or pointed at, next to
// it (below, or above when there is more room there: never over the term), and names it as
// the term's description while it is shown. Escape, a tap elsewhere or leaving the term
// closes it. Nothing is set up per term: the page's ~150 terms cost nothing at load.
(() => {
  const TERM = "abbr[title], abbr[data-book-title]";
  const INSIDE_CONTROL = "a, button, summary, label";  // a tap there does something else
  const GAP = 6;
  const MARGIN = 8;
  let box = null;
  let shown = null;  // the term whose definition is shown
  let leaving = 0;

  const termOf = (target) => {
    const term = target?.closest?.(TERM);
    return term && !term.parentElement.closest(INSIDE_CONTROL) ? term : null;
  };

  function made() {
    if (box) return box;
    box = document.createElement("div");
    box.id = "book-term";
    box.className = "book-term";
    box.setAttribute("role", "tooltip");
    box.hidden = true;
    box.addEventListener("pointerenter", () => clearTimeout(leaving));
    box.addEventListener("pointerleave", (event) => { if (event.pointerType === "mouse") hideSoon(); });
    document.body.append(box);
    return box;
  }

  // Below the term, or above it when the screen has more room there; as near its middle as
  // the screen's edges allow. The box scrolls with the page (absolute, in page coordinates).
  function place(term) {
    const r = term.getBoundingClientRect();
    box.style.left = "0px";
    box.style.top = "0px";
    const b = box.getBoundingClientRect();
    const header = document.querySelector(".md-header")?.getBoundingClientRect().bottom || 0;
    const below = innerHeight - r.bottom - GAP - MARGIN;
    const above = r.top - header - GAP - MARGIN;
    const top = below >= b.height || below >= above ? r.bottom + GAP : r.top - GAP - b.height;
    const width = document.documentElement.clientWidth;
    const left = Math.max(MARGIN, Math.min(r.left + r.width / 2 - b.width / 2, width - MARGIN - b.width));
    box.style.left = `${left + scrollX}px`;
    box.style.top = `${top + scrollY}px`;
    box.classList.toggle("book-term--above", top < r.top);
  }

  function show(term) {
    clearTimeout(leaving);
    if (shown === term) return;
    hide();
    made();
    // the browser's own tooltip would show the same words a second time
    term.dataset.bookTitle = term.getAttribute("title");
    term.removeAttribute("title");
    box.textContent = term.dataset.bookTitle;
    box.hidden = false;
    term.setAttribute("aria-describedby", box.id);
    shown = term;
    place(term);
  }

  function hide() {
    clearTimeout(leaving);
    if (!shown) return;
    shown.setAttribute("title", shown.dataset.bookTitle);
    delete shown.dataset.bookTitle;
    shown.removeAttribute("aria-describedby");
    box.hidden = true;
    shown = null;
  }

  function hideSoon() {
    clearTimeout(leaving);
    leaving = setTimeout(hide, 300);  // time to move the pointer onto the definition
  }

  document.addEventListener("focusin", (event) => {
    const term = termOf(event.target);
    if (term) show(term);
  });
  document.addEventListener("focusout", (event) => {
    if (shown && event.target === shown) hide();
  });
  document.addEventListener("click", (event) => {
    const term = termOf(event.target);
    if (term) show(term);
  });
  document.addEventListener("pointerdown", (event) => {
    if (shown && !shown.contains(event.target) && !box.contains(event.target)) hide();
  }, { passive: true });
  document.addEventListener("pointerover", (event) => {
    if (event.pointerType !== "mouse") return;
    const term = termOf(event.target);
    if (term) show(term);
  }, { passive: true });
  document.addEventListener("pointerout", (event) => {
    if (event.pointerType === "mouse" && shown && event.target === shown && !box.contains(event.relatedTarget)) hideSoon();
  }, { passive: true });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && shown) hide();
  });
  window.addEventListener("resize", () => { if (shown) place(shown); }, { passive: true });
  window.bookGlossary = { show, hide };
})();

// The edition menu (Material's version menu, filled from mike's versions.json) also offers this
// page's PDF edition, which the citation box links (numbook-pdf: data-pdf-edition). The menu is
// built after the page loads, and only in a mike deployment.
function addPdfToEditionMenu() {
  const list = document.querySelector(".md-version__list");
  if (!list || list.querySelector(".numbook-pdf-edition")) return Boolean(list);
  document.querySelectorAll("a[data-pdf-edition]").forEach((pdf) => {
    const item = document.createElement("li");
    item.className = "md-version__item numbook-pdf-edition";
    const link = document.createElement("a");
    link.className = "md-version__link";
    link.href = pdf.href;
    link.type = "application/pdf";
    link.textContent = pdf.dataset.pdfEdition;
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
