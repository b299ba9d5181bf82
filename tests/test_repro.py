"""Reproductions: verify-repro runs real scripts and records only those whose output matches."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from conftest import write_tree

from generator.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _torch_python() -> str:
    python = os.environ.get("TORCH_PYTHON", "")
    if not python:
        pytest.skip("TORCH_PYTHON is not set (.ci/run sets it to a venv with torch==2.13.0)")
    return python


def test_without_torch_it_skips_cleanly(content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(content, {"repro/first-failure.py": "import torch\n"})
    no_torch = tmp_path / "python-without-torch"
    no_torch.write_text(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
    no_torch.chmod(0o755)
    assert main(["verify-repro", "--python", str(no_torch)]) == 0
    assert capsys.readouterr().out.startswith(f"skipped: torch is not importable by {no_torch}")
    assert not (content / "repro/reproduced.yaml").exists()


def test_script_for_an_unknown_entry_is_a_content_error(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(content, {"repro/no-such-entry.py": "print('hi')\n"})
    assert main(["check"]) == 1
    assert "content/repro/no-such-entry.py:1:1: no entry 'no-such-entry' (expected the script to be named after an entry's slug) [E053 unknown-reproduction]" in capsys.readouterr().err


def test_real_reproductions_are_recorded_and_badged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    python = _torch_python()
    shutil.copytree(ROOT / "content", tmp_path / "content")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "content/repro/reproduced.yaml").unlink()
    # A script whose output does not match its entry must not be recorded.
    (tmp_path / "content/repro/checkpoint-torn-partial-write.py").write_text("print('all fine')\n")
    # A relative interpreter path, as typed in the project folder, works although scripts run in scratch folders.
    (tmp_path / "py").write_text(f'#!/bin/sh\nexec "{python}" "$@"\n')
    (tmp_path / "py").chmod(0o755)
    assert main(["verify-repro", "--python", "./py", "checkpoint-size-mismatch", "checkpoint-torn-partial-write"]) == 1
    out = capsys.readouterr().out
    assert "ok   checkpoint-size-mismatch" in out and "FAIL checkpoint-torn-partial-write" in out
    record = (tmp_path / "content/repro/reproduced.yaml").read_text()
    assert 'checkpoint-size-mismatch: {torch: "2.13.0+cpu", device: cpu}' in record
    assert "checkpoint-torn-partial-write" not in record
    assert main(["build", "--no-search", "--out", "site"]) == 0
    page = (tmp_path / "site/failures/checkpoint-size-mismatch/index.html").read_text()
    assert 'with PyTorch 2.13.0+cpu on CPU</a>' in page
    assert "Reproduced" not in (tmp_path / "site/failures/checkpoint-torn-partial-write/index.html").read_text()
    assert (tmp_path / "site/repro/checkpoint-size-mismatch.py").is_file()
