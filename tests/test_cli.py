"""The command line: exit codes and what it prints."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree

from generator.cli import main


def test_check_clean_content_exits_0(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 0
    assert capsys.readouterr().out == "ok: 2 entries, 0 hubs, 0 warnings\n"


def test_check_reports_every_problem_and_exits_1(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(content, {"failures/a.yaml": "id: MTF-0009\nseverity: urgent\n", "failures/b.yaml": "x: [\n"})
    assert main(["check"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert "content/failures/a.yaml:1:1: title: field required (expected text) [E010 missing-field]" in err
    assert "content/failures/a.yaml:2:11: severity: 'urgent' is not allowed (expected one of: low, medium, high, critical) [E013 invalid-value]" in err
    assert err[-2].startswith("content/failures/b.yaml:2:1: YAML syntax error")
    assert err[-1] == "10 errors in 2 files"


def test_strict_turns_quality_warnings_into_errors(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = content / "failures/first-failure.yaml"
    path.write_text(path.read_text().replace("status: draft", "status: reviewed"))
    assert main(["check"]) == 0
    warned = capsys.readouterr().err
    assert "symptoms: has 0 (expected at least 3 symptom rows in a reviewed entry) [E040 quality-minimum] (warning)" in warned
    assert main(["check", "--strict"]) == 1
    err = capsys.readouterr().err
    assert "content/failures/first-failure.yaml:1:1: symptoms: has 0 (expected at least 3 symptom rows in a reviewed entry) [E040 quality-minimum]" in err


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["build", "--bogus"]])
def test_bad_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "usage: encyclopedia" in capsys.readouterr().err


def test_missing_content_folder_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--content", str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'nope'}: no such content folder\n"
