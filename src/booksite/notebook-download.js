// numbook-notebooks: the downloaded notebook learns where this site serves the wheel it installs.
// The published .ipynb holds the address known when the site was built (site_url, or a path
// relative to the notebook); a copy served elsewhere (a local build, a mirror) would send the
// reader there. On click, the notebook is fetched, that address replaced by the wheel's URL as
// this page sees it, and the result saved under the same name. Without JavaScript, or if the
// fetch fails, the link downloads the published file as it is.
document.addEventListener("click", async (event) => {
  const link = event.target.closest("a[data-numbook-wheel]");
  if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  try {
    const response = await fetch(link.href);
    if (!response.ok) throw new Error(`${response.status} ${link.href}`);
    const wheel = new URL(link.dataset.numbookWheel, document.baseURI).href;
    // both addresses as they appear inside the notebook's JSON strings
    const [baked, served] = [link.dataset.numbookBaked, wheel].map((url) => JSON.stringify(url).slice(1, -1));
    const text = (await response.text()).split(baked).join(served);
    const save = document.createElement("a");
    save.href = URL.createObjectURL(new Blob([text], { type: "application/x-ipynb+json" }));
    save.download = link.getAttribute("download");
    document.body.append(save);
    save.click();
    save.remove();
    setTimeout(() => URL.revokeObjectURL(save.href), 10000);
  } catch (error) {
    console.warn("numbook: downloading the notebook as published:", error);
    window.location.href = link.href;
  }
});
