"""Shared test helpers: inline content trees written into tmp_path."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))  # the synthetic corpus (corpus.py)

CATEGORIES = """\
categories:
  - slug: distributed-training
    title: Distributed training
    description: Collectives and process groups.
  - slug: memory
    title: Memory
    description: Running out of memory.
"""

REPOSITORY = "https://github.com/example/encyclopedia"
# A real CUDA runtime message no entry is about (libcudart's cudaErrorCooperativeLaunchTooLarge): the
# query and log for "no exact match" paths. When an entry for it is written, pick another one here.
NO_ENTRY_LINE = "RuntimeError: CUDA error: too many blocks in cooperative launch"


def entry_yaml(id: str = "MTF-0001", title: str = "Sample failure", related: str = "", extra: str = "", category: str = "distributed-training",
               status: str = "reviewed") -> str:
    """Return the text of a small valid entry; `related` and `extra` are appended YAML."""
    text = f"""\
id: {id}
title: {title}
category: {category}
severity: high
failure_mode: hang
tags: [nccl, timeout]
status: {status}
last_reviewed: 2026-01-31
summary: What this failure is.
quick_answer:
  symptom: The job hangs.
  root_cause: A rank is missing.
  fix: Find the missing rank.
mechanism: Why it happens.
signatures:
  - key: "Watchdog caught collective operation timeout"
    role: collateral
    examples:
      - "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE)"
"""
    if related:
        text += "related:\n" + textwrap.indent(textwrap.dedent(related), "  ")
    return text + textwrap.dedent(extra)


def read_tree(root: Path) -> dict[str, bytes]:
    """Return every file under root by its relative path, with its bytes: a site to compare byte for byte."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write {relative path: text} under root (text is dedented) and return root."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content), encoding="utf-8")
    return root


@pytest.fixture
def content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A content folder with categories and two valid related entries; cwd is tmp_path."""
    monkeypatch.chdir(tmp_path)
    write_tree(tmp_path / "content", {
        "categories.yaml": CATEGORIES,
        "failures/first-failure.yaml": entry_yaml("MTF-0001", "First failure", "- slug: second-failure\n  type: causes\n"),
        "failures/second-failure.yaml": entry_yaml("MTF-0002", "Second failure", category="memory"),
        "ledger.yaml": "MTF-0001: [first-failure]\nMTF-0002: [second-failure]\n",
    })
    return tmp_path / "content"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests that drive Chromium as `browser`, and those that need the whole shipped site
    built as `slow`, so that `pytest -m "not browser and not slow"` runs the rest in about a minute."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "browser" in fixtures:
            item.add_marker(pytest.mark.browser)
        if "built_site" in fixtures:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped content built once per test session (with the search index), with a repository
    as the Pages deploy passes it, so that the quality gates also see the edit and report links."""
    from generator.cli import main

    root = Path(__file__).resolve().parent.parent
    out = tmp_path_factory.mktemp("built") / "site"
    assert main(["build", "--content", str(root / "content"), "--out", str(out), "--repo-url", REPOSITORY]) == 0
    return out


@pytest.fixture(scope="module")
def site(built_site: Path) -> Iterator[str]:
    """The shipped site served over loopback HTTP; yields its base URL."""
    from browser import serve

    server, base = serve(built_site)
    yield base
    server.shutdown()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """One headless Chromium (Debian's, driven by Playwright) for the whole session."""
    from browser import ARGS, CHROMIUM, need_browser

    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()
