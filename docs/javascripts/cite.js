// Citation texts (numbook-cite) are written when the site is built, so the date they give for
// the reader's visit is the build's, named by each text's data-accessed attribute: put the
// reader's own date there (local calendar date, YYYY-MM-DD), and only where a visit date stands.
document$.subscribe(() => {
  const now = new Date();
  const today = [
    now.getFullYear(),
    String(now.getMonth() + 1).padStart(2, "0"),
    String(now.getDate()).padStart(2, "0"),
  ].join("-");
  document.querySelectorAll("code[data-accessed]").forEach((code) => {
    const built = code.dataset.accessed;
    code.textContent = code.textContent
      .replaceAll(`(accessed ${built})`, `(accessed ${today})`)
      .replace(new RegExp(`(urldate\\s*= \\{)${built}\\}`), `$1${today}}`);
    code.removeAttribute("data-accessed");
  });
});
