"""Reproductions: run content/repro/<slug>.py and prove its output matches the entry's signatures."""

from __future__ import annotations

import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .schema import Signature
from .signatures import matches


@dataclass(frozen=True)
class Reproduction:
    slug: str
    matched: str | None  # the first output line a signature matched, or None
    output_tail: str
    seconds: float


def torch_version(python: str) -> str | None:
    """Return the torch version importable by that Python, or None when torch is absent."""
    try:
        run = subprocess.run([python, "-c", "import torch, sys; sys.stdout.write(torch.__version__)"],
                             capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return run.stdout.strip() if run.returncode == 0 else None


def run_reproduction(slug: str, script: Path, signatures: list[Signature], python: str, timeout: float) -> Reproduction:
    """Run one script in a scratch folder and return the first output line a signature matches."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        try:
            run = subprocess.run([python, str(script.resolve())], cwd=scratch, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, timeout=timeout, check=False)
            output = run.stdout.decode("utf-8", errors="replace")
        except subprocess.TimeoutExpired as exc:
            output = (exc.stdout or b"").decode("utf-8", errors="replace") + f"\n[timed out after {timeout:.0f} s]"
    lines = output.splitlines()
    matched = next((line for line in lines if any(matches(sig, line) for sig in signatures)), None)
    return Reproduction(slug, matched, "\n".join(lines[-5:]), time.monotonic() - start)
