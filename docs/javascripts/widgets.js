// The book's one widget mechanism ("How this book is built", section Widgets).
// A page's blocks declare widgets with numbook.api.switch / compute: each is a
// <div data-numbook-widget="KIND" data-src="data/NAME.json"> holding the default state as
// plain HTML. This script reads the JSON and replaces that default by controls; without
// it the default numbers stay, computed at build time like every other number.
(() => {
  "use strict";
  const MINUS = "\u2212";
  const SUPERSCRIPT = { "-": "⁻", 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹" };

  // The book's number rule (numbook.format): fixed decimals, a real minus sign, scientific
  // notation for values that would read as zero or are huge, never "−0.000".
  function formatNumber(x, decimals) {
    if (Number.isNaN(x)) return "NaN";
    if (!Number.isFinite(x)) return x > 0 ? "∞" : MINUS + "∞";
    const sign = x < 0 ? MINUS : "";
    const a = Math.abs(x);
    if (a !== 0 && (a < 10 ** -decimals || a >= 1e15)) {
      let [mantissa, exponent] = a.toExponential(decimals).split("e");
      if (mantissa.includes(".")) mantissa = mantissa.replace(/0+$/, "").replace(/\.$/, "");
      return sign + mantissa + "×10" + String(Number(exponent)).replace(/[-0-9]/g, (c) => SUPERSCRIPT[c]);
    }
    const text = a.toFixed(decimals);
    return /^[0.]+$/.test(text) ? text : sign + text;
  }

  // Compute widgets: name -> (inputs, params) => {columns: [array per output column],
  // scalars: [number per scalar]}, in the order the page's compute(...) call lists them.
  // Add a function here, call compute(function="name", ...) in a page, and test it against
  // the engine in tests/site/test_widgets.py.
  const functions = {
    // LayerNorm of one row with gamma = 1 and beta = 0, as the page writes it (and as
    // tinyformer.nn.layernorm_forward computes it): mean, centred values, population
    // variance, then (x - mean) / sqrt(var + eps). Columns: x - mean and the normalised
    // values; scalars: mean, variance and the denominator sqrt(var + eps).
    layernorm(x, params) {
      const n = x.length;
      const mean = x.reduce((a, b) => a + b, 0) / n;
      const centred = x.map((v) => v - mean);
      const variance = centred.reduce((a, c) => a + c * c, 0) / n;
      const denominator = Math.sqrt(variance + params.eps);
      return { columns: [centred, centred.map((c) => c * (1 / denominator))], scalars: [mean, variance, denominator] };
    },
    // Softmax of scores, written as the page writes it: exp(s - max) / sum. Columns:
    // exp(s - max) and the weights; scalars: the weights' mixture of params.values rows.
    softmax(scores, params) {
      const top = Math.max(...scores);
      const exps = scores.map((s) => Math.exp(s - top));
      const total = exps.reduce((a, b) => a + b, 0);
      const weights = exps.map((e) => e / total);
      const rows = params.values || [];
      const width = rows.length ? rows[0].length : 0;
      const mixture = Array.from({ length: width }, (_, c) => weights.reduce((sum, w, j) => sum + w * rows[j][c], 0));
      return { columns: [exps, weights], scalars: mixture };
    },
  };

  const element = (tag, attributes = {}, text = null) => {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, value);
    if (text !== null) el.textContent = text;
    return el;
  };
  let counter = 0;
  const uid = (prefix) => `${prefix}-${++counter}`;

  // A table in a box that scrolls sideways on a phone, reachable and named for the keyboard.
  // It opens at its first columns, as the page's other tables do; when it is wider than the
  // box it says so, and keeps its row labels in view while it scrolls (book.js, book.css).
  // The cell the prose names is marked wherever it is.
  function scrollBox(label, table) {
    const box = element("div", { class: "numbook-widget-scroll", tabindex: "0", role: "region", "aria-label": label });
    box.append(table);
    window.bookWatchScroll?.(box);
    return box;
  }

  // Each table keeps the number the page gave the default table it replaces (numbook-lean
  // numbers a page's tables): its box is named by it, "Sentence: Table 18", as book.js names
  // the page's other tables, so that no two regions share a name when two widgets share a
  // label (axe: landmark-unique).
  function tableNumbers(root, tables) {
    const given = [...root.querySelectorAll("table[data-numbook-table]")].map((t) => t.dataset.numbookTable);
    return tables.map((table, k) => {
      if (given[k]) table.dataset.numbookTable = given[k];
      return given[k] ? `Table ${given[k]}` : `table ${k + 1}`;
    });
  }

  function tableHead(table, header, align, index) {
    const row = table.createTHead().insertRow();
    header.forEach((h, j) => {
      const cell = element("th", { scope: "col", style: `text-align: ${align[j]}` }, h);
      // the header over the row labels is never empty: a screen reader names a column by it
      if (index && j === 0 && !h) cell.append(element("span", { class: "numbook-sr-only" }, "row"));
      row.append(cell);
    });
  }

  // ---- switch: variants computed at build time --------------------------------------------

  const groups = new Map(); // group -> [{select(key)}]
  const groupChoice = new Map(); // group -> the key the reader last chose (a late widget follows it)
  const variantFiles = new Map(); // url -> Promise of a figure's variants index
  const variantIndexes = new Map(); // url -> that index, once loaded: later swaps happen at once

  function fillTable(table, spec, note) {
    table.replaceChildren();
    tableHead(table, spec.header, spec.align, spec.index);
    const body = table.createTBody();
    const noted = [];
    spec.rows.forEach((cells, i) => {
      const row = body.insertRow();
      cells.forEach((text, j) => {
        const isIndex = spec.index && j === 0;
        const cell = element(isIndex ? "th" : "td", { style: `text-align: ${spec.align[j]}` }, text);
        if (isIndex) cell.setAttribute("scope", "row");
        if (spec.named && spec.named[0] === i && spec.named[1] === j) cell.classList.add("numbook-named");
        const explanation = spec.notes && !isIndex ? spec.notes[i][spec.index ? j - 1 : j] : null;
        if (explanation) {
          cell.dataset.note = explanation;
          cell.tabIndex = -1;
          cell.dataset.row = i;
          cell.dataset.col = j;
          noted.push(cell);
        }
        row.append(cell);
      });
    });
    if (!noted.length) return;
    noted[0].tabIndex = 0; // one stop for Tab; arrow keys move between the cells
    const show = (cell) => {
      table.querySelectorAll(".numbook-noted").forEach((c) => c.classList.remove("numbook-noted"));
      cell.classList.add("numbook-noted");
      note.textContent = cell.dataset.note;
    };
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    for (const cell of noted) {
      cell.addEventListener("focus", () => show(cell));
      cell.addEventListener("mouseenter", () => show(cell));
      cell.addEventListener("keydown", (event) => {
        const move = moves[event.key];
        if (!move) return;
        const [r, c] = [Number(cell.dataset.row), Number(cell.dataset.col)];
        const candidates = noted.filter((o) => (move[0] ? o.dataset.col == c && Math.sign(o.dataset.row - r) === move[0]
          : o.dataset.row == r && Math.sign(o.dataset.col - c) === move[1]));
        const key = move[0] ? "row" : "col";
        candidates.sort((a, b) => Math.abs(a.dataset[key] - cell.dataset[key]) - Math.abs(b.dataset[key] - cell.dataset[key]));
        if (!candidates.length) return;
        event.preventDefault();
        cell.tabIndex = -1;
        candidates[0].tabIndex = 0;
        candidates[0].focus();
      });
    }
  }

  async function showFigureVariant(id, key) {
    const figure = document.getElementById(id);
    const url = figure && figure.dataset.numbookVariants;
    if (!url) throw new Error(`figure ${id} has no variants`);
    const absolute = new URL(url, location.href);
    if (!variantIndexes.has(url)) {
      if (!variantFiles.has(url)) variantFiles.set(url, fetch(absolute).then((r) => r.json()));
      variantIndexes.set(url, await variantFiles.get(url));
    }
    // Synchronous from here on when the index was loaded before (print's return to the default).
    const variant = variantIndexes.get(url)[key];
    if (!variant) throw new Error(`figure ${id} has no variant ${key}`);
    // Beside the index, written as the page writes it (relative): a printout resolves links
    // against the edition's permanent address, not the host the page was read on.
    const file = (name) => url.replace(/[^/]*$/, "") + name;
    for (const img of figure.querySelectorAll("img")) {
      const dark = img.getAttribute("src").endsWith("#only-dark");
      img.src = file(dark ? variant.dark : variant.light) + (dark ? "#only-dark" : "#only-light");
      img.alt = variant.alt;
      // Each variant has its own size, and its own width below which it scrolls, not shrinks.
      if (variant.width) {
        img.width = variant.width;
        img.height = variant.height;
      }
      img.style.minWidth = variant.min_width ? `${variant.min_width}px` : "";
      const source = img.parentElement.matches("picture") ? img.parentElement.querySelector("source") : null;
      if (source && variant.narrow) {  // the phone layout of this variant
        source.srcset = file(dark ? variant.narrow.dark : variant.narrow.light);
        if (variant.narrow.width) {
          source.width = variant.narrow.width;
          source.height = variant.narrow.height;
        }
      }
    }
    const caption = figure.querySelector(".numbook-caption");
    if (caption) caption.textContent = variant.caption;
    let details = figure.nextElementSibling;  // the data fold, after the figure's code fold
    while (details && details.matches("details.numbook-code")) details = details.nextElementSibling;
    if (details && details.classList.contains("numbook-data")) {
      // a fold not opened yet keeps its content as text (numbook-lean): put it in place first
      window.numbookLean?.unfold(details);
      const table = details.querySelector("table");
      table.replaceChildren();
      tableHead(table, variant.header, variant.header.map(() => "left"));
      const body = table.createTBody();
      for (const cells of variant.rows) body.insertRow().append(...cells.map((c) => element("td", {}, c)));
      const link = details.querySelector("a[download]");
      if (link) {
        link.href = file(variant.csv);
        link.setAttribute("download", variant.csv);
      }
    }
  }

  function startSwitch(root, data) {
    const name = uid("numbook-switch");
    const fieldset = element("fieldset", { class: "numbook-switch" });
    fieldset.append(element("legend", {}, data.label));
    const radios = data.options.map(([key, label]) => {
      // The served choice is the default (the checked attribute), so that print can return to it.
      const input = element("input", { type: "radio", name, value: key, ...(key === data.default ? { checked: "" } : {}) });
      const wrap = element("label");
      wrap.append(input, element("span", {}, label));
      fieldset.append(wrap);
      return input;
    });
    const hasNotes = data.tables.some((t) => Object.values(t).some((spec) => spec.notes));
    const note = element("p", { class: "numbook-note", role: "status" },
      hasNotes ? "Focus or point at a number in the table to see how it was computed." : "");
    const tables = data.tables.map(() => element("table"));
    const numbers = tableNumbers(root, tables);
    root.replaceChildren(fieldset, ...tables.map((t, k) => scrollBox(`${data.label}: ${numbers[k]}`, t)));
    if (hasNotes) root.append(note);
    const member = {
      select(key) {
        radios.forEach((r) => { r.checked = r.value === key; });
        data.tables.forEach((variants, k) => fillTable(tables[k], variants[key], note));
        root.dataset.selected = key;
      },
      figures: data.figures,
    };
    if (!groups.has(data.group)) groups.set(data.group, []);
    groups.get(data.group).push(member);
    const chosen = groupChoice.get(data.group) ?? data.default;  // started after a choice: follow it
    member.select(chosen);
    if (chosen !== data.default) data.figures.forEach((id) => showFigureVariant(id, chosen));
    fieldset.addEventListener("change", (event) => selectInGroup(data.group, event.target.value));
  }

  async function selectInGroup(group, key) {
    groupChoice.set(group, key);
    const members = groups.get(group);
    members.forEach((m) => m.select(key));
    const figures = new Set(members.flatMap((m) => m.figures));
    await Promise.all([...figures].map((id) => showFigureVariant(id, key)));
  }

  // ---- compute: the browser evaluates a small formula as the reader types ----------------

  function startCompute(root, data) {
    const compute = functions[data.function];
    if (!compute) throw new Error(`no compute function "${data.function}"`);
    const fmt = (x) => formatNumber(x, data.decimals);
    selfCheck(data, compute);
    const table = element("table");
    const [number] = tableNumbers(root, [table]);
    const align = ["left", "right", ...data.columns.map(() => "right")];
    tableHead(table, ["", data.input_label, ...data.columns], align);
    const body = table.createTBody();
    const inputs = [];
    // Sliders stand in a list of their own above the table, each as wide as the column (a
    // thumb needs length to set a value); the table's input column repeats their values.
    const sliderList = data.control === "slider" ? element("div", { class: "numbook-sliders" }) : null;
    const outputCells = data.names.map((name, i) => {
      const row = body.insertRow();
      row.append(element("th", { scope: "row" }, name));
      const slider = data.control === "slider";
      const input = element("input", slider
        ? { type: "range", min: String(data.min), max: String(data.max), step: String(data.step),
          value: String(data.inputs[i]), "aria-label": `${data.input_label} for ${name}` }
        : { type: "number", step: String(data.step), value: String(data.inputs[i]), inputmode: "decimal",
          "aria-label": `${data.input_label} for ${name}` });
      inputs.push(input);
      const cell = element("td", { style: "text-align: right" });
      if (slider) {
        // the slider's value, written out: a range input shows no number of its own
        const places = Math.max(0, -Math.floor(Math.log10(data.step) + 1e-9));
        const value = element("output", { class: "numbook-slider-value", "aria-hidden": "true" });
        const copy = element("span", { class: "numbook-slider-copy" });
        const write = () => { value.textContent = copy.textContent = formatNumber(Number(input.value), places); };
        input.addEventListener("input", write);
        input.numbookWrite = write;
        write();
        const wrap = element("label", { class: "numbook-slider" });
        wrap.append(element("span", { class: "numbook-slider-name" }, name), value, input);
        sliderList.append(wrap);
        cell.append(copy);
      } else {
        cell.append(input);
      }
      row.append(cell);
      return data.columns.map((column) => {
        const out = element("td", { style: "text-align: right", "data-column": column });
        row.append(out);
        return out;
      });
    });
    const scalarTable = element("table");
    const scalarCells = data.scalars.map((label) => {
      const row = scalarTable.insertRow();
      row.append(element("th", { scope: "row" }, label));
      const cell = element("td", { style: "text-align: right", "data-scalar": label });
      row.append(cell);
      return cell;
    });
    const reset = element("button", { type: "button" }, "Back to the page's inputs");
    const status = element("p", { class: "numbook-note", role: "status" });
    root.replaceChildren(element("p", { class: "numbook-widget-label" }, data.label),
      ...(sliderList ? [sliderList] : []), scrollBox(`${data.label}: inputs and results, ${number}`, table));
    if (data.scalars.length) root.append(scalarTable);
    root.append(reset, status);

    const show = (cell, value, column) => {
      cell.dataset.value = String(value);
      cell.textContent = fmt(value);
      if (column === data.bar) {
        const bar = element("span", { class: "numbook-bar", "aria-hidden": "true" });
        bar.style.width = `${Math.max(0, Math.min(1, value)) * 100}%`;
        if (data.bar_color) bar.style.background = data.bar_color;
        const track = element("span", { class: "numbook-bar-track", "aria-hidden": "true" });
        track.append(bar);
        cell.prepend(track);
      }
    };
    const update = () => {
      const values = inputs.map((input) => (input.value.trim() === "" ? NaN : Number(input.value)));
      inputs.forEach((input, i) => input.setAttribute("aria-invalid", String(!Number.isFinite(values[i]))));
      if (!values.every(Number.isFinite)) {
        status.textContent = "Type a number in every box to see the results.";
        outputCells.flat().concat(scalarCells).forEach((c) => { c.textContent = "–"; delete c.dataset.value; });
        return;
      }
      const result = compute(values, data.params);
      outputCells.forEach((cells, i) => cells.forEach((cell, k) => show(cell, result.columns[k][i], data.columns[k])));
      scalarCells.forEach((cell, k) => show(cell, result.scalars[k]));
      const last = data.columns.length - 1;
      status.textContent = `${data.columns[last]}: ` + data.names.map((n, i) => `${n} ${fmt(result.columns[last][i])}`).join(", ")
        + (data.scalars.length ? "; " + data.scalars.map((s, k) => `${s} ${fmt(result.scalars[k])}`).join(", ") : "");
    };
    inputs.forEach((input) => input.addEventListener("input", update));
    reset.addEventListener("click", () => {
      inputs.forEach((input, i) => { input.value = String(data.inputs[i]); if (input.numbookWrite) input.numbookWrite(); });
      update();
    });
    update();
  }

  // The page carries the engine's outputs for the default inputs: the browser's formula
  // must give the same numbers, or the widget would show readers something else.
  function selfCheck(data, compute) {
    const got = compute(data.inputs, data.params);
    const want = [...data.columns.map((c) => data.expected.columns[c]), data.scalars.map((s) => data.expected.scalars[s])];
    const have = [...got.columns, got.scalars];
    const worst = Math.max(0, ...want.flatMap((col, k) => col.map((w, i) => Math.abs(have[k][i] - w) / Math.max(1, Math.abs(w)))));
    if (!(worst <= 1e-9)) throw new Error(`"${data.function}" differs from the engine by ${worst} at the default inputs`);
  }

  // ---- start every widget of the page ------------------------------------------------------

  const kinds = { switch: startSwitch, compute: startCompute };

  async function start(root) {
    root.dataset.numbookReady = "loading";
    try {
      const response = await fetch(root.dataset.src);
      if (!response.ok) throw new Error(`${root.dataset.src}: HTTP ${response.status}`);
      const data = await response.json();
      kinds[data.widget](root, data);
      root.dataset.numbookReady = "yes";
    } catch (error) {
      root.dataset.numbookReady = "failed"; // the build-time default stays on the page
      console.error(`widget ${root.id}: ${error.message}`);
    }
  }

  // A widget starts when it comes near the screen (its data fetched, its controls and tables
  // built): on a long chapter, building every widget at load was a tenth of a phone's work
  // before the page answered. Until then it shows the build's default numbers. `now` starts
  // every one at once (before printing is not needed: the defaults are what is printed).
  let watcher = null;
  function startAll(now = false) {
    const waiting = [...document.querySelectorAll(
      "[data-numbook-widget]:not([data-numbook-ready]), [data-numbook-widget][data-numbook-ready='waiting']")];
    if (now || !("IntersectionObserver" in window)) {
      waiting.forEach((root) => { watcher?.unobserve(root); start(root); });
      return;
    }
    watcher ??= new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        watcher.unobserve(entry.target);
        start(entry.target);
      }
    }, { rootMargin: "800px 0px" });
    waiting.forEach((root) => { root.dataset.numbookReady = "waiting"; watcher.observe(root); });
  }

  window.bookWidgets = { functions, formatNumber, startAll };
  // Material's document$ fires on every page it shows (instant loading or not); without it,
  // start once the document is parsed.
  if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(() => startAll());
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => startAll());
  else startAll();
})();
