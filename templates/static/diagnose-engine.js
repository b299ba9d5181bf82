// The log-diagnosis engine of the page: the same matching, ranking and cross-rank reasoning as
// `encyclopedia diagnose` (generator/diagnosis.py and generator/ranks.py). Patterns, messages and
// the confidence table come from the page's data (generator/diagnosis.json), so both engines read
// them from one place; stored test vectors check they agree. It runs in a Web Worker, so a large
// log never freezes the page, and is also loaded by the page itself (for drafts, and where
// workers are unavailable). It builds plain data only: nothing from a log is ever run as HTML.
"use strict";

function createDiagnosisEngine(data) {
  const R = data.rules;
  const P = R.patterns;
  const TAIL = 1 << 20;  // notable lines are looked for in the last TAIL characters of a log
  const CARRY = 1 << 20;  // the most of an unfinished line kept between chunks
  const LAUNCHER = new RegExp(P.launcher_rank);
  const SEEN = new RegExp("^" + P.seen_rank);
  const GROUP = new RegExp(P.group_rank);
  const LOOSE = new RegExp(P.loose_rank);
  const TIME = new RegExp(P.time);
  const WORLD = new RegExp(P.world_size);
  const NOTABLE = new RegExp(P.notable);
  const STARTUP = new RegExp(P.startup);
  const MEANINGFUL = new RegExp(P.meaningful);
  const FRAME = new RegExp(P.frame);
  const CARET = new RegExp(P.caret);
  const ANNOUNCED = new RegExp(P.announced_rank);
  const REPORTS = R.reports.map((r) => ({ re: new RegExp(r.pattern), fields: r.fields }));
  const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

  const byKey = new Map();
  for (const raw of data.signatures) {
    const sig = { slug: raw.slug, key: raw.key, re: raw.regex ? new RegExp(raw.regex) : null, role: raw.role,
      routine: raw.routine || 0, spec: raw.specificity,
      countsAs: raw.role === "root" && raw.routine ? "routine" : raw.role };  // generator/signatures.py line_role
    if (!byKey.has(sig.key)) byKey.set(sig.key, []);
    byKey.get(sig.key).push(sig);
  }
  const allKeys = [...new Set([...byKey.keys(), "world_size", "world size", R.announced_key, ...R.reports.map((r) => r.key)])];
  const keyPattern = allKeys.sort((a, b) => b.length - a.length).map(escape).join("|");
  const PREFILTER = new RegExp(keyPattern);
  const PREFILTER_ALL = new RegExp(keyPattern, "g");

  const firstGroup = (m) => (m ? m.slice(1).find((g) => g !== undefined) ?? null : null);
  const launcherRank = (line) => firstGroup(LAUNCHER.exec(line));
  const namedRank = (line) => firstGroup(GROUP.exec(line)) ?? firstGroup(LOOSE.exec(line));
  const lineRank = (line) => launcherRank(line) ?? namedRank(line);
  const fill = (template, values) => template.replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
  const message = (name, values) => fill(R.messages[name], values || {});
  const byInt = (a, b) => Number(a) - Number(b);
  const capital = (s) => s.charAt(0).toUpperCase() + s.slice(1);
  const shape = (s) => s.replace(/\d+/g, "");
  const cmp = (...keys) => (a, b) => {
    for (const f of keys) { const x = f(a), y = f(b); if (x < y) return -1; if (x > y) return 1; }
    return 0;
  };

  function rankList(ranks) {
    const nums = [...new Set([...ranks].map(Number))].sort((a, b) => a - b);
    if (nums.length === 1) return `rank ${nums[0]}`;
    const runs = [];
    for (const n of nums) {
      if (runs.length && n === runs[runs.length - 1][1] + 1) runs[runs.length - 1][1] = n;
      else runs.push([n, n]);
    }
    let parts = runs.flatMap(([a, b]) => (b > a + 1 ? [`${a}\u2013${b}`] : a === b ? [`${a}`] : [`${a}`, `${b}`]));
    if (parts.length > R.max_rank_parts) parts = parts.slice(0, R.max_rank_parts - 1).concat(["\u2026"]);
    const text = parts.length === 1 ? parts[0] : parts.slice(0, -1).join(", ") + " and " + parts[parts.length - 1];
    return `ranks ${text}` + (nums.length >= 3 ? ` (${nums.length.toLocaleString("en-US")})` : "");
  }

  // ---- reports across ranks (generator/ranks.py) ----

  function readReport(line, launcher) {
    for (const { re, fields } of REPORTS) {
      const m = re.exec(line);
      if (!m) continue;
      const tag = GROUP.exec(line);
      const group = tag && tag[1] !== undefined ? tag[1] : null;
      const rank = launcher ?? firstGroup(tag);
      if (rank === null) return null;
      const report = { group, rank, seq: null, op: null, enqueued: null, completed: null };
      fields.forEach((name, i) => {
        if (["seq", "enqueued", "completed"].includes(name)) report[name] = Number(m[i + 1]);
        else if (name === "op") report.op = m[i + 1];
      });
      return report;
    }
    return null;
  }

  function addReport(reports, report) {
    const key = report.group ?? "";
    if (!reports.byGroup.has(key)) reports.byGroup.set(key, new Map());
    const group = reports.byGroup.get(key);
    if (!group.has(report.rank)) { group.set(report.rank, report); return; }
    const known = group.get(report.rank);
    for (const name of ["seq", "op", "enqueued", "completed"]) if (known[name] === null) known[name] = report[name];
  }

  function mergedReports(reports) {
    const groups = new Map([...reports.byGroup].map(([g, r]) => [g, new Map(r)]));
    const unlabelled = groups.get("") || new Map();
    for (const [rank, report] of [...unlabelled]) {
      let twin = null;
      for (const [name, g] of groups) {
        if (name !== "" && g.has(rank) && (report.seq === null || report.seq === g.get(rank).seq)) { twin = g.get(rank); break; }
      }
      if (twin) { twin.op = twin.op || report.op; unlabelled.delete(rank); }
    }
    return new Map([...groups].filter(([, r]) => r.size));
  }

  const work = (r) => (r.seq !== null ? `SeqNum ${r.seq}` + (r.op ? ` ${r.op}` : "") : "a collective");
  const plural = (ranks) => {
    const one = ranks.length === 1;
    return { it_they: one ? "it" : "they", its_their: one ? "its" : "their", is_are: one ? "is" : "are", s: one ? "" : "s", them: one ? "it" : "them" };
  };

  const parts = (reports) => {  // "ranks 0 and 1 at SeqNum 7; rank 2 at SeqNum 8 BROADCAST", ordered by the lowest rank
    const works = new Map();
    for (const [rank, r] of reports) { const w = work(r); if (!works.has(w)) works.set(w, []); works.get(w).push(rank); }
    return [...works].sort(cmp(([, rs]) => Math.min(...rs.map(Number)))).map(([w, rs]) => `${rankList(rs)} at ${w}`).join("; ");
  };

  function judgeGroup(group, reports, seen, world, reported) {
    // Sequence numbers count per group: different operations at one number are a desync; a rank at
    // a lower number, or whose last enqueued work is below the others', fell behind them; the numbers do not say why.
    const seq = new Map([...reports].filter(([, r]) => r.seq !== null).map(([rank, r]) => [rank, r.seq]));
    const ops = new Map();
    for (const [rank, number] of seq) {
      const op = reports.get(rank).op;
      if (op) { if (!ops.has(number)) ops.set(number, new Set()); ops.get(number).add(op); }
    }
    if ([...ops.values()].some((o) => o.size > 1) || (group === "" && new Set(seq.values()).size > 1)) {
      const all = parts([...seq.keys()].map((rank) => [rank, reports.get(rank)]));
      if (group === "") return ["undetermined", message("group_unlabelled", { parts: all }), []];
      return ["desync", message("group_desync", { group_cap: `In process group ${group},`, parts: all }), []];
    }
    const top = seq.size ? Math.max(...seq.values()) : -1;  // sequence numbers start at 0
    const w = work({ seq: top < 0 ? null : top, op: ops.has(top) ? [...ops.get(top)][0] : null });  // one op at most: no desync
    const earlier = new Set([...seq].filter(([, number]) => number < top).map(([rank]) => rank));
    const never = [...reports].filter(([rank, r]) => !earlier.has(rank) && r.enqueued !== null && r.enqueued < top).map(([rank]) => rank);
    let sentence = message("group_agree", { who: capital(rankList([...reports.keys()].filter((r) => !earlier.has(r)))), work: w, group: group === "" ? "" : ` (process group ${group})` });
    if (never.length) {
      const enqueued = Math.min(...never.map((r) => reports.get(r).enqueued || 0));
      sentence += " " + message("lagging", { who: capital(rankList(never)), work: w, enqueued, ...plural(never) });
    }
    if (earlier.size) {
      sentence += " " + message("earlier", { who: capital(rankList(earlier)), parts: parts([...earlier].map((r) => [r, reports.get(r)])), ...plural([...earlier]) });
    }
    if (never.length || earlier.size) return ["lagging", sentence, [...never, ...earlier].sort(byInt)];
    const silent = group === "" || group === "0" ? [...seen].filter((r) => !reported.has(r)).sort(byInt) : [];  // a report in any group counts
    if (!silent.length) return ["agree", sentence, []];
    if (world !== null && Array.from({ length: world }, (_, i) => String(i)).every((r) => seen.has(r))) {
      return ["stuck", sentence + " " + message("silent_complete", { who: rankList(silent), ...plural(silent) }), silent];
    }
    return ["partial", sentence + " " + message("silent", { who: capital(rankList(silent)), ...plural(silent) }), []];
  }

  const PRIORITY = ["desync", "lagging", "stuck", "undetermined", "partial", "agree"];

  function crossRank(reports) {
    const groups = mergedReports(reports);
    if (!groups.size) return null;
    const cases = [], sentences = [], stuck = new Set(), detail = {};
    const reported = new Set([...groups.values()].flatMap((g) => [...g.keys()]));
    for (const group of [...groups.keys()].sort(cmp((g) => (g === "" ? -1 : Number(g))))) {
      const [c, sentence, blamed] = judgeGroup(group, groups.get(group), reports.seen, reports.world, reported);
      cases.push(c); sentences.push(sentence); blamed.forEach((r) => stuck.add(r));
      detail[group] = {};
      for (const [rank, r] of [...groups.get(group)].sort(([a], [b]) => byInt(a, b))) {
        detail[group][rank] = { seq: r.seq, op: r.op, enqueued: r.enqueued, completed: r.completed };
      }
    }
    const worst = cases.reduce((a, b) => (PRIORITY.indexOf(b) < PRIORITY.indexOf(a) ? b : a));
    return { case: worst, groups: detail, stuck_ranks: [...stuck].sort(byInt), summary: sentences.join(" ") };
  }

  // ---- scanning (generator/diagnosis.py) ----

  function newState() {
    return { hits: new Map(), reports: { byGroup: new Map(), seen: new Set(), world: null }, notable: [], stopped: null, cut: null,
      order: 0, windows: [0, 0], lines: 0, matchedLines: 0, line: null, counted: new Set(),
      announced: new Map() };  // "rank world" -> where a process announced that global rank
  }

  function* keyedPieces(state, line, lineNo) {
    if (line.length <= R.long_line) { if (PREFILTER.test(line)) yield line; return; }
    // A long line is looked at in windows around its keys, at most max_windows of them.
    PREFILTER_ALL.lastIndex = 0;
    let m;
    while ((m = PREFILTER_ALL.exec(line)) !== null) {
      const taken = state.windows[0] === lineNo ? state.windows[1] : 0;
      if (taken >= R.max_windows) return;
      const left = Math.max(0, m.index - R.window), right = Math.min(line.length, m.index + m[0].length + R.window);
      state.windows = [lineNo, taken + 1];
      yield line.slice(left, right);
      PREFILTER_ALL.lastIndex = right;
    }
  }

  function scanLine(state, source, line, lineNo) {
    const seen = SEEN.exec(line);
    if (seen) state.reports.seen.add(firstGroup(seen));
    for (const text of keyedPieces(state, line, lineNo)) scanPiece(state, source, text, lineNo);
  }

  const keyLength = (h) => Math.max(...h.evidence.map((e) => e.signature.length));  // how specific collateral evidence is
  // its root signature's, else its longest key (none when every signature it matched is a catch-all)
  const specificity = (h) => (h.root !== null ? h.rootSpec : h.spec ? keyLength(h) : 0);
  const newHits = (first) => ({ first, evidence: [], count: 0, lines: 0, roleLines: {}, ranks: new Set(), root: null, rootOrder: 0, rootSpec: 0,
    spec: 0, routineLines: 0, routineLimit: 0, unowned: 0 });

  // A catch-all root on a line that other entries' specific signatures match only as collateral is collateral
  // evidence there (the line still counts under its own role, as the exported mtail program counts it).
  function yieldCatchAlls(matched) {
    if (matched.some((s) => s.spec && s.role === "root")) return matched;
    const specific = new Set(matched.filter((s) => s.spec).map((s) => s.slug));
    return matched.map((s) => (s.spec === 0 && [...specific].some((o) => o !== s.slug) ? { ...s, role: "collateral" } : s));
  }

  function scanPiece(state, source, text, lineNo) {
    let matched = [];
    for (const [key, sigs] of byKey) {
      if (!text.includes(key)) continue;
      for (const sig of sigs) if (!sig.re || sig.re.test(text)) matched.push(sig);
    }
    const launcher = launcherRank(text);
    const report = readReport(text, launcher);
    const world = WORLD.exec(text);
    const announced = text.includes(R.announced_key) ? ANNOUNCED.exec(text) : null;
    if (announced) {
      const key = `${announced[1]} ${announced[2]}`;
      if (!state.announced.has(key)) state.announced.set(key, []);
      const time = TIME.exec(text);
      state.announced.get(key).push({ source, line: lineNo, rank: launcher ?? namedRank(text), time: time ? time[0] : null,
        text: text.trim().slice(0, R.max_text), signature: R.announced_key, role: "root" });
    }
    if (!matched.length && !report && !world) return;  // a key, but no signature's regex matched: nothing to learn
    state.order += 1;
    if (launcher !== null) state.reports.seen.add(launcher);
    if (report) addReport(state.reports, report);
    if (world) state.reports.world = Number(world[1]);
    const rank = launcher ?? namedRank(text);
    if (matched.some((s) => s.spec === 0)) matched = yieldCatchAlls(matched);
    const owned = matched.some((s) => s.role === "root");
    if (matched.length && state.line !== `${source}\n${lineNo}`) {  // windows of one long line count once
      state.line = `${source}\n${lineNo}`;
      state.counted = new Set();
      state.matchedLines += 1;
    }
    let lineEvidence = null;  // made once, and only when some entry keeps it
    for (const sig of matched) {
      if (!state.hits.has(sig.slug)) state.hits.set(sig.slug, newHits(state.order));
      const h = state.hits.get(sig.slug);
      h.count += 1;
      if (!state.counted.has(sig.slug)) h.lines += 1;
      if (!state.counted.has(`${sig.slug} ${sig.countsAs}`)) h.roleLines[sig.countsAs] = (h.roleLines[sig.countsAs] || 0) + 1;
      state.counted.add(sig.slug).add(`${sig.slug} ${sig.countsAs}`);
      if (!owned) h.unowned += 1;
      h.spec = Math.max(h.spec, sig.spec);  // of the most specific signature matched, whatever its role
      if (rank !== null) h.ranks.add(rank);
      if (sig.routine) { h.routineLines += 1; h.routineLimit = Math.max(h.routineLimit, sig.routine); }
      const isRoot = sig.role === "root" && (h.root === null || (h.rootOrder === state.order && sig.spec > h.rootSpec));
      if (!isRoot && h.evidence.length >= R.max_evidence) continue;
      if (lineEvidence === null) {
        const time = TIME.exec(text);
        lineEvidence = { source, line: lineNo, rank, time: time ? time[0] : null, text: text.trim().slice(0, R.max_text) };
      }
      const ev = { ...lineEvidence, signature: sig.key, role: sig.role };
      if (isRoot) { h.root = ev; h.rootOrder = state.order; h.rootSpec = sig.spec; }
      if (h.evidence.length < R.max_evidence) h.evidence.push(ev);
    }
  }

  function collectNotable(state, source, tail) {
    const lines = tail.split("\n");
    if (lines.length && lines[lines.length - 1] === "") lines.pop();
    const first = state.lines - lines.length + 1;
    lines.forEach((line, offset) => {
      if (line.length > R.long_line || !NOTABLE.test(line)) return;
      const text = line.trim().slice(0, R.max_text);
      state.notable = state.notable.filter((n) => shape(n.text) !== shape(text));
      state.notable.push({ source, line: first + offset, rank: lineRank(line), text });
      if (state.notable.length > R.max_notable) state.notable.shift();
    });
  }

  function noteStop(state, source, tail) {  // where a log was cut: during start-up, or inside a traceback (_note_stop)
    const lines = tail.split("\n");
    if (tail.endsWith("\n")) lines.pop();
    const last = [];  // [back, line] of the last three meaningful lines, newest first
    for (let back = 0; back < lines.length && last.length < 3; back++) {
      if (MEANINGFUL.test(lines[lines.length - 1 - back])) last.push([back, lines[lines.length - 1 - back]]);
    }
    const at = ([back, line]) => ({ source, line: state.lines - back, rank: lineRank(line), text: line.trim().slice(0, R.max_text) });
    const texts = last.map(([, line]) => line);
    if (texts.length && texts[0].length <= R.long_line && STARTUP.test(texts[0])) state.stopped = at(last[0]);
    if (!texts.length || texts.some((line) => line.length > R.long_line)) return;
    // Below a traceback's last frame come its source line and, from Python 3.11, carets; never the error line.
    const frame = texts.findIndex((line) => FRAME.test(line));
    if (frame === 0 || (frame === 1 && !NOTABLE.test(texts[0])) || (frame === 2 && CARET.test(texts[0]) && !NOTABLE.test(texts[1]))) {
      state.cut = at(last[frame ? frame - 1 : 0]);
    }
  }

  function stoppedAt(last) {
    if (last === null || !(R.stopped_entry in data.entries)) return null;
    const title = entry(R.stopped_entry).title;
    return { slug: R.stopped_entry, title, source: last.source, line: last.line, text: last.text,
      note: message("stopped", { where: place(last.source, last.line), text: last.text, title }) };
  }

  function cutAt(last) {  // _cut
    if (last === null) return null;
    return { source: last.source, line: last.line, text: last.text,
      note: message("cut", { where: place(last.source, last.line), text: last.text }) };
  }

  // ---- ranking (generator/diagnosis.py) ----

  const entry = (slug) => data.entries[slug];
  const causesOf = (slug) => entry(slug).caused_by || [];
  const isRoutine = (h) => h.routineLines === h.count && h.count <= h.routineLimit;

  function where(ev) {
    if (ev.signature === "cross-rank") return "the timeout reports of every rank";
    return place(ev.source, ev.line) + (ev.rank !== null ? " on rank " + ev.rank : "");
  }

  const place = (source, line) => (source !== "-" ? `${source}:${line}` : `line ${line}`);  // generator/diagnosis.py _place

  function rankCandidates(state, cross) {
    const hits = new Map([...state.hits].filter(([, h]) => !isRoutine(h)));
    for (const h of hits.values()) {  // its only root lines are a routine message in routine numbers: no root evidence
      if (!h.roleLines.root && h.routineLines <= h.routineLimit) h.root = null;
    }
    const routine = [...state.hits].filter(([, h]) => isRoutine(h)).map(([slug, h]) => ({ slug, title: entry(slug).title, lines: h.lines,
      note: message(h.routineLimit >= R.routine_any ? "routine_any" : "routine", { count: h.lines, s: h.lines === 1 ? "" : "s", title: entry(slug).title, limit: h.routineLimit }) }));
    const derived = { ...crossRankEvidence(state, cross, hits), ...duplicateRankEvidence(state, hits) };
    const roots = [...hits.keys()].filter((s) => hits.get(s).root !== null);
    const causePresent = (s, among) => causesOf(s).some((c) => among.includes(c) && c !== s);  // _causes_present
    const present = (s) => causePresent(s, roots);
    const explained = new Set(roots.filter(present));
    roots.sort(cmp((s) => explained.has(s), (s) => hits.get(s).rootOrder, (s) => -hits.get(s).rootSpec, (s) => -hits.get(s).ranks.size,
      (s) => -hits.get(s).count, (s) => entry(s).id));
    const top = roots.length ? roots[0] : null;
    const causes = top ? causesOf(top) : [];
    // Nor does one whose cause printed only its routine lines here: those lines are what it left behind.
    const routineSlugs = routine.map((r) => r.slug);
    const collateral = [...hits.keys()].filter((s) => hits.get(s).root === null && hits.get(s).unowned && !causes.includes(s)
      && !causePresent(s, routineSlugs));
    const downstream = new Set(collateral.filter(present));
    collateral.sort(cmp((s) => !downstream.has(s), (s) => specificity(hits.get(s)) < R.specific, (s) => hits.get(s).first,
      (s) => -hits.get(s).spec, (s) => -hits.get(s).count, (s) => entry(s).id));
    const weak = new Set([...explained, ...downstream]);
    const candidates = roots.concat(collateral).map((slug) => candidate(slug, hits, roots, weak, derived[slug]));
    const possible = causes.filter((c) => !roots.includes(c)).slice(0, R.max_causes)
      .map((c) => ({ slug: c, id: entry(c).id, title: entry(c).title, look_for: entry(c).look_for || [], seen: hits.has(c) }));
    return { candidates, possible_causes: possible, routine, notable: state.notable, matched_lines: state.matchedLines,
      lines_by_entry: linesByEntry(state), stopped: candidates.length ? null : stoppedAt(state.stopped),
      cut: candidates.length ? null : cutAt(state.cut), cross_rank: cross };
  }

  function linesByEntry(state) {
    const sorted = (keys) => [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const out = {};
    for (const slug of sorted(state.hits.keys())) {
      const h = state.hits.get(slug);
      if (h.lines) out[slug] = Object.fromEntries(sorted(Object.keys(h.roleLines)).map((r) => [r, h.roleLines[r]]));
    }
    return out;
  }

  function crossRankEvidence(state, cross, hits) {
    const slug = cross ? { desync: R.desync_entry, stuck: R.stuck_entry }[cross.case] : undefined;
    if (!slug || !data.entries[slug]) return {};
    derivedRoot(state, hits, slug, cross.summary);
    return { [slug]: cross.summary };
  }

  function duplicateRankEvidence(state, hits) {  // generator/diagnosis.py _duplicate_rank_evidence
    if (!data.entries[R.duplicate_entry]) return {};
    const announced = new Map();  // ranks announced, by world size
    for (const key of state.announced.keys()) {
      const world = key.split(" ")[1];
      announced.set(world, (announced.get(world) || 0) + 1);
    }
    for (const [key, lines] of state.announced) {
      const [rank, world] = key.split(" ");
      if (lines.length > 1 && announced.get(world) < Number(world)) {
        const where = lines.slice(0, 2).map((e) => place(e.source, e.line)).join(", ");
        const summary = message("duplicate", { rank, world, count: lines.length, where, distinct: announced.get(world) });
        derivedRoot(state, hits, R.duplicate_entry, summary).evidence = lines.slice(0, R.max_evidence);
        return { [R.duplicate_entry]: summary };
      }
    }
    return {};
  }

  function derivedRoot(state, hits, slug, summary) {  // generator/diagnosis.py _derived_root
    const first = hits.size ? Math.min(...[...hits.values()].map((h) => h.first)) : state.order;
    if (!hits.has(slug)) hits.set(slug, newHits(first));
    const h = hits.get(slug);
    h.root = { source: "", line: 0, rank: null, time: null, text: summary.slice(0, R.max_text), signature: "cross-rank", role: "root" };
    h.rootOrder = first; h.rootSpec = R.specific;
    return h;
  }

  function candidate(slug, hits, roots, weak, crossSummary) {
    const h = hits.get(slug);
    const role = h.root !== null ? "root" : "collateral";
    const contested = roots.some((r) => r !== slug && !weak.has(r));
    const basis = [role, weak.has(slug) ? "explained" : "first", specificity(h) >= R.specific ? "specific" : "generic", contested ? "contested" : "alone"].join("-");
    return { slug, id: entry(slug).id, title: entry(slug).title, score: R.confidence[basis], role, evidence: h.evidence,
      explanation: explain(slug, h, hits, roots, crossSummary), matched_lines: h.lines, ranks: [...h.ranks].sort(byInt), basis };
  }

  function explain(slug, h, hits, roots, crossSummary) {
    if (crossSummary !== undefined) return message("cross_rank", { summary: crossSummary });
    const cause = roots.find((c) => c !== slug && causesOf(slug).includes(c));
    if (cause !== undefined) {
      return message("downstream", { title: entry(slug).title, ranks: h.ranks.size ? ` on ${rankList(h.ranks)}` : "",
        cause: entry(cause).title, where: where(hits.get(cause).root) });
    }
    if (h.root !== null) return message("root", { where: where(h.root) });
    return message("collateral", { ranks: h.ranks.size ? ` on ${rankList(h.ranks)}` : "" });
  }

  // ---- proposing an entry from a line (generator/scaffold.py fills the same template) ----

  const DRAFT_PREFIXES = R.draft_prefixes.map((p) => new RegExp(p));

  function signatureKey(line) {
    let text = line.trim();
    for (const prefix of DRAFT_PREFIXES) text = text.replace(prefix, "");
    const number = text.slice(20).search(/\d/);
    if (number >= 0) text = text.slice(0, 20 + number);
    return text.slice(0, 120).replace(/[ :=,([{'"]+$/, "") || line.trim().slice(0, 120);
  }

  const slugFromTitle = (title) => title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 80).replace(/^-+|-+$/g, "");

  function draftEntry(line, today) {
    const key = signatureKey(line);
    const signatures = "signatures:\n" +
      `  - key: ${JSON.stringify(key)}\n` +
      "    role: root  # root: this message names the failure; collateral: other ranks print it because of it\n" +
      "    examples:\n" +
      `      - ${JSON.stringify(line.trim())}`;
    const title = key.slice(0, 80);
    return { slug: slugFromTitle(title), text: fill(data.draft.template, { id: data.draft.next_id, title: JSON.stringify(title),
      category: data.draft.category, today, signatures }) };
  }

  // ---- reading ----

  const stripCR = (line) => (line.endsWith("\r") ? line.slice(0, -1) : line);

  // Whether a physical line of a paste wrapped at `width` goes on in the next one (see "wrap" in diagnosis.json).
  function continues(line, after, width) {
    return line.length === width && !line.endsWith("  ") && after !== "" && after.slice(0, 4) !== line.slice(0, 4);
  }

  // The width a paste was hard-wrapped at, judged from its first lines, or null.
  function wrapWidth(sample) {
    const lines = sample.split("\n", R.wrap.sample_lines + 1).slice(0, -1).map(stripCR);  // whole lines only
    const long = lines.map((l) => l.length).filter((n) => n >= R.wrap.min_width);
    if (!long.length) return null;
    const counts = new Map();
    for (const n of long) counts.set(n, (counts.get(n) || 0) + 1);
    let width = null, count = 0;
    for (const [n, c] of counts) if (c > count) { width = n; count = c; }  // on a tie, the length seen first
    const pieces = new Set();
    for (let i = 0; i + 1 < lines.length; i++) if (continues(lines[i], lines[i + 1], width)) pieces.add(lines[i]);
    const wrapped = width === Math.max(...long) && count >= R.wrap.share * long.length && pieces.size >= R.wrap.min_lines;
    return wrapped ? width : null;
  }

  // The chunks of a log; those of a hard-wrapped paste with its lines joined again.
  async function* unwrapped(chunks) {
    const iterator = (chunks[Symbol.asyncIterator] || chunks[Symbol.iterator]).call(chunks);
    let sample = "", lines = 0, done = false;
    while (lines <= R.wrap.sample_lines && sample.length < R.wrap.sample_chars) {
      const next = await iterator.next();
      if (next.done) { done = true; break; }
      sample += next.value;
      lines += next.value.split("\n").length - 1;
    }
    async function* rest() {
      if (done) return;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    }
    const width = wrapWidth(sample);
    if (width === null) { yield sample; yield* rest(); return; }
    let held = null, carry = "";
    const join = (text) => {
      const whole = text.split("\n");
      carry = whole.pop();
      let out = "";
      for (const line of whole) {
        if (held !== null) out += continues(stripCR(held), stripCR(line), width) ? stripCR(held) : held + "\n";
        held = line;
      }
      return out;
    };
    yield join(sample);
    for await (const chunk of rest()) yield join(carry + chunk);
    yield (held !== null ? held + "\n" : "") + carry;
  }

  async function diagnoseSources(sources) {
    const state = newState();
    let total = 0;
    for (const { name, chunks } of sources) {
      let carry = "", tail = "", lineNo = 0;
      state.lines = 0;
      for await (const chunk of unwrapped(chunks)) {
        tail = (tail + chunk).slice(-TAIL);
        const text = carry + chunk;
        const lines = text.split("\n");
        carry = lines.pop();
        for (const line of lines) scanLine(state, name, line, ++lineNo);
        if (carry.length > CARRY) { scanLine(state, name, carry, lineNo + 1); carry = ""; }
      }
      if (carry) scanLine(state, name, carry, ++lineNo);
      state.lines = lineNo;
      total += lineNo;
      collectNotable(state, name, tail);
      noteStop(state, name, tail);
    }
    return { ...rankCandidates(state, crossRank(state.reports)), lines: total };
  }

  async function* fileChunks(file) {
    const decoder = new TextDecoder("utf-8");  // invalid bytes become U+FFFD
    const size = 4 << 20;
    for (let offset = 0; offset < file.size; offset += size) {
      yield decoder.decode(await file.slice(offset, offset + size).arrayBuffer(), { stream: true });
    }
    yield decoder.decode();
  }

  return { diagnoseSources, draftEntry, fileChunks, entry, message };
}

// In a worker: answer {id, data, sources: [{name, text} | {name, chunks} | {name, file}]} with {id, result} or {id, error}.
if (typeof WorkerGlobalScope !== "undefined" && self instanceof WorkerGlobalScope) {
  let engine = null;
  self.onmessage = async (event) => {
    const { id, data, sources } = event.data;
    try {
      engine ??= createDiagnosisEngine(JSON.parse(data));
      const readable = sources.map((s) => ({ name: s.name, chunks: s.file ? engine.fileChunks(s.file) : s.chunks }));
      self.postMessage({ id, result: await engine.diagnoseSources(readable) });
    } catch (error) {
      self.postMessage({ id, error: String(error) });
    }
  };
}
