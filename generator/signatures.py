"""Error signatures: when a log line matches one, and proving each against its examples."""

from __future__ import annotations

import re
from functools import lru_cache

from .schema import Signature


@lru_cache(maxsize=4096)
def compile_regex(pattern: str) -> re.Pattern[str]:
    """Return the compiled pattern (raises re.error when it does not compile)."""
    return re.compile(pattern)


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
        except re.error as exc:
            return [(("regex",), "E030", f"does not compile: {exc} (expected a Python/JavaScript regular expression)")]
    problems: list[tuple[tuple[str | int, ...], str, str]] = []
    for i, example in enumerate(signature.examples):
        if signature.key not in example:
            problems.append((("examples", i), "E031", f"does not contain the key {signature.key!r} (expected the key as a literal substring)"))
        elif not matches(signature, example):
            problems.append((("examples", i), "E031", f"is not matched by the regex {signature.regex!r}"))
    return problems
