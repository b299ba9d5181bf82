"""Ranks in a log: who printed a line, which collective each rank reported stuck, and what that says.

The patterns and sentences live in diagnosis.json, which the page's script reads too,
so the CLI and the browser reason alike. Ranks are global where the launcher says so
(`[rank3]:`, `[default3]:`, srun's `3: `, mpirun's `[1,3]<stderr>:`); ProcessGroupNCCL's
own `[PG 1 Rank 3]` is the rank inside that group, and sequence numbers count per group,
so collectives are only ever compared inside one group.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

RULES: dict[str, object] = json.loads((Path(__file__).parent / "diagnosis.json").read_text(encoding="utf-8"))
_PATTERNS: dict[str, str] = RULES["patterns"]  # type: ignore[assignment]
_MESSAGES: dict[str, str] = RULES["messages"]  # type: ignore[assignment]
_LAUNCHER = re.compile(_PATTERNS["launcher_rank"], re.ASCII)
_GROUP = re.compile(_PATTERNS["group_rank"], re.ASCII)
_LOOSE = re.compile(_PATTERNS["loose_rank"], re.ASCII)
_WORLD = re.compile(_PATTERNS["world_size"], re.ASCII)
_REPORTS = [(r["key"], re.compile(r["pattern"], re.ASCII), r["fields"]) for r in RULES["reports"]]  # type: ignore[attr-defined]
DEFAULT_GROUPS = (None, "0")  # groups every rank of the job belongs to (unlabelled = older releases)


def fill(template: str, **values: object) -> str:
    """Return a message template from diagnosis.json with its {names} filled in."""
    return re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]), template)


def message(name: str, **values: object) -> str:
    """Return the named message of diagnosis.json, filled in."""
    return fill(_MESSAGES[name], **values)


def _first_group(found: re.Match[str] | None) -> str | None:
    return next((g for g in found.groups() if g is not None), None) if found else None


def launcher_rank(line: str) -> str | None:
    """Return the global rank that the launcher's prefix gives the line, if any."""
    return _first_group(_LAUNCHER.match(line))


def named_rank(line: str) -> str | None:
    """Return the rank a line names itself (`[PG 1 Rank 3]`, `[Rank 3]`, `rank=3`), if any."""
    return _first_group(_GROUP.search(line)) or _first_group(_LOOSE.search(line))


def line_rank(line: str) -> str | None:
    """Return the rank a line is from: the launcher's global rank, else the rank the line names."""
    return launcher_rank(line) or named_rank(line)


def world_size(line: str) -> int | None:
    """Return the world size a line states (`world_size=8`), if it states one."""
    found = _WORLD.search(line) if "world" in line else None
    return int(found.group(1)) if found else None


@dataclass
class Report:
    """One rank's report that a collective failed or timed out."""

    group: str | None
    rank: str
    seq: int | None = None
    op: str | None = None
    enqueued: int | None = None
    completed: int | None = None


def read_report(line: str, launcher: str | None) -> Report | None:
    """Return the report a watchdog or timeout line makes, in any wording we know, or None."""
    for key, pattern, fields in _REPORTS:
        found = pattern.search(line) if key in line else None
        if not found:
            continue
        group_tag = _GROUP.search(line)
        group = group_tag.group(1) if group_tag else None
        rank = launcher or _first_group(group_tag)
        if rank is None:
            return None
        report = Report(group, rank)
        for name, value in zip(fields, found.groups()):
            if name in ("seq", "enqueued", "completed"):
                setattr(report, name, int(value))
            elif name == "op":
                report.op = value
        return report
    return None


@dataclass
class Reports:
    """Every rank's first report per process group, plus who printed anything at all."""

    by_group: dict[str | None, dict[str, Report]] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    world_size: int | None = None

    def add(self, report: Report) -> None:
        """Record a report; a later line of the same rank and group only fills what is missing."""
        known = self.by_group.setdefault(report.group, {}).setdefault(report.rank, report)
        for name in ("seq", "op", "enqueued", "completed"):
            if getattr(known, name) is None:
                setattr(known, name, getattr(report, name))

    def merged(self) -> dict[str | None, dict[str, Report]]:
        """Return the reports by group, with unlabelled lines folded into the labelled report of the same rank."""
        groups = {g: dict(r) for g, r in self.by_group.items()}
        for rank, report in list(groups.get(None, {}).items()):
            twin = next((name for name, g in groups.items() if name is not None and rank in g
                         and report.seq in (None, g[rank].seq)), None)
            if twin is not None:
                labelled = groups[twin][rank]
                groups[twin][rank] = replace(labelled, op=labelled.op or report.op)
                del groups[None][rank]
        return {g: r for g, r in groups.items() if r}


@dataclass(frozen=True)
class CrossRank:
    """What the ranks that reported a failed collective say together."""

    case: str  # "desync", "lagging", "stuck", "undetermined", "agree" or "partial"
    groups: dict[str, dict[str, dict[str, object]]]
    stuck: list[str]
    summary: str


def rank_list(ranks: Iterable[str]) -> str:
    """Return ranks as short ranges with a count: 'ranks 0–1776 and 1778–4095 (4,095)'."""
    nums = sorted({int(r) for r in ranks})
    if len(nums) == 1:
        return f"rank {nums[0]}"
    runs: list[list[int]] = []
    for n in nums:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    parts = [p for a, b in runs for p in ([f"{a}\u2013{b}"] if b > a + 1 else [str(n) for n in range(a, b + 1)])]
    limit = int(RULES["max_rank_parts"])  # type: ignore[call-overload]
    if len(parts) > limit:
        parts = parts[:limit - 1] + ["\u2026"]
    text = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"ranks {text}" + (f" ({len(nums):,})" if len(nums) >= 3 else "")


def _work(report: Report) -> str:
    return f"SeqNum {report.seq}" + (f" {report.op}" if report.op else "") if report.seq is not None else "a collective"


def _parts(reports: dict[str, Report]) -> str:
    """Return 'ranks 0 and 1 at SeqNum 7; rank 2 at SeqNum 8 BROADCAST', ordered by the lowest rank."""
    works: dict[str, list[str]] = {}
    for rank, report in reports.items():
        works.setdefault(_work(report), []).append(rank)
    return "; ".join(f"{rank_list(rs)} at {w}" for w, rs in sorted(works.items(), key=lambda kv: min(int(r) for r in kv[1])))


def _group_name(group: str | None) -> str:
    return "" if group is None else f" (process group {group})"


def _plural(ranks: list[str]) -> dict[str, str]:
    one = len(ranks) == 1
    return {"it_they": "it" if one else "they", "its_their": "its" if one else "their", "is_are": "is" if one else "are",
            "s": "" if one else "s", "them": "it" if one else "them"}


def _judge_group(group: str | None, reports: dict[str, Report], seen: set[str], world: int | None,
                 reported: set[str]) -> tuple[str, str, list[str]]:
    """Return (case, sentence, ranks called stuck) for one process group.

    Sequence numbers count per group, so ranks of one group at the same number are in the same
    collective: different operations there are a desync. A rank at a lower number, or one whose
    last enqueued work is below the others', fell behind them; the numbers do not say why.
    """
    seq = {rank: r.seq for rank, r in reports.items() if r.seq is not None}
    ops: dict[int, set[str]] = {}
    for rank, number in seq.items():
        if reports[rank].op:
            ops.setdefault(number, set()).add(str(reports[rank].op))
    if any(len(o) > 1 for o in ops.values()) or (group is None and len(set(seq.values())) > 1):
        parts = _parts({rank: reports[rank] for rank in seq})
        if group is None:
            return "undetermined", message("group_unlabelled", parts=parts), []
        return "desync", message("group_desync", group_cap=f"In process group {group},", parts=parts), []
    top = max(seq.values(), default=-1)  # sequence numbers start at 0
    work = _work(Report(group, "", top if top >= 0 else None, next(iter(ops.get(top, ())), None)))  # one op at most: no desync
    earlier = {rank for rank, number in seq.items() if number < top}
    never = [r for r, rep in reports.items() if r not in earlier and rep.enqueued is not None and rep.enqueued < top]
    sentence = message("group_agree", who=_capital(rank_list(r for r in reports if r not in earlier)), work=work, group=_group_name(group))
    if never:
        enq = min(reports[r].enqueued or 0 for r in never)
        sentence += " " + message("lagging", who=_capital(rank_list(never)), work=work, enqueued=enq, **_plural(never))
    if earlier:
        sentence += " " + message("earlier", who=_capital(rank_list(earlier)), parts=_parts({r: reports[r] for r in earlier}), **_plural(list(earlier)))
    if never or earlier:
        return "lagging", sentence, sorted([*never, *earlier], key=int)
    silent = sorted(seen - reported, key=int) if group in DEFAULT_GROUPS else []  # a report in any group counts
    if not silent:
        return "agree", sentence, []
    if world is not None and seen >= {str(r) for r in range(world)}:
        return "stuck", sentence + " " + message("silent_complete", who=rank_list(silent), **_plural(silent)), silent
    return "partial", sentence + " " + message("silent", who=_capital(rank_list(silent)), **_plural(silent)), []


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


_PRIORITY = ["desync", "lagging", "stuck", "undetermined", "partial", "agree"]


def cross_rank(reports: Reports) -> CrossRank | None:
    """Return what the reports say across ranks, group by group, or None when no rank reported."""
    groups = reports.merged()
    if not groups:
        return None
    cases, sentences, stuck = [], [], []
    reported = {rank for g in groups.values() for rank in g}
    for group in sorted(groups, key=lambda g: -1 if g is None else int(g)):
        case, sentence, blamed = _judge_group(group, groups[group], reports.seen, reports.world_size, reported)
        cases.append(case)
        sentences.append(sentence)
        stuck += blamed
    detail: dict[str, dict[str, dict[str, object]]] = {("" if g is None else g): {rank: {"seq": r.seq, "op": r.op, "enqueued": r.enqueued, "completed": r.completed}
                                         for rank, r in sorted(reps.items(), key=lambda kv: int(kv[0]))}
              for g, reps in groups.items()}
    case = min(cases, key=_PRIORITY.index)
    return CrossRank(case, dict(sorted(detail.items())), sorted(set(stuck), key=int), " ".join(sentences))
