// In-browser log diagnosis: the same matching and ranking as `encyclopedia diagnose`.
// The log never leaves the page: no request is made with it, and results are built
// with textContent only, so nothing from the log or the content is ever run as HTML.
"use strict";

(function () {
  const data = JSON.parse(document.getElementById("signature-data").textContent);
  const MAX_EVIDENCE = 8;
  const RANK = /^\[(?:rank|default)(\d+)\]:|\[Rank (\d+)\]|\b[Rr]ank[ =:]?(\d+)\b/;
  const RANK_PREFIX = /^\[(?:rank|default)(\d+)\]:/;
  const COLLECTIVE = /WorkNCCL\(SeqNum=(\d+), OpType=([A-Z_]+)/;
  const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

  const byKey = new Map();
  for (const sig of data.signatures) {
    sig.compiled = sig.regex ? new RegExp(sig.regex) : null;
    if (!byKey.has(sig.key)) byKey.set(sig.key, []);
    byKey.get(sig.key).push(sig);
  }
  const keys = [...byKey.keys()].sort((a, b) => b.length - a.length);
  const prefilter = keys.length ? new RegExp(keys.map(escape).join("|")) : /(?!)/;

  function rankOf(line) {
    const m = RANK.exec(line);
    return m ? (m[1] || m[2] || m[3]) : null;
  }

  function newState() {
    return { hits: new Map(), seen: new Set(), collectives: new Map(), order: 0, lineNo: 0 };
  }

  function scanLine(state, line) {
    state.lineNo += 1;
    const prefix = RANK_PREFIX.exec(line);
    if (prefix) state.seen.add(prefix[1]);
    if (!prefilter.test(line)) return;
    state.order += 1;
    const rank = rankOf(line);
    if (rank !== null) state.seen.add(rank);
    for (const [key, sigs] of byKey) {
      if (!line.includes(key)) continue;
      for (const sig of sigs) {
        if (sig.compiled && !sig.compiled.test(line)) continue;
        let h = state.hits.get(sig.slug);
        if (!h) { h = { evidence: [], firstRoot: null, root: null, spec: 0, first: state.order, count: 0, ranks: new Set() }; state.hits.set(sig.slug, h); }
        h.count += 1;
        if (rank !== null) h.ranks.add(rank);
        const ev = { line: state.lineNo, rank, text: line.trim().slice(0, 400), signature: sig.key, role: sig.role };
        if (sig.role === "root" && h.firstRoot === null) { h.firstRoot = state.order; h.root = ev; h.spec = sig.key.length + (sig.regex ? 20 : 0); }
        if (h.evidence.length < MAX_EVIDENCE) h.evidence.push(ev);
      }
    }
    const c = COLLECTIVE.exec(line);
    if (c && rank !== null) state.collectives.set(rank, [Number(c[1]), c[2]]);
  }

  const byInt = (a, b) => Number(a) - Number(b);
  const ranksText = (ranks) => ranks.size ? ` on rank${ranks.size > 1 ? "s" : ""} ${[...ranks].sort(byInt).join(",")}` : "";
  const where = (ev) => `line ${ev.line}${ev.rank !== null ? " on rank " + ev.rank : ""}`;

  function crossRank(state) {
    if (!state.collectives.size) return null;
    const groups = new Map();
    for (const rank of [...state.collectives.keys()].sort(byInt)) {
      const [seq, op] = state.collectives.get(rank);
      const k = `SeqNum=${seq} ${op}`;
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(rank);
    }
    const reporting = [...state.collectives.keys()].sort(byInt);
    const missing = [...state.seen].filter((r) => !state.collectives.has(r)).sort(byInt);
    if (groups.size > 1) {
      const parts = [...groups].sort().map(([k, r]) => `rank${r.length > 1 ? "s" : ""} ${r.join(",")} at ${k}`).join("; ");
      return { case: "desync", summary: `The ranks disagree on the collective they were waiting in (${parts}): they issued different collectives, which points to a desync or collective mismatch rather than a network fault.` };
    }
    const [k] = groups.keys();
    if (missing.length) {
      const who = missing.length === 1
        ? `rank ${missing[0]} printed output but never reported it, so it is the one stuck or dead: read its log first`
        : `ranks ${missing.join(",")} printed output but never reported it, so they are the ones stuck or dead: read their logs first`;
      return { case: "missing-ranks", summary: `Ranks ${reporting.join(",")} all timed out in ${k}; ${who}.` };
    }
    return { case: "agree", summary: `Every reporting rank (${reporting.join(",")}) timed out in the same collective, ${k}.` };
  }

  function rankCandidates(state, cross) {
    const hits = state.hits;
    const boosted = cross ? ({ desync: data.desync_entry, "missing-ranks": data.stuck_entry }[cross.case] || "") : "";
    const cmp = (...vals) => (a, b) => { for (const f of vals) { const x = f(a), y = f(b); if (x < y) return -1; if (x > y) return 1; } return 0; };
    const rooted = [...hits.keys()].filter((s) => hits.get(s).firstRoot !== null);
    // When one line is root evidence for two entries and one causes the other, the cause goes first.
    const effect = new Set(rooted.filter((s) => (data.entries[s].caused_by || [])
      .some((c) => rooted.includes(c) && hits.get(c).firstRoot === hits.get(s).firstRoot)));
    const roots = rooted.sort(cmp((s) => s !== boosted, (s) => hits.get(s).firstRoot, (s) => effect.has(s), (s) => -hits.get(s).spec, (s) => s));
    const downstream = new Set([...hits.keys()].filter((s) => (data.entries[s].caused_by || []).some((c) => roots.includes(c))));
    const others = [...hits.keys()].filter((s) => hits.get(s).firstRoot === null)
      .sort(cmp((s) => s !== boosted, (s) => !downstream.has(s), (s) => hits.get(s).first, (s) => -hits.get(s).count, (s) => s));
    if (boosted && data.entries[boosted] && !hits.has(boosted)) others.unshift(boosted);
    return roots.concat(others).map((slug, position) => {
      const h = hits.get(slug) || { evidence: [], firstRoot: null, root: null, ranks: new Set(), count: 0 };
      const role = h.firstRoot !== null ? "root" : "collateral";
      const score = Math.max(0.05, (role === "root" ? 0.95 : 0.5) - 0.05 * position).toFixed(2);
      return { slug, role, score, evidence: h.evidence, explanation: explain(slug, h, roots, slug === boosted ? cross : null) };
    });
  }

  function explain(slug, h, roots, cross) {
    const entry = data.entries[slug];
    if (cross) return cross.summary;
    if (h.root) return `Earliest root evidence: ${where(h.root)}.`;
    const causes = entry.caused_by || [];
    const present = roots.filter((r) => causes.includes(r));
    if (present.length) return `${entry.title}${ranksText(h.ranks)} is downstream of ${data.entries[present[0]].title} (${where(state.hits.get(present[0]).root)}).`;
    if (causes.length) return `Only collateral evidence${ranksText(h.ranks)}; look earlier in every rank's log for a cause such as: ${causes.slice(0, 3).map((c) => data.entries[c].title).join(", ")}.`;
    return `Only collateral evidence${ranksText(h.ranks)}.`;
  }

  let state = newState();

  async function diagnoseText(chunks) {
    state = newState();
    let carry = "";
    for await (const chunk of chunks) {
      const text = carry + chunk;
      const lines = text.split("\n");
      carry = lines.pop();
      for (const line of lines) scanLine(state, line);
    }
    if (carry) scanLine(state, carry);
    const cross = crossRank(state);
    return { cross, candidates: rankCandidates(state, cross) };
  }

  async function* fileChunks(file) {
    const decoder = new TextDecoder("utf-8");  // invalid bytes become U+FFFD
    const size = 4 << 20;
    for (let offset = 0; offset < file.size; offset += size) {
      yield decoder.decode(await file.slice(offset, offset + size).arrayBuffer(), { stream: true });
    }
    yield decoder.decode();
  }

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }

  function show(result, seconds) {
    const out = document.getElementById("diagnosis-result");
    out.replaceChildren();
    out.append(el("p", `Scanned ${state.lineNo.toLocaleString()} lines in ${seconds.toFixed(2)} s, in this browser.`, "meta"));
    if (!result.candidates.length) { out.append(el("p", "No known error signature matched this log.")); return; }
    if (result.cross) out.append(el("p", `Across ranks: ${result.cross.summary}`, "cross-rank"));
    const list = el("ol", undefined, "candidates");
    for (const c of result.candidates.slice(0, 10)) {
      const item = el("li");
      const head = el("p");
      const link = el("a", data.entries[c.slug].title);
      link.href = data.base + "failures/" + c.slug + "/";
      head.append(link, el("span", ` ${data.entries[c.slug].id} · ${c.role} · score ${c.score}`, "meta"));
      item.append(head, el("p", c.explanation));
      if (c.evidence.length) {
        const pre = el("pre", c.evidence.slice(0, 3).map((e) => `${e.line}${e.rank !== null ? " [rank " + e.rank + "]" : ""} ${e.role}: ${e.text}`).join("\n"), "log");
        item.append(pre);
      }
      list.append(item);
    }
    out.append(list);
  }

  async function run(chunks) {
    const start = performance.now();
    const result = await diagnoseText(chunks);
    show(result, (performance.now() - start) / 1000);
  }

  const form = document.getElementById("diagnose-form");
  const textarea = document.getElementById("log-text");
  const fileInput = document.getElementById("log-file");
  form.addEventListener("submit", (event) => { event.preventDefault(); run([textarea.value]); });
  fileInput.addEventListener("change", () => { if (fileInput.files.length) run(fileChunks(fileInput.files[0])); });
  const handoff = sessionStorage.getItem("diagnose-log");
  if (handoff) { sessionStorage.removeItem("diagnose-log"); textarea.value = handoff; run([handoff]); }
  document.getElementById("diagnose-js-note").hidden = true;
  form.hidden = false;
  window.encyclopediaDiagnose = diagnoseText;  // used by the browser tests
})();
