// Search: pasted error strings are matched against the entries' error signatures
// first (numbers, ranks and addresses normalised away), then Pagefind's full-text
// index. Results are built with textContent only. Also routes the home page's one
// box: a multi-line paste goes to the in-browser diagnosis, without leaving the browser.
"use strict";

(function () {
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

  const results = document.getElementById("search-results");
  if (!results) return;

  const PREFIX = /^\s*(?:\[(?:rank|default)\d+\]:\s*)?(?:\[[A-Z]\d{4} [\d:.]+ [^\]]*\]\s*)?/;
  const normalise = (s) => s.replace(PREFIX, "").toLowerCase()
    .replace(/0x[0-9a-f]+/g, "0x").replace(/\d+(?:\.\d+)?/g, "0").replace(/\s+/g, " ").trim();
  const words = (s) => new Set((s.toLowerCase().match(/[a-z][a-z0-9_]{2,}/g) || []));

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (cls) node.className = cls;
    return node;
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
    results.replaceChildren();
    if (!query.trim()) return;
    const data = await (await fetch(root + "api/signatures.json")).json();
    const slugFromUrl = (url) => (url.match(/failures\/([a-z0-9-]+)\//) || [])[1];
    const bySignature = signatureMatches(data, query).filter((slug) => passes(data.entries[slug], filters));
    const list = el("ol", undefined, "search-list");
    for (const slug of bySignature) {
      const e = data.entries[slug];
      list.append(item(root + "failures/" + slug + "/", e.title, `${e.id} · matches an error signature`));
    }
    let pagefind = null;
    try { pagefind = await import(root + "pagefind/pagefind.js"); } catch (err) { pagefind = null; }
    if (pagefind) {
      await pagefind.options({ baseUrl: new URL(root, location.href).pathname });
      const text = query.replace(PREFIX, "").replace(/0x[0-9a-f]+|\d+/gi, " ").replace(/[^\w\s.-]+/g, " ");
      const found = await pagefind.search(text);
      for (const hit of found ? found.results.slice(0, 20) : []) {
        const doc = await hit.data();
        const slug = slugFromUrl(doc.url);
        if (!slug || bySignature.includes(slug) || !data.entries[slug] || !passes(data.entries[slug], filters)) continue;
        const excerpt = doc.excerpt.replace(/<[^>]*>/g, "");
        list.append(item(root + "failures/" + slug + "/", data.entries[slug].title, data.entries[slug].id, excerpt));
      }
    }
    results.append(el("p", list.children.length ? `${list.children.length} result${list.children.length > 1 ? "s" : ""}` : "No entry matches this search.", "meta"));
    if (list.children.length) results.append(list);
    if (!pagefind) results.append(el("p", "Full-text search is unavailable here (the site must be served over HTTP); only error signatures were searched.", "meta"));
  }

  const form = document.getElementById("search-form");
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
  window.encyclopediaSearch = search;  // used by the browser tests
  if (params.get("q")) run();
})();
