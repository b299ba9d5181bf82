"""ruff and strict mypy stay clean on the generator (the same commands CI and pre-commit run)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("command", [["ruff", "check", "generator", "tests", "benchmarks"], ["mypy"]])
def test_tool_is_clean(command: list[str]) -> None:
    tool = Path(sys.executable).parent / command[0]
    if not tool.exists() and not shutil.which(command[0]):
        pytest.skip(f"{command[0]} is not installed (pip install -e '.[test]' installs it)")
    run = subprocess.run([str(tool) if tool.exists() else command[0], *command[1:]], cwd=ROOT, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
