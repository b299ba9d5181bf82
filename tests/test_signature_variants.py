"""Every root example line still gets the same first answer when a launcher, a logger or a
terminal dresses it differently: rank prefixes of torchrun, srun -l, mpirun and Ray,
logging and glog prefixes, ANSI colours, CRLF line ends and other numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.api import signature_data
from generator.build import load_catalog
from generator.diagnosis import SignatureIndex, scan

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = {
    "torchrun": lambda line: f"[rank3]:{line}",
    "torchrun tee": lambda line: f"[default3]:{line}",
    "srun -l": lambda line: f" 3: {line}",
    "mpirun": lambda line: f"[1,3]<stderr>:{line}",
    "ray": lambda line: f"(RayTrainWorker pid=8123, ip=10.0.0.2) [rank3]:{line}",
    "logging": lambda line: f"2024-05-01 12:00:00,123 - train - ERROR - {line}",
    "glog": lambda line: f"E0501 12:00:00.123456  4242 trainer.cc:12] {line}",
    "ansi": lambda line: f"\x1b[31m{line}\x1b[0m",
    "crlf": lambda line: f"{line}\r",
}


# Signatures that are about a magnitude (a size threshold written in the regex): their other
# numbers keep each number's leading digit, so the size stays on the same side of the threshold.
MAGNITUDE = {"cuda-memory-fragmentation": "matches only an unallocated reserve of 2 GiB or more"}


def _other_numbers(line: str, key: str, keep_leading: bool = False) -> str:
    """Return the line with every number outside the signature key and IP addresses changed (same number of digits).
    Digits inside a word (c10d, Int8Tensor) are part of a name, not a number, and stay."""
    at = line.find(key)

    def bump(m: re.Match[str]) -> str:
        if at <= m.start() < at + len(key) or "." in m.group(0):
            return m.group(0)
        digits = m.group(0)
        lead = digits[0] if keep_leading and (len(digits) > 1 or line[m.end():m.end() + 1] == ".") else ""
        return lead + "".join(str((int(d) + 3) % 10) for d in digits[len(lead):])
    return re.sub(r"\d+(?:\.\d+){3}|(?<![A-Za-z\d])\d+|\d+(?![A-Za-z\d])", bump, line)


def _root_examples() -> list[tuple[str, str, str]]:
    catalog = load_catalog(ROOT / "content")
    return [(slug, sig.key, example) for slug, item in sorted(catalog.entries.items())
            for sig in item.entry.signatures if sig.role == "root" for example in sig.examples]


@pytest.fixture(scope="module")
def index() -> SignatureIndex:
    return SignatureIndex(signature_data(load_catalog(ROOT / "content")))


def _first(index: SignatureIndex, line: str) -> str | None:
    """Return the first answer, or the entry a routine message belongs to."""
    result = scan(index, [("-", [line.encode() + b"\n"])])
    return result.candidates[0].slug if result.candidates else result.routine[0].slug if result.routine else None


def test_dressed_example_lines_keep_their_first_answer(index: SignatureIndex) -> None:
    changed = []
    for slug, key, example in _root_examples():
        bare = _first(index, example)
        dressed = {name: make(example) for name, make in VARIANTS.items()}
        dressed["other numbers"] = _other_numbers(example, key, keep_leading=slug in MAGNITUDE)
        for name, line in dressed.items():
            got = _first(index, line)
            if got != bare:
                changed.append(f"{slug}: {name}: {bare} -> {got}: {line[:120]!r}")
    assert changed == [], f"{len(changed)} dressed lines change the first answer:\n" + "\n".join(changed[:40])


def test_every_root_example_is_answered_by_an_entry_that_owns_it(index: SignatureIndex) -> None:
    """The bare example line of a root signature gets an answer, and it is its own entry or one its entry relates to."""
    catalog = load_catalog(ROOT / "content")
    wrong = []
    for slug, _key, example in _root_examples():
        first = _first(index, example)
        related = {link.slug for link in catalog.links.get(slug, [])}
        if first != slug and first not in related:
            wrong.append(f"{slug}: {first}: {example[:120]!r}")
    assert wrong == [], "\n".join(wrong)
