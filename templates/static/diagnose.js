// The log-diagnosis page: sends the pasted text or the chosen file to the engine
// (diagnose-engine.js) in a Web Worker and shows its answer. The log never leaves the page:
// no request is made with it, and results are built with textContent only, so nothing from
// the log or the content is ever run as HTML.
"use strict";

(function () {
  const raw = document.getElementById("signature-data").textContent;
  const data = JSON.parse(raw);
  const engine = createDiagnosisEngine(data);  // also on the page: drafts, messages, and the fallback
  const { draftEntry, entry, message } = engine;
  const workerUrl = new URL("diagnose-engine.js", document.currentScript.src);
  let worker = null;
  let asked = 0;
  const waiting = new Map();

  // Run the engine in a worker when the browser allows it, on the page otherwise.
  function diagnose(sources) {
    if (worker === null) {
      try {
        worker = new Worker(workerUrl);
        worker.onmessage = (event) => {
          const { id, result, error } = event.data;
          const [resolve, reject] = waiting.get(id);
          waiting.delete(id);
          if (error) reject(new Error(error)); else resolve(result);
        };
      } catch (error) {
        worker = false;
      }
    }
    if (!worker) {
      return engine.diagnoseSources(sources.map((s) => ({ name: s.name, chunks: s.file ? engine.fileChunks(s.file) : s.chunks })));
    }
    const id = ++asked;
    return new Promise((resolve, reject) => {
      waiting.set(id, [resolve, reject]);
      worker.postMessage({ id, data: raw, sources });
    });
  }

  function proposal(line) {
    const draft = draftEntry(line, new Date().toISOString().slice(0, 10));
    const url = `${data.repo.url}/new/${data.repo.branch}?filename=${encodeURIComponent("content/failures/" + draft.slug + ".yaml")}` +
      `&value=${encodeURIComponent(draft.text)}`;
    const box = el("div", undefined, "proposal");
    box.append(el("p", "Nothing has left this page. The link below opens a new file on the repository's forge, pre-filled with this draft entry " +
      "(the line below is its first error signature). Before you submit, remove hostnames, paths, usernames and anything secret from it."));
    const sent = el("details");
    sent.append(el("summary", "What will be sent: the draft entry"), el("pre", draft.text, "log"));
    box.append(link("Open this draft as a new entry on the forge", url), sent);
    return box;
  }



  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }

  function link(text, href) {
    const a = el("a", text);
    a.href = href;
    return a;
  }

  function showCandidate(c) {
    const item = el("li");
    const page = data.base + "failures/" + c.slug + "/";
    const head = el("p");
    head.append(link(c.title, page), el("span", ` ${c.id} · ${c.role} · confidence ${c.score}`, "meta"));
    item.append(head, el("p", c.explanation));
    const quick = entry(c.slug).quick;
    if (quick) {
      const box = el("div", undefined, "quick-answer");
      const dl = el("dl");
      for (const [term, text] of [["Symptom", quick.symptom], ["Root cause", quick.root_cause], ["Fix", quick.fix]]) dl.append(el("dt", term), el("dd", text));
      box.append(dl);
      item.append(box);
    }
    const go = el("p", undefined, "meta");
    go.append(link("How to confirm it", page + "#confirm"), " · ", link("The fix", page + "#fix"), " · ", link("Verify the fix", page + "#verify"));
    item.append(go);
    if (c.evidence.length) {
      item.append(el("pre", c.evidence.slice(0, 3).map((e) => `${e.line}${e.rank !== null ? " [rank " + e.rank + "]" : ""} ${e.role}: ${e.text}`).join("\n"), "log"));
    }
    return item;
  }

  function show(result, seconds, lines) {
    const out = document.getElementById("diagnosis-result");
    out.replaceChildren();
    out.append(el("p", `Scanned ${lines.toLocaleString("en-US")} lines in ${seconds.toFixed(2)} s, in this browser.`, "meta"));
    if (result.cross_rank) out.append(el("p", `Across ranks: ${result.cross_rank.summary}`, "cross-rank"));
    if (result.candidates.length) {
      const list = el("ol", undefined, "candidates");
      for (const c of result.candidates.slice(0, 10)) list.append(showCandidate(c));
      out.append(list);
    }
    if (result.possible_causes.length) {
      out.append(el("h2", `Possible causes to check (what ${result.candidates[0].title} lists as its causes)`));
      const list = el("ul", undefined, "possible-causes");
      for (const cause of result.possible_causes) {
        const item = el("li");
        item.append(link(cause.title, data.base + "failures/" + cause.slug + "/"));
        if (cause.look_for.length) item.append(el("span", ": look in every rank's log for " + cause.look_for.map((k) => `"${k}"`).join("; ")));
        list.append(item);
      }
      out.append(list);
    }
    for (const r of result.routine) out.append(el("p", `Routine: ${r.note}`, "routine"));
    if (!result.candidates.length) {
      out.append(el("p", message("no_match")));
      if (result.stopped) {
        const stop = el("p", result.stopped.note + " ", "stopped");
        stop.append(link("Read the entry", data.base + "failures/" + result.stopped.slug + "/"));
        out.append(stop);
      }
      if (result.cut) {
        const cut = el("p", result.cut.note + " ", "cut");
        cut.append(link("Search the encyclopedia for its last line", data.base + "search/?q=" + encodeURIComponent(result.cut.text.slice(0, 200))));
        out.append(cut);
      }
      if (result.notable.length) {
        out.append(el("h2", "Lines that look like the failure"));
        const list = el("ul", undefined, "notable");
        for (const n of result.notable) {
          const item = el("li");
          item.append(el("code", `${n.line}: ${n.text}`), " ", link("search the encyclopedia", data.base + "search/?q=" + encodeURIComponent(n.text.slice(0, 200))));
          if (data.repo) {
            const button = el("button", "Propose an entry from this line", "propose");
            button.type = "button";
            button.addEventListener("click", () => { button.replaceWith(proposal(n.text)); });
            item.append(" ", button);
          }
          list.append(item);
        }
        out.append(list);
      }
    }
  }

  async function run(sources) {
    const start = performance.now();
    const result = await diagnose(sources);
    show(result, (performance.now() - start) / 1000, result.lines);
  }

  const form = document.getElementById("diagnose-form");
  const textarea = document.getElementById("log-text");
  const fileInput = document.getElementById("log-file");
  const pasted = (text) => [{ name: "-", chunks: [text] }];
  form.addEventListener("submit", (event) => { event.preventDefault(); run(pasted(textarea.value)); });
  fileInput.addEventListener("change", () => {
    if (fileInput.files.length) run([{ name: fileInput.files[0].name, file: fileInput.files[0] }]);
  });
  const samples = document.getElementById("sample-logs");
  if (samples) {
    const logs = JSON.parse(samples.textContent);
    for (const button of document.querySelectorAll("button[data-sample]")) {
      button.addEventListener("click", () => {
        textarea.value = logs[Number(button.dataset.sample)];
        run([{ name: button.dataset.file, chunks: [textarea.value] }]);
      });
    }
  }
  const handoff = sessionStorage.getItem("diagnose-log");
  if (handoff) { sessionStorage.removeItem("diagnose-log"); textarea.value = handoff; run(pasted(handoff)); }
  document.getElementById("diagnose-js-note").hidden = true;
  form.hidden = false;
  // Used by the browser tests and benchmarks: the engine on [name, text or chunks] pairs, as the CLI reads files.
  window.encyclopediaDraft = draftEntry;
  window.encyclopediaDiagnose = (logs) => diagnose(logs.map(([name, text]) => ({ name, chunks: Array.isArray(text) ? text : [text] })));
})();
