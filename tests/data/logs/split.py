"""Split the real logs into dev/ and test/ by issue thread, with a recorded seed.

Run once per batch of newly collected logs: `python tests/data/logs/split.py incoming/GROUP ...`
(folders under tests/data/logs/, each with a manifest.yaml). Every log of one thread lands
in the same split. A thread goes to dev when
- its log was used before the split (the `public/` and `repro/` sets the signatures were
  written from), an entry already cites it (an entry's example lines may come from it), or
  another log of it is already in dev;
- otherwise by the seeded hash below: sha256(SEED + ":" + thread URL) < TEST_SHARE -> test.
Signatures and ranking are tuned on dev only. A test log opened to fix a miss moves to dev
(`--to-dev FILE [REASON]`) and is replaced by a newly collected one; so does a test log
whose thread an entry took example lines from.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import yaml

SEED = "mtf-split-2026-11-30"
TEST_SHARE = 0.6
LOGS = Path(__file__).resolve().parent
CONTENT = LOGS.parents[2] / "content"
HEADER = {
    "dev": "# Real logs for tuning signatures and ranking (tests/data/logs/split.py assigns threads).\n",
    "test": "# Held-back real logs: never tune on these; quote their figures (tests/data/logs/split.py).\n",
}


def is_test(source: str) -> bool:
    """Return whether the seeded hash puts this thread in the test split."""
    digest = hashlib.sha256(f"{SEED}:{source}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < TEST_SHARE


def cited_threads() -> set[str]:
    """Return every issue thread the content cites (an entry written from a thread has seen its logs)."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in CONTENT.glob("**/*.yaml"))
    return {m.rstrip("/") for m in re.findall(r"https://github\.com/[^\s\"'#)]+/(?:issues|pull|discussions)/\d+", text)}


def _load(split: str) -> list[dict[str, object]]:
    path = LOGS / split / "manifest.yaml"
    return (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("logs", []) if path.exists() else []


def _save(split: str, items: list[dict[str, object]]) -> None:
    (LOGS / split).mkdir(exist_ok=True)
    body = yaml.safe_dump({"logs": sorted(items, key=lambda i: str(i["file"]))}, sort_keys=False, allow_unicode=True, width=200)
    (LOGS / split / "manifest.yaml").write_text(HEADER[split] + body, encoding="utf-8")


def split(folders: list[Path], forced_dev: bool = False) -> None:
    """Move the logs of each folder into dev/ or test/ and append them to that split's manifest."""
    cited = cited_threads()
    splits = {name: _load(name) for name in ("dev", "test")}
    taken = {str(i["file"]) for items in splits.values() for i in items}
    batches = {folder: yaml.safe_load((folder / "manifest.yaml").read_text(encoding="utf-8"))["logs"] for folder in folders}
    for folder, items in batches.items():  # checked before anything moves: a refused split leaves every file where it was
        names = [str(i["file"]) for i in items]
        if stray := sorted({p.name for p in folder.iterdir()} - set(names) - {"manifest.yaml"}):
            raise SystemExit(f"{folder}: not in its manifest: {', '.join(stray)} (move them out first)")
        if clash := sorted(n for n in names if n in taken or names.count(n) > 1):
            raise SystemExit(f"{folder}: a log of that name is already in a split: {', '.join(clash)}")
        taken.update(names)
    in_dev = {str(i["source"]).rstrip("/") for i in splits["dev"]}  # a thread never sits in both splits
    for folder, items in batches.items():
        for item in items:
            source = str(item["source"]).rstrip("/")
            name = "dev" if forced_dev or source in in_dev or source in cited or not source.startswith("https://") or not is_test(source) else "test"
            (LOGS / name).mkdir(exist_ok=True)
            (folder / str(item["file"])).rename(LOGS / name / str(item["file"]))
            item.setdefault("group", folder.name)
            splits[name].append(item)
        (folder / "manifest.yaml").unlink()
        folder.rmdir()
    for name, items in splits.items():
        _save(name, items)


def move_to_dev(file: str, reason: str = "opened to fix a miss") -> None:
    """Move one test log (and every other log of its thread) to dev."""
    test, dev = _load("test"), _load("dev")
    source = next(i["source"] for i in test if i["file"] == file)
    for item in [i for i in test if i["source"] == source]:
        (LOGS / "test" / str(item["file"])).rename(LOGS / "dev" / str(item["file"]))
        test.remove(item)
        dev.append({**item, "moved": reason})
    _save("test", test)
    _save("dev", dev)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--to-dev"]:
        move_to_dev(args[1], " ".join(args[2:]) or "opened to fix a miss")
    elif args[:1] == ["--dev"]:
        split([LOGS / a for a in args[1:]], forced_dev=True)
    else:
        split([LOGS / a for a in args])
