"""Reliability: byte-identical builds whatever the file order, a killed build keeps the old site,
and generated entries (Hypothesis) never crash check or build."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import CATEGORIES, read_tree, write_tree
from htmlparse import ParsedPage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.catalog import build_catalog
from generator.errors import ContentError
from generator.graph import build_graph
from generator.loading import load_content
from generator.rendering import render_site

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_build_does_not_depend_on_file_order_or_hash_seed(tmp_path: Path) -> None:
    files = sorted((ROOT / "content").rglob("*"))
    for name, order, seed in [("a", files, "0"), ("b", list(reversed(files)), "4242")]:
        for path in order:  # create the files in a different order: directory order differs too
            target = tmp_path / name / "content" / path.relative_to(ROOT / "content")
            if path.is_dir():
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, target)
        subprocess.run([sys.executable, "-m", "generator", "build", "--out", "site"], cwd=tmp_path / name, check=True,
                       capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed})
    same = read_tree(tmp_path / "a/site") == read_tree(tmp_path / "b/site")  # outside the assert: pytest's diff of two sites takes minutes
    assert same, "two builds of the same content differ"


def _staged_files(tmp_path: Path) -> int:
    """Return how many files the build has written into its staging folder so far."""
    return sum(len(files) for staging in tmp_path.glob(".site.new-*") for _, _, files in os.walk(staging))


@pytest.mark.slow
def test_killing_a_build_midway_leaves_the_previous_site(tmp_path: Path) -> None:
    from corpus import write_corpus

    write_corpus(400, tmp_path / "content")
    build = [sys.executable, "-m", "generator", "build", "--no-search", "--out", "site"]
    subprocess.run(build, cwd=tmp_path, check=True, capture_output=True)
    before = read_tree(tmp_path / "site")
    (tmp_path / "content/failures/synthetic-failure-00000.yaml").write_text(
        (tmp_path / "content/failures/synthetic-failure-00000.yaml").read_text().replace("Synthetic failure 0:", "Changed failure 0:"))
    moments = {  # when to kill: a clean (full) rebuild while loading, as its first pages are written, halfway through;
        # an incremental build (only the changed files are written) as its first file is written
        "loading": (["--clean"], lambda start: time.monotonic() - start > 0.3),
        "rendering": (["--clean"], lambda start: _staged_files(tmp_path) > 0),
        "writing": (["--clean"], lambda start: _staged_files(tmp_path) > 300),
        "writing an incremental build": ([], lambda start: _staged_files(tmp_path) > 0),
    }
    for moment, (flags, ready) in moments.items():
        proc = subprocess.Popen([*build, *flags], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        start = time.monotonic()
        while proc.poll() is None and not ready(start) and time.monotonic() - start < 120:
            time.sleep(0.002)
        interrupted = proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert interrupted, f"the build finished before it could be killed while {moment}"
        unchanged = read_tree(tmp_path / "site") == before  # compared outside the assert: pytest's diff of two sites takes minutes
        assert unchanged, f"killing the build while {moment} changed the previous site"
    subprocess.run(build, cwd=tmp_path, check=True, capture_output=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.cache", ".site.entries", ".site.graph", ".site.inputs", ".site.templates", "content", "site"]  # leftovers cleaned
    assert "Changed failure 0" in (tmp_path / "site/failures/synthetic-failure-00000/index.html").read_text()


MARKUP = st.lists(st.sampled_from(list("<>&\"'`*_[](){}#%|:\\/\n\t -=!?;aZ0") + ["é", "你", "🙂", "\u202e", "\u0000", "{{", "{%",
                                                                              "<script>", "javascript:", "](", "```"]) | st.characters(),
                  max_size=40).map("".join)
LINE = MARKUP.filter(lambda s: s.strip() != "")


@st.composite
def _entry(draw: st.DrawFn) -> dict[str, object]:
    return {
        "id": "MTF-0100", "title": draw(LINE), "category": "memory",
        "severity": draw(st.sampled_from(["low", "high", "urgent"])), "failure_mode": "hang",
        "tags": draw(st.lists(st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True), max_size=4)),
        "status": draw(st.sampled_from(["draft", "reviewed"])), "last_reviewed": "2026-01-31",
        "summary": draw(LINE), "quick_answer": {"symptom": draw(LINE), "root_cause": draw(LINE), "fix": draw(LINE)},
        "mechanism": draw(MARKUP), "observations": draw(st.lists(LINE, max_size=3)),
        "symptoms": draw(st.lists(st.fixed_dictionaries({"symptom": LINE, "meaning": LINE}), max_size=3)),
        "faq": draw(st.lists(st.fixed_dictionaries({"question": LINE, "answer": MARKUP}), max_size=2)),
        "signatures": draw(st.lists(st.builds(lambda k, e: {"key": k, "role": "root", "examples": [e + k]}, LINE, MARKUP), max_size=2)),
        "related": draw(st.lists(st.fixed_dictionaries({"slug": st.sampled_from(["first-failure", "nowhere", "fuzzed"]),
                                                        "type": st.sampled_from(["causes", "see-also"])}), max_size=2)),
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(entry=_entry())
def test_generated_entries_never_crash_check_or_build(tmp_path_factory: object, entry: dict[str, object]) -> None:
    root = tmp_path_factory.mktemp("fuzz")  # type: ignore[attr-defined]
    write_tree(root / "content", {"categories.yaml": CATEGORIES,
                                  "failures/fuzzed.yaml": yaml.safe_dump(entry, allow_unicode=True)})
    try:
        catalog = build_catalog(load_content(root / "content", root))
    except ContentError as exc:
        for problem in exc.problems:
            assert re.match(r"content/failures/fuzzed\.yaml:\d+:\d+: .+ \[E\d{3} [a-z-]+\]$", problem.format(), re.DOTALL), problem.format()
        return
    for page in render_site(catalog, build_graph(catalog)):
        parsed = ParsedPage(page.text)
        assert parsed.inline_scripts == 0 and parsed.handlers == [], page.path
