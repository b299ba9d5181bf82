"""`encyclopedia new`: the text of a new draft entry with every section and what belongs there."""

from __future__ import annotations

import datetime
import re

SCHEMA_COMMENT = "# yaml-language-server: $schema=../entry.schema.json"


def slug_from_title(title: str) -> str:
    """Return a slug for a title: 'NCCL: watchdog timeout!' -> 'nccl-watchdog-timeout'."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:80].strip("-")


def next_id(used: set[str]) -> str:
    """Return the first ID after every ID ever used (live or in the ledger); IDs are never reused."""
    numbers = [int(i.split("-")[1]) for i in used]
    return f"MTF-{max(numbers, default=0) + 1:04d}"


def draft_entry(entry_id: str, title: str, category: str, today: datetime.date) -> str:
    """Return a valid draft entry: every section present, each with a comment on what belongs there."""
    quoted = '"' + title.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"""{SCHEMA_COMMENT}
# A new draft. Replace every TODO, fill in the lists, then run `encyclopedia check --strict`.
# CONTRIBUTING.md explains each section and the evidence an error string needs.
id: {entry_id}  # permanent: never change or reuse it
title: {quoted}
category: {category}  # one of the slugs in content/categories.yaml
severity: medium  # low | medium | high | critical
failure_mode: error  # hang | crash | slow | divergence | silent-corruption | error
tags: []  # lowercase words, e.g. [nccl, timeout]
status: draft  # becomes `reviewed` once it meets the minimums and has been reviewed
last_reviewed: {today.isoformat()}

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

# Symptom table: at least 3 rows of {{symptom, meaning}}.
symptoms: []

# Affected systems: {{name, versions, fixed_in}}; versions where known.
affected_systems: []

# How to confirm it: at least 3 concrete steps.
confirm: []

# Root causes: one line each.
root_causes: []

# Fix steps, then prevention.
fix: []
prevention: []

# Code examples: at least 1 of {{stack, title, language, code, why}}.
code_examples: []

# Error signatures, exactly as the tool prints them, each proven by real example lines:
# {{key, regex (optional), role: root | collateral, versions (optional), examples: [...]}}.
# Cite the upstream source or issue thread of every string under references.
signatures: []

# FAQ: at least 4 {{question, answer}}, one on how it changes from 1 GPU to 1000 GPUs.
faq: []

# References: at least 2 of {{title, url (https only), kind: docs | issue | source | paper}}.
references: []

# Typed relations to other entries: {{slug, type: causes | caused-by | confused-with | see-also}}.
related: []
"""
