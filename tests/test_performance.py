"""Parallel builds equal serial ones byte for byte; progress shows on a terminal and nowhere else."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from conftest import read_tree
from corpus import write_corpus


@pytest.mark.slow
def test_parallel_build_is_byte_identical_to_serial(tmp_path: Path) -> None:
    write_corpus(150, tmp_path / "content")  # ~400 pages: above the threshold for worker processes
    for jobs, out in [("1", "serial"), ("2", "parallel")]:
        subprocess.run([sys.executable, "-m", "generator", "build", "--no-search", "--clean", "--jobs", jobs, "--out", out],
                       cwd=tmp_path, check=True, capture_output=True)
    serial, parallel = read_tree(tmp_path / "serial"), read_tree(tmp_path / "parallel")
    assert len(serial) > 400 and serial == parallel


@pytest.mark.slow
def test_progress_shows_on_a_terminal_only(tmp_path: Path) -> None:
    write_corpus(400, tmp_path / "content")
    build = [sys.executable, "-m", "generator", "build", "--no-search", "--clean", "--jobs", "1", "--out", "site"]
    piped = subprocess.run(build, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert piped.stderr == ""
    shown = _on_a_terminal(build, tmp_path)
    assert "rendering" in shown and "pages" in shown.split("rendering", 1)[1]
    assert "rendering" not in _on_a_terminal([*build, "--quiet"], tmp_path)


def _on_a_terminal(command: list[str], cwd: Path) -> str:
    """Return what a command prints when its output is a terminal (a pseudo-terminal here)."""
    output = bytearray()

    def read(fd: int) -> bytes:
        data = os.read(fd, 1024)
        output.extend(data)
        return data

    previous = os.getcwd()
    os.chdir(cwd)
    try:
        pty.spawn(command, read)
    finally:
        os.chdir(previous)
    return output.decode(errors="replace")
