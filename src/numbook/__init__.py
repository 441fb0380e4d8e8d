"""numbook: run a book page's Python blocks at build time and put their outputs in the page."""
