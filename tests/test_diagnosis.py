"""Diagnosis: streaming scan, ownership ranking, possible causes, cross-rank reasoning, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import CATEGORIES, NO_ENTRY_LINE, entry_yaml, write_tree

from generator.answers import format_diagnosis
from generator.api import signature_data
from generator.build import load_catalog
from generator.catalog import build_catalog
from generator.cli import main
from generator.diagnosis import SignatureIndex, scan, wrap_width
from generator.loading import load_content
from generator.quality import check_quality
from generator.ranks import rank_list

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "tests/data/logs"
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
WATCHDOG = "Watchdog caught collective operation timeout"


def _entry(id: str, title: str, signatures: str, related: str = "") -> str:
    text = entry_yaml(id, title, related)
    start, end = text.index("signatures:"), text.index("related:") if related else len(text)
    return text[:start] + "signatures:\n" + signatures + text[end:]


def _sig(key: str, role: str, example: str, extra: str = "") -> str:
    return f'  - key: "{key}"\n    role: {role}\n{extra}    examples:\n      - "{example}"\n'


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SignatureIndex:
    """watchdog owns the timeout message; oom, zeta-cause and alpha-cause cause it (declared in that order)."""
    monkeypatch.chdir(tmp_path)
    timeout_line = f"[Rank 0] {WATCHDOG}: WorkNCCL(SeqNum=1, OpType=ALLREDUCE)"
    write_tree(tmp_path / "content", {
        "categories.yaml": CATEGORIES,
        "failures/watchdog.yaml": _entry("MTF-0001", "Watchdog timeout", _sig(WATCHDOG, "root", timeout_line),
                                         "- slug: zeta-cause\n  type: caused-by\n- slug: oom\n  type: caused-by\n"
                                         "- slug: alpha-cause\n  type: caused-by\n"),
        "failures/oom.yaml": _entry("MTF-0002", "Out of memory", _sig("CUDA out of memory. Tried to allocate", "root", OOM)),
        "failures/zeta-cause.yaml": _entry("MTF-0003", "Zeta cause", _sig(WATCHDOG, "collateral", timeout_line)
                                           + _sig("zeta went wrong", "root", "zeta went wrong here")),
        "failures/alpha-cause.yaml": _entry("MTF-0004", "Alpha cause", _sig(WATCHDOG, "collateral", timeout_line)),
        "failures/recompile.yaml": _entry("MTF-0005", "Recompiles", _sig("Recompiling function", "root", "Recompiling function f", "    routine: 2\n")),
        "ledger.yaml": "".join(f"MTF-000{i}: [{s}]\n" for i, s in enumerate(["watchdog", "oom", "zeta-cause", "alpha-cause", "recompile"], 1)),
    })
    return SignatureIndex(signature_data(build_catalog(load_content(tmp_path / "content"))))


def _timeout(rank: int, seq: int = 5, op: str = "ALLREDUCE") -> str:
    return (f"[rank{rank}]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank {rank}] {WATCHDOG}: "
            f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds")


def _pg_failure(rank: int, pg: int, seq: int, enqueued: int) -> str:
    """The PyTorch 2.5+ wording, with its process-group tag."""
    return (f"[rank{rank}]:[E1118 20:32:23.957372583 ProcessGroupNCCL.cpp:2168] [PG ID {pg} PG GUID {pg} Rank {rank}]  "
            f"failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: {enqueued}, last completed work: {seq - 1}")


def _log(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _slugs(index: SignatureIndex, *lines: str) -> list[str]:
    return [c.slug for c in scan(index, [("-", [_log(*lines)])]).candidates]


def test_root_evidence_outranks_louder_collateral_and_explains_it(index: SignatureIndex) -> None:
    result = scan(index, [("train.log", [_log("[rank0]: step 10 loss 1.2", f"[rank2]: {OOM}", _timeout(0), _timeout(1), _timeout(3))])])
    assert [c.slug for c in result.candidates] == ["oom", "watchdog"]
    oom, timeout = result.candidates
    assert (oom.role, oom.evidence[0].line, oom.evidence[0].rank, oom.explanation) == ("root", 2, "2", "Earliest root evidence: train.log:2 on rank 2.")
    assert timeout.explanation == "Watchdog timeout on ranks 0, 1 and 3 (3) is downstream of Out of memory (train.log:2 on rank 2)."
    assert oom.score > timeout.score


def test_a_symptom_alone_gets_its_owner_first_and_its_causes_apart_in_the_owners_order(index: SignatureIndex) -> None:
    result = scan(index, [("-", [_log(_timeout(0), _timeout(1))])])
    assert [c.slug for c in result.candidates] == ["watchdog"]  # the entries that only see the message are not answers
    assert [c.slug for c in result.possible_causes] == ["zeta-cause", "oom", "alpha-cause"]  # the order watchdog.yaml gives
    assert result.possible_causes[0].look_for == ["zeta went wrong"]


def test_a_catch_all_signature_yields_to_the_entry_about_the_exact_message(tmp_path: Path) -> None:
    catch_all = "    regex: \"ModuleNotFoundError: No module named '\\\\w+'\"\n    catch_all: true\n"
    apex_line = "ModuleNotFoundError: No module named 'amp_C'"
    write_tree(tmp_path / "content", {
        "categories.yaml": CATEGORIES,
        "failures/missing.yaml": _entry("MTF-0001", "Any missing module", _sig("No module named '", "root", "ModuleNotFoundError: No module named 'fire'", catch_all)),
        "failures/apex.yaml": _entry("MTF-0002", "Apex without extensions", _sig("No module named 'amp_C'", "root", apex_line)),
        "ledger.yaml": "MTF-0001: [missing]\nMTF-0002: [apex]\n",
    })
    catalog = build_catalog(load_content(tmp_path / "content"))
    index = SignatureIndex(signature_data(catalog))
    # The catch-all's regex pins more text than apex's key, yet on apex's line apex comes first.
    assert _slugs(index, apex_line) == ["apex", "missing"]
    assert _slugs(index, "ModuleNotFoundError: No module named 'fire'") == ["missing"]
    # Beside another entry's specific signature, even a collateral one, the catch-all is no root evidence.
    summary = _entry("MTF-0003", "A launcher's summary", _sig("No module named 'fire'", "collateral", "ModuleNotFoundError: No module named 'fire'"))
    write_tree(tmp_path / "content", {"failures/summary.yaml": summary, "ledger.yaml": "MTF-0001: [missing]\nMTF-0002: [apex]\nMTF-0003: [summary]\n"})
    with_summary = SignatureIndex(signature_data(build_catalog(load_content(tmp_path / "content"))))
    assert [(c.slug, c.role) for c in scan(with_summary, [("-", [_log("ModuleNotFoundError: No module named 'fire'")])]).candidates] == [
        ("summary", "collateral"), ("missing", "collateral")]
    # It matches apex's example line by design, so no overlap warning; two catch-alls on one line would tie, so they warn.
    assert not [p for p in check_quality(catalog) if p.code == "E032"]
    (tmp_path / "content/failures/apex.yaml").write_text(_entry("MTF-0002", "Apex without extensions",
                                                                _sig("No module named '", "root", apex_line, catch_all)))
    assert [p.path for p in check_quality(build_catalog(load_content(tmp_path / "content"))) if p.code == "E032"]


def test_an_entry_seen_only_through_a_catch_all_collateral_signature_has_generic_evidence(tmp_path: Path) -> None:
    line = "RuntimeError: The size of tensor a (8) must match the size of tensor b (16) at non-singleton dimension 1"
    key = "must match the size of tensor b ("
    write_tree(tmp_path / "content", {
        "categories.yaml": CATEGORIES,
        "failures/shapes.yaml": _entry("MTF-0001", "Shapes differ", _sig(key, "collateral", line, "    catch_all: true\n")),
        "failures/sizes.yaml": _entry("MTF-0002", "Sizes differ", _sig(key, "collateral", line)),
        "ledger.yaml": "MTF-0001: [shapes]\nMTF-0002: [sizes]\n",
    })
    index = SignatureIndex(signature_data(build_catalog(load_content(tmp_path / "content"))))
    result = scan(index, [("-", [_log(line)])]).candidates
    # The same key, only one of them a catch-all: that one says less, so it comes second and less confident.
    assert [(c.slug, c.basis) for c in result] == [("sizes", "collateral-first-specific-alone"), ("shapes", "collateral-first-generic-alone")]
    assert result[0].score > result[1].score


def test_on_a_line_only_collateral_signatures_match_the_one_pinning_more_of_it_comes_first(tmp_path: Path) -> None:
    line = "RuntimeError: DDP expects same model across all ranks, but Rank 3 has 7 params, while rank 0 has inconsistent 0 params."
    key = "DDP expects same model across all ranks"
    broad = '    regex: "DDP expects same model across all ranks, but Rank \\\\d+ has \\\\d+ params"\n'
    exact = '    regex: "DDP expects same model across all ranks, but Rank \\\\d+ has \\\\d+ params, while rank \\\\d+ has inconsistent 0 params"\n'
    write_tree(tmp_path / "content", {
        "categories.yaml": CATEGORIES,
        "failures/hang.yaml": _entry("MTF-0001", "A peer hangs", _sig(key, "collateral", line, broad)),
        "failures/model.yaml": _entry("MTF-0002", "Models differ", _sig(key, "collateral", line, exact)),
        "ledger.yaml": "MTF-0001: [hang]\nMTF-0002: [model]\n",
    })
    index = SignatureIndex(signature_data(build_catalog(load_content(tmp_path / "content"))))
    assert _slugs(index, line) == ["model", "hang"]  # not by ID: the exact form's entry pins more of the line


def test_lines_split_across_chunks_and_bad_bytes_are_handled(index: SignatureIndex) -> None:
    log = b"\xff\xfe noise \x80\n" * 3 + _log(f"[rank2]: {OOM}") + b"tail without newline " + OOM.encode()
    chunks = [log[i:i + 7] for i in range(0, len(log), 7)]
    [candidate] = [c for c in scan(index, [("-", chunks)]).candidates if c.slug == "oom"]
    assert [(e.line, e.rank) for e in candidate.evidence] == [(4, "2"), (5, None)]
    assert candidate.evidence[1].text == "tail without newline " + OOM


def test_a_hard_wrapped_paste_is_read_with_its_lines_joined() -> None:
    """A terminal copy cut at its width (a real paste) is matched as if it had not been cut, in
    any chunking; a log whose records merely share one length is read as it is."""
    index = SignatureIndex(signature_data(load_catalog(ROOT / "content")))
    wrapped = (LOGS / "dev/grpo-nccl-watchdog-heartbeat-stuck-wrapped.log").read_bytes()
    assert wrap_width(wrapped.decode()) == 116
    for size in (7, 1 << 20):
        result = scan(index, [("-", [wrapped[i:i + size] for i in range(0, len(wrapped), size)])])
        assert result.candidates[0].slug == "nccl-watchdog-heartbeat-stuck"
    for records in ("torchrun-childfailed-summary-distbackenderror-4-ranks.log", "yolov9-4gpu-allreduce-watchdog-terminate-ranks.log"):
        assert wrap_width((LOGS / "dev" / records).read_text()) is None


def test_the_line_the_search_and_proposal_tests_use_has_no_entry() -> None:
    """Those browser tests need a real message nothing matches; once an entry is about it, say so
    here (quickly, by name) rather than through a label the page shows."""
    index = SignatureIndex(signature_data(load_catalog(ROOT / "content")))
    result = scan(index, [("-", [f"Traceback (most recent call last):\n{NO_ENTRY_LINE}\n".encode()])])
    assert not result.candidates and not result.routine, [c.slug for c in result.candidates]


def test_a_global_rank_announced_twice_while_others_never_start_is_a_duplicate_rank() -> None:
    """Lightning announces each process's rank once; two srun tasks on one node taking ranks 0-1 of 4
    leave ranks 2-3 unannounced. A restart that announces every rank again is no duplicate."""
    index = SignatureIndex(signature_data(load_catalog(ROOT / "content")))
    announce = [f"{task}: Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/4" for r in (0, 1) for task in (0, 1)]
    [first, *_] = scan(index, [("-", [_log(*announce)])]).candidates
    assert first.slug == "duplicate-global-rank-at-init" and first.role == "root"
    assert "Global rank 0 of 4 was announced 2 times (line 1, line 2)" in first.explanation
    assert [(e.line, e.rank) for e in first.evidence] == [(1, "0"), (2, "1")]
    restart = [f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/4" for r in range(4)] * 2
    assert "duplicate-global-rank-at-init" not in [c.slug for c in scan(index, [("-", [_log(*restart)])]).candidates]


def test_a_single_huge_line_is_read_in_bounded_windows(index: SignatureIndex) -> None:
    line = (b"x" * 3000 + OOM.encode()) * 2000 + b"\n" + _log(f"[rank1]: {OOM}")
    chunks = [line[i:i + (1 << 20)] for i in range(0, len(line), 1 << 20)]
    [candidate] = [c for c in scan(index, [("-", chunks)]).candidates if c.slug == "oom"]
    # 2000 matches on line 1, read in bounded windows, still count as one line
    assert candidate.lines == 2
    assert candidate.evidence[0].line == 1 and len(candidate.evidence[0].text) < 3000


def test_ranks_of_one_group_in_different_operations_at_one_number_point_to_a_desync(index: SignatureIndex) -> None:
    ops = {0: "ALLREDUCE", 1: "ALLREDUCE", 2: "BROADCAST"}
    result = scan(index, [("-", [_log(*[line for r, op in ops.items() for line in (_timeout(r, 7, op), _pg_failure(r, 0, 7, 7))])])])
    assert result.cross_rank is not None and result.cross_rank.case == "desync"
    assert "ranks 0 and 1 at SeqNum 7 ALLREDUCE; rank 2 at SeqNum 7 BROADCAST" in result.cross_rank.summary


def test_a_rank_at_an_earlier_number_of_its_group_fell_behind_and_is_no_desync(index: SignatureIndex) -> None:
    """Sequence numbers of one group only grow: ranks at N+1 have passed N, so the rank still in N
    is behind them (a real two-rank paste has this shape), not in a different collective."""
    result = scan(index, [("-", [_log(_pg_failure(0, 1, 8, 8), _pg_failure(1, 1, 8, 8), _pg_failure(2, 1, 7, 7), _timeout(0, 8))])])
    assert result.cross_rank is not None and (result.cross_rank.case, result.cross_rank.stuck) == ("lagging", ["2"])
    assert result.cross_rank.summary == ("Ranks 0 and 1 timed out in SeqNum 8 ALLREDUCE (process group 1). Rank 2 timed out earlier in the "
                                         "sequence (rank 2 at SeqNum 7), in work the others had passed: it fell behind them; read its log first.")


def test_different_sequence_numbers_in_different_groups_are_no_desync(index: SignatureIndex) -> None:
    result = scan(index, [("-", [_log(_pg_failure(0, 0, 7, 7), _pg_failure(1, 0, 7, 7), _pg_failure(0, 3, 120, 120), _pg_failure(1, 3, 120, 120))])])
    assert result.cross_rank is not None and result.cross_rank.case == "agree", result.cross_rank.summary
    assert result.cross_rank.summary == ("Ranks 0 and 1 timed out in SeqNum 7 (process group 0). "
                                         "Ranks 0 and 1 timed out in SeqNum 120 (process group 3).")


def test_unlabelled_reports_with_different_numbers_are_not_called_a_desync(index: SignatureIndex) -> None:
    result = scan(index, [("-", [_log(_timeout(0, 7), _timeout(1, 7), _timeout(2, 8, "BROADCAST"))])])
    assert result.cross_rank is not None and result.cross_rank.case == "undetermined"
    assert "does not say which process group" in result.cross_rank.summary


def test_every_watchdog_wording_counts_as_a_report_so_nobody_is_falsely_accused(index: SignatureIndex) -> None:
    older = ("[rank3]:[E321 02:07:08.465224069 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 3] Exception (either an error or timeout) "
             "detected by watchdog at work: 5, last enqueued NCCL work: 5, last completed NCCL work: 4.")
    result = scan(index, [("-", [_log(_timeout(0), _timeout(1), _timeout(2), older)])])
    assert result.cross_rank is not None and result.cross_rank.stuck == []
    assert result.cross_rank.case == "agree" and "never" not in result.cross_rank.summary, result.cross_rank.summary


def test_a_rank_that_printed_output_is_not_blamed_unless_the_paste_is_complete(index: SignatureIndex) -> None:
    partial = scan(index, [("-", [_log("[rank3]: epoch 1 step 40", _timeout(0), _timeout(1), _timeout(2))])]).cross_rank
    assert partial is not None and (partial.case, partial.stuck) == ("partial", [])
    assert "Rank 3 printed output but no timeout report from it is in the paste" in partial.summary
    complete = scan(index, [("-", [_log("[rank0]: world_size=4", "[rank3]: epoch 1 step 40", _timeout(0), _timeout(1), _timeout(2))])]).cross_rank
    assert complete is not None and (complete.case, complete.stuck) == ("stuck", ["3"])


def test_a_rank_that_never_enqueued_the_collective_is_named_from_its_own_numbers(index: SignatureIndex) -> None:
    result = scan(index, [("-", [_log(_pg_failure(0, 0, 9, 11), _pg_failure(1, 0, 9, 11), _pg_failure(2, 0, 9, 8))])])
    assert result.cross_rank is not None and (result.cross_rank.case, result.cross_rank.stuck) == ("lagging", ["2"])
    assert "Rank 2 never enqueued SeqNum 9 (last enqueued work 8)" in result.cross_rank.summary


def test_four_thousand_ranks_are_summed_up_in_ranges(index: SignatureIndex) -> None:
    lines = [_pg_failure(r, 0, 4021, 4021) for r in range(4096) if r != 1777] + ["[rank1777]: step 4020", "[rank0]: world_size=4096"]
    result = scan(index, [("-", [_log(*lines)])])
    assert result.cross_rank is not None and len(result.cross_rank.summary) < 400
    assert result.cross_rank.summary.startswith("Ranks 0\u20131776 and 1778\u20134095 (4,095) timed out in SeqNum 4021 (process group 0).")
    assert result.cross_rank.stuck == ["1777"]


@pytest.mark.parametrize(("line", "rank"), [
    ("[rank3]: " + OOM, "3"), ("[default3]: " + OOM, "3"), ("  3: " + OOM, "3"), ("[1,3]<stderr>: " + OOM, "3"),
    ("(RayTrainWorker pid=812, ip=10.0.0.2) [rank3]: " + OOM, "3"), ("worker-5: [rank3]:   " + OOM, "3"),
    ("\x1b[36m[rank3]:\x1b[0m " + OOM, "3"), (OOM, None),
])
def test_launcher_prefixes_give_the_global_rank(index: SignatureIndex, line: str, rank: str | None) -> None:
    [candidate] = scan(index, [("-", [_log(line)])]).candidates
    assert candidate.evidence[0].rank == rank


def test_rank_lists_are_short() -> None:
    assert rank_list(["2"]) == "rank 2"
    assert rank_list(["0", "1"]) == "ranks 0 and 1"
    assert rank_list(["0", "1", "2", "7"]) == "ranks 0\u20132 and 7 (4)"
    assert rank_list([str(r) for r in range(0, 40, 2)]) == "ranks 0, 2, 4, 6, 8, 10, 12 and \u2026 (20)"


def test_a_routine_warning_is_reported_as_routine_not_as_a_failure(index: SignatureIndex) -> None:
    few = scan(index, [("-", [_log("Recompiling function f", "Recompiling function g")])])
    assert few.candidates == [] and [r.slug for r in few.routine] == ["recompile"]
    assert _slugs(index, *["Recompiling function f"] * 3) == ["recompile"]


def test_a_collateral_line_healthy_runs_print_is_routine_alone_and_evidence_beside_its_entrys_own() -> None:
    """A healthy AMP run prints the scheduler-order warning once (its first step is skipped):
    alone it is routine; beside the loss-scale collapse it is that entry's evidence again."""
    index = SignatureIndex(signature_data(load_catalog(ROOT / "content")))
    warning = ("train.py:36: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
               "In PyTorch 1.1.0 and later, you should call them in the opposite order")
    alone = scan(index, [("-", [_log(warning)])])
    assert alone.candidates == [] and [r.slug for r in alone.routine] == ["fp16-gradient-overflow-loss-scale"]
    collapse = "Current loss scale already at minimum - cannot decrease scale anymore. Exiting run."
    [first, *_] = scan(index, [("-", [_log(warning, collapse)])]).candidates
    assert first.slug == "fp16-gradient-overflow-loss-scale" and [e.line for e in first.evidence] == [1, 2]


def test_what_a_routine_message_leaves_behind_is_no_answer_and_beside_a_real_failure_it_is() -> None:
    """NCCL's proxy fails a Close when a communicator is torn down after a local rank exited
    (deepseek-ai/DeepEP#41, a dev log): the return-code trace lines that nccl-internal-error sees as
    collateral are what that routine message left behind, not a failure of their own. Traces alone are
    routine in any number (NCCL 2.29.7+ traces a DMA-BUF probe it catches; a passing run's teardown with
    aws-ofi-nccl traces on many ranks); beside the internal error itself they are its evidence."""
    index = SignatureIndex(signature_data(load_catalog(ROOT / "content")))
    close = "0bc8f5b83646:2374:2994 [0] proxy.cc:1521 NCCL WARN [Proxy Service 0] Failed to execute operation Close from rank 0, retcode 3"
    trace = "0bc8f5b83646:2378:3013 [4] NCCL INFO misc/socket.cc:47 -> 3"
    teardown = scan(index, [("-", [_log(trace, close, trace)])])
    assert teardown.candidates == [] and {r.slug for r in teardown.routine} == {"nccl-proxy-connect-failed", "nccl-internal-error"}
    chain = scan(index, [("-", [_log(*[trace] * 12)])])
    title = 'NCCL internal error (ncclInternalError): "please report this issue to the NCCL developers"'
    assert chain.candidates == [] and [r.note for r in chain.routine] == [
        f"12 lines matching {title}: healthy runs print such lines too, so this is not a failure by itself."]
    [first] = scan(index, [("-", [_log(trace, trace, "RuntimeError: NCCL Error 3: internal error")])]).candidates
    assert first.slug == "nccl-internal-error" and [e.line for e in first.evidence] == [1, 2, 3]
    connect = close.replace("operation Close", "operation Connect")
    assert _slugs(index, trace, connect)[0] == "nccl-proxy-connect-failed"


def test_a_routine_message_in_routine_numbers_is_no_root_evidence_even_beside_other_lines(tmp_path: Path) -> None:
    limit = "Recompile limit hit (8)"
    write_tree(tmp_path / "content", {
        "categories.yaml": CATEGORIES,
        "failures/storm.yaml": _entry("MTF-0001", "Recompile storm", _sig("size mismatch at index", "root", "size mismatch at index 0", "    routine: 3\n")
                                      + _sig("Recompile limit hit", "collateral", limit)),
        "failures/limit.yaml": _entry("MTF-0002", "Recompile limit", _sig("Recompile limit hit", "root", limit),
                                      "- slug: storm\n  type: caused-by\n"),
        "ledger.yaml": "MTF-0001: [storm]\nMTF-0002: [limit]\n",
    })
    index = SignatureIndex(signature_data(build_catalog(load_content(tmp_path / "content"))))
    # the limit message carries one 'size mismatch' reason: the limit's entry is the answer, the storm a cause to check
    result = scan(index, [("-", [_log(limit, "   last reason: size mismatch at index 0")])])
    assert [c.slug for c in result.candidates] == ["limit"] and [c.slug for c in result.possible_causes] == ["storm"]
    # more of the routine message than a healthy run prints is root evidence again, and the cause comes first
    assert _slugs(index, limit, *["size mismatch at index 0"] * 4)[0] == "storm"


def test_when_nothing_matches_the_lines_that_look_like_the_failure_are_shown(index: SignatureIndex) -> None:
    result = scan(index, [("train.log", [_log("step 1", "Traceback (most recent call last):", '  File "x.py", line 3',
                                               "ValueError: shapes do not match", "ERROR: job failed", "step 2")])])
    assert result.candidates == []
    assert [(n.line, n.text) for n in result.notable] == [(4, "ValueError: shapes do not match"), (5, "ERROR: job failed")]
    text = format_diagnosis(result, 5, "https://example.org/search/?q=")
    assert "No entry's error signature matched this log." in text
    assert "https://example.org/search/?q=ValueError%3A%20shapes%20do%20not%20match" in text


def test_a_log_that_ends_during_start_up_points_to_the_start_up_hang_apart_from_the_answers() -> None:
    index = SignatureIndex(signature_data(load_catalog(ROOT / "content")))
    startup = ["Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4", "All distributed processes registered. Starting with 4 processes", "-" * 40]
    result = scan(index, [("-", [_log(*startup)])])
    assert result.candidates == [] and result.stopped is not None
    assert (result.stopped.slug, result.stopped.line) == ("nccl-init-hang", 2)
    assert "(line 2: All distributed processes registered. Starting with 4 processes)" in format_diagnosis(result, 5, "s?q=")
    # a run that went on after its start-up, or a log with an answer, gets no such note
    assert scan(index, [("-", [_log(*startup, "Epoch 0: 100%| 10/10 loss=1.2")])]).stopped is None
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB"
    answered = scan(index, [("-", [_log(oom, *startup)])])
    assert answered.candidates and answered.stopped is None


def test_a_log_that_ends_inside_a_traceback_says_its_error_line_is_missing(index: SignatureIndex) -> None:
    frame = '  File "/env/colossalai/context/parallel_context.py", line 519, in set_device'
    top = ["Traceback (most recent call last):", '  File "train.py", line 677, in <module>', "    main(args)"]
    cases = {  # the last frame alone; with its source line; with Python 3.11's carets, behind a launcher's rank prefix
        "frame": ([*top, frame], 4, frame.strip()),
        "source": ([*top, frame, "    torch.cuda.set_device(device_ordinal)", ""], 5, "torch.cuda.set_device(device_ordinal)"),
        "carets": ([f"[rank1]: {line}" for line in (*top, frame, "    torch.cuda.set_device(device_ordinal)", "    ^^^^^^^^^^^^^^^^^^^^^")],
                   5, "[rank1]:     torch.cuda.set_device(device_ordinal)"),
    }
    for name, (lines, line, text) in cases.items():
        result = scan(index, [("cut.log", [_log(*lines)])])
        assert result.candidates == [] and result.cut is not None, name
        assert (result.cut.line, result.cut.text) == (line, text), name
        answer = format_diagnosis(result, 5, "https://example.org/search/?q=")
        assert f"The log ends inside a Python traceback (cut.log:{line}: {text})" in answer, name
        assert "search: https://example.org/search/?q=" + quote(text) in answer, name
    # a traceback that ends in its error line, a log that goes on after it, and a log with an answer get no such note
    assert scan(index, [("-", [_log(*top, frame, "    torch.cuda.set_device(device_ordinal)", "RuntimeError: CUDA error: invalid device ordinal")])]).cut is None
    assert scan(index, [("-", [_log(*top, frame, "    torch.cuda.set_device(device_ordinal)", "Epoch 1 done", "loss=0.3")])]).cut is None
    assert scan(index, [("-", [_log(f"[rank2]: {OOM}", *top, frame)])]).cut is None


def test_cli_json_shape_and_exit_codes(index: SignatureIndex, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.log").write_bytes(_log(f"[rank2]: {OOM}", _timeout(0)))
    (tmp_path / "clean.log").write_bytes(_log("all good"))
    assert main(["diagnose", "--json", "a.log"]) == 0
    result = json.loads(capsys.readouterr().out)
    first = result["candidates"][0]
    assert {"slug", "id", "title", "score", "role", "evidence", "explanation", "basis", "matched_lines"} <= set(first)
    assert {"candidates", "possible_causes", "routine", "notable", "matched_lines", "lines_by_entry", "stopped", "cut", "cross_rank"} == set(result)
    assert (result["matched_lines"], first["matched_lines"], result["lines_by_entry"]["oom"]) == (2, 1, {"root": 1})
    assert (first["slug"], first["evidence"][0]["line"]) == ("oom", 1)
    assert main(["diagnose", "clean.log"]) == 1
    assert capsys.readouterr().out == "No entry's error signature matched this log.\n"
    assert main(["diagnose", "missing.log"]) == 2


def test_cli_reads_standard_input_and_a_built_sites_signatures(index: SignatureIndex, tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "generator", "diagnose", "-"], input=_log(f"[rank2]: {OOM}"),
                         capture_output=True, cwd=tmp_path, check=False)
    assert run.returncode == 0 and b"1. Out of memory [MTF-0002] root" in run.stdout
    (tmp_path / "signatures.json").write_text(json.dumps(signature_data(build_catalog(load_content(tmp_path / "content")))))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a.log").write_bytes(_log(f"[rank2]: {OOM}"))
    run = subprocess.run([sys.executable, "-m", "generator", "diagnose", "--signatures", "../signatures.json", "a.log"],
                         capture_output=True, cwd=elsewhere, check=False)
    assert run.returncode == 0 and b"1. Out of memory [MTF-0002] root" in run.stdout
    run = subprocess.run([sys.executable, "-m", "generator", "diagnose", "--signatures", "a.log", "a.log"],
                         capture_output=True, cwd=elsewhere, check=False)
    assert run.returncode == 2 and run.stderr.startswith(b"error: a.log: cannot read signatures")


def test_cli_stops_quietly_when_the_reader_of_its_output_goes_away(index: SignatureIndex, tmp_path: Path) -> None:
    read, write = os.pipe()
    run = subprocess.Popen([sys.executable, "-m", "generator", "diagnose", "-"], stdin=subprocess.PIPE, stdout=write,
                           stderr=subprocess.PIPE, cwd=tmp_path)
    os.close(write)
    os.close(read)  # the reader is gone before a line is written, as with `| head` once it has its lines
    _, err = run.communicate(_log(f"[rank2]: {OOM}"))
    assert run.returncode == 141 and err == b""


def test_cli_outside_the_project_uses_the_content_it_was_installed_from(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_bytes(_log(f"[rank2]: {OOM}. GPU 2 has a total capacity of 79.15 GiB of which 1.00 GiB is free."))
    run = subprocess.run([sys.executable, "-m", "generator", "diagnose", "a.log"], capture_output=True, cwd=tmp_path, check=False,
                         env={"PYTHONPATH": str(Path(__file__).resolve().parent.parent), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert b"CUDA out of memory" in run.stdout.splitlines()[0]
