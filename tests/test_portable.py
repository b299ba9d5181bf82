"""The portable regex subset: what is refused, and that refusals are explained."""

from __future__ import annotations

import re

import pytest

from generator.portable import NotPortable, compile_portable, pinned_length


@pytest.mark.parametrize("pattern", [
    r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=\d+, OpType=[A-Z_]+",
    r"^\[rank\d+\]: (?:CUDA|NCCL) error\b",
    r"Tried to allocate \d+(?:\.\d+)? [GM]iB",
    r"size mismatch for [\w.]+: copying a param with shape",
    r"(?:foo|bar)+ x{2,5}",
])
def test_portable_patterns_compile_with_ascii_classes(pattern: str) -> None:
    assert compile_portable(pattern).flags & re.ASCII


@pytest.mark.parametrize(("pattern", "reason"), [
    (r"(a+)+$", "nests one unbounded repeat inside another"),
    (r"(?:\w*\s?)*x", "nests one unbounded repeat inside another"),
    (r"(?<=rank)\d", "lookaround or a named group"),
    (r"(?P<rank>\d+)", "lookaround or a named group"),
    (r"(?!x)y", "lookaround or a named group"),
    (r"(?i)nccl", "inline flags"),
    (r"\Aerror", "escape that JavaScript reads differently"),
    (r"(a)\1", "escape that JavaScript reads differently"),
    (r"x{,3}", "POSIX classes or {,n}"),
    (r"(?>ab)c", "possessive or atomic"),
    (r"a*+", "possessive or atomic"),
    ("x" * 301, "characters long"),
])
def test_non_portable_patterns_are_refused(pattern: str, reason: str) -> None:
    with pytest.raises(NotPortable, match=re.escape(reason)):
        compile_portable(pattern)


@pytest.mark.parametrize(("pattern", "pinned"), [
    (r"has \d+ params", len("has  params")),
    (r"inconsistent 0 params", len("inconsistent 0 params")),
    (r"Rank (?:\d+ )?failed", len("Rank failed")),  # an optional part pins nothing
    (r"(?:OOM|out of memory) at", len("OOM at")),  # an alternation pins its shortest branch
    (r"x+y{2,3}", 2),  # a required repeat pins its body once
    (r"[ab]c", 1),
])
def test_pinned_length_counts_the_literal_text_every_match_spells(pattern: str, pinned: int) -> None:
    assert pinned_length(pattern) == pinned
