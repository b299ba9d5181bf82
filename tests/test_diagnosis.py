"""Diagnosis: streaming scan, ranking root before collateral, cross-rank reasoning, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import entry_yaml, write_tree

from generator.catalog import build_catalog
from generator.cli import main
from generator.diagnosis import SignatureIndex, scan
from generator.loading import load_content

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
ROOT_OOM = """\
- key: "CUDA out of memory. Tried to allocate"
  role: root
  examples:
    - "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
"""


def _timeout(rank: int, seq: int = 5, op: str = "ALLREDUCE") -> str:
    return (f"[rank{rank}]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank {rank}] Watchdog caught collective "
            f"operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds")


@pytest.fixture
def index(content: Path) -> SignatureIndex:
    """first-failure: a collateral watchdog signature, caused by oom (root OOM signature)."""
    oom = entry_yaml("MTF-0003", "Out of memory", "- slug: first-failure\n  type: causes\n", category="memory")
    oom = oom.replace(oom[oom.index("signatures:"):oom.index("related:")], "signatures:\n" + "\n".join("  " + l for l in ROOT_OOM.splitlines()) + "\n")
    write_tree(content, {"failures/oom.yaml": oom})
    return SignatureIndex(build_catalog(load_content(content)))


def _log(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def test_root_evidence_outranks_louder_collateral_and_explains_it(index: SignatureIndex) -> None:
    log = _log("[rank0]: step 10 loss 1.2", f"[rank2]: {OOM}", _timeout(0), _timeout(1), _timeout(3), _timeout(0))
    result = scan(index, [("train.log", [log])])
    assert [c.slug for c in result.candidates][:2] == ["oom", "first-failure"]
    oom, timeout = result.candidates[0], result.candidates[1]
    assert (oom.role, oom.evidence[0].line, oom.evidence[0].rank) == ("root", 2, "2")
    assert timeout.role == "collateral" and timeout.lines == 4
    assert timeout.explanation == "First failure on ranks 0,1,3 is downstream of Out of memory (train.log:2 on rank 2)."
    assert oom.score > timeout.score


def test_lines_split_across_chunks_and_bad_bytes_are_handled(index: SignatureIndex) -> None:
    log = b"\xff\xfe noise \x80\n" * 3 + _log(f"[rank2]: {OOM}") + b"tail without newline " + OOM.encode()
    chunks = [log[i:i + 7] for i in range(0, len(log), 7)]
    [candidate] = [c for c in scan(index, [("-", chunks)]).candidates if c.slug == "oom"]
    assert [(e.line, e.rank) for e in candidate.evidence] == [(4, "2"), (5, None)]
    assert candidate.evidence[1].text == "tail without newline " + OOM


def test_ranks_that_disagree_point_to_a_desync(index: SignatureIndex) -> None:
    result = scan(index, [("-", [_log(_timeout(0, 7), _timeout(1, 7), _timeout(2, 8, "BROADCAST"))])])
    assert result.cross_rank is not None and result.cross_rank.case == "desync"
    assert "ranks 0,1 at SeqNum=7 ALLREDUCE; rank 2 at SeqNum=8 BROADCAST" in result.cross_rank.summary


def test_a_silent_rank_is_named(index: SignatureIndex) -> None:
    result = scan(index, [("-", [_log("[rank3]: epoch 1 step 40", _timeout(0), _timeout(1), _timeout(2))])])
    assert result.cross_rank is not None
    assert (result.cross_rank.case, result.cross_rank.missing) == ("missing-ranks", ["3"])


def test_cli_json_shape_and_exit_codes(index: SignatureIndex, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.log").write_bytes(_log(f"[rank2]: {OOM}", _timeout(0)))
    (tmp_path / "clean.log").write_bytes(_log("all good"))
    assert main(["diagnose", "--json", "a.log"]) == 0
    result = json.loads(capsys.readouterr().out)
    first = result["candidates"][0]
    assert {"slug", "id", "title", "score", "role", "evidence", "explanation"} <= set(first)
    assert {"line", "rank", "text", "signature", "role"} <= set(first["evidence"][0])
    assert (first["slug"], first["evidence"][0]["line"]) == ("oom", 1)
    assert main(["diagnose", "clean.log"]) == 1
    assert capsys.readouterr().out == "No known error signature matched this log.\n"
    assert main(["diagnose", "missing.log"]) == 2


def test_cli_reads_standard_input(index: SignatureIndex, tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "generator", "diagnose", "-"], input=_log(f"[rank2]: {OOM}"),
                         capture_output=True, cwd=tmp_path, check=False)
    assert run.returncode == 0
    assert b"1. Out of memory [MTF-0003] root" in run.stdout
