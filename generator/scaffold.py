"""`encyclopedia new`: the text of a new draft entry with every section and what belongs there."""

from __future__ import annotations

import datetime
import json
import re

from .ranks import RULES, fill


def slug_from_title(title: str) -> str:
    """Return a slug for a title: 'NCCL: watchdog timeout!' -> 'nccl-watchdog-timeout'."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:80].strip("-")


def next_id(used: set[str]) -> str:
    """Return the first ID after every ID ever used (live or in the ledger); IDs are never reused."""
    numbers = [int(i.split("-")[1]) for i in used]
    return f"MTF-{max(numbers, default=0) + 1:04d}"


DEFAULT_CATEGORY = "distributed-training"

# The text of a new draft; the page's "Propose an entry" fills the same template (it is in
# the signature payload), so a proposal from the browser and `encyclopedia new` look alike.
DRAFT_TEMPLATE = """# yaml-language-server: $schema=../entry.schema.json
# A new draft. Replace every TODO, fill in the lists, then run `encyclopedia check --strict`.
# CONTRIBUTING.md explains each section and the evidence an error string needs.
id: {id}  # permanent: never change or reuse it
title: {title}
category: {category}  # one of the slugs in content/categories.yaml
severity: medium  # low | medium | high | critical
failure_mode: error  # hang | crash | slow | divergence | silent-corruption | error
tags: []  # lowercase words, e.g. [nccl, timeout]
status: draft  # becomes `reviewed` once it meets the minimums and has been reviewed
last_reviewed: {today}

# What this failure is, in two or three sentences (Markdown).
summary: TODO what this failure is.

# The answer a reader in the middle of an incident needs first.
quick_answer:
  symptom: TODO what the reader sees.
  root_cause: TODO what is really wrong.
  fix: TODO what to do about it.

# Why it happens: the mechanism, in a few paragraphs (Markdown).
mechanism: TODO why it happens.

# What you will observe: one line each.
observations: []

# Symptom table: at least 3 rows of {symptom, meaning}.
symptoms: []

# Affected systems: {name, versions, fixed_in}; versions where known.
affected_systems: []

# How to confirm it: at least 3 steps, each the command or code to run (in backticks).
confirm: []

# Root causes: one line each.
root_causes: []

# Fix steps; then at least 1 way to know the fix worked: {check, code (optional command or
# script), language (default console), expect (what it shows when the fix worked)}; then prevention.
fix: []
verify: []
prevention: []

# Code examples: at least 1 of {stack, title, language, code, why}.
code_examples: []

# Error signatures, exactly as the tool prints them, each proven by real example lines:
# {key, regex (optional, containing the key), role: root | collateral, versions (optional),
#  source: {repo, ref (a release tag or commit), path} of the file that prints it,
#  examples: [...], seen_in: [the thread URL, or repro, for each example]}.
# Cite the upstream source or issue thread of every string under references.
{signatures}

# FAQ: at least 4 {question, answer}, one on how it changes from 1 GPU to 1000 GPUs.
faq: []

# References: at least 2 of {title, url (https only), kind: docs | issue | source | paper}.
references: []

# Typed relations to other entries: {slug, type: causes | caused-by | confused-with | see-also}.
related: []
"""
NO_SIGNATURES = "signatures: []"
_PREFIXES = [re.compile(p) for p in RULES["draft_prefixes"]]  # type: ignore[attr-defined]


def draft_entry(entry_id: str, title: str, category: str, today: datetime.date, line: str | None = None) -> str:
    """Return a valid draft entry: every section present, each with a comment on what belongs there;
    with a log line, its first signature has that line as the example."""
    return fill(DRAFT_TEMPLATE, id=entry_id, title=json.dumps(title, ensure_ascii=False), category=category,
                today=today.isoformat(), signatures=signature_block(line) if line else NO_SIGNATURES)


def signature_key(line: str) -> str:
    """Return a first guess at a signature key for a log line: the message without launcher,
    logger and time prefixes, up to its first number (the contributor makes it exact)."""
    text = line.strip()
    for prefix in _PREFIXES:
        text = prefix.sub("", text, count=1)
    number = re.search(r"\d", text[20:])
    text = text[:20 + number.start()] if number else text
    return text[:120].rstrip(" :=,([{'\"") or line.strip()[:120]


def signature_block(line: str) -> str:
    """Return the signatures section of a draft whose first example is this log line."""
    return ("signatures:\n"
            f"  - key: {json.dumps(signature_key(line), ensure_ascii=False)}\n"
            "    role: root  # root: this message names the failure; collateral: other ranks print it because of it\n"
            "    examples:\n"
            f"      - {json.dumps(line.strip(), ensure_ascii=False)}")
