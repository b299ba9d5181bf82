"""The command line: exit codes and what it prints."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from conftest import entry_yaml, write_tree

from generator.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_check_clean_content_exits_0(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 0
    out, err = capsys.readouterr()
    warnings = err.splitlines()
    assert warnings and all(line.endswith("(warning)") for line in warnings)  # the fixtures are below the reviewed minimums
    assert out == f"ok: 2 entries, 0 hubs, {len(warnings)} warnings\n"


def test_check_reports_every_problem_and_exits_1(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(content, {"failures/a.yaml": "id: MTF-0009\nseverity: urgent\n", "failures/b.yaml": "x: [\n"})
    assert main(["check"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert "content/failures/a.yaml:1:1: title: field required (expected text) [E010 missing-field]" in err
    assert "content/failures/a.yaml:2:11: severity: 'urgent' is not allowed (expected one of: low, medium, high, critical) [E013 invalid-value]" in err
    assert err[-2].startswith("content/failures/b.yaml:2:1: YAML syntax error")
    assert err[-1] == "10 errors in 2 files"


def test_strict_turns_quality_warnings_into_errors(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
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


@pytest.mark.slow
def test_one_unclosed_bracket_is_one_error_and_one_line_for_the_references_waiting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ROOT / "content", tmp_path / "content")
    monkeypatch.chdir(tmp_path)
    slug = "nccl-watchdog-timeout"
    path = tmp_path / f"content/failures/{slug}.yaml"
    lines = path.read_text().count("\n")
    path.write_text(path.read_text() + "aliases: [nccl-timeout\n")
    # What names the entry, counted from the content itself (others keep adding relations).
    relations = sum(rel.get("slug") == slug for other in sorted((tmp_path / "content/failures").glob("*.yaml")) if other != path
                    for rel in yaml.safe_load(other.read_text()).get("related", []))
    hub_rows = sum(row["entries"].count(slug) for hub in (tmp_path / "content/hubs").glob("*.yaml") for row in yaml.safe_load(hub.read_text())["rows"])
    ledger = sum(slug in slugs for slugs in yaml.safe_load((tmp_path / "content/ledger.yaml").read_text()).values())
    assert relations > 10 and hub_rows > 1 and ledger == 1  # once one error each
    assert main(["check"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        (f"content/failures/{slug}.yaml:{lines + 2}:1: YAML syntax error: did not find expected ',' or ']' while parsing a flow sequence "
         f"that starts at {lines + 1}:10 (expected valid YAML) [E001 yaml-syntax]"),
        (f"content/failures/{slug}.yaml: {relations + hub_rows + ledger} references wait on this entry "
         f"({relations} relations, {hub_rows} hub rows, 1 ledger line); they are checked once it can be read"),
        "1 error in 1 file",
    ]


def test_an_invalid_entry_is_reported_once_for_check_build_and_github(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(content, {"failures/second-failure.yaml": entry_yaml("MTF-0002", "Second failure").replace("severity: high", "severity: urgent"),
                         "failures/third-failure.yaml": entry_yaml("MTF-0003", "Third", related="- slug: gone-failure\n  type: causes\n")})
    error = ("content/failures/second-failure.yaml:4:11: severity: 'urgent' is not allowed (expected one of: low, medium, high, critical) [E013 invalid-value]")
    dangling = ("content/failures/third-failure.yaml:21:11: related[0].slug: no entry 'gone-failure' (expected the slug of an existing entry) [E022 dangling-relation]")
    waiting = "content/failures/second-failure.yaml: 2 references wait on this entry (1 relation, 1 ledger line); they are checked once it can be read"
    assert main(["check"]) == 1
    assert capsys.readouterr().err.splitlines() == [error, dangling, waiting, "2 errors in 2 files"]
    assert main(["build", "--out", "site"]) == 1
    assert capsys.readouterr().err.splitlines() == [error, dangling, waiting, "2 errors in 2 files; nothing was written"]
    assert main(["check", "--format", "github"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == ("::notice file=content/failures/second-failure.yaml,line=1,col=1,title=references waiting::"
                                                       "2 references wait on this entry (1 relation, 1 ledger line); they are checked once it can be read")
    write_tree(content, {"ledger.yaml": "MTF-0001: [first-failure]\n", "failures/first-failure.yaml": entry_yaml("MTF-0001", "First failure")})
    write_tree(content, {"failures/third-failure.yaml": entry_yaml("MTF-0003", "Third", related="- slug: second-failure\n  type: causes\n")})
    assert main(["check"]) == 1
    assert capsys.readouterr().err.splitlines()[-2] == ("content/failures/second-failure.yaml: 1 reference waits on this entry (1 relation); "
                                                        "it is checked once it can be read")
    write_tree(content, {"repro/second-failure.py": "print('x')\n", "repro/reproduced.yaml": 'second-failure: {torch: "2.13.0", device: cpu}\n'})
    assert main(["check"]) == 1
    assert capsys.readouterr().err.splitlines()[-2:] == [
        ("content/failures/second-failure.yaml: 3 references wait on this entry (1 relation, 1 reproduction script, 1 reproduction record); "
         "they are checked once it can be read"),
        "1 error in 1 file",
    ]
