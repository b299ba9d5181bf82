"""The contributor's tools: new, schema, --explain, --format github, and numbered rules."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import jsonschema
import pytest
import yaml
from conftest import CATEGORIES, entry_yaml, write_tree
from htmlparse import ParsedPage
from pydantic import ValidationError

from generator.cli import main
from generator.errors import RULES
from generator.loading import load_content
from generator.schema import Entry

ROOT = Path(__file__).resolve().parent.parent


def test_new_writes_a_draft_that_passes_strict_check(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for path in (content / "failures").glob("*.yaml"):  # drafts too, so that only the new one is judged
        path.write_text(path.read_text().replace("status: reviewed", "status: draft"))
    assert main(["new", "NCCL: P2P transport disabled by mistake!", "--category", "memory"]) == 0
    path = content / "failures/nccl-p2p-transport-disabled-by-mistake.yaml"
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=../entry.schema.json\n")
    assert "id: MTF-0003" in text and 'title: "NCCL: P2P transport disabled by mistake!"' in text
    for section in ["summary", "quick_answer", "mechanism", "symptoms", "confirm", "fix", "code_examples", "signatures", "faq", "references", "related"]:
        assert re.search(rf"^# .+\n{section}:", text, re.MULTILINE), f"{section} has no comment above it"
    assert "MTF-0003: [nccl-p2p-transport-disabled-by-mistake]" in (content / "ledger.yaml").read_text()
    assert main(["check", "--strict"]) == 0
    assert main(["new", "NCCL: P2P transport disabled by mistake!"]) == 2  # refuses to overwrite
    assert "already exists" in capsys.readouterr().err
    assert path.read_text() == text


def test_drafts_stay_out_of_the_published_site_and_show_a_banner_with_drafts(content: Path, tmp_path: Path) -> None:
    ledger = (content / "ledger.yaml").read_text()
    write_tree(content, {"failures/third-draft.yaml": entry_yaml("MTF-0003", "Third draft", status="draft"),
                         "ledger.yaml": ledger + "MTF-0003: [third-draft]\n"})
    first = content / "failures/first-failure.yaml"
    first.write_text(first.read_text() + "  - slug: third-draft\n    type: see-also\n")  # a reviewed entry relates to it
    assert main(["build", "--no-search", "--out", "site"]) == 0
    site = tmp_path / "site"
    assert not (site / "failures/third-draft").exists() and not (site / "id/MTF-0003").exists()
    for published in ["api/index.json", "api/signatures.json", "api/ml-failures.mtail", "sitemap.xml", "feed.xml",
                      "failures/index.html", "failures/first-failure/index.html", "graph/index.html", "tags/nccl/index.html"]:
        assert "third-draft" not in (site / published).read_text(), published
    assert main(["build", "--no-search", "--drafts", "--out", "drafts"]) == 0
    assert 'class="draft-banner"' in (tmp_path / "drafts/failures/third-draft/index.html").read_text()
    assert 'class="draft-banner"' not in (tmp_path / "drafts/failures/first-failure/index.html").read_text()
    assert "failures/third-draft/" in (tmp_path / "drafts/failures/first-failure/index.html").read_text()


def test_a_reviewed_entry_with_a_leftover_todo_fails_strict(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", "Half written"]) == 0
    path = content / "failures/half-written.yaml"
    path.write_text(path.read_text().replace("status: draft", "status: reviewed"))
    assert main(["check", "--strict"]) == 1
    err = capsys.readouterr().err
    assert "summary: still holds a TODO placeholder (expected the text written out) [E040 quality-minimum]" in err
    assert "quick_answer.symptom: still holds a TODO placeholder" in err


def test_new_never_reuses_an_id_from_the_ledger(content: Path) -> None:
    write_tree(content, {"ledger.yaml": "MTF-0001: [first-failure]\nMTF-0002: [second-failure]\nMTF-0009: [gone]\n",
                         "failures/second-failure.yaml": entry_yaml("MTF-0002", "Second", extra="aliases: [gone]\n")})
    assert main(["new", "Another failure"]) == 0
    assert "id: MTF-0010" in (content / "failures/another-failure.yaml").read_text()


def test_github_format_annotates_the_line(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(content, {"failures/bad.yaml": entry_yaml("MTF-0005", "Bad").replace("severity: high", "severity: urgent")})
    assert main(["check", "--format", "github"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == ["::error file=content/failures/bad.yaml,line=4,col=11,title=E013 invalid-value::severity: 'urgent' is not allowed (expected one of: low, medium, high, critical)"]


def test_explain_prints_what_a_rule_protects(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--explain", "e011"]) == 0
    assert capsys.readouterr().out.startswith("E011 unknown-field\n\nWhat it protects: Unknown fields are refused")
    assert main(["check", "--explain", "E999"]) == 2


def test_committed_schema_is_the_generated_one(tmp_path: Path) -> None:
    assert main(["schema", "--out", str(tmp_path / "entry.schema.json")]) == 0
    assert (tmp_path / "entry.schema.json").read_text() == (ROOT / "content/entry.schema.json").read_text()


def _as_json(value: object) -> object:
    return json.loads(json.dumps(value, default=str))  # dates as the YYYY-MM-DD text editors see


# Inputs that are well-formed YAML but break the schema; both validators must refuse each.
SCHEMA_VIOLATIONS = {
    "bad-literal": ("severity: high", "severity: urgent"),
    "unknown-field": ("mechanism:", "symtoms: []\nmechanism:"),
    "missing-field": ("title: Sample failure\n", ""),
    "wrong-type": ("tags: [nccl, timeout]", "tags: nccl"),
    "id-format": ("id: MTF-0001", "id: F-1"),
    "bad-url": ("signatures:", "references: [{title: x, url: 'javascript:alert(1)', kind: docs}]\nsignatures:"),
    "bad-role": ("role: collateral", "role: culprit"),
    "empty-examples": ('    examples:\n      - "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE)"\n', "    examples: []\n"),
}


def test_json_schema_agrees_with_pydantic(tmp_path: Path) -> None:
    schema = json.loads((ROOT / "content/entry.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    shipped = sorted((ROOT / "content/failures").glob("*.yaml"))
    for path in shipped:
        assert list(validator.iter_errors(_as_json(yaml.safe_load(path.read_text())))) == [], path
    for name, (old, new) in SCHEMA_VIOLATIONS.items():
        data = yaml.safe_load(entry_yaml().replace(old, new, 1))
        with pytest.raises(ValidationError):
            Entry.model_validate(data)
        assert list(validator.iter_errors(_as_json(data))), f"jsonschema accepts {name}"
    write_tree(tmp_path, {"categories.yaml": CATEGORIES, **{f"failures/{n}.yaml": entry_yaml().replace(o, v, 1) for n, (o, v) in SCHEMA_VIOLATIONS.items()}})
    assert {p.path.split("/")[-1] for p in load_content(tmp_path, tmp_path).problems} == {f"{n}.yaml" for n in SCHEMA_VIOLATIONS}


def test_every_rule_is_documented_in_contributing() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text()
    for rule in RULES.values():
        assert f"| {rule.code} | {rule.name} |" in text, rule.code


def test_new_from_a_log_line_writes_a_draft_whose_signature_is_that_line(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = content.parent / "train.log"
    log.write_text("step 1\n[rank3]:[E1130 12:00:01.123 foo.cc:12] RuntimeError: CUDA error: misaligned address\n")
    assert main(["new", "--from-log", str(log), "--line", "2"]) == 0
    path = content / "failures" / "runtimeerror-cuda-error-misaligned-address.yaml"
    entry = yaml.safe_load(path.read_text())
    assert entry["title"] == "RuntimeError: CUDA error: misaligned address" and entry["status"] == "draft"
    assert entry["signatures"] == [{"key": "RuntimeError: CUDA error: misaligned address", "role": "root",
                                    "examples": ["[rank3]:[E1130 12:00:01.123 foo.cc:12] RuntimeError: CUDA error: misaligned address"]}]
    assert main(["check"]) == 0


@pytest.mark.parametrize(("argv", "message"), [
    (["new", "--from-log", "train.log"], "error: --from-log needs --line N (the line that shows the failure, 1 = the first line)"),
    (["new", "--from-log", "train.log", "--line", "9"], "error: train.log: has fewer than 9 lines"),
    (["new", "--from-log", "train.log", "--line", "1"], "error: train.log:1: the line is empty (expected the line that shows the failure)"),
    (["new", "--from-log", "missing.log", "--line", "1"], "error: missing.log: cannot read the log (No such file or directory)"),
    (["new"], "error: a title is needed (or --from-log LOG --line N to start from a log line)"),
])
def test_new_from_a_log_refuses_what_it_cannot_use(content: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    (content.parent / "train.log").write_text("\nsecond\n")
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == message


def _contribution_links(page: Path) -> list[str]:
    """Return the hrefs of the links in the entry page's contribute footer."""
    text = page.read_text()
    footer = text[text.index('<footer class="contribute"'):text.index("</footer>", text.index('<footer class="contribute"'))]
    return ParsedPage(footer).links


def test_entry_links_to_its_file_and_a_prefilled_correction(content: Path, tmp_path: Path) -> None:
    write_tree(content, {"site.yaml": "base_url: https://example.org/\nrepo_url: https://github.com/acme/encyclopedia\nrepo_branch: trunk\n"})
    assert main(["build", "--out", "site", "--no-search"]) == 0
    edit, report = _contribution_links(tmp_path / "site/failures/first-failure/index.html")
    assert edit == "https://github.com/acme/encyclopedia/edit/trunk/content/failures/first-failure.yaml"
    parts = urlsplit(report)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://github.com/acme/encyclopedia/issues/new"
    assert dict(parse_qsl(parts.query)) == {"template": "entry-correction.yml", "title": "Correction to MTF-0001: First failure",
                                           "entry": "MTF-0001: First failure", "page": "https://example.org/failures/first-failure/"}
    assert '<li><a href="#contribute">Edit or report a problem</a></li>' in (tmp_path / "site/failures/first-failure/index.html").read_text()
    form = yaml.safe_load((ROOT / ".github/ISSUE_TEMPLATE/entry-correction.yml").read_text())
    assert {"entry", "page"} <= {field.get("id") for field in form["body"]}  # GitHub pre-fills fields by id


def test_options_override_the_repository_and_links_carry_the_sub_path(content: Path, tmp_path: Path) -> None:
    assert main(["build", "--out", "site", "--no-search", "--base-url", "https://docs.example.com/enc/",
                 "--repo-url", "https://github.com/acme/enc", "--repo-branch", "release/2026"]) == 0
    edit, report = _contribution_links(tmp_path / "site/failures/second-failure/index.html")
    assert edit == "https://github.com/acme/enc/edit/release/2026/content/failures/second-failure.yaml"
    assert dict(parse_qsl(urlsplit(report).query))["page"] == "https://docs.example.com/enc/failures/second-failure/"


def test_without_a_repository_there_are_no_edit_or_report_links(content: Path, tmp_path: Path) -> None:
    assert main(["build", "--out", "site", "--no-search"]) == 0
    for page in (tmp_path / "site").rglob("*.html"):
        text = page.read_text()
        assert "contribute" not in text and "Edit or report" not in text and "Edit this entry" not in text and "Report a problem" not in text, page
        assert not any("github.com" in link for link in ParsedPage(text).links), page


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--repo-url", "https://github.com/acme/enc/", "must be the repository's web address without a trailing '/' or '.git' (e.g. https://github.com/owner/name)"),
    ("--repo-url", "https://github.com/acme/enc.git", "must be the repository's web address without a trailing '/' or '.git' (e.g. https://github.com/owner/name)"),
    ("--repo-url", "git@github.com:acme/enc", "has the wrong format (expected an https:// URL without spaces)"),
    ("--repo-branch", "my branch", "has the wrong format (expected a branch name such as main)"),
    ("--base-url", "https://example.org/enc", "must end with '/' (the folder the site is served from)"),
])
def test_bad_site_options_are_usage_errors(content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          option: str, value: str, message: str) -> None:
    assert main(["build", "--out", "site", "--no-search", option, value]) == 2
    assert capsys.readouterr().err == f"error: {option} {value!r}: {message}\n"
    assert not (tmp_path / "site").exists()


def test_bad_repository_in_site_yaml_points_at_its_line(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(content, {"site.yaml": "base_url: https://example.org/\nrepo_url: https://github.com/acme/enc/\nrepo_branch: -x y\n"})
    assert main(["check"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "content/site.yaml:2:11: repo_url: 'https://github.com/acme/enc/' must be the repository's web address without a trailing '/' or '.git' (e.g. https://github.com/owner/name) [E013 invalid-value]",
        "content/site.yaml:3:14: repo_branch: '-x y' has the wrong format (expected a branch name such as main) [E013 invalid-value]",
        "2 errors in 1 file",
    ]


def test_a_confirm_step_without_a_command_fails_the_strict_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ROOT / "content", tmp_path / "content")
    monkeypatch.chdir(tmp_path)
    entry = tmp_path / "content/failures/nan-inf-loss.yaml"
    entry.write_text(entry.read_text().replace("confirm:\n", "confirm:\n  - Look at the loss curve and think about it.\n", 1))
    assert main(["check", "--strict"]) == 1
    assert "content/failures/nan-inf-loss.yaml:" in (err := capsys.readouterr().err)
    assert "confirm[0]: is advice (expected the command or code the reader runs, in backticks) [E040 quality-minimum]" in err
