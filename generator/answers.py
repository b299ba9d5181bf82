"""The diagnosis as answers: the documented JSON shape and the text a terminal shows."""

from __future__ import annotations

from urllib.parse import quote

from .diagnosis import Diagnosis
from .ranks import message


def diagnosis_json(diagnosis: Diagnosis) -> dict[str, object]:
    """Return the diagnosis as the documented JSON shape, best candidate first."""
    cross = diagnosis.cross_rank
    return {
        "candidates": [{
            "slug": c.slug, "id": c.id, "title": c.title, "score": c.score, "role": c.role,
            "evidence": [{"source": e.source, "line": e.line, "rank": e.rank, "time": e.time, "text": e.text,
                          "signature": e.signature, "role": e.role} for e in c.evidence],
            "explanation": c.explanation, "matched_lines": c.lines, "ranks": c.ranks, "basis": c.basis,
        } for c in diagnosis.candidates],
        "possible_causes": [{"slug": c.slug, "id": c.id, "title": c.title, "look_for": c.look_for, "seen": c.seen}
                            for c in diagnosis.possible_causes],
        "routine": [{"slug": r.slug, "title": r.title, "lines": r.lines, "note": r.note} for r in diagnosis.routine],
        "notable": [{"source": n.source, "line": n.line, "rank": n.rank, "text": n.text} for n in diagnosis.notable],
        "matched_lines": diagnosis.matched_lines,
        "lines_by_entry": diagnosis.lines_by_entry,
        "stopped": None if diagnosis.stopped is None else {
            k: getattr(diagnosis.stopped, k) for k in ("slug", "title", "source", "line", "text", "note")},
        "cut": None if diagnosis.cut is None else {k: getattr(diagnosis.cut, k) for k in ("source", "line", "text", "note")},
        "cross_rank": None if cross is None else {
            "case": cross.case, "stuck_ranks": cross.stuck, "summary": cross.summary, "groups": cross.groups,
        },
    }


def format_diagnosis(diagnosis: Diagnosis, top: int, search_url: str) -> str:
    """Return the diagnosis as text for a terminal; search_url + a quoted line searches the site."""
    out = []
    if diagnosis.cross_rank:
        out += [f"Across ranks: {diagnosis.cross_rank.summary}", ""]
    for i, c in enumerate(diagnosis.candidates[:top], 1):
        out.append(f"{i}. {c.title} [{c.id}] {c.role}, confidence {c.score}")
        out.append(f"   {c.explanation}")
        out.append(f"   read: failures/{c.slug}/  (confirm: failures/{c.slug}/#confirm, fix: failures/{c.slug}/#fix, verify: failures/{c.slug}/#verify)")
        for e in c.evidence[:3]:
            rank = f" rank {e.rank}" if e.rank else ""
            out.append(f"   {e.source}:{e.line}{rank} {e.role}: {e.text[:160]}")
    hidden = len(diagnosis.candidates) - top
    if hidden > 0:
        out.append(f"... and {hidden} more (--top {len(diagnosis.candidates)} to see them)")
    if diagnosis.possible_causes:
        out += ["", f"Possible causes to check (what {diagnosis.candidates[0].title} lists as its causes):"]
        for cause in diagnosis.possible_causes:
            look = "; ".join(f'"{k}"' for k in cause.look_for)
            out.append(f"   - {cause.title} [{cause.id}]: look in every rank's log for {look or 'its symptoms'}")
    for r in diagnosis.routine:
        out += ["", f"Routine: {r.note}"]
    if not diagnosis.candidates:
        out.append(message("no_match"))
        if diagnosis.stopped:
            out += ["", diagnosis.stopped.note, f"   read: failures/{diagnosis.stopped.slug}/"]
        if diagnosis.cut:
            out += ["", diagnosis.cut.note, f"   search: {search_url}{quote(diagnosis.cut.text[:200])}"]
        if diagnosis.notable:
            out += ["", "Lines that look like the failure: search the encyclopedia for one, or propose an entry from it:"]
            for n in diagnosis.notable:
                out.append(f"   {n.source}:{n.line} {n.text[:200]}")
                out.append(f"      search: {search_url}{quote(n.text[:200])}")
                if n.source != "-":
                    out.append(f"      propose: encyclopedia new --from-log {n.source} --line {n.line}")
    return "\n".join(out).strip("\n")
