"""The repository's GitHub files: issue forms and workflows pass GitHub's published schemas
(check-jsonschema ships them, so this runs offline), and the forms have the fields we rely on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
FORMS = ROOT / ".github/ISSUE_TEMPLATE"
CHECKER = Path(sys.executable).parent / "check-jsonschema"


def _check(schema: str, *files: Path) -> subprocess.CompletedProcess[str]:
    if not CHECKER.exists():
        pytest.fail(f"{CHECKER} is missing; pip install -e '.[test]' installs check-jsonschema")
    return subprocess.run([str(CHECKER), "--builtin-schema", schema, *map(str, files)], capture_output=True, text=True, check=False)


@pytest.mark.parametrize(("schema", "pattern"), [
    ("vendor.github-issue-forms", "ISSUE_TEMPLATE/*-*.yml"),
    ("vendor.github-issue-config", "ISSUE_TEMPLATE/config.yml"),
])
def test_issue_forms_pass_githubs_schema(schema: str, pattern: str) -> None:
    files = sorted((ROOT / ".github").glob(pattern))
    assert files
    run = _check(schema, *files)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize(("schema", "path", "old", "new", "error"), [
    ("vendor.github-issue-forms", "ISSUE_TEMPLATE/entry-correction.yml", "type: input", "type: textbox", "$.body[1].type: 'textbox' is not one of"),
    ("vendor.github-workflows", "workflows/ci.yml", "container:", "contianer:", "$.jobs.test: {'runs-on'"),
])
def test_the_schema_checker_refuses_a_broken_file(tmp_path: Path, schema: str, path: str, old: str, new: str, error: str) -> None:
    text = (ROOT / ".github" / path).read_text()
    assert old in text
    (tmp_path / "broken.yml").write_text(text.replace(old, new, 1))
    run = _check(schema, tmp_path / "broken.yml")
    assert run.returncode == 1
    assert error in run.stdout


@pytest.mark.parametrize(("form", "fields"), [
    ("new-failure.yml", ["error", "log", "versions", "fix", "links", "shareable"]),
    ("entry-correction.yml", ["entry", "page", "claim", "evidence"]),
])
def test_forms_ask_for_what_an_entry_needs(form: str, fields: list[str]) -> None:
    body = yaml.safe_load((FORMS / form).read_text())["body"]
    assert [field["id"] for field in body if field["type"] != "markdown"] == fields


def test_workflows_pass_githubs_schema() -> None:
    files = sorted((ROOT / ".github/workflows").glob("*.yml"))
    assert files
    run = _check("vendor.github-workflows", *files)
    assert run.returncode == 0, run.stdout + run.stderr


def test_pull_requests_are_tested_by_ci_run_in_debian_and_annotated() -> None:
    workflow = yaml.safe_load((ROOT / ".github/workflows/ci.yml").read_text())
    test = workflow["jobs"]["test"]
    assert test["container"] == "debian:bookworm"  # Ubuntu's chromium is a snap shim that fails on runners
    runs = [step.get("run", "") for step in test["steps"]]
    assert ".ci/run" in runs
    assert any("encyclopedia check --strict --format github" in run for run in runs)
    for name, job in workflow["jobs"].items():
        if "container" not in job:
            assert not any("chromium" in step.get("run", "") for step in job["steps"]), name
    deploy = workflow["jobs"]["pages"]
    assert deploy["needs"] == "test" and any(step.get("uses", "").startswith("actions/deploy-pages@") for step in deploy["steps"])
    assert any("--repo-url" in step.get("run", "") for step in deploy["steps"])  # the published entries link to this repository
