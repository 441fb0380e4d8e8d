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

  // Form controls in the page (widgets, tabs) back to their default values, telling their
  // listeners, so that what is printed is what every reader first sees.
  function defaultControls(article) {
    const changed = [];
    article.querySelectorAll("input, select, textarea").forEach((control) => {
      if (control.type === "radio" || control.type === "checkbox") {
        if (control.checked !== control.defaultChecked) {
          changed.push([control, control.checked]);
          control.checked = control.defaultChecked;
        }
      } else if (control.tagName === "SELECT") {
        const value = control.value;
        [...control.options].forEach((option) => { option.selected = option.defaultSelected; });
        if (control.value !== value) changed.push([control, value]);
      } else if (control.value !== control.defaultValue) {
        changed.push([control, control.value]);
        control.value = control.defaultValue;
      }
    });
    const announce = (control) => {
      control.dispatchEvent(new Event("input", { bubbles: true }));
      control.dispatchEvent(new Event("change", { bubbles: true }));
    };
    changed.forEach(([control]) => announce(control));
    return () => changed.forEach(([control, value]) => {
      if (control.type === "radio" || control.type === "checkbox") control.checked = value;
      else control.value = value;
      announce(control);
    });
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
