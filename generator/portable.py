"""The portable regular-expression subset: patterns that mean the same in Python and JavaScript.

Signatures run in Python (`encyclopedia diagnose`) and in the reader's browser, so a
pattern may only use constructs both engines read alike, and none that can backtrack
catastrophically: a contributed pattern must not be able to hang a reader's tab.
Python compiles them with re.ASCII so that \\d, \\w and \\s match what JavaScript's do.
"""

from __future__ import annotations

import re
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]
from typing import Any

MAX_LENGTH = 300
_ALLOWED_CATEGORIES = {
    C.CATEGORY_DIGIT, C.CATEGORY_NOT_DIGIT, C.CATEGORY_WORD, C.CATEGORY_NOT_WORD,
    C.CATEGORY_SPACE, C.CATEGORY_NOT_SPACE,
}
_ALLOWED_AT = {C.AT_BEGINNING, C.AT_END, C.AT_BOUNDARY, C.AT_NON_BOUNDARY}


class NotPortable(ValueError):
    """The pattern uses a construct outside the portable subset."""


def compile_portable(pattern: str) -> re.Pattern[str]:
    """Return the pattern compiled for Python, or raise NotPortable / re.error saying why."""
    if len(pattern) > MAX_LENGTH:
        raise NotPortable(f"is {len(pattern)} characters long (expected at most {MAX_LENGTH})")
    if "(?P" in pattern or "(?<" in pattern or "(?=" in pattern or "(?!" in pattern:
        raise NotPortable("uses a lookaround or a named group (expected plain and (?:...) groups only)")
    if re.search(r"\(\?[aiLmsux-]", pattern):
        raise NotPortable("uses inline flags such as (?i) (expected none: JavaScript does not read them)")
    if re.search(r"\\[AZzGNpPUuxX0-9]", pattern):
        raise NotPortable(r"uses an escape that JavaScript reads differently (\A, \Z, \N, \p, \u, \x, back-references)")
    if re.search(r"\[\[:|\{,", pattern):
        raise NotPortable("uses POSIX classes or {,n} (expected [a-z] classes and {m,n})")
    compiled = re.compile(pattern, re.ASCII)
    _walk(P.parse(pattern, re.ASCII), in_unbounded=False)
    return compiled


def requires_text(pattern: str, text: str) -> bool:
    """Return whether every match of a portable pattern contains `text`, judged from its shape:
    `text` lies in one run of literal characters that no optional part or alternative skips."""
    return _requires(P.parse(pattern, re.ASCII), text)


def _requires(items: Any, text: str) -> bool:
    run = ""
    for op, arg in items:
        if op == C.LITERAL:
            run += chr(arg)
            if text in run:
                return True
            continue
        run = ""
        if op == C.SUBPATTERN and _requires(arg[-1], text):
            return True
        if op == C.BRANCH and all(_requires(branch, text) for branch in arg[1]):
            return True
        if op in (C.MAX_REPEAT, C.MIN_REPEAT) and arg[0] >= 1 and _requires(arg[2], text):
            return True
    return False


def pinned_length(pattern: str) -> int:
    """Return how many characters every match of a portable pattern spells out literally
    (an optional part counts nothing, an alternation its shortest branch)."""
    return _pinned(P.parse(pattern, re.ASCII))


def _pinned(items: Any) -> int:
    total = 0
    for op, arg in items:
        if op == C.LITERAL:
            total += 1
        elif op == C.SUBPATTERN:
            total += _pinned(arg[-1])
        elif op == C.BRANCH:
            total += min(_pinned(branch) for branch in arg[1])
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and arg[0] >= 1:
            total += _pinned(arg[2])
    return total


def _walk(items: Any, in_unbounded: bool) -> None:
    for op, arg in items:
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            _low, high, body = arg
            unbounded = high == C.MAXREPEAT or high > 1000
            if unbounded and in_unbounded:
                raise NotPortable("nests one unbounded repeat inside another, which can backtrack catastrophically "
                                  "(expected at most one level of *, + or {n,})")
            _walk(body, in_unbounded or unbounded)
        elif op == C.POSSESSIVE_REPEAT or op == C.ATOMIC_GROUP:
            raise NotPortable("uses possessive or atomic groups (expected none: JavaScript lacks them)")
        elif op == C.SUBPATTERN:
            _walk(arg[-1], in_unbounded)
        elif op == C.BRANCH:
            for branch in arg[1]:
                _walk(branch, in_unbounded)
        elif op == C.IN:
            for kind, value in arg:
                if kind == C.CATEGORY and value not in _ALLOWED_CATEGORIES:
                    raise NotPortable(f"uses the class {value} (expected \\d, \\w, \\s and their negations)")
        elif op == C.AT:
            if arg not in _ALLOWED_AT:
                raise NotPortable(f"uses the anchor {arg} (expected ^, $ or \\b)")
        elif op in (C.ASSERT, C.ASSERT_NOT, C.GROUPREF, C.GROUPREF_EXISTS):
            raise NotPortable("uses lookarounds, back-references or conditionals (expected none)")
        elif op == C.CATEGORY and arg not in _ALLOWED_CATEGORIES:
            raise NotPortable(f"uses the class {arg} (expected \\d, \\w, \\s and their negations)")
