"""Content-quality minimums for reviewed entries (warnings; errors under --strict)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from .catalog import Catalog
from .errors import Problem
from .signatures import find_overlaps

MINIMUMS = {
    "symptoms": (3, "symptom rows"),
    "confirm": (3, "confirmation steps"),
    "verify": (1, "way to verify the fix"),
    "code_examples": (1, "code example"),
    "faq": (4, "FAQ answers"),
    "references": (2, "references"),
    "signatures": (1, "error signature"),
}
MIN_RELATIONS = 2
_TODO = re.compile(r"\bTODO\b")
_SCALING = re.compile(r"\b1\s*(to|→|->)\s*1,?000\b|\b1,?000 GPUs\b|\bscal", re.IGNORECASE)


def check_quality(catalog: Catalog) -> list[Problem]:
    """Return a warning for each reviewed entry below a content minimum."""
    problems: list[Problem] = []
    for slug in sorted(catalog.entries):
        item = catalog.entries[slug]
        entry = item.entry
        if entry.status != "reviewed":
            continue
        for name, (least, what) in MINIMUMS.items():
            if len(getattr(entry, name)) < least:
                problems.append(item.source.problem((name,), "E040", f"has {len(getattr(entry, name))} (expected at least {least} {what} in a reviewed entry)", key=True))
        if len(catalog.links.get(slug, [])) < MIN_RELATIONS:
            problems.append(item.source.problem(("related",), "E040", f"has {len(catalog.links.get(slug, []))} typed relations counting inverses (expected at least {MIN_RELATIONS})", key=True))
        for i, sig in enumerate(entry.signatures):
            if sig.source is None and sig.closed_source is None:
                problems.append(item.source.problem(("signatures", i, "key"), "E041", "has no source (expected the file that prints it: source: "
                                                    "{repo, ref, path} at a release tag or commit, or closed_source: the program)", key=True))
            if not sig.seen_in:
                problems.append(item.source.problem(("signatures", i, "examples"), "E041", "say nowhere where they were seen "
                                                    "(expected seen_in: a thread URL or repro per example)", key=True))
        for i, step in enumerate(entry.confirm):
            if "`" not in step:
                problems.append(item.source.problem(("confirm", i), "E040", "is advice (expected the command or code the reader runs, in backticks)"))
        for loc in _placeholders(entry.model_dump()):
            problems.append(item.source.problem(loc, "E040", "still holds a TODO placeholder (expected the text written out)"))
        if entry.faq and not any(_SCALING.search(f.question) for f in entry.faq):
            problems.append(item.source.problem(("faq",), "E040", "no question on scaling (expected one FAQ on how the failure changes from 1 to 1000 GPUs)", key=True))
    problems += _overlaps(catalog)
    for slug, item in sorted(catalog.entries.items()):
        if slug not in catalog.ledger.root.get(item.entry.id, []):
            problems.append(item.source.problem(("id",), "E052", f"{item.entry.id} {slug} is not recorded in content/ledger.yaml (run `encyclopedia ledger`)"))
    return [replace(p, warning=True) for p in problems]


def _placeholders(value: object, loc: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Yield the location of every text that still says TODO, as `encyclopedia new` left it."""
    if isinstance(value, str):
        if _TODO.search(value):
            yield loc
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _placeholders(item, (*loc, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _placeholders(item, (*loc, i))


def _overlaps(catalog: Catalog) -> list[Problem]:
    signatures = [(slug, i, sig) for slug, item in sorted(catalog.entries.items()) for i, sig in enumerate(item.entry.signatures)]
    problems = []
    reported = set()
    for owner, index, other, other_index, example in find_overlaps(signatures):
        # Related entries may share a line (an OOM caused by a leak); the relation explains it.
        # A catch-all yields to the other entry's specific signature on that line (two catch-alls would tie).
        yields = catalog.entries[owner].entry.signatures[index].catch_all and not catalog.entries[other].entry.signatures[other_index].catch_all
        if any(link.slug == other for link in catalog.links.get(owner, [])) or (owner, index, other) in reported or yields:
            continue
        reported.add((owner, index, other))
        there = catalog.entries[other]
        line, col = there.source.at(("signatures", other_index, "examples", example))
        key = catalog.entries[owner].entry.signatures[index].key
        problems.append(catalog.entries[owner].source.problem(("signatures", index, "key"), "E032",
            f"{key!r} also matches a root example of another entry at {there.path}:{line}:{col} (expected a signature specific to this entry)"))
    return problems
