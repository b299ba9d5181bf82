"""The shipped content: every entry validates, meets the quality minimums, and builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_shipped_content_passes_strict_check(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["check", "--strict"]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith("ok: ")


@pytest.mark.slow
def test_shipped_content_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["build", "--out", str(tmp_path / "site")]) == 0
    entries = sorted(p.stem for p in (ROOT / "content/failures").glob("*.yaml"))
    assert entries
    for slug in entries:
        assert (tmp_path / "site/failures" / slug / "index.html").is_file()
