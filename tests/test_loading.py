"""Loading: every kind of bad input yields one exact `path:line:col: field: message` line."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CATEGORIES, entry_yaml, write_tree

from generator.loading import load_content

BASE = entry_yaml()


def _problems(tmp_path: Path, files: dict[str, str | bytes]) -> list[str]:
    write_tree(tmp_path / "content", {"categories.yaml": CATEGORIES, **files})
    return [p.format() for p in load_content(tmp_path / "content", tmp_path).problems]


def test_valid_entry_loads_with_positions(tmp_path: Path) -> None:
    write_tree(tmp_path / "content", {"categories.yaml": CATEGORIES, "failures/ok.yaml": BASE})
    content = load_content(tmp_path / "content", tmp_path)
    assert content.problems == []
    [item] = content.entries
    assert item.slug == "ok"
    assert item.entry.quick_answer.fix == "Find the missing rank."
    assert item.source.at(("quick_answer", "fix")) == (13, 8)
    assert item.source.at(("severity",), key=True) == (4, 1)


BAD = "content/failures/bad.yaml"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            BASE.replace("severity: high", "severity: urgent"),
            f"{BAD}:4:11: severity: 'urgent' is not allowed (expected one of: low, medium, high, critical) [E013 invalid-value]",
            id="bad-literal",
        ),
        pytest.param(
            BASE.replace("title: Sample failure\n", ""),
            f"{BAD}:1:1: title: field required (expected text) [E010 missing-field]",
            id="missing-field",
        ),
        pytest.param(
            BASE.replace("  fix: Find the missing rank.\n", ""),
            f"{BAD}:11:3: quick_answer.fix: field required (expected text) [E010 missing-field]",
            id="missing-nested-field",
        ),
        pytest.param(
            BASE + "symtoms: []\n",
            f"{BAD}:20:1: symtoms: unknown field 'symtoms' (did you mean 'symptoms'?) [E011 unknown-field]",
            id="unknown-field",
        ),
        pytest.param(
            BASE + "symptoms:\n  - symptom: hangs\n    meaning: [1, 2]\n",
            f"{BAD}:22:14: symptoms[0].meaning: got a list (expected text) [E012 wrong-type]",
            id="wrong-type",
        ),
        pytest.param(
            BASE + "symptoms:\n  - symptom: hangs\n",
            f"{BAD}:21:5: symptoms[0].meaning: field required (expected text) [E010 missing-field]",
            id="missing-in-list-item",
        ),
        pytest.param(
            BASE.replace("status: reviewed", "status: reviewed\nstatus: draft"),
            f"{BAD}:8:1: status: duplicate key (first defined at line 7; expected each key once) [E002 duplicate-key]",
            id="duplicate-key",
        ),
        pytest.param(
            BASE.replace("title: Sample failure", "title: 'Sample failure"),
            f"{BAD}:20:1: YAML syntax error: found unexpected end of stream while scanning a quoted scalar that starts at 2:8 (expected valid YAML) [E001 yaml-syntax]",
            id="yaml-syntax",
        ),
        pytest.param(
            BASE.replace("role: collateral", 'role: collateral\n    regex: "WorkNCCL("'),
            f"{BAD}:18:12: signatures[0].regex: does not compile: missing ), unterminated subpattern at position 8 (expected a Python/JavaScript regular expression) [E030 bad-regex]",
            id="bad-regex",
        ),
        pytest.param(
            BASE.replace("role: collateral", 'role: collateral\n    regex: "Watchdog caught collective operation timeout: [a-z]+"'),
            f"{BAD}:20:9: signatures[0].examples[0]: is not matched by the regex 'Watchdog caught collective operation timeout: [a-z]+' [E031 example-mismatch]",
            id="example-not-matched",
        ),
        pytest.param(
            BASE.replace("last_reviewed: 2026-01-31", "last_reviewed: yesterday"),
            f"{BAD}:8:16: last_reviewed: got text 'yesterday' (expected a date such as 2026-01-31) [E012 wrong-type]",
            id="bad-date",
        ),
        pytest.param(
            BASE.replace("id: MTF-0001", "id: 42"),
            f"{BAD}:1:5: id: got a number (expected text) [E012 wrong-type]",
            id="id-not-text",
        ),
        pytest.param(
            BASE.replace("id: MTF-0001", "id: F-1"),
            f"{BAD}:1:5: id: 'F-1' has the wrong format (expected an ID like MTF-0042) [E013 invalid-value]",
            id="id-format",
        ),
        pytest.param(
            BASE + "references:\n  - title: Docs\n    url: javascript:alert(1)\n    kind: docs\n",
            f"{BAD}:22:10: references[0].url: 'javascript:alert(1)' has the wrong format (expected an https:// URL without spaces) [E013 invalid-value]",
            id="non-https-reference",
        ),
        pytest.param(
            "base: &a [1, 2]\nother: *a\n",
            f"{BAD}:2:1: other: uses a YAML alias (expected the value written out) [E003 yaml-alias]",
            id="alias",
        ),
        pytest.param(
            b"id: MTF-0001\ntitle: caf\xe9\n",
            f"{BAD}:2:11: byte 0xe9 is not UTF-8 (expected UTF-8 text) [E004 encoding]",
            id="not-utf8",
        ),
        pytest.param(
            "",
            f"{BAD}:1:1: file is empty (expected a mapping of fields) [E010 missing-field]",
            id="empty",
        ),
    ],
)
def test_bad_entry_gives_exact_message(tmp_path: Path, text: str | bytes, expected: str) -> None:
    assert expected in _problems(tmp_path, {"failures/bad.yaml": text})


def test_every_problem_is_reported_in_one_run(tmp_path: Path) -> None:
    bad = BASE.replace("severity: high", "severity: urgent").replace("status: reviewed", "status: done")
    problems = _problems(tmp_path, {"failures/a.yaml": bad, "failures/b.yaml": "x: [\n"})
    assert [p.split(": ")[0] for p in problems] == [
        "content/failures/a.yaml:4:11", "content/failures/a.yaml:7:9", "content/failures/b.yaml:2:1"]


def test_bom_is_accepted(tmp_path: Path) -> None:
    assert _problems(tmp_path, {"failures/ok.yaml": b"\xef\xbb\xbf" + BASE.encode()}) == []


def test_billion_laughs_is_refused_quickly(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9))
    problems = _problems(tmp_path, {"failures/bomb.yaml": bomb})
    assert problems[0].startswith(f"{BAD.replace('bad', 'bomb')}:2:4: b[0]: uses a YAML alias")


def test_file_name_must_be_a_slug(tmp_path: Path) -> None:
    assert _problems(tmp_path, {"failures/Bad_Name.yaml": BASE}) == [
        "content/failures/Bad_Name.yaml:1:1: file name 'Bad_Name.yaml' is not a slug (expected lowercase words joined by '-', ending in .yaml) [E007 bad-filename]"]


def test_symlink_outside_content_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text(BASE)
    (tmp_path / "content" / "failures").mkdir(parents=True)
    (tmp_path / "content" / "failures" / "link.yaml").symlink_to(secret)
    [problem] = _problems(tmp_path, {})
    assert problem.startswith("content/failures/link.yaml:1:1: refers to ")
    assert problem.endswith("outside the content folder (expected a regular file inside it) [E006 outside-content]")


def test_huge_file_is_refused_without_parsing(tmp_path: Path) -> None:
    problems = _problems(tmp_path, {"failures/huge.yaml": BASE + "# " + "x" * 2_000_000 + "\n"})
    assert problems == [f"content/failures/huge.yaml:1:1: is {len(BASE) + 2_000_003:,} bytes (expected at most 1,000,000) [E005 file-too-large]"]


def test_entries_read_in_parallel_load_exactly_as_in_one_process(tmp_path: Path) -> None:
    from corpus import write_corpus

    from generator.pool import PARALLEL_MIN_CALLS

    assert PARALLEL_MIN_CALLS < 320  # so that two processes read these files
    write_corpus(320, tmp_path / "content")
    failures = tmp_path / "content/failures"
    (failures / "synthetic-failure-00010.yaml").write_text("title: [unclosed\n")
    first = failures / "synthetic-failure-00200.yaml"
    first.write_text(first.read_text().replace("severity: ", "severity: urgent-", 1))
    one, two = (load_content(tmp_path / "content", tmp_path, jobs=jobs) for jobs in (1, 2))
    assert [p.format() for p in two.problems] == [p.format() for p in one.problems]
    assert len(one.problems) >= 2 and one.unreadable == two.unreadable and len(one.unreadable) == 2
    assert [(i.slug, i.entry, i.source.at(("title",))) for i in two.entries] == [(i.slug, i.entry, i.source.at(("title",))) for i in one.entries]


def test_pool_workers_take_sigterm_default_action_and_leave_ctrl_c_to_the_parent() -> None:
    """serve turns SIGTERM into KeyboardInterrupt; forked workers must not inherit that, or
    pool.terminate() can wait for ever on a worker that does not die."""
    import signal

    from generator.pool import PARALLEL_MIN_CALLS, run_parallel

    def handlers() -> tuple[object, object]:
        return signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)

    before = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        seen = set(run_parallel([handlers] * PARALLEL_MIN_CALLS, jobs=2))
    finally:
        signal.signal(signal.SIGTERM, before)
    # Run in the parent, SIGTERM would show the handler set above: each pair is a worker's.
    assert seen == {(signal.SIG_DFL, signal.SIG_IGN)}
