"""The contributor's edit loop under `encyclopedia serve`: from saving an entry file to the
rebuilt page being served, on N synthetic entries.

    python benchmarks/serve.py --entries 1000 10000 [--runs 5]

Each run changes one entry's title, then asks the server for the version after the current one
(the request the page's reload script makes, held until the rebuild is done) and fetches the
entry's page; the time from the write to the page with the new title is reported (median).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from corpus import write_corpus

ROOT = Path(__file__).resolve().parent.parent  # the generator of this tree is the one measured


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=300) as response:
        return str(response.read().decode())


def edit_loop(n: int, runs: int) -> list[float]:
    """Return the seconds from saving one entry to its rebuilt page being served, per run."""
    work = Path(tempfile.mkdtemp(prefix=f"serve{n}-"))
    proc = None
    try:
        write_corpus(n, work / "content")
        proc = subprocess.Popen([sys.executable, "-m", "generator", "serve", "--port", "0", "--no-search"], cwd=work,
                                env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout is not None
        base = proc.stdout.readline().split(" on ")[1].split(" ")[0]
        entry = work / "content/failures/synthetic-failure-00007.yaml"
        text, title = entry.read_text(), "Synthetic failure 7:"
        page = base + "failures/synthetic-failure-00007/"
        times = []
        for run in range(runs):
            version = _get(base + "__version")
            time.sleep(1.0)  # let the watcher settle after the previous rebuild
            start = time.perf_counter()
            entry.write_text(text.replace(title, f"Edited {run}:"))
            while _get(base + f"__version?after={version}") == version:  # held up to 25 s per request
                pass
            assert f"Edited {run}:" in _get(page)
            times.append(time.perf_counter() - start)
        return times
    finally:
        if proc:
            proc.terminate()
            proc.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for n in args.entries:
        times = edit_loop(n, args.runs)
        print(f"{n:,} entries: file saved -> rebuilt page served, median {statistics.median(times):.2f} s "
              f"(runs: {', '.join(f'{t:.2f}' for t in times)})", flush=True)


if __name__ == "__main__":
    main()
