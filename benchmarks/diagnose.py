"""Time `encyclopedia diagnose` on a large synthetic log against `grep -E -f` over the same patterns,
the in-browser diagnosis of a 50 MB log in headless Chromium, and the time from opening
/diagnose/ to the first result of a sample log.

    python benchmarks/diagnose.py [--gigabytes 1] [--runs 3] [--browser-mb 50]

The log is realistic noise (training progress, NCCL INFO lines, warnings, tqdm bars,
rank prefixes) with a few real error lines from the entries' own examples spread through it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.build import load_catalog

NOISE = [
    "[rank{r}]:[2026-03-0{d} 12:{m:02d}:{s:02d},{ms:03d}] INFO trainer.py:{n}: step {n} loss {f:.4f} lr {f2:.2e} grad_norm {f:.3f} tokens/s {n}",
    "node{r}:{n}:{n} [{r}] NCCL INFO Channel {r:02d}/0 : {r}[{n}] -> {d}[{n}] via P2P/IPC/read",
    "[default{r}]: {n}it [00:{m:02d}, {f:.2f}it/s] loss={f:.4f}",
    "[rank{r}]: /usr/lib/python3/site-packages/torch/utils/checkpoint.py:{n}: UserWarning: use_reentrant parameter should be passed explicitly.",
    "[rank{r}]:[W{d}29 12:{m:02d}:{s:02d}.{n} ProcessGroupNCCL.cpp:{n}] Warning: barrier() using device under current context.",
    "Epoch {d}: {n}/{n} [{m:02d}:{s:02d}<00:{s:02d}, {f:.2f}it/s, v_num=0, train_loss={f:.3f}]",
]


def write_log(path: Path, size: int, errors: list[str]) -> None:
    rng = random.Random(7)
    lines = []
    for _ in range(20000):
        t = rng.choice(NOISE)
        lines.append(t.format(r=rng.randint(0, 7), d=rng.randint(1, 7), m=rng.randint(0, 59), s=rng.randint(0, 59),
                              ms=rng.randint(0, 999), n=rng.randint(1, 99999), f=rng.random() * 4, f2=rng.random() * 1e-3))
    block = ("\n".join(lines) + "\n").encode()
    with path.open("wb") as out:
        written = 0
        while written < size:
            out.write(block)
            written += len(block)
            if rng.random() < 0.5:
                out.write((rng.choice(errors) + "\n").encode())


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """Return (wall seconds, CPU seconds, peak RSS MiB) of a command, measured in a child of its own."""
    probe = ("import resource, subprocess, sys, time; s = time.perf_counter(); "
             "subprocess.run(sys.argv[1:], stdout=subprocess.PIPE); w = time.perf_counter() - s; "  # not DEVNULL: grep stops at the first match when it writes there
             "r = resource.getrusage(resource.RUSAGE_CHILDREN); print(w, r.ru_utime + r.ru_stime, r.ru_maxrss // 1024)")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True, check=True, env=env).stdout.split()
    return float(out[0]), float(out[1]), int(out[2])


def one_line_log(path: Path, megabytes: int, key: str, occurrences: int) -> None:
    """Write a log that is one line (no newline) of `megabytes` holding `occurrences` copies of a signature key."""
    filler = b"x" * max(0, int(megabytes * 1e6) // occurrences - len(key))
    with path.open("wb") as out:
        for _ in range(occurrences):
            out.write(filler + key.encode())


def browser_time(site: Path, megabytes: int, one_line: str | None = None) -> float:
    sys.path.insert(0, str(ROOT / "tests"))
    from browser import ARGS, CHROMIUM, serve
    from playwright.sync_api import sync_playwright

    server, base = serve(site)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page()
            page.goto(base + "diagnose/")
            # one_line: the whole log is one line holding 100,000 copies of that key (no newline at all)
            line = json.dumps(one_line + "x" * 1000) if one_line else json.dumps(
                "[rank3]:[2026-03-01 12:00:00,000] INFO trainer.py:88: step 12 loss 1.2345 lr 1.00e-04 grad_norm 0.5\n")
            seconds = page.evaluate(f"""async () => {{
                const line = {line};
                const chunk = line.repeat(Math.ceil(4e6 / line.length));
                const chunks = Array.from({{length: Math.ceil({megabytes}e6 / chunk.length)}}, () => chunk);
                const start = performance.now();
                await window.encyclopediaDiagnose([["big.log", chunks]]);
                return (performance.now() - start) / 1000;
            }}""")
            browser.close()
            return float(seconds)
    finally:
        server.shutdown()


def sample_time(site: Path, runs: int) -> list[float]:
    """Return, per run, seconds from opening /diagnose/ in a new page to the first answer for its first sample log."""
    sys.path.insert(0, str(ROOT / "tests"))
    from browser import ARGS, CHROMIUM, serve
    from playwright.sync_api import sync_playwright

    server, base = serve(site)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            seconds = []
            for _ in range(runs):
                page = browser.new_page()
                start = time.perf_counter()
                page.goto(base + "diagnose/")
                page.click("button[data-sample]")
                page.wait_for_selector(".candidates li")
                seconds.append(time.perf_counter() - start)
                page.close()
            browser.close()
            return seconds
    finally:
        server.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gigabytes", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--browser-mb", type=int, default=50)
    parser.add_argument("--one-line-mb", type=int, default=106, help="also time a log that is a single line of this size (0: skip)")
    args = parser.parse_args()
    catalog = load_catalog(ROOT / "content")
    errors = [ex for item in catalog.entries.values() for sig in item.entry.signatures for ex in sig.examples]
    patterns = [sig.regex or re.escape(sig.key) for item in catalog.entries.values() for sig in item.entry.signatures]
    with tempfile.TemporaryDirectory() as tmp:
        log, pattern_file = Path(tmp) / "big.log", Path(tmp) / "patterns"
        pattern_file.write_text("\n".join(patterns) + "\n")
        write_log(log, int(args.gigabytes * 1e9), errors)
        size_mb = log.stat().st_size / 1e6
        ours_cmd = [sys.executable, "-m", "generator", "diagnose", "--content", str(ROOT / "content"), str(log)]
        grep_cmd = ["grep", "-E", "-c", "-f", str(pattern_file), str(log)]
        c_locale = {**os.environ, "LC_ALL": "C"}  # grep's fastest mode
        results: dict[str, list[tuple[float, float, int]]] = {"encyclopedia diagnose": [], "grep -E -f": []}
        for _ in range(args.runs):  # alternate, so both see the same machine load
            results["encyclopedia diagnose"].append(timed(ours_cmd))
            results["grep -E -f"].append(timed(grep_cmd, c_locale))
        print(f"log: {size_mb:,.0f} MB, {len(patterns)} patterns, {args.runs} runs each, alternating")
        print(f"{'tool':24} {'median wall s':>14} {'median CPU s':>13} {'MB/s':>8} {'peak RSS MiB':>13}")
        medians = {}
        for tool, runs in results.items():
            wall = statistics.median(r[0] for r in runs)
            medians[tool] = wall
            print(f"{tool:24} {wall:>14.2f} {statistics.median(r[1] for r in runs):>13.2f} {size_mb / wall:>8.0f} {max(r[2] for r in runs):>13}")
        print(f"ratio encyclopedia/grep: {medians['encyclopedia diagnose'] / medians['grep -E -f']:.2f}")
    key = "Watchdog caught collective operation timeout: WorkNCCL("
    if args.one_line_mb:
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "one-line.log"
            one_line_log(log, args.one_line_mb, key, 100_000)
            wall, _cpu, rss = timed([sys.executable, "-m", "generator", "diagnose", "--content", str(ROOT / "content"), str(log)])
            print(f"one line of {args.one_line_mb} MB with 100,000 keys: encyclopedia diagnose {wall:.2f} s wall, {rss} MiB peak RSS")
    if args.browser_mb:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "generator", "build", "--no-search", "--content", str(ROOT / "content"),
                            "--out", str(Path(tmp) / "site")], check=True, stdout=subprocess.DEVNULL)
            opened = sample_time(Path(tmp) / "site", max(args.runs, 5))
            print(f"browser: /diagnose/ opened to a sample log's first answer: median {statistics.median(opened):.2f} s "
                  f"over {len(opened)} runs (min {min(opened):.2f}, max {max(opened):.2f})")
            print(f"browser: {args.browser_mb} MB diagnosed in {browser_time(Path(tmp) / 'site', args.browser_mb):.2f} s (headless Chromium)")
            if args.one_line_mb:
                seconds = browser_time(Path(tmp) / "site", args.one_line_mb, key)
                print(f"browser: one line of {args.one_line_mb} MB with keys every 1 kB diagnosed in {seconds:.2f} s")


if __name__ == "__main__":
    main()
