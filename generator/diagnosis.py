"""Log diagnosis: match a log stream against every error signature and rank the entries.

Pure: a signature index built from the signature payload (api.signature_data, the same
data the page loads) and an iterable of byte chunks in. Work is linear in the input:
a line longer than `long_line` is looked at only in windows around its signature keys,
and an unfinished line is never carried over more than one chunk.

What the answers mean:
- A message has one owner, the entry whose signature names it as `root`. The first
  answer is the earliest root evidence that no other root evidence in the log explains
  (a cause goes before its effect, a specific message before a generic one).
- Entries that only see a message as collateral never outrank its owner; when they are
  causes of the first answer they are listed apart, as possible causes to check, in the
  order the first answer's entry gives its causes.
- The score is evidence, calibrated on held-back logs (diagnosis.json's `confidence`).
"""

from __future__ import annotations

import codecs
import itertools
import re
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

import ahocorasick_rs

from .ranks import (
    RULES,
    CrossRank,
    Reports,
    cross_rank,
    launcher_rank,
    line_rank,
    message,
    named_rank,
    rank_list,
    read_report,
    world_size,
)
from .schema import ROUTINE_ANY
from .signatures import compile_regex, line_role

MAX_EVIDENCE = int(RULES["max_evidence"])  # type: ignore[call-overload]
MAX_TEXT = int(RULES["max_text"])  # type: ignore[call-overload]
LONG_LINE = int(RULES["long_line"])  # type: ignore[call-overload]
WINDOW = int(RULES["window"])  # type: ignore[call-overload]
MAX_WINDOWS = int(RULES["max_windows"])  # type: ignore[call-overload]
MAX_NOTABLE = int(RULES["max_notable"])  # type: ignore[call-overload]
SPECIFIC = int(RULES["specific"])  # type: ignore[call-overload]
_WRAP: dict[str, float] = RULES["wrap"]  # type: ignore[assignment]
WRAP_MIN_WIDTH, WRAP_MIN_LINES, WRAP_SHARE = int(_WRAP["min_width"]), int(_WRAP["min_lines"]), float(_WRAP["share"])
WRAP_SAMPLE_LINES, WRAP_SAMPLE_CHARS = int(_WRAP["sample_lines"]), int(_WRAP["sample_chars"])
CARRY = 1 << 20  # the most of an unfinished line kept between chunks
TAIL = 1 << 20  # notable lines are looked for in the last TAIL bytes of each log
DESYNC_ENTRY = str(RULES["desync_entry"])
STUCK_ENTRY = str(RULES["stuck_entry"])
DUPLICATE_ENTRY = str(RULES["duplicate_entry"])  # the entry about two processes taking one global rank
ANNOUNCED_KEY = str(RULES["announced_key"])
STOPPED_ENTRY = str(RULES["stopped_entry"])  # the entry about a log that ends during start-up
CROSS_RANK = "cross-rank"  # the signature name of evidence drawn from every rank's reports
_CONFIDENCE: dict[str, float] = RULES["confidence"]  # type: ignore[assignment]
_PATTERNS: dict[str, str] = RULES["patterns"]  # type: ignore[assignment]
_TIME = re.compile(_PATTERNS["time"], re.ASCII)
_NOTABLE = re.compile(_PATTERNS["notable"], re.ASCII)
_STARTUP = re.compile(_PATTERNS["startup"], re.ASCII)
_MEANINGFUL = re.compile(_PATTERNS["meaningful"], re.ASCII)
_FRAME = re.compile(_PATTERNS["frame"], re.ASCII)
_CARET = re.compile(_PATTERNS["caret"], re.ASCII)
_ANNOUNCED = re.compile(_PATTERNS["announced_rank"], re.ASCII)
# Every notable line holds one of these words, so only lines with one are tried against _NOTABLE.
_NOTABLE_WORDS = ahocorasick_rs.BytesAhoCorasick([w.encode() for w in RULES["notable_tokens"]])  # type: ignore[attr-defined]
_SEEN = re.compile(b"\n" + _PATTERNS["seen_rank"].encode())
_EXTRA_KEYS = ("world_size", "world size", ANNOUNCED_KEY, *(str(r["key"]) for r in RULES["reports"]))  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Evidence:
    source: str
    line: int
    rank: str | None
    time: str | None
    text: str
    signature: str
    role: str


@dataclass(frozen=True)
class Candidate:
    slug: str
    id: str
    title: str
    score: float
    role: str
    evidence: list[Evidence]
    explanation: str
    lines: int  # distinct log lines that matched any of the entry's signatures
    ranks: list[str]
    basis: str  # the evidence behind the score: role-explained/first-specific/generic-contested/alone


@dataclass(frozen=True)
class Cause:
    """An entry that can cause the first answer, with the lines to look for in every rank's log."""

    slug: str
    id: str
    title: str
    look_for: list[str]
    seen: bool


@dataclass(frozen=True)
class Routine:
    slug: str
    title: str
    lines: int
    note: str


@dataclass(frozen=True)
class Notable:
    source: str
    line: int
    rank: str | None
    text: str


@dataclass(frozen=True)
class Stopped:
    """A log without a matching signature that ends during distributed start-up: where, and the entry to read."""

    slug: str
    title: str
    source: str
    line: int
    text: str
    note: str


@dataclass(frozen=True)
class Cut:
    """A log without a matching signature that ends inside a Python traceback, before its error line."""

    source: str
    line: int
    text: str
    note: str


@dataclass(frozen=True)
class Diagnosis:
    candidates: list[Candidate]
    cross_rank: CrossRank | None
    possible_causes: list[Cause] = field(default_factory=list)
    routine: list[Routine] = field(default_factory=list)
    notable: list[Notable] = field(default_factory=list)
    matched_lines: int = 0  # distinct log lines that matched any signature
    # every entry with a matching line: distinct lines by the role of the signature that matched:
    # root, routine (a root signature a healthy run prints a few times) or collateral
    lines_by_entry: dict[str, dict[str, int]] = field(default_factory=dict)
    stopped: Stopped | None = None  # only when no candidate
    cut: Cut | None = None  # only when no candidate


@dataclass(frozen=True)
class _Sig:
    slug: str
    key: str
    regex: re.Pattern[str] | None
    role: str
    routine: int
    specificity: int
    counts_as: str  # what a matching line counts as in lines_by_entry: root, routine or collateral


@dataclass
class _Hits:
    first: int
    evidence: list[Evidence] = field(default_factory=list)
    count: int = 0  # signature matches, for ranking
    lines: int = 0
    role_lines: dict[str, int] = field(default_factory=dict)
    ranks: set[str] = field(default_factory=set)
    root: Evidence | None = None
    root_order: int = 0
    root_specificity: int = 0
    specificity: int = 0  # of the most specific signature matched, whatever its role
    routine_lines: int = 0
    routine_limit: int = 0
    unowned: int = 0  # lines matched where no entry's root signature matched


class SignatureIndex:
    """Every signature of the payload, with one fast pre-filter over all their keys."""

    def __init__(self, payload: dict[str, object]) -> None:
        self.entries: dict[str, dict[str, object]] = payload["entries"]  # type: ignore[assignment]
        self.by_key: dict[str, list[_Sig]] = {}
        for raw in payload["signatures"]:  # type: ignore[attr-defined]
            regex = compile_regex(raw["regex"]) if raw.get("regex") else None
            routine = int(raw.get("routine") or 0)
            sig = _Sig(raw["slug"], raw["key"], regex, raw["role"], routine, int(raw["specificity"]),
                       line_role(raw["role"], routine))
            self.by_key.setdefault(sig.key, []).append(sig)
        self.keys = list(self.by_key)
        # Which keys a line holds, found in one pass (overlapping: keys may contain each other).
        self.finder = ahocorasick_rs.AhoCorasick(self.keys, matchkind=ahocorasick_rs.MatchKind.Standard)
        keys = sorted({*self.by_key, *_EXTRA_KEYS})
        # One Aho-Corasick pass over raw bytes finds every line that holds any key.
        self.prefilter = ahocorasick_rs.BytesAhoCorasick([k.encode() for k in keys],
                                                         matchkind=ahocorasick_rs.MatchKind.LeftmostLongest,
                                                         implementation=ahocorasick_rs.Implementation.DFA)

    def matching(self, line: str) -> list[_Sig]:
        """Return every signature that matches the line, in payload order."""
        found = sorted({i for i, _start, _end in self.finder.find_matches_as_indexes(line, overlapping=True)})
        return [sig for i in found for sig in self.by_key[self.keys[i]] if sig.regex is None or sig.regex.search(line)]


@dataclass
class _State:
    hits: dict[str, _Hits] = field(default_factory=dict)
    reports: Reports = field(default_factory=Reports)
    notable: deque[Notable] = field(default_factory=lambda: deque(maxlen=MAX_NOTABLE))
    stopped: Notable | None = None  # the last line of a log that ends during start-up
    cut: Notable | None = None  # the last line of a log that ends inside a traceback
    order: int = 0
    windows: tuple[int, int] = (0, 0)  # (line number, windows taken from it)
    skipped: set[str] = field(default_factory=set)
    seen_pattern: re.Pattern[bytes] = _SEEN
    lines: int = 0  # lines of the current source read so far
    matched_lines: int = 0
    line: tuple[str, int] = ("", 0)  # the line last matched, and what it has been counted for: windows
    counted: set[tuple[str, str]] = field(default_factory=set)  # of one long line count once
    announced: dict[tuple[str, str], list[Evidence]] = field(default_factory=dict)  # (rank, world size) -> the lines announcing it


def scan(index: SignatureIndex, sources: Iterable[tuple[str, Iterable[bytes]]]) -> Diagnosis:
    """Return the diagnosis of logs given as (name, byte chunks); chunks may split lines anywhere.

    Bytes that are not UTF-8 are read as U+FFFD; they never stop the scan. Evidence is
    ordered by source, then line: with one file per rank, pass them in reading order. A
    hard-wrapped paste is read as its joined lines, and numbered as such.
    """
    state = _State()
    for name, chunks in sources:
        tail: deque[bytes] = deque()
        for line_no, text in _lines_with_keys(index, _tracked(_unwrapped(chunks), tail), state):
            _scan_line(index, state, name, line_no, text)
        last = b"".join(tail)
        _collect_notable(state, name, last)
        _note_stop(state, name, last)
    return _rank(index, state, cross_rank(state.reports))


def wrap_width(sample: str) -> int | None:
    """Return the width a paste was hard-wrapped at, judged from its first lines, or None."""
    lines = [line.removesuffix("\r") for line in sample.split("\n", WRAP_SAMPLE_LINES)[:-1]]  # whole lines only
    long = [len(line) for line in lines if len(line) >= WRAP_MIN_WIDTH]
    if not long:
        return None
    width, count = Counter(long).most_common(1)[0]  # on a tie, the length seen first
    # A terminal cuts every line at its width: none is longer, most long lines are that long,
    # and they are different pieces that go on in the next line (log records that happen to
    # have one length repeat, or start like the next record).
    pieces = {line for line, after in itertools.pairwise(lines) if _continues(line, after, width)}
    return width if width == max(long) and count >= WRAP_SHARE * len(long) and len(pieces) >= WRAP_MIN_LINES else None


def _continues(line: str, after: str, width: int) -> bool:
    """Return whether a physical line of a paste wrapped at width goes on in the next one."""
    return len(line) == width and not line.endswith("  ") and after != "" and after[:4] != line[:4]


def _unwrapped(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Yield the chunks of a log; those of a hard-wrapped paste with its lines joined again."""
    rest = iter(chunks)
    head: list[bytes] = []
    lines = size = 0
    while lines <= WRAP_SAMPLE_LINES and size < WRAP_SAMPLE_CHARS:
        chunk = next(rest, None)
        if chunk is None:
            break
        head.append(chunk)
        lines, size = lines + chunk.count(b"\n"), size + len(chunk)
    sample = b"".join(head)
    width = wrap_width(sample.decode("utf-8", errors="replace"))
    if width is None:
        yield sample
        yield from rest
        return
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    held = None  # the last whole line, which waits for the next one to know if it goes on
    carry = ""
    for chunk in itertools.chain([sample], rest):
        *whole, carry = (carry + decoder.decode(chunk)).split("\n")
        out = []
        for line in whole:
            if held is not None:
                body = held.removesuffix("\r")
                out.append(body if _continues(body, line.removesuffix("\r"), width) else held + "\n")
            held = line
        yield "".join(out).encode()
    carry += decoder.decode(b"", final=True)
    yield ((held + "\n" if held is not None else "") + carry).encode()


def _tracked(chunks: Iterable[bytes], tail: deque[bytes]) -> Iterator[bytes]:
    """Yield the chunks, keeping at least the last TAIL bytes of them in `tail`."""
    size = 0
    for chunk in chunks:
        tail.append(chunk)
        size += len(chunk)
        while size - len(tail[0]) >= TAIL:
            size -= len(tail.popleft())
        yield chunk


def _lines_with_keys(index: SignatureIndex, chunks: Iterable[bytes], state: _State) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) for the lines (or windows of long lines) that hold a key, chunk by chunk.

    The pre-filter and the rank-prefix search run over whole chunks in native code;
    Python only touches the lines that hold a key. Sets state.lines to the source's line count.
    """
    carry = b""
    line_no = 1  # the number of the line that starts the next block
    for chunk in chunks:
        text = carry + chunk
        cut = text.rfind(b"\n") + 1
        if cut == 0 and len(text) > CARRY:
            cut = len(text)  # an overlong unfinished line: look at this piece now, keep nothing of it
        block, carry = text[:cut], text[cut:]
        yield from _block_lines(index, block, line_no, state)
        line_no += block.count(b"\n")
    if carry:
        yield from _block_lines(index, carry, line_no, state)
    state.lines = line_no if carry else line_no - 1


def _note_seen_ranks(state: _State, block: bytes) -> None:
    """Add the ranks whose launcher prefix starts a line; ranks already seen are skipped in C."""
    found = {r.decode() for match in state.seen_pattern.finditer(b"\n" + block) for r in match.groups() if r}
    state.reports.seen |= found
    if found - state.skipped and len(state.reports.seen) <= 512:
        state.skipped = set(state.reports.seen)
        known = b"|".join(sorted(r.encode() for r in state.skipped))
        state.seen_pattern = re.compile(b"\\n" + _PATTERNS["seen_rank"].encode().replace(
            b"(\\d+)", b"(?!(?:" + known + b")\\])(\\d+)", 1))


def _block_lines(index: SignatureIndex, block: bytes, line_no: int, state: _State) -> Iterator[tuple[int, str]]:
    _note_seen_ranks(state, block)
    pos = 0  # where to look next: the end of the last line or window yielded
    counted = 0  # line_no is the number of the line that holds offset `counted`
    line_start, line_end = 0, -1
    for _key, start, end in index.prefilter.find_matches_as_indexes(block):
        if start < pos:
            continue
        newline = block.rfind(b"\n", counted, start)
        if newline >= 0:
            line_no += block.count(b"\n", counted, newline + 1)
            line_start, line_end = newline + 1, -1
        counted = start
        if line_end < start:
            found = block.find(b"\n", start)
            line_end = found if found >= 0 else len(block)
        if line_end - line_start <= LONG_LINE:
            yield line_no, block[line_start:line_end].decode("utf-8", errors="replace")
            pos = line_end + 1
            continue
        # A long line is looked at in windows around its keys, at most MAX_WINDOWS of them.
        taken = state.windows[1] if state.windows[0] == line_no else 0
        if taken >= MAX_WINDOWS:
            pos = line_end + 1
            continue
        left, right = max(line_start, start - WINDOW), min(line_end, end + WINDOW)
        state.windows = (line_no, taken + 1)
        yield line_no, block[left:right].decode("utf-8", errors="replace")
        pos = right


def _scan_line(index: SignatureIndex, state: _State, name: str, line_no: int, text: str) -> None:
    matched = index.matching(text)
    launcher = launcher_rank(text)
    report = read_report(text, launcher)
    size = world_size(text)
    announced = _ANNOUNCED.search(text) if ANNOUNCED_KEY in text else None
    if announced:
        state.announced.setdefault((announced.group(1), announced.group(2)), []).append(
            Evidence(name, line_no, launcher or named_rank(text), _time_of(text), text.strip()[:MAX_TEXT], ANNOUNCED_KEY, "root"))
    if not matched and report is None and size is None:
        return  # a key, but no signature's regex matched: nothing to learn from this line
    state.order += 1
    if launcher is not None:
        state.reports.seen.add(launcher)
    if report is not None:
        state.reports.add(report)
    if size is not None:
        state.reports.world_size = size
    rank = launcher or named_rank(text)
    if any(sig.specificity == 0 for sig in matched):
        matched = _yield_catch_alls(matched)
    owned = any(sig.role == "root" for sig in matched)
    if matched and state.line != (name, line_no):
        state.line, state.counted = (name, line_no), set()
        state.matched_lines += 1
    line_evidence: Evidence | None = None  # made once, and only when some entry keeps it
    for sig in matched:
        h = state.hits.setdefault(sig.slug, _Hits(first=state.order))
        h.count += 1
        h.lines += (sig.slug, "") not in state.counted
        if (sig.slug, sig.counts_as) not in state.counted:
            h.role_lines[sig.counts_as] = h.role_lines.get(sig.counts_as, 0) + 1
        state.counted |= {(sig.slug, ""), (sig.slug, sig.counts_as)}
        h.unowned += not owned
        h.specificity = max(h.specificity, sig.specificity)
        if rank is not None:
            h.ranks.add(rank)
        if sig.routine:
            h.routine_lines += 1
            h.routine_limit = max(h.routine_limit, sig.routine)
        is_root = sig.role == "root" and (h.root is None or (h.root_order == state.order and sig.specificity > h.root_specificity))
        if not is_root and len(h.evidence) >= MAX_EVIDENCE:
            continue
        line_evidence = line_evidence or Evidence(name, line_no, rank, _time_of(text), text.strip()[:MAX_TEXT], "", "")
        evidence = replace(line_evidence, signature=sig.key, role=sig.role)
        if is_root:
            h.root, h.root_order, h.root_specificity = evidence, state.order, sig.specificity
        if len(h.evidence) < MAX_EVIDENCE:
            h.evidence.append(evidence)


def _yield_catch_alls(matched: list[_Sig]) -> list[_Sig]:
    """Return the signatures of a line with each catch-all root demoted to collateral evidence when
    other entries' specific signatures matched the line only as collateral (a launcher's summary of
    a killed task): that entry knows the line better. Beside a specific root it stays a root, ranked
    after it. The line still counts under the signature's own role in lines_by_entry, as the
    exported mtail program counts it."""
    if any(sig.specificity and sig.role == "root" for sig in matched):
        return matched
    specific = {sig.slug for sig in matched if sig.specificity}
    return [replace(sig, role="collateral") if sig.specificity == 0 and specific - {sig.slug} else sig
            for sig in matched]


def _time_of(line: str) -> str | None:
    found = _TIME.search(line)
    return found.group(0) if found else None


def _collect_notable(state: _State, name: str, tail: bytes) -> None:
    """Remember the last lines of a log that look like a failure: tracebacks' last lines, errors, exits."""
    if tail.endswith(b"\n"):
        tail = tail[:-1]
    line_no, counted = state.lines - tail.count(b"\n"), 0  # line_no is the number of the line holding `counted`
    done = -1
    for _word, start, _end in _NOTABLE_WORDS.find_matches_as_indexes(tail):
        if start <= done:
            continue
        line_start = tail.rfind(b"\n", 0, start) + 1
        found = tail.find(b"\n", start)
        done = found if found >= 0 else len(tail)
        line_no += tail.count(b"\n", counted, line_start)
        counted = line_start
        line = tail[line_start:done].decode("utf-8", errors="replace")
        if len(line) <= LONG_LINE and _NOTABLE.search(line):
            text = line.strip()[:MAX_TEXT]
            shape = re.sub(r"\d+", "", text)
            state.notable = deque((n for n in state.notable if re.sub(r"\d+", "", n.text) != shape), maxlen=MAX_NOTABLE)
            state.notable.append(Notable(name, line_no, line_rank(line), text))


def _note_stop(state: _State, name: str, tail: bytes) -> None:
    """Remember the end of a log when it tells where the log was cut: during start-up (its last
    line), or inside a traceback, before the error line (the frame's source line, or the frame)."""
    lines = tail.decode("utf-8", errors="replace").split("\n")
    if tail.endswith(b"\n"):
        lines.pop()
    last = list(itertools.islice(((back, line) for back, line in enumerate(reversed(lines)) if _MEANINGFUL.search(line)), 3))
    texts = [line for _back, line in last]  # the last three meaningful lines, newest first
    if texts and len(texts[0]) <= LONG_LINE and _STARTUP.search(texts[0]):
        state.stopped = Notable(name, state.lines - last[0][0], line_rank(texts[0]), texts[0].strip()[:MAX_TEXT])
    if not texts or any(len(line) > LONG_LINE for line in texts):
        return
    # Below a traceback's last frame come its source line and, from Python 3.11, carets; never the error line.
    frame = next((i for i, line in enumerate(texts) if _FRAME.search(line)), None)
    if frame == 0 or (frame == 1 and not _NOTABLE.search(texts[0])) or (frame == 2 and _CARET.search(texts[0]) and not _NOTABLE.search(texts[1])):
        back, line = last[frame - 1 if frame else 0]
        state.cut = Notable(name, state.lines - back, line_rank(line), line.strip()[:MAX_TEXT])


def _is_routine(h: _Hits) -> bool:
    return h.routine_lines == h.count and h.count <= h.routine_limit


def _rank(index: SignatureIndex, state: _State, cross: CrossRank | None) -> Diagnosis:
    hits = {s: h for s, h in state.hits.items() if not _is_routine(h)}
    for h in hits.values():
        if not h.role_lines.get("root") and h.routine_lines <= h.routine_limit:
            h.root = None  # its only root lines are a routine message in routine numbers: no root evidence
    routine = [Routine(s, _title(index, s), h.lines, message("routine_any" if h.routine_limit >= ROUTINE_ANY else "routine",
                                                                count=h.lines, s="" if h.lines == 1 else "s",
                                                                title=_title(index, s), limit=h.routine_limit))
               for s, h in state.hits.items() if s not in hits]
    derived = _cross_rank_evidence(index, state, cross, hits) | _duplicate_rank_evidence(index, state, hits)
    roots = [s for s, h in hits.items() if h.root is not None]
    explained = {s for s in roots if _causes_present(index, s, roots)}
    roots.sort(key=lambda s: (s in explained, hits[s].root_order, -hits[s].root_specificity, -len(hits[s].ranks),
                              -hits[s].count, _id(index, s)))
    top = roots[0] if roots else None
    causes = _causes(index, top) if top else []
    # An entry that only sees messages other entries own adds nothing: at most it is a possible cause.
    # Nor does one whose cause printed only its routine lines here: those lines are what it left behind.
    routine_slugs = [r.slug for r in routine]
    collateral = [s for s, h in hits.items() if h.root is None and h.unowned and s not in causes
                  and not _causes_present(index, s, routine_slugs)]
    downstream = {s for s in collateral if _causes_present(index, s, roots)}
    collateral.sort(key=lambda s: (s not in downstream, _specificity(hits[s]) < SPECIFIC, hits[s].first, -hits[s].specificity,
                                   -hits[s].count, _id(index, s)))
    candidates = [_candidate(index, s, hits, roots, explained | downstream, derived.get(s)) for s in roots + collateral]
    possible = [Cause(c, _id(index, c), _title(index, c), _look_for(index, c), c in hits)
                for c in causes if c not in roots][: int(RULES["max_causes"])]  # type: ignore[call-overload]
    return Diagnosis(candidates, cross, possible, routine, list(state.notable), state.matched_lines,
                     {s: dict(sorted(h.role_lines.items())) for s, h in sorted(state.hits.items()) if h.lines},
                     None if candidates else _stopped(index, state.stopped), None if candidates else _cut(state.cut))


def _stopped(index: SignatureIndex, last: Notable | None) -> Stopped | None:
    if last is None or STOPPED_ENTRY not in index.entries:
        return None
    title = _title(index, STOPPED_ENTRY)
    return Stopped(STOPPED_ENTRY, title, last.source, last.line, last.text,
                   message("stopped", where=_place(last.source, last.line), text=last.text, title=title))


def _cut(last: Notable | None) -> Cut | None:
    if last is None:
        return None
    return Cut(last.source, last.line, last.text, message("cut", where=_place(last.source, last.line), text=last.text))


def _cross_rank_evidence(index: SignatureIndex, state: _State, cross: CrossRank | None, hits: dict[str, _Hits]) -> dict[str, str]:
    """Turn a desync, or a rank that alone never reported in a paste of every rank, into root evidence
    for the entry about it. A rank that fell behind is named in the summary, but its numbers do not
    say why (a stuck host, a slow rank, a misused communicator), so the symptom's owner stays first."""
    slug = {"desync": DESYNC_ENTRY, "stuck": STUCK_ENTRY}.get(cross.case if cross else "")
    if cross is None or slug is None or slug not in index.entries:
        return {}
    _derived_root(state, hits, slug, cross.summary)
    return {slug: cross.summary}


def _duplicate_rank_evidence(index: SignatureIndex, state: _State, hits: dict[str, _Hits]) -> dict[str, str]:
    """Turn a global rank that processes announced more than once, while other ranks of that world
    were never announced, into root evidence for the entry about it (a restart, which announces
    every rank again, is not one)."""
    if DUPLICATE_ENTRY not in index.entries:
        return {}
    announced = Counter(world for _rank, world in state.announced)  # ranks announced, by world size
    for (rank, world), lines in state.announced.items():
        if len(lines) > 1 and announced[world] < int(world):
            where = ", ".join(_place(e.source, e.line) for e in lines[:2])
            summary = message("duplicate", rank=rank, world=world, count=len(lines), where=where, distinct=announced[world])
            _derived_root(state, hits, DUPLICATE_ENTRY, summary).evidence = lines[:MAX_EVIDENCE]
            return {DUPLICATE_ENTRY: summary}
    return {}


def _derived_root(state: _State, hits: dict[str, _Hits], slug: str, summary: str) -> _Hits:
    """Make a finding drawn from several lines an entry's root evidence, ranked with the earliest line."""
    first = min((h.first for h in hits.values()), default=state.order)
    h = hits.setdefault(slug, _Hits(first=first))
    h.root, h.root_order, h.root_specificity = Evidence("", 0, None, None, summary[:MAX_TEXT], CROSS_RANK, "root"), first, SPECIFIC
    return h


def _key_length(h: _Hits) -> int:
    """Return how specific an entry's collateral evidence is: its longest matching key."""
    return max(len(e.signature) for e in h.evidence)


def _specificity(h: _Hits) -> int:
    """Return how specific an entry's evidence is: its root signature's, else its longest key
    (none, when every signature it matched is a catch-all)."""
    return h.root_specificity if h.root else _key_length(h) if h.specificity else 0


def _id(index: SignatureIndex, slug: str) -> str:
    return str(index.entries[slug]["id"])


def _title(index: SignatureIndex, slug: str) -> str:
    return str(index.entries[slug]["title"])


def _causes(index: SignatureIndex, slug: str) -> list[str]:
    return [str(c) for c in index.entries[slug].get("caused_by", [])]  # type: ignore[attr-defined]


def _look_for(index: SignatureIndex, slug: str) -> list[str]:
    return [str(k) for k in index.entries[slug].get("look_for", [])]  # type: ignore[attr-defined]


def _causes_present(index: SignatureIndex, slug: str, roots: list[str]) -> bool:
    """Return whether a cause of this entry has root evidence that is not this entry's own line."""
    return any(c in roots and c != slug for c in _causes(index, slug))


def _candidate(index: SignatureIndex, slug: str, hits: dict[str, _Hits], roots: list[str], explained: set[str],
               cross_summary: str | None) -> Candidate:
    h = hits[slug]
    role = "root" if h.root is not None else "collateral"
    contested = any(r != slug and r not in explained for r in roots)
    features = "-".join((role, "explained" if slug in explained else "first",
                         "specific" if _specificity(h) >= SPECIFIC else "generic",
                         "contested" if contested else "alone"))
    return Candidate(slug, _id(index, slug), _title(index, slug), _CONFIDENCE[features], role, list(h.evidence),
                     _explain(index, slug, h, hits, roots, cross_summary), h.lines,
                     sorted(h.ranks, key=int), features)


def _where(evidence: Evidence) -> str:
    if evidence.signature == CROSS_RANK:
        return "the timeout reports of every rank"
    rank = f" on rank {evidence.rank}" if evidence.rank else ""
    return _place(evidence.source, evidence.line) + rank


def _place(source: str, line: int) -> str:
    return f"{source}:{line}" if source != "-" else f"line {line}"


def _explain(index: SignatureIndex, slug: str, h: _Hits, hits: dict[str, _Hits], roots: list[str], cross_summary: str | None) -> str:
    if cross_summary is not None:
        return message("cross_rank", summary=cross_summary)
    cause = next((c for c in roots if c != slug and c in _causes(index, slug)), None)
    if cause is not None:
        root = hits[cause].root
        assert root is not None  # causes are taken from the entries with root evidence
        ranks = f" on {rank_list(h.ranks)}" if h.ranks else ""
        return message("downstream", title=_title(index, slug), ranks=ranks, cause=_title(index, cause), where=_where(root))
    if h.root is not None:
        return message("root", where=_where(h.root))
    return message("collateral", ranks=f" on {rank_list(h.ranks)}" if h.ranks else "")
