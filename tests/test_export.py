"""The signature exports, run by the real tools on the real logs: grep, mtail scraped over
loopback, and promtool checking and unit-testing the alerting rules."""

from __future__ import annotations

import collections
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from conftest import CATEGORIES, entry_yaml, write_tree

from generator.api import signature_data
from generator.build import load_catalog
from generator.catalog import Catalog
from generator.cli import main
from generator.diagnosis import SignatureIndex, scan, wrap_width
from generator.export import (
    METRIC,
    MTAIL_PATTERN_LIMIT,
    _alternations,
    _mtail_block,
    export,
)
from generator.schema import ROUTINE_ANY
from generator.signatures import line_role

ROOT = Path(__file__).resolve().parent.parent
# Log files as a job writes them: a pipeline never sees a paste hard-wrapped by a terminal,
# which only diagnose joins again.
LOGS = [log for log in sorted((ROOT / "tests" / "data" / "logs").glob("*/*.log"))
        if wrap_width(log.read_bytes().decode("utf-8", errors="replace")) is None]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(ROOT / "content")


@pytest.fixture(scope="module")
def index(catalog: Catalog) -> SignatureIndex:
    return SignatureIndex(signature_data(catalog))


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        message = f"{name} is not installed (.ci/run installs Debian's mtail and prometheus)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.mark.slow
def test_grep_prints_exactly_the_lines_diagnosis_matches(catalog: Catalog, index: SignatureIndex, tmp_path: Path) -> None:
    patterns = tmp_path / "ml-failures.grep"
    patterns.write_text(export(catalog, "grep"), encoding="utf-8")
    # One grep over every log (it compiles the patterns once) prints each file's count as path:count.
    run = subprocess.run(["grep", "-a", "-c", "-H", "-E", "-f", str(patterns), *map(str, LOGS)], capture_output=True, text=True,
                         env={**os.environ, "LC_ALL": "C"}, check=False)
    assert run.returncode in (0, 1), run.stderr
    counted = {path: int(count) for path, count in (line.rsplit(":", 1) for line in run.stdout.splitlines())}
    wrong, total = [], 0
    for log in LOGS:
        expected = scan(index, [(log.name, [log.read_bytes()])]).matched_lines
        total += expected
        if counted[str(log)] != expected:
            wrong.append(f"{log.name}: grep {counted[str(log)]}, diagnose {expected}")
    assert not wrong and len(LOGS) >= 200 and total >= 400, wrong


@pytest.mark.slow
def test_mtail_counts_exactly_the_lines_diagnosis_reports(catalog: Catalog, index: SignatureIndex, tmp_path: Path) -> None:
    mtail = _tool("mtail")
    (tmp_path / "progs").mkdir()
    (tmp_path / "progs" / "ml-failures.mtail").write_text(export(catalog, "mtail"), encoding="utf-8")
    log = tmp_path / "train.log"
    log.write_bytes(b"")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([mtail, "--progs", str(tmp_path / "progs"), "--logs", str(log), "--address", "127.0.0.1",
                               "--port", str(port), "--emit_prog_label=false", "--logtostderr"],
                              stdout=subprocess.DEVNULL, stderr=(tmp_path / "mtail.err").open("w"))
    try:
        _scrape(port, lambda text: "mtail_log_lines_total" in text or "# TYPE" in text)  # mtail is up
        expected: collections.Counter[tuple[str, str]] = collections.Counter()
        lines = 0
        with log.open("ab") as out:  # every real log, written as a training job would write it
            for path in LOGS:
                data = path.read_bytes()
                if "\ufffd".encode() in data:
                    # mtail 3.0.0-rc50 to 3.0.6 (Debian 12 ships rc50) stop reading a file at its first literal
                    # U+FFFD: their decoder takes it for a character cut at a read boundary and waits for the
                    # rest (google/mtail c12a012f; 3.0.7 splits lines on bytes). /alerts/ tells users.
                    continue
                data += b"" if data.endswith(b"\n") else b"\n"
                lines += data.count(b"\n")
                for slug, roles in scan(index, [(path.name, [data])]).lines_by_entry.items():
                    expected.update({(slug, role): count for role, count in roles.items()})
                out.write(data)
        counted = _counted(_read_all(port, lines))
        # mtail's count of lines read can run ahead of its program's counters (seen once on a busy
        # machine: one line short), so read again until they agree, for at most a minute.
        deadline = time.monotonic() + 60
        while counted != dict(expected) and time.monotonic() < deadline:
            time.sleep(1)
            counted = _counted(_scrape(port, lambda text: True))
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert "compile failed" not in (tmp_path / "mtail.err").read_text(), (tmp_path / "mtail.err").read_text()[-2000:]
    assert counted == dict(expected)
    assert len(counted) >= 60 and sum(counted.values()) >= 800


def _counted(metrics: str) -> dict[tuple[str, str], int]:
    return {(slug, role): int(n) for role, slug, n in
            re.findall(METRIC + r'\{entry="[^"]+",role="([^"]+)",slug="([^"]+)"\} (\d+)', metrics)}


def _lines_read(metrics: str) -> int:
    found = re.search(r"mtail_log_lines_total\{[^}]*\} (\d+)", metrics)
    return int(found.group(1)) if found else 0


def _read_all(port: int, lines: int, stall: float = 60.0) -> str:
    """Return the metrics once mtail has read `lines` lines; fail when it reads none for `stall` seconds.

    mtail runs every signature's regex on every line, so on a busy machine reading the whole corpus
    takes minutes: the wait is on its progress, not on a fixed deadline."""
    read = -1
    while True:
        text = _scrape(port, lambda text, seen=read: _lines_read(text) > seen, timeout=stall)  # wait for any progress
        if _lines_read(text) >= lines:
            return text
        read = _lines_read(text)
        time.sleep(1)


def _scrape(port: int, done: object, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
            if done(text):  # type: ignore[operator]
                return text
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"mtail did not get there in {timeout} s; last scrape:\n{text[-2000:]}")


def test_promtool_accepts_the_rules(catalog: Catalog, tmp_path: Path) -> None:
    promtool = _tool("promtool")
    rules = tmp_path / "ml-failures.rules.yml"
    rules.write_text(export(catalog, "prometheus-rules"), encoding="utf-8")
    run = subprocess.run([promtool, "check", "rules", str(rules)], capture_output=True, text=True, check=False)
    count = len(yaml.safe_load(rules.read_text())["groups"][0]["rules"])
    assert run.returncode == 0 and f"SUCCESS: {count} rules found" in run.stdout, run.stdout + run.stderr
    assert count >= 60


def test_routine_messages_alert_above_a_limited_count_and_never_when_healthy_runs_print_any_number(catalog: Catalog) -> None:
    """Diagnosis calls routine lines with the schema's most (ROUTINE_ANY) healthy in any number, so
    no alert may fire on them; a routine message with a real limit alerts only above it."""
    repeated = {r["labels"]["slug"]: r["expr"] for r in yaml.safe_load(export(catalog, "prometheus-rules"))["groups"][0]["rules"]
                if r["alert"].endswith("Repeated")}
    limits = {slug: max(s.routine for s in item.entry.signatures if line_role(s.role, s.routine) == "routine")
              for slug, item in catalog.entries.items() if any(line_role(s.role, s.routine) == "routine" for s in item.entry.signatures)}
    limited = {slug for slug, limit in limits.items() if limit < ROUTINE_ANY}
    assert limited and limits.keys() - limited, "the content has routine messages of both kinds"
    assert repeated.keys() == limited
    assert all(repeated[slug].endswith(f"> {limits[slug]}") for slug in limited)


# A title with a line break and template markup, a fix with stray template braces, a root signature.
HOSTILE = entry_yaml("MTF-0001", '"Evil {{ $value }} title\\n/.*/ {"').replace(
    "fix: Find the missing rank.", 'fix: "Close it }} then {{ template \\"x\\" }}"').replace("role: collateral", "role: root")


def test_an_alert_fires_from_the_first_line_and_content_never_runs_as_a_template(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    promtool, mtail = _tool("promtool"), _tool("mtail")
    monkeypatch.chdir(tmp_path)
    write_tree(tmp_path / "content", {"categories.yaml": CATEGORIES, "failures/evil.yaml": HOSTILE, "ledger.yaml": "MTF-0001: [evil]\n"})
    assert main(["export", "--format", "prometheus-rules", "--content", "content", "--out", "rules.yml"]) == 0
    [rule] = yaml.safe_load((tmp_path / "rules.yml").read_text())["groups"][0]["rules"]
    series = f'{METRIC}{{entry="MTF-0001",slug="evil",role="root",instance="node-1"}}'
    tests = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [{"series": series, "values": "_ _ 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"}],
        "alert_rule_test": [
            {"eval_time": "1m", "alertname": rule["alert"], "exp_alerts": []},
            {"eval_time": "3m", "alertname": rule["alert"], "exp_alerts": [{
                "exp_labels": {**rule["labels"], "entry": "MTF-0001", "role": "root", "instance": "node-1"},
                "exp_annotations": {
                    "summary": 'Evil {{ $value }} title\n/.*/ { (MTF-0001) on node-1',
                    "description": rule["annotations"]["description"].replace('{{ "{{" }}', "{{").replace('{{ "}}" }}', "}}"),
                    "runbook_url": "https://example.org/failures/evil/"}}]},
            {"eval_time": "15m", "alertname": rule["alert"], "exp_alerts": []},
        ]}]}
    assert 'Close it }} then {{ template "x" }}' in tests["tests"][0]["alert_rule_test"][1]["exp_alerts"][0]["exp_annotations"]["description"]
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(tests, sort_keys=False), encoding="utf-8")
    run = subprocess.run([promtool, "test", "rules", "tests.yml"], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    # The title's line break stays inside a comment: the program compiles and counts one line.
    (tmp_path / "progs").mkdir()
    assert main(["export", "--format", "mtail", "--content", "content", "--out", "progs/evil.mtail"]) == 0
    (tmp_path / "train.log").write_text("x\n[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)\n/.*/ {\n")
    run = subprocess.run([mtail, "--progs", "progs", "--logs", "train.log", "--one_shot", "--one_shot_format", "prometheus",
                          "--emit_prog_label=false", "--logtostderr"], capture_output=True, text=True, timeout=60, check=False)
    assert f'{METRIC}{{entry="MTF-0001",role="root",slug="evil"}} 1' in run.stdout, run.stdout + run.stderr


def test_every_format_the_cli_offers_is_the_file_the_site_publishes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.cli import EXPORT_FORMATS
    from generator.export import FILES, export_files

    assert sorted(EXPORT_FORMATS) == sorted(FILES)  # the CLI names them without importing export.py
    monkeypatch.chdir(ROOT)
    published = export_files(load_catalog(ROOT / "content", drafts=False))
    for fmt in EXPORT_FORMATS:
        assert main(["export", "--format", fmt, "--out", str(tmp_path / fmt)]) == 0
        assert (tmp_path / fmt).read_bytes() == published[FILES[fmt]].make().encode()  # bytes: a pattern may hold a literal CR


def test_an_alternation_too_long_for_mtail_is_split_into_else_chained_blocks() -> None:
    """mtail refuses a pattern over 1,024 bytes; an entry's signatures are split into blocks under
    the limit, chained with else so that a line is still counted once."""
    patterns = [f"error {i} " + "x" * 400 for i in range(5)]
    chunks = _alternations(patterns)
    assert len(chunks) == 3 and all(len(c) <= MTAIL_PATTERN_LIMIT for c in chunks)
    assert "|".join(chunks) == "|".join(f"(?:{p})" for p in patterns)
    block = _mtail_block(chunks, "n++")
    assert [line.strip() for line in block].count("} else {") == 2 and sum(line.strip() == "n++" for line in block) == 3
