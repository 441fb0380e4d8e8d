// A chapter on paper: light colours, every figure, the address behind each link, and every
// widget as the page first showed it. Browsers announce printing with beforeprint and
// afterprint (Chromium's print-to-PDF too); afterwards the reader's screen is put back.
(() => {
  let restore = [];

  // Where a link leads, in full, in this edition: relative links resolve against the
  // page's permanent address (its citation_public_url) rather than the host it is read on.
  function linkTargets(article) {
    const base = document.querySelector('meta[name="citation_public_url"]')?.content || location.href;
    article.querySelectorAll("a[href]:not(.headerlink)").forEach((link) => {
      const href = link.getAttribute("href");
      if (href.startsWith("#") || href.startsWith("javascript:") || link.closest("pre, code")) return;
      const target = new URL(href, base).href;
      if (link.textContent.trim() === target) return;
      link.dataset.printHref = target;
    });
  }

  // Form controls in the page (widgets, tabs) back to the values the page was served with,
  // telling their listeners, so that what is printed is what every reader first sees.
  // Returns how to put the reader's values back.
  function defaultControls(article) {
    const announce = (control) => {
      control.dispatchEvent(new Event("input", { bubbles: true }));
      control.dispatchEvent(new Event("change", { bubbles: true }));
    };
    const controls = [...article.querySelectorAll("input, select, textarea")];
    const toggles = controls.filter((c) => c.type === "radio" || c.type === "checkbox");
    const values = controls.filter((c) => !toggles.includes(c));
    // A radio button is changed by checking another of its group: only checked ones are set.
    const readerChecked = toggles.filter((c) => c.checked);
    const readerUnchecked = toggles.filter((c) => c.type === "checkbox" && !c.checked);
    const readerValues = values.map((c) => [c, c.tagName === "SELECT" ? [...c.options].map((o) => o.selected) : c.value]);
    const changed = new Set();
    toggles.forEach((c) => {
      if (c.checked !== c.defaultChecked) changed.add(c);
    });
    toggles.filter((c) => c.defaultChecked).forEach((c) => { c.checked = true; });
    toggles.filter((c) => c.type === "checkbox" && !c.defaultChecked).forEach((c) => { c.checked = false; });
    values.forEach((c) => {
      if (c.tagName === "SELECT") {
        const before = c.value;
        [...c.options].forEach((o) => { o.selected = o.defaultSelected; });
        if (c.value !== before) changed.add(c);
      } else if (c.value !== c.defaultValue) {
        c.value = c.defaultValue;
        changed.add(c);
      }
    });
    [...changed].filter((c) => c.type !== "radio" || c.checked).forEach(announce);
    return () => {
      if (!changed.size) return;
      readerValues.forEach(([c, value]) => {
        if (c.tagName === "SELECT") [...c.options].forEach((o, k) => { o.selected = value[k]; });
        else c.value = value;
      });
      readerUnchecked.forEach((c) => { c.checked = false; });
      readerChecked.forEach((c) => { c.checked = true; });
      [...changed].filter((c) => c.type !== "radio" || c.checked).forEach(announce);
    };
  }

  addEventListener("beforeprint", () => {
    const article = document.querySelector("article") || document.body;
    const body = document.body;
    const scheme = body.getAttribute("data-md-color-scheme");
    body.setAttribute("data-md-color-scheme", "default");
    // Figures load lazily, when they near the screen: ask for all of them now.
    document.querySelectorAll('img[loading="lazy"]').forEach((image) => { image.loading = "eager"; });
    linkTargets(article);
    const undoControls = defaultControls(article);
    restore = [() => scheme && body.setAttribute("data-md-color-scheme", scheme), undoControls];
  });

  addEventListener("afterprint", () => {
    restore.forEach((undo) => undo());
    restore = [];
  });
})();
