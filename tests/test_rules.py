"""Every numbered rule can fire: one minimal trigger per code, checked through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import entry_yaml, write_tree

from generator.cli import main
from generator.errors import RULES

E = entry_yaml


def _sig(key: str, example: str, regex: str = "") -> str:
    pattern = f"\n    regex: '{regex}'" if regex else ""
    return E("MTF-0003", "Third").replace(
        E().split("signatures:")[1].split("related:")[0],
        f'\n  - key: "{key}"{pattern}\n    role: root\n    examples: ["{example}"]\n')


TRIGGERS: dict[str, dict[str, str | bytes]] = {
    "E001": {"failures/third.yaml": "id: [\n"},
    "E002": {"failures/third.yaml": E("MTF-0003", "Third").replace("status: reviewed", "status: reviewed\nstatus: reviewed")},
    "E003": {"failures/third.yaml": "a: &x [1]\nb: *x\n"},
    "E004": {"failures/third.yaml": b"title: caf\xe9\n"},
    "E005": {"failures/third.yaml": E("MTF-0003", "Third") + "#" + "x" * 1_000_001 + "\n"},
    "E006": {},  # a symlink: made in the test below
    "E007": {"failures/Third.yaml": E("MTF-0003", "Third")},
    "E010": {"failures/third.yaml": E("MTF-0003", "Third").replace("mechanism: Why it happens.\n", "")},
    "E011": {"failures/third.yaml": E("MTF-0003", "Third") + "symtoms: []\n"},
    "E012": {"failures/third.yaml": E("MTF-0003", "Third").replace("tags: [nccl, timeout]", "tags: 3")},
    "E013": {"failures/third.yaml": E("MTF-0003", "Third").replace("severity: high", "severity: urgent")},
    "E020": {"failures/third.yaml": E("MTF-0001", "Third")},
    "E021": {"failures/third.yaml": E("MTF-0003", "Third", category="nowhere")},
    "E022": {"failures/third.yaml": E("MTF-0003", "Third", "- slug: nowhere\n  type: see-also\n")},
    "E023": {"failures/third.yaml": E("MTF-0003", "Third", "- slug: third\n  type: see-also\n")},
    "E024": {"failures/third.yaml": E("MTF-0003", "Third", "- slug: first-failure\n  type: see-also\n- slug: first-failure\n  type: see-also\n")},
    "E025": {"failures/second-failure.yaml": E("MTF-0002", "Second", "- slug: first-failure\n  type: causes\n")},
    "E026": {"hubs/h.yaml": "title: H\nsummary: S\nrows:\n  - {anchor: a, error: e, says: s, indicates: i, where: w, entries: [nowhere]}\n"},
    "E027": {"hubs/h.yaml": "title: H\nsummary: S\nrows:\n  - {anchor: a, error: e, says: s, indicates: i, where: w}\n  - {anchor: a, error: f, says: s, indicates: i, where: w}\n"},
    "E028": {"hubs/h.yaml": "title: H\nsummary: S\nrows:\n  - {anchor: a, error: e, says: s, indicates: i, where: w, env: [NCCL_DEBUG]}\n"},
    "E030": {"failures/third.yaml": _sig("boom", "boom", "boom(")},
    "E031": {"failures/third.yaml": _sig("boom", "nothing here")},
    "E032": {"failures/third.yaml": _sig("Watchdog caught", "[Rank 0] Watchdog caught collective operation timeout")},
    "E033": {"failures/third.yaml": _sig("boom", "boom boom", "(boom )+(b+)+")},
    "E034": {"failures/third.yaml": _sig("boom", "boom 42", "(?:boom)? \\d+")},
    "E054": {"samples/samples.yaml": "samples:\n  - {file: gone.log, title: T, source: 'https://example.org/x', shows: S}\n"},
    "E035": {"failures/third.yaml": _sig("boom", "boom") + "    seen_in: ['https://example.org/a', 'https://example.org/b']\n"},
    "E041": {"failures/third.yaml": E("MTF-0003", "Third")},
    "E040": {"failures/third.yaml": E("MTF-0003", "Third")},
    "E050": {"failures/third.yaml": E("MTF-0003", "Third") + "aliases: [first-failure]\n"},
    "E051": {"ledger.yaml": "MTF-0001: [first-failure]\nMTF-0002: [second-failure]\nMTF-0009: [deleted]\n"},
    "E052": {"failures/third.yaml": E("MTF-0003", "Third")},
    "E053": {"repro/nowhere.py": "print('x')\n"},
}


def test_the_table_covers_every_rule() -> None:
    assert sorted(TRIGGERS) == sorted(RULES)


@pytest.mark.parametrize("code", sorted(TRIGGERS))
def test_rule_can_fire(code: str, content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(content, TRIGGERS[code])
    if code == "E006":
        (tmp_path / "outside.yaml").write_text(E("MTF-0003", "Third"))
        (content / "failures/third.yaml").symlink_to(tmp_path / "outside.yaml")
    assert main(["check", "--strict"]) == 1
    assert f"[{code} {RULES[code].name}]" in capsys.readouterr().err
