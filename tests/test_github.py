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


def test_the_schema_checker_refuses_a_broken_form(tmp_path: Path) -> None:
    form = yaml.safe_load((FORMS / "entry-correction.yml").read_text())
    form["body"][1]["type"] = "textbox"
    (tmp_path / "broken.yml").write_text(yaml.safe_dump(form))
    run = _check("vendor.github-issue-forms", tmp_path / "broken.yml")
    assert run.returncode == 1
    assert "$.body[1].type: 'textbox' is not one of" in run.stdout


@pytest.mark.parametrize(("form", "fields"), [
    ("new-failure.yml", ["error", "log", "versions", "fix", "links", "shareable"]),
    ("entry-correction.yml", ["entry", "page", "claim", "evidence"]),
])
def test_forms_ask_for_what_an_entry_needs(form: str, fields: list[str]) -> None:
    body = yaml.safe_load((FORMS / form).read_text())["body"]
    assert [field["id"] for field in body if field["type"] != "markdown"] == fields
