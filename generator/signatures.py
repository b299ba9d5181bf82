"""Error signatures: when a log line matches one, and proving each against its examples."""

from __future__ import annotations

import re
from functools import lru_cache

from .portable import NotPortable, compile_portable, pinned_length, requires_text
from .schema import Signature


@lru_cache(maxsize=4096)
def compile_regex(pattern: str) -> re.Pattern[str]:
    """Return the compiled pattern (raises re.error or NotPortable when it cannot be used)."""
    return compile_portable(pattern)


def line_role(role: str, routine: int) -> str:
    """Return what a matching line counts as: `routine` for a root message a healthy run prints up to
    `routine` times, else the signature's role (root or collateral)."""
    return "routine" if role == "root" and routine else role


def specificity(signature: Signature) -> int:
    """Return how specific a signature is, to choose between entries that match the same line:
    0 for a catch-all, else the characters it pins (its key's, or its regex's literal text when
    longer), plus 20 for a regex (it pins the line's shape)."""
    if signature.catch_all:
        return 0
    if signature.regex is None:
        return len(signature.key)
    return max(len(signature.key), pinned_length(signature.regex)) + 20


def matches(signature: Signature, line: str) -> bool:
    """Return whether a log line matches: the key is in it and, if given, the regex finds it."""
    if signature.key not in line:
        return False
    return signature.regex is None or compile_regex(signature.regex).search(line) is not None


def check_signature(signature: Signature) -> list[tuple[tuple[str | int, ...], str, str]]:
    """Return (location inside the signature, rule code, message) for each problem."""
    if signature.regex is not None:
        try:
            compile_regex(signature.regex)
        except NotPortable as exc:
            return [(("regex",), "E033", f"{exc}")]
        except re.error as exc:
            return [(("regex",), "E030", f"does not compile: {exc} (expected a Python/JavaScript regular expression)")]
        if not requires_text(signature.regex, signature.key):
            message = f"does not contain the key {signature.key!r} as text every match includes (expected the key in the regex)"
            return [(("regex",), "E034", message)]
    problems: list[tuple[tuple[str | int, ...], str, str]] = []
    if signature.seen_in and len(signature.seen_in) != len(signature.examples):
        counts = f"has {len(signature.seen_in)} items for {len(signature.examples)} examples"
        problems.append((("seen_in",), "E035", f"{counts} (expected where each example was seen, in the same order)"))
    for i, example in enumerate(signature.examples):
        if signature.key not in example:
            problems.append((("examples", i), "E031", f"does not contain the key {signature.key!r} (expected the key as a literal substring)"))
        elif not matches(signature, example):
            problems.append((("examples", i), "E031", f"is not matched by the regex {signature.regex!r}"))
    return problems


_TOKEN = re.compile(r"[A-Za-z0-9_]{3,}")


def find_overlaps(signatures: list[tuple[str, int, Signature]]) -> list[tuple[str, int, str, int, int]]:
    """Return (owner, signature index, other owner, other signature index, example index) for
    each signature that matches another owner's root example line.

    Signatures are indexed by the longest word of their key, so each example line
    is tried only against the few signatures whose anchor word it contains.
    """
    by_anchor: dict[str, list[tuple[str, int, Signature]]] = {}
    for owner, index, sig in signatures:
        words = _TOKEN.findall(sig.key)
        anchor = max(words, key=lambda w: (len(w), w)) if words else ""
        by_anchor.setdefault(anchor, []).append((owner, index, sig))
    found = []
    for other, other_index, other_sig in signatures:
        if other_sig.role != "root":
            continue
        for e, line in enumerate(other_sig.examples):
            candidates = [c for word in {*_TOKEN.findall(line), ""} for c in by_anchor.get(word, [])]
            for owner, index, sig in sorted(candidates, key=lambda c: (c[0], c[1])):
                if owner != other and matches(sig, line):
                    found.append((owner, index, other, other_index, e))
    return sorted(set(found))
