"""The CLI and the page give the same answers: stored test vectors of every real log.

tests/data/logs/vectors.json holds, for every log in dev/ and test/, what the Python
engine answers (slug, role, score, explanation, possible causes, the cross-rank result).
The Python test checks the engine still gives exactly that; the browser test runs the
page's engine in Chromium on the same logs and compares. After a change to signatures
or ranking, regenerate on purpose and review the diff:

    python tests/test_parity.py --regenerate
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.answers import diagnosis_json
from generator.api import signature_data
from generator.build import load_catalog
from generator.diagnosis import SignatureIndex, scan

LOGS = ROOT / "tests/data/logs"
VECTORS = LOGS / "vectors.json"


def comparable(result: dict) -> dict:  # type: ignore[type-arg]
    """Return the parts of a diagnosis both engines must agree on."""
    return {
        "candidates": [{k: c[k] for k in ("slug", "role", "score", "explanation", "ranks", "matched_lines", "basis")}
                       | {"evidence": [[e["line"], e["rank"], e["role"], e["signature"]] for e in c["evidence"]]}
                       for c in result["candidates"]],
        "possible_causes": [c["slug"] for c in result["possible_causes"]],
        "routine": [r["note"] for r in result["routine"]],
        "notable": [[n["line"], n["rank"], n["text"]] for n in result["notable"]],
        "stopped": result["stopped"],
        "cut": result["cut"],
        "cross_rank": result["cross_rank"],
    }


def _logs() -> Iterator[Path]:
    yield from sorted(LOGS.glob("*/*.log"))


def python_vectors() -> dict[str, dict]:  # type: ignore[type-arg]
    """Return the Python engine's answer for every real log."""
    index = SignatureIndex(signature_data(load_catalog(ROOT / "content")))
    return {f"{p.parent.name}/{p.name}": comparable(diagnosis_json(scan(index, [(p.name, [p.read_bytes()])]))) for p in _logs()}


def test_python_engine_gives_the_stored_vectors() -> None:
    stored = json.loads(VECTORS.read_text(encoding="utf-8"))
    current = python_vectors()
    assert sorted(stored) == sorted(current), "logs were added or removed: regenerate the vectors"
    changed = [name for name in current if current[name] != stored[name]]
    assert changed == [], f"{len(changed)} answers changed, e.g. {changed[:5]}: review, then python tests/test_parity.py --regenerate"


@pytest.mark.browser
def test_the_page_gives_the_same_answers_as_the_cli(browser, built_site: Path) -> None:
    from browser import open_page, serve

    stored = json.loads(VECTORS.read_text(encoding="utf-8"))
    server, base = serve(built_site)
    try:
        page, errors = open_page(browser, base + "diagnose/")
        logs = [[p.name, p.read_bytes().decode("utf-8", errors="replace")] for p in _logs()]
        results = page.evaluate("async (logs) => { const out = []; for (const log of logs) out.push(await window.encyclopediaDiagnose([log])); return out; }", logs)
        assert errors.errors == []
    finally:
        server.shutdown()
    answers = {f"{p.parent.name}/{p.name}": comparable(r) for p, r in zip(_logs(), results)}
    assert sorted(answers) == sorted(stored)
    different = [name for name in stored if answers[name] != stored[name]]
    first = different[0] if different else ""
    assert different == [], f"{len(different)} differ; first {first}:\npage {answers.get(first)}\ncli  {stored.get(first)}"

if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        raise SystemExit("usage: python tests/test_parity.py --regenerate")
    VECTORS.write_text(json.dumps(python_vectors(), indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {VECTORS}")
