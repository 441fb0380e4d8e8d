// numbook-lean: a folded <details> keeps its content as text, in a
// <script type="text/html" data-numbook-fold>, until it is needed. Put it in place when the
// reader opens the fold (the click comes before the fold is drawn open; toggle catches folds
// opened any other way) and before the page is printed. (A fold with an id inside is never
// held back: a link may point there.)
(() => {
  const FOLD = "script[data-numbook-fold]";

  // The page's other scripts set up what they find at load; they hear of new content by
  // this event, sent from the fold that now shows it.
  function put(held) {
    const details = held.parentElement;
    const parsed = document.createElement("template");
    parsed.innerHTML = held.text;
    held.replaceWith(parsed.content);
    details.dispatchEvent(new CustomEvent("numbook:unfold", { bubbles: true }));
  }

  function unfold(details) {
    const held = details.querySelector(`:scope > ${FOLD}`);
    if (held) put(held);
  }

  function unfoldAll() {
    // content of one fold can hold another: repeat until none is left
    for (let held = document.querySelector(FOLD); held; held = document.querySelector(FOLD)) {
      put(held);
    }
  }

  document.addEventListener("click", (event) => {
    const summary = event.target.closest?.("summary");
    if (summary?.parentElement?.tagName === "DETAILS") unfold(summary.parentElement);
  }, true);
  // toggle does not bubble, but it does pass the document on its way down
  document.addEventListener("toggle", (event) => {
    if (event.target.open) unfold(event.target);
  }, true);
  window.addEventListener("beforeprint", () => unfoldAll());
  document.querySelectorAll("details[open]").forEach(unfold);
  // for a script that changes what a closed fold holds (a widget's data table)
  window.numbookLean = { unfold };
})();
