"""Smoke runs of the benchmark scripts (N=50), so they keep working; the figures are not asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("script", [
    ["benchmarks/build.py", "--entries", "50", "--runs", "1"],
    ["benchmarks/graph.py", "--entries", "50", "--runs", "1"],
    ["benchmarks/serve.py", "--entries", "50", "--runs", "1"],
    ["benchmarks/diagnose.py", "--gigabytes", "0.002", "--runs", "1", "--browser-mb", "0", "--one-line-mb", "2"],
])
@pytest.mark.slow
def test_benchmark_script_runs(script: list[str]) -> None:
    run = subprocess.run([sys.executable, *script], cwd=ROOT, capture_output=True, text=True, check=False,
                         env={"PYTHONPATH": str(ROOT), "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert "|" in run.stdout or "ratio" in run.stdout or "entries" in run.stdout
