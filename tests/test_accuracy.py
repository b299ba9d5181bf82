"""Diagnosis accuracy on real logs: public issue threads and reproductions run on CPU.

Run `python tests/test_accuracy.py` for the per-log table; the test asserts the figures.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.cli import load_catalog
from generator.diagnosis import SignatureIndex, scan

LOGS = ROOT / "tests/data/logs"


@dataclass(frozen=True)
class Outcome:
    file: str
    expect: str | None
    accepted: tuple[str, ...]
    ranked: tuple[str, ...]

    @property
    def top1(self) -> bool:
        return self.ranked[:1] == () if self.expect is None else bool(set(self.ranked[:1]) & set(self.accepted))

    @property
    def top3(self) -> bool:
        return self.top1 if self.expect is None else bool(set(self.ranked[:3]) & set(self.accepted))


def _manifest_items() -> list[tuple[Path, dict[str, object]]]:
    items = []
    for manifest in sorted(LOGS.glob("*/manifest.yaml")):
        data = yaml.safe_load(manifest.read_text())
        for item in data["logs"] if isinstance(data, dict) else data:
            items.append((manifest.parent / str(item["file"]), item))
    return items


def evaluate() -> list[Outcome]:
    """Return the diagnosis outcome of every log listed in the manifests."""
    index = SignatureIndex(load_catalog(ROOT / "content"))
    outcomes = []
    for path, item in _manifest_items():
        expect = item.get("expect")
        accepted = (str(expect), *map(str, item.get("also") or [])) if expect else ()
        ranked = tuple(c.slug for c in scan(index, [(path.name, [path.read_bytes()])]).candidates)
        outcomes.append(Outcome(path.parent.name + "/" + path.name, str(expect) if expect else None, accepted, ranked))
    return outcomes


def test_accuracy_on_real_logs() -> None:
    outcomes = evaluate()
    positives = [o for o in outcomes if o.expect]
    negatives = [o for o in outcomes if not o.expect]
    assert len(outcomes) >= 40 and len({o.expect for o in positives}) >= 15 and negatives
    top1 = sum(o.top1 for o in positives) / len(positives)
    top3 = sum(o.top3 for o in positives) / len(positives)
    misses = [f"{o.file}: expected {o.expect}, got {list(o.ranked[:3])}" for o in positives if not o.top1]
    assert top1 >= 0.9, f"top-1 {top1:.0%}, top-3 {top3:.0%}; misses:\n" + "\n".join(misses)
    assert top3 >= 0.95, misses
    assert [o.file for o in negatives if o.ranked] == []


def test_every_log_exists_and_is_listed_once() -> None:
    listed = [path for path, _ in _manifest_items()]
    assert len(listed) == len(set(listed))
    assert all(path.is_file() for path in listed)
    assert sorted(p for p in LOGS.glob("*/*.log")) == sorted(listed)


if __name__ == "__main__":
    results = evaluate()
    for o in results:
        mark = "ok " if o.top1 else ("top3" if o.top3 else "MISS")
        print(f"{mark} {o.file:70} expect={o.expect} got={list(o.ranked[:3])}")
    pos = [o for o in results if o.expect]
    print(f"\n{len(results)} logs ({len(pos)} positive, {len(results) - len(pos)} negative) across {len({o.expect for o in pos})} entries")
    strict = sum(o.ranked[:1] == (o.expect,) for o in pos) / len(pos)
    print(f"top-1 {sum(o.top1 for o in pos) / len(pos):.1%} (expect only: {strict:.1%})  top-3 {sum(o.top3 for o in pos) / len(pos):.1%}  "
          f"negatives clean {sum(o.top1 for o in results if not o.expect)}/{len(results) - len(pos)}")
