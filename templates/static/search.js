// Search: pasted error strings are matched against the entries' error signatures
// first (numbers, ranks and addresses normalised away), then Pagefind's full-text
// index; when neither finds anything, the query's distinctive words give the
// nearest entries, labelled as such (those of the pasted error's family first). The same ranking feeds /search/ and the
// header box's instant results (an ARIA combobox). Everything is built with
// textContent, and only this site's files are fetched. Also routes the home page's
// one box: a multi-line paste goes to the in-browser diagnosis, without leaving the browser.
"use strict";

(function () {
  // The home page includes this file itself and base.html includes it on every page.
  if (window.encyclopediaSearch) return;
  const root = document.documentElement.dataset.root || "./";

  const ask = document.getElementById("ask-form");
  if (ask) {
    ask.addEventListener("submit", (event) => {
      const text = ask.elements.q.value;
      if (text.trim().includes("\n")) {
        event.preventDefault();
        sessionStorage.setItem("diagnose-log", text);
        location.href = root + "diagnose/";
      }
    });
  }

  const PREFIX = /^\s*(?:\[(?:rank|default)\d+\]:\s*)?(?:\[[A-Z]\d{4} [\d:.]+ [^\]]*\]\s*)?/;
  const normalise = (s) => s.replace(PREFIX, "").toLowerCase()
    .replace(/0x[0-9a-f]+/g, "0x").replace(/\d+(?:\.\d+)?/g, "0").replace(/\s+/g, " ").trim();
  const words = (s) => new Set((s.toLowerCase().match(/[a-z][a-z0-9_]{2,}/g) || []));
  const slugFromUrl = (url) => (url.match(/failures\/([a-z0-9-]+)\//) || [])[1];

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }

  // Loaded once, on first use: the signature data and Pagefind (both same-origin).
  let dataPromise = null;
  let pagefindPromise = null;
  function loadData() {
    if (!dataPromise) {
      dataPromise = fetch(root + "api/signatures.json").then((r) => r.json());
      dataPromise.catch(() => { dataPromise = null; });
    }
    return dataPromise;
  }
  function loadPagefind() {
    if (!pagefindPromise) {
      // import() resolves against this script's address, not the page's: make it absolute.
      pagefindPromise = import(new URL(root + "pagefind/pagefind.js", location.href).href).then(async (pf) => {
        await pf.options({ baseUrl: new URL(root, location.href).pathname });
        await pf.init();
        return pf;
      }).catch(() => null);
    }
    return pagefindPromise;
  }

  function signatureMatches(data, query) {
    const nq = normalise(query);
    const qWords = words(query);
    const best = new Map();
    if (nq.length < 4) return [];
    for (const sig of data.signatures) {
      const nk = normalise(sig.key);
      let score = 0;
      if (nq.includes(nk)) score = nk.length;
      else if (nk.includes(nq) && nq.length >= 8) score = 0.8 * nq.length;
      else if (sig.regex && new RegExp(sig.regex).test(query)) score = nk.length;
      if (!score) continue;
      const entry = data.entries[sig.slug];
      const shared = [...words(entry.title)].filter((w) => qWords.has(w)).length;
      score += shared * 3 + (sig.role === "root" ? 2 : 0);
      if (score > (best.get(sig.slug) || 0)) best.set(sig.slug, score);
    }
    return [...best].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([slug]) => slug);
  }

  function passes(entry, filters) {
    return (!filters.category || entry.category === filters.category) && (!filters.severity || entry.severity === filters.severity);
  }

  const STOP = new Set(("the and for with was were has have had not but are this that from into after before while when then than " +
    "you your our its their there which who will would can could should may might been being does did got get set use used " +
    "using per via out all any some one two more most less also only just such other").split(" "));
  const EXTENSIONS = new Set(["py", "cpp", "cc", "cu", "cuh", "h", "hpp", "so", "json", "yaml", "yml", "log", "txt", "sh"]);
  const HOST = /^(?:\d{1,3}(?:\.\d{1,3}){3}|.*\.(?:com|org|net|io|ai|edu|gov|local|internal|lan|cluster|svc))$/i;
  const NUMBERED = /^(?:rank|local_rank|pid|node|gpu|cuda|device|worker|host|port|step|epoch|iter|seq|seqnum|tid)\d+$/i;

  function keepWord(word) {
    const digits = (word.match(/\d/g) || []).length;
    const letters = (word.match(/[a-z]/gi) || []).length;
    if (letters < 2 || digits > 2 || NUMBERED.test(word) || /^0x/i.test(word)) return false;
    if (STOP.has(word.toLowerCase()) || EXTENSIONS.has(word.toLowerCase())) return false;
    return letters >= 3 || word === word.toUpperCase();  // short words only as acronyms (OS, IB)
  }

  /** The query's distinctive words, in order: exception, library and error names without numbers, addresses, paths, hosts or ranks. */
  function distinctiveWords(query) {
    const out = [];
    for (let token of query.replace(PREFIX, "").split(/[\s,;:()[\]{}<>"'`=|!?*#@$%^&+~]+/)) {
      token = token.replace(/^[^\w]+|[^\w]+$/g, "");
      if (!token || /[/\\]/.test(token) || /^0x[0-9a-f]+$/i.test(token)) continue;  // paths, URLs, addresses
      if (token.includes(".")) {
        if (HOST.test(token) || token.split(".").some((part) => /\d/.test(part) && /[a-z-]/i.test(part))) continue;  // hostnames
        for (const part of token.split(".")) if (keepWord(part)) out.push(part);
        continue;
      }
      for (const part of token.split(/-+/)) if (keepWord(part)) out.push(part);
    }
    const seen = new Set();
    return out.filter((w) => !seen.has(w.toLowerCase()) && seen.add(w.toLowerCase())).slice(0, 10);
  }

  // Pagefind stems words and falls back to near spellings, so a hit may lack a word of the query
  // ("misaligned" finds "missing"). A hit counts as exact, and a word as found, only if the word,
  // or the word less a two-letter ending (timeouts, crashed), is in the page's text.
  const hasWord = (text, word) => text.includes(word) || (word.length > 5 && text.includes(word.slice(0, -2)));

  async function entriesFromHits(hits, data, filters, exclude, limit, required = []) {
    const found = [];
    for (const doc of await Promise.all(hits.slice(0, limit).map((hit) => hit.data()))) {
      const slug = slugFromUrl(doc.url);
      if (!slug || exclude.includes(slug) || found.some((f) => f.slug === slug) || !data.entries[slug] || !passes(data.entries[slug], filters)) continue;
      const text = required.length ? doc.content.toLowerCase() : "";
      if (!required.every((word) => hasWord(text, word))) continue;
      found.push({ slug, excerpt: doc.excerpt.replace(/<[^>]*>/g, "") });
    }
    return found;
  }

  function combinations(items, k) {
    if (k === 0) return [[]];
    if (items.length < k) return [];
    const [first, ...rest] = items;
    return combinations(rest, k - 1).map((c) => [first, ...c]).concat(combinations(rest, k));
  }

  // Pagefind ANDs words. So: drop the words no page has, then search the largest subsets of the
  // rest (rarest subsets first, within a budget); failing that, each word alone, pages ranked by
  // the summed rarity (idf) of the words they contain, which is an OR search.
  async function nearestEntries(pagefind, data, query, filters, limit) {
    const perWord = new Map();
    for (const word of distinctiveWords(query)) {
      const res = await pagefind.search(word);
      if (!res || !res.results.length) continue;
      const top = await res.results[0].data();  // a word only a near spelling matched is dropped
      if (hasWord(top.content.toLowerCase(), word.toLowerCase())) perWord.set(word, res.results);
    }
    const live = [...perWord.keys()];
    if (!live.length) return [];
    const pages = Math.max(...[...perWord.values()].map((r) => r.length)) + 1;
    const rarity = (word) => Math.log(1 + pages / perWord.get(word).length);
    const ranked = [];
    let budget = 30;
    for (let k = live.length; k >= 2 && budget > 0 && !ranked.length; k--) {
      const subsets = combinations(live, k).map((c) => [c, c.reduce((sum, w) => sum + rarity(w), 0)]).sort((a, b) => b[1] - a[1]);
      for (const [subset, weight] of subsets.slice(0, budget)) {
        budget--;
        const res = await pagefind.search(subset.join(" "));
        for (const hit of res ? res.results : []) ranked.push([hit, weight, hit.score]);
      }
    }
    if (!ranked.length) {
      const score = new Map();
      for (const [word, results] of perWord) {
        for (const hit of results) score.set(hit.id, [hit, (score.has(hit.id) ? score.get(hit.id)[1] : 0) + rarity(word), 0]);
      }
      ranked.push(...score.values());
    }
    ranked.sort((a, b) => b[1] - a[1] || b[2] - a[2]);
    const seen = new Set();
    const hits = ranked.map(([hit]) => hit).filter((hit) => !seen.has(hit.id) && seen.add(hit.id));
    const found = await entriesFromHits(hits, data, filters, [], limit * 3);
    const family = errorFamily(query);
    const inFamily = (f) => (family && data.entries[f.slug].title.toLowerCase().includes(family) ? 1 : 0);
    found.sort((a, b) => inFamily(b) - inFamily(a));  // a stable sort: entries of the pasted error's family first, in rank order
    return found.slice(0, limit);
  }

  // The error family a pasted message names before its first colon, after any exception class:
  // "RuntimeError: CUDA error: too many blocks ..." is of the family "cuda error".
  function errorFamily(query) {
    const match = query.replace(PREFIX, "").replace(/^[\w.]+(?:Error|Exception):\s*/, "").match(/^([a-z][\w ]{0,30}? error):/i);
    return match ? match[1].toLowerCase() : "";
  }

  /** The ranked entries for a query: signature matches, then Pagefind's; else the nearest ones, marked nearest. */
  const pagefindText = (query) => query.replace(PREFIX, "").replace(/0x[0-9a-f]+|\d+/gi, " ").replace(/[^\w\s.-]+/g, " ");

  async function rank(query, filters, limit, onSignatures) {
    const data = await loadData();
    const bySignature = signatureMatches(data, query).filter((slug) => passes(data.entries[slug], filters));
    const items = bySignature.map((slug) => ({ slug, entry: data.entries[slug], signature: true }));
    if (onSignatures && items.length) onSignatures({ items: items.slice(), nearest: false, pagefind: true });
    const pagefind = await loadPagefind();
    if (!pagefind) return { items, nearest: false, pagefind: false };
    const found = await pagefind.search(pagefindText(query));
    const required = distinctiveWords(query).map((w) => w.toLowerCase());
    for (const f of await entriesFromHits(found ? found.results : [], data, filters, bySignature, limit, required)) {
      items.push({ slug: f.slug, entry: data.entries[f.slug], excerpt: f.excerpt });
    }
    if (items.length) return { items, nearest: false, pagefind: true };
    const near = await nearestEntries(pagefind, data, query, filters, Math.min(limit, 8));
    return { items: near.map((f) => ({ slug: f.slug, entry: data.entries[f.slug], excerpt: f.excerpt })), nearest: true, pagefind: true };
  }

  // The diagnose page reads the query as a log (as the home box hands a paste over): nothing
  // leaves the browser, and an error line that matches no entry is offered there as a proposal.
  function proposeLine(query) {
    const p = el("p", "Nothing matches exactly? ", "meta propose");
    const a = el("a", "Propose an entry");
    a.href = root + "diagnose/";
    a.addEventListener("click", () => sessionStorage.setItem("diagnose-log", query));
    p.append(a);
    return p;
  }

  // ---- /search/ ----
  const results = document.getElementById("search-results");

  function item(href, title, meta, excerpt) {
    const li = el("li");
    const a = el("a", title);
    a.href = href;
    li.append(a);
    if (meta) li.append(el("span", " " + meta, "meta"));
    if (excerpt) li.append(el("p", excerpt));
    return li;
  }

  async function search(query, filters) {
    if (!results) return;
    results.replaceChildren();
    if (!query.trim()) return;
    const ranked = await rank(query, filters, 20);
    const list = el("ol", undefined, "search-list");
    for (const r of ranked.items) {
      const meta = r.signature ? `${r.entry.id} · matches an error signature` : r.entry.id;
      list.append(item(root + "failures/" + r.slug + "/", r.entry.title, meta, r.excerpt));
    }
    const n = list.children.length;
    if (ranked.nearest && n) results.append(el("p", "Nearest entries (no exact match)", "meta nearest"));
    else results.append(el("p", n ? `${n} result${n > 1 ? "s" : ""}` : "No entry matches this search.", "meta"));
    if (n) results.append(list);
    if (ranked.nearest || !n) results.append(proposeLine(query));
    if (!ranked.pagefind) results.append(el("p", "Full-text search is unavailable here (the site must be served over HTTP); only error signatures were searched.", "meta"));
  }
  window.encyclopediaSearch = search;  // used by the browser tests
  window.encyclopediaSearchWords = distinctiveWords;

  const form = document.getElementById("search-form");
  if (results && form) {
    const params = new URLSearchParams(location.search);
    for (const name of ["q", "category", "severity"]) {
      if (params.get(name) && form.elements[name]) form.elements[name].value = params.get(name);
    }
    const run = () => search(form.elements.q.value, { category: form.elements.category.value, severity: form.elements.severity.value });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const next = new URLSearchParams({ q: form.elements.q.value, category: form.elements.category.value, severity: form.elements.severity.value });
      history.replaceState(null, "", "?" + next.toString());
      run();
    });
    for (const name of ["category", "severity"]) form.elements[name].addEventListener("change", run);
    if (params.get("q")) run();
  }

  // ---- the header box: instant results in an ARIA combobox ----
  const box = document.getElementById("site-q");
  if (box && box.form) setUpCombobox(box, box.form);

  function setUpCombobox(input, headerForm) {
    const popup = el("div", undefined, "search-popup");
    popup.id = "site-q-popup";
    popup.hidden = true;
    const label = el("p", undefined, "meta popup-label");
    label.id = "site-q-label";
    const listbox = el("ul", undefined, "search-options");
    listbox.id = "site-q-listbox";
    listbox.setAttribute("role", "listbox");
    listbox.setAttribute("aria-label", "Matching entries");
    const footer = el("div");
    popup.append(label, listbox, footer);
    const status = el("p", undefined, "visually-hidden");
    status.setAttribute("role", "status");
    headerForm.append(popup, status);
    input.setAttribute("role", "combobox");
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-controls", listbox.id);
    input.setAttribute("aria-expanded", "false");
    input.setAttribute("autocomplete", "off");

    let active = -1;
    let options = [];
    let timer = 0;
    let generation = 0;

    function highlight(index) {
      options.forEach((o, i) => o.setAttribute("aria-selected", String(i === index)));
      active = index;
      if (index < 0) input.removeAttribute("aria-activedescendant");
      else {
        input.setAttribute("aria-activedescendant", options[index].id);
        options[index].scrollIntoView({ block: "nearest" });
      }
    }
    function close() {
      generation++;
      popup.hidden = true;
      input.setAttribute("aria-expanded", "false");
      highlight(-1);
    }
    function open(href) { location.href = href; }

    function render(ranked, resetHighlight) {
      options = ranked.items.slice(0, 8).map((r, i) => {
        const li = el("li", undefined, "search-option");
        li.id = "site-q-option-" + i;
        li.setAttribute("role", "option");
        li.setAttribute("aria-selected", "false");
        li.dataset.href = root + "failures/" + r.slug + "/";
        li.append(el("span", r.entry.title, "option-title"));
        const meta = r.signature ? `${r.entry.id} · matches an error signature` : r.excerpt ? `${r.entry.id} · ${r.excerpt}` : r.entry.id;
        li.append(el("span", meta, "meta option-meta"));
        li.addEventListener("mousedown", (event) => event.preventDefault());  // keep focus in the box
        li.addEventListener("click", () => open(li.dataset.href));
        return li;
      });
      listbox.replaceChildren(...options);
      listbox.hidden = !options.length;
      label.textContent = ranked.nearest && options.length ? "Nearest entries (no exact match)" : options.length ? "" : "No entry matches this search.";
      label.hidden = !label.textContent;
      footer.replaceChildren(...(ranked.nearest || !options.length ? [proposeLine(input.value)] : []));
      popup.hidden = false;
      input.setAttribute("aria-expanded", String(options.length > 0));
      // Signature matches show at once; Pagefind's results then extend the list, keeping the highlight.
      highlight(resetHighlight || active >= options.length ? -1 : active);
      status.textContent = options.length ? `${options.length} ${ranked.nearest ? "nearest entries" : "results"}; use the arrow keys` : "No entry matches";
    }

    async function update() {
      const query = input.value;
      const mine = ++generation;
      if (query.trim().length < 3) { close(); return; }
      let ranked;
      let shownEarly = false;
      const early = (partial) => { if (mine === generation) { render(partial, true); shownEarly = true; } };
      try { ranked = await rank(query, {}, 8, early); } catch (err) { return; }
      if (mine !== generation) return;  // a later keystroke or Escape won
      render(ranked, !shownEarly);
    }

    input.addEventListener("focus", () => { loadData().catch(() => null); loadPagefind(); }, { once: true });
    input.addEventListener("input", () => {
      // Fetch the index chunks for these words during the debounce, as Pagefind suggests.
      loadPagefind().then((pf) => pf && pf.preload(pagefindText(input.value))).catch(() => null);
      clearTimeout(timer);
      timer = setTimeout(update, 120);
    });
    input.addEventListener("keydown", (event) => {
      const expanded = !popup.hidden && options.length > 0;
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        if (popup.hidden) { if (input.value.trim()) update(); event.preventDefault(); return; }
        if (!expanded) return;
        event.preventDefault();
        const step = event.key === "ArrowDown" ? 1 : -1;
        const next = active + step;
        highlight(next < -1 ? options.length - 1 : next >= options.length ? -1 : next);
      } else if (event.key === "Enter" && expanded && active >= 0) {
        event.preventDefault();
        open(options[active].dataset.href);
      } else if (event.key === "Escape" && !popup.hidden) {
        event.preventDefault();
        clearTimeout(timer);
        close();
      }
    });
    headerForm.addEventListener("focusout", (event) => {
      if (!headerForm.contains(event.relatedTarget)) { clearTimeout(timer); close(); }
    });
  }
})();
