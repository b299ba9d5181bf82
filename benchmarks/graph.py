"""Time the related-failure graph (inferred similarity through inverted indexes) at several sizes.

    python benchmarks/graph.py --entries 1000 10000 [--runs 5]

Loading and validation are timed separately; the figure that matters is build_graph.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from corpus import write_corpus

from generator.catalog import build_catalog
from generator.graph import build_graph, neighbourhood
from generator.loading import load_content


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"{'entries':>8} {'load+check s':>13} {'build_graph s (median)':>23} {'per entry µs':>13} {'all layouts s':>14}")
    for n in args.entries:
        with tempfile.TemporaryDirectory() as tmp:
            write_corpus(n, Path(tmp) / "content")
            start = time.perf_counter()
            catalog = build_catalog(load_content(Path(tmp) / "content"))
            load = time.perf_counter() - start
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            graph = build_graph(catalog)
            times.append(time.perf_counter() - start)
        start = time.perf_counter()
        for slug in catalog.entries:
            neighbourhood(catalog, graph, slug).draw()
        layouts = time.perf_counter() - start
        median = statistics.median(times)
        print(f"{n:>8} {load:>13.2f} {median:>23.3f} {median / n * 1e6:>13.0f} {layouts:>14.2f}")


if __name__ == "__main__":
    main()
