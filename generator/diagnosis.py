"""Log diagnosis: match a log stream against every error signature and rank the entries.

Pure: a signature index built from the catalog, and an iterable of text chunks in.
Memory stays constant for any log size: each entry keeps its first few evidence
lines and counters, and each rank its last reported collective.

Ranking prefers the earliest *root* evidence over louder *collateral* evidence; a
collateral entry is explained by the `causes` relations when one of its causes
has root evidence in the same log.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import ahocorasick_rs

from .catalog import Catalog
from .schema import Role, Signature
from .signatures import matches

MAX_EVIDENCE = 8
MAX_TEXT = 400
DESYNC_ENTRY = "collective-mismatch-between-ranks"
STUCK_ENTRY = "ddp-rank-stuck-during-training"

_RANK = re.compile(r"^\[(?:rank|default)(\d+)\]:|\[Rank (\d+)\]|\b[Rr]ank[ =:]?(\d+)\b")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?|\b[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+")
class _RankPrefixes:
    """The set of ranks whose torchrun prefix ([rank3]: / [default3]:) starts some line.

    The search skips ranks already seen, so after the first lines it runs in C
    without building a match object per line.
    """

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self._skipped: set[str] = set()
        self._pattern = re.compile(rb"\n\[(?:rank|default)(\d+)\]:")

    def update(self, block: bytes) -> None:
        found = {r.decode() for r in self._pattern.findall(b"\n" + block)}
        self.seen |= found
        if found - self._skipped and len(self.seen) <= 512:
            self._skipped = set(self.seen)
            known = b"|".join(sorted(r.encode() for r in self._skipped))
            self._pattern = re.compile(rb"\n\[(?:rank|default)(?!(?:" + known + rb")\]:)(\d+)\]:")
_COLLECTIVE = re.compile(r"WorkNCCL\(SeqNum=(\d+), OpType=([A-Z_]+)")


@dataclass(frozen=True)
class Evidence:
    source: str
    line: int
    rank: str | None
    time: str | None
    text: str
    signature: str
    role: Role


@dataclass(frozen=True)
class Candidate:
    slug: str
    id: str
    title: str
    score: float
    role: Role
    evidence: list[Evidence]
    explanation: str
    lines: int
    ranks: list[str]


@dataclass(frozen=True)
class CrossRank:
    """What the ranks that reported a collective timeout were last doing."""

    case: str  # "desync", "missing-ranks" or "agree"
    reports: dict[str, tuple[int, str]]
    missing: list[str]
    summary: str


@dataclass(frozen=True)
class Diagnosis:
    candidates: list[Candidate]
    cross_rank: CrossRank | None


@dataclass
class _Hits:
    evidence: list[Evidence] = field(default_factory=list)
    first_root: int | None = None  # scan order of the first root line
    root: Evidence | None = None
    root_specificity: int = 0
    first: int = 0
    count: int = 0
    ranks: set[str] = field(default_factory=set)


def _specificity(sig: Signature) -> int:
    return len(sig.key) + (20 if sig.regex else 0)


class SignatureIndex:
    """Every signature of the catalog, with one fast pre-filter over all their keys."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.signatures: list[tuple[str, Signature]] = [
            (slug, sig) for slug in sorted(catalog.entries) for sig in catalog.entries[slug].entry.signatures]
        self.by_key: dict[str, list[tuple[str, Signature]]] = {}
        for slug, sig in self.signatures:
            self.by_key.setdefault(sig.key, []).append((slug, sig))
        # One Aho-Corasick pass over raw bytes finds every line that holds any key.
        self.prefilter = ahocorasick_rs.BytesAhoCorasick([key.encode() for key in sorted(self.by_key)],
                                                         matchkind=ahocorasick_rs.MatchKind.LeftmostFirst,
                                                         implementation=ahocorasick_rs.Implementation.DFA)

    def matching(self, line: str) -> Iterator[tuple[str, Signature]]:
        """Yield (slug, signature) for every signature that matches the line."""
        for key, pairs in self.by_key.items():
            if key in line:
                for slug, sig in pairs:
                    if matches(sig, line):
                        yield slug, sig


def _rank_of(line: str) -> str | None:
    found = _RANK.search(line)
    return next((g for g in found.groups() if g is not None), None) if found else None


def _time_of(line: str) -> str | None:
    found = _TIME.search(line)
    return found.group(0) if found else None


def scan(index: SignatureIndex, sources: Iterable[tuple[str, Iterable[bytes]]]) -> Diagnosis:
    """Return the diagnosis of logs given as (name, byte chunks); chunks may split lines anywhere.

    Bytes that are not UTF-8 are read as U+FFFD; they never stop the scan.

    Evidence is ordered by source, then line: with one file per rank, pass them in
    the order they should be read.
    """
    hits: dict[str, _Hits] = {}
    prefixes = _RankPrefixes()
    seen_ranks = prefixes.seen
    collectives: dict[str, tuple[int, str]] = {}
    order = 0
    for name, chunks in sources:
        for line_no, line in _numbered_matches(index, chunks, prefixes):
            order += 1
            rank = _rank_of(line)
            if rank is not None:
                seen_ranks.add(rank)
            for slug, sig in index.matching(line):
                h = hits.setdefault(slug, _Hits(first=order))
                h.count += 1
                if rank is not None:
                    h.ranks.add(rank)
                evidence = Evidence(name, line_no, rank, _time_of(line), line.strip()[:MAX_TEXT], sig.key, sig.role)
                if sig.role == "root" and h.first_root is None:
                    h.first_root, h.root, h.root_specificity = order, evidence, _specificity(sig)
                if len(h.evidence) < MAX_EVIDENCE:
                    h.evidence.append(evidence)
            collective = _COLLECTIVE.search(line)
            if collective and rank is not None:
                collectives[rank] = (int(collective.group(1)), collective.group(2))
    cross = _cross_rank(collectives, seen_ranks)
    return Diagnosis(_rank_candidates(index.catalog, hits, cross), cross)


def _numbered_matches(index: SignatureIndex, chunks: Iterable[bytes], prefixes: _RankPrefixes) -> Iterator[tuple[int, str]]:
    """Yield (line number, line) for the lines that hold a signature key, reading chunk by chunk.

    The pre-filter and the rank-prefix search run over whole chunks in native code;
    Python only touches the lines that hold a key.
    """
    carry = b""
    line_no = 1  # the number of the line that starts at `pos`
    for chunk in chunks:
        text = carry + chunk
        cut = text.rfind(b"\n") + 1
        block, carry = text[:cut], text[cut:]
        yield from _block_matches(index, block, line_no, prefixes)
        line_no += block.count(b"\n")
    if carry:
        yield from _block_matches(index, carry + b"\n", line_no, prefixes)


def _block_matches(index: SignatureIndex, block: bytes, line_no: int, prefixes: _RankPrefixes) -> Iterator[tuple[int, str]]:
    prefixes.update(block)
    pos = 0
    for _key, found_start, found_end in index.prefilter.find_matches_as_indexes(block):
        start = block.rfind(b"\n", 0, found_start) + 1
        if start < pos:
            continue  # another key on a line already yielded
        line_no += block.count(b"\n", pos, start)
        end = block.find(b"\n", found_end)
        yield line_no, block[start:end].decode("utf-8", errors="replace")
        line_no, pos = line_no + 1, end + 1


def _cross_rank(collectives: dict[str, tuple[int, str]], seen_ranks: set[str]) -> CrossRank | None:
    if not collectives:
        return None
    reports = dict(sorted(collectives.items(), key=lambda kv: int(kv[0])))
    groups: dict[tuple[int, str], list[str]] = {}
    for rank, work in reports.items():
        groups.setdefault(work, []).append(rank)
    missing = sorted(seen_ranks - set(reports), key=int)
    if len(groups) > 1:
        parts = "; ".join(f"rank{'s' * (len(r) > 1)} {','.join(r)} at SeqNum={seq} {op}" for (seq, op), r in sorted(groups.items()))
        return CrossRank("desync", reports, missing,
                         f"The ranks disagree on the collective they were waiting in ({parts}): they issued different "
                         "collectives, which points to a desync or collective mismatch rather than a network fault.")
    (seq, op), = groups
    if missing:
        who = (f"rank {missing[0]} printed output but never reported it, so it is the one stuck or dead: read its log first"
               if len(missing) == 1 else f"ranks {','.join(missing)} printed output but never reported it, so they are "
               "the ones stuck or dead: read their logs first")
        return CrossRank("missing-ranks", reports, missing, f"Ranks {','.join(reports)} all timed out in SeqNum={seq} {op}; {who}.")
    return CrossRank("agree", reports, missing,
                     f"Every reporting rank ({','.join(reports)}) timed out in the same collective, SeqNum={seq} {op}.")


def _rank_candidates(catalog: Catalog, hits: dict[str, _Hits], cross: CrossRank | None) -> list[Candidate]:
    boosted = {"desync": DESYNC_ENTRY, "missing-ranks": STUCK_ENTRY}.get(cross.case if cross else "", "")
    rooted = [s for s, h in hits.items() if h.first_root is not None]
    # When one line is root evidence for two entries and one causes the other, the cause goes first.
    effect = {s for s in rooted for link in catalog.links.get(s, [])
              if link.type == "caused-by" and link.slug in rooted and hits[link.slug].first_root == hits[s].first_root}
    roots = sorted(rooted, key=lambda s: (s != boosted, hits[s].first_root, s in effect, -hits[s].root_specificity, s))
    downstream = {s for s in hits for link in catalog.links.get(s, []) if link.type == "caused-by" and link.slug in roots}
    others = sorted((s for s, h in hits.items() if h.first_root is None),
                    key=lambda s: (s != boosted, s not in downstream, hits[s].first, -hits[s].count, s))
    if boosted in catalog.entries and boosted not in hits and cross is not None:
        others.insert(0, boosted)
    ordered = roots + others
    candidates = []
    for position, slug in enumerate(ordered):
        entry = catalog.entries[slug].entry
        h = hits.get(slug, _Hits())
        role: Role = "root" if h.first_root is not None else "collateral"
        score = round(max(0.05, (0.95 if role == "root" else 0.5) - 0.05 * position), 2)
        candidates.append(Candidate(slug, entry.id, entry.title, score, role, h.evidence,
                                    _explain(catalog, slug, h, hits, roots, cross if slug == boosted else None),
                                    h.count, sorted(h.ranks, key=int)))
    return candidates


def _ranks_text(ranks: set[str]) -> str:
    if not ranks:
        return ""
    ordered = sorted(ranks, key=int)
    return f" on rank{'s' if len(ordered) > 1 else ''} {','.join(ordered)}"


def _where(evidence: Evidence) -> str:
    rank = f" on rank {evidence.rank}" if evidence.rank else ""
    source = f"{evidence.source}:" if evidence.source != "-" else "line "
    return f"{source}{evidence.line}{rank}"


def _explain(catalog: Catalog, slug: str, h: _Hits, hits: dict[str, _Hits], roots: list[str], cross: CrossRank | None) -> str:
    title = catalog.entries[slug].entry.title
    if cross is not None:
        return cross.summary
    if h.root is not None:
        return f"Earliest root evidence: {_where(h.root)}."
    causes = [link.slug for link in catalog.links.get(slug, []) if link.type == "caused-by"]
    present = [c for c in roots if c in causes]
    if present:
        cause = present[0]
        root = hits[cause].root
        assert root is not None  # causes are taken from the candidates with root evidence
        return f"{title}{_ranks_text(h.ranks)} is downstream of {catalog.entries[cause].entry.title} ({_where(root)})."
    if causes:
        names = ", ".join(catalog.entries[c].entry.title for c in causes[:3])
        return f"Only collateral evidence{_ranks_text(h.ranks)}; look earlier in every rank's log for a cause such as: {names}."
    return f"Only collateral evidence{_ranks_text(h.ranks)}."


def diagnosis_json(diagnosis: Diagnosis) -> dict[str, object]:
    """Return the diagnosis as the documented JSON shape, best candidate first."""
    cross = diagnosis.cross_rank
    return {
        "candidates": [{
            "slug": c.slug, "id": c.id, "title": c.title, "score": c.score, "role": c.role,
            "evidence": [{"source": e.source, "line": e.line, "rank": e.rank, "time": e.time, "text": e.text,
                          "signature": e.signature, "role": e.role} for e in c.evidence],
            "explanation": c.explanation, "matched_lines": c.lines, "ranks": c.ranks,
        } for c in diagnosis.candidates],
        "cross_rank": None if cross is None else {
            "case": cross.case, "missing_ranks": cross.missing, "summary": cross.summary,
            "reports": {rank: {"seq": seq, "op": op} for rank, (seq, op) in cross.reports.items()},
        },
    }


def format_diagnosis(diagnosis: Diagnosis, top: int) -> str:
    """Return the diagnosis as text for a terminal."""
    if not diagnosis.candidates:
        return "No known error signature matched this log."
    out = []
    if diagnosis.cross_rank:
        out += [f"Across ranks: {diagnosis.cross_rank.summary}", ""]
    for i, c in enumerate(diagnosis.candidates[:top], 1):
        out.append(f"{i}. {c.title} [{c.id}] {c.role}, score {c.score}")
        out.append(f"   {c.explanation}")
        out.append(f"   read: failures/{c.slug}/")
        for e in c.evidence[:3]:
            rank = f" rank {e.rank}" if e.rank else ""
            out.append(f"   {e.source}:{e.line}{rank} {e.role}: {e.text[:160]}")
    hidden = len(diagnosis.candidates) - top
    if hidden > 0:
        out.append(f"... and {hidden} more (--top {len(diagnosis.candidates)} to see them)")
    return "\n".join(out)
