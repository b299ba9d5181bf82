"""Content-quality minimums for reviewed entries (warnings; errors under --strict)."""

from __future__ import annotations

import re
from dataclasses import replace

from .catalog import Catalog
from .errors import Problem

MINIMUMS = {
    "symptoms": (3, "symptom rows"),
    "confirm": (3, "confirmation steps"),
    "code_examples": (1, "code example"),
    "faq": (4, "FAQ answers"),
    "references": (2, "references"),
    "signatures": (1, "error signature"),
}
MIN_RELATIONS = 2
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
        if entry.faq and not any(_SCALING.search(f.question) for f in entry.faq):
            problems.append(item.source.problem(("faq",), "E040", "no question on scaling (expected one FAQ on how the failure changes from 1 to 1000 GPUs)", key=True))
    return [replace(p, warning=True) for p in problems]
