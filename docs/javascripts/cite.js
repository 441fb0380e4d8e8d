// Citation texts (numbook-cite) are written when the site is built, so the date a reader
// accessed the page is a placeholder, named by each text's data-accessed attribute: put the
// reader's own date there (local calendar date, YYYY-MM-DD).
document$.subscribe(() => {
  const now = new Date();
  const today = [
    now.getFullYear(),
    String(now.getMonth() + 1).padStart(2, "0"),
    String(now.getDate()).padStart(2, "0"),
  ].join("-");
  document.querySelectorAll("code[data-accessed]").forEach((code) => {
    code.textContent = code.textContent.replaceAll(code.dataset.accessed, today);
    code.removeAttribute("data-accessed");
  });
});
