"""Problems found in content, the numbered rules they break, and the one error base."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    protects: str
    fix: str


RULES: dict[str, Rule] = {
    r.code: r
    for r in [
        Rule("E001", "yaml-syntax", "Every content file must parse as YAML.",
             "Fix the YAML at the reported position: indentation, an unclosed quote or bracket, "
             "or a ':' inside an unquoted value are the usual causes."),
        Rule("E002", "duplicate-key", "A mapping must not repeat a key: YAML parsers keep only "
             "the last value and the first is silently lost.",
             "Merge the two values under one key, or rename one of them."),
        Rule("E003", "yaml-alias", "Anchors and aliases (&a / *a) are refused: they allow "
             "exponential 'billion laughs' documents and make entries hard to read.",
             "Write the repeated value out in full."),
        Rule("E004", "encoding", "Content files must be UTF-8 text without control characters.",
             "Re-save the file as UTF-8 and remove the reported byte."),
        Rule("E005", "file-too-large", "An entry is one failure; a huge file is almost "
             "certainly a mistake and slows every build.",
             "Keep content files under 1 MB; move logs out of the entry."),
        Rule("E006", "outside-content", "Only files really inside the content folder are read; "
             "a symbolic link must not pull in files from elsewhere on the machine.",
             "Replace the link with the file itself."),
        Rule("E007", "bad-filename", "The file name is the entry's slug and part of its URL.",
             "Rename the file to lowercase words joined by '-', ending in .yaml."),
        Rule("E010", "missing-field", "Every required section of an entry must be present.",
             "Add the field; `encyclopedia new` writes a template with every section."),
        Rule("E011", "unknown-field", "Unknown fields are refused so that a typo such as "
             "'symtoms' is caught instead of silently dropped.",
             "Rename the field to the one suggested, or remove it."),
        Rule("E012", "wrong-type", "Each field has one type (text, list, mapping, date ...).",
             "Change the value to the expected type shown in the message."),
        Rule("E013", "invalid-value", "Values such as severity, status, slugs, IDs and URLs "
             "follow fixed formats so that pages, links and filters work.",
             "Use one of the values or the format given in the message."),
        Rule("E020", "duplicate-id", "Short IDs identify an entry forever and are never shared.",
             "Give the newer entry the next free ID (`encyclopedia new` picks one)."),
        Rule("E021", "unknown-category", "Every entry belongs to a category listed in "
             "content/categories.yaml.",
             "Use one of the listed categories, or add the category there."),
        Rule("E022", "dangling-relation", "Relations must point at existing entries, or the "
             "page would link to nothing.",
             "Use the slug (file name without .yaml) of an existing entry."),
        Rule("E023", "self-relation", "An entry cannot be related to itself.",
             "Remove the relation."),
        Rule("E024", "duplicate-relation", "An entry lists each related entry once.",
             "Keep one relation per related entry, with the most specific type."),
        Rule("E025", "contradictory-relation", "'A causes B' and 'B causes A' (or A both causes "
             "and is caused by B) cannot both be true; the graph would contradict itself.",
             "Keep the direction that is right and delete the other declaration."),
        Rule("E026", "dangling-hub-entry", "Hub rows must link to existing entries.",
             "Use the slug of an existing entry."),
        Rule("E027", "duplicate-anchor", "Hub row anchors are link targets and must be unique.",
             "Give the row a different anchor."),
        Rule("E028", "undocumented-env-var", "Every environment variable a hub row names is "
             "explained in the hub's env_vars table, which the row links to.",
             "Add the variable to env_vars with what it does and when to set it."),
        Rule("E030", "bad-regex", "A signature's regular expression must compile.",
             "Fix the pattern; test it with Python's re module."),
        Rule("E031", "example-mismatch", "Every example log line must match its own signature, "
             "which proves the signature against real output.",
             "Make the key a literal substring of each example, or fix the regex."),
        Rule("E032", "overlapping-signature", "A signature should point at its own entry: one that "
             "also matches another entry's root example lines sends readers to the wrong page "
             "(a warning; an error under --strict).",
             "Make the key or regex more specific, or relate the two entries and keep one signature."),
        Rule("E033", "non-portable-regex", "Signature patterns run in Python and in the reader's "
             "browser; they must mean the same in both and must not be able to hang a browser tab.",
             "Use plain characters, [classes], \\d \\w \\s, (?:groups), alternation and single-level "
             "quantifiers; no lookarounds, named groups, inline flags or nested unbounded repeats."),
        Rule("E034", "key-outside-regex", "A signature's regex must contain its key as plain text that "
             "every match includes, so that the key alone finds the candidate lines and the exports for "
             "grep, mtail and Prometheus match exactly the lines diagnosis does.",
             "Make the key a run of literal text in the regex outside any optional part, or drop the regex."),
        Rule("E050", "alias-collision", "An alias redirects an old address to an entry; it cannot "
             "also be a live slug or another entry's alias, or one address would mean two pages.",
             "Remove the alias, or keep it on only one entry."),
        Rule("E051", "broken-permalink", "Every ID and slug ever published (content/ledger.yaml) keeps "
             "working forever: incident documents link to them.",
             "When renaming an entry, list its old slug under `aliases:`; never delete an entry's ID, "
             "and when merging entries add the old slug as an alias of the survivor."),
        Rule("E052", "unrecorded-permalink", "The ledger records each published ID and slug so that "
             "a later rename cannot silently break links (a warning; an error under --strict).",
             "Run `encyclopedia ledger` and commit content/ledger.yaml with your entry."),
        Rule("E053", "unknown-reproduction", "A reproduction belongs to an entry, and an entry is only "
             "marked as reproduced when its script exists and `encyclopedia verify-repro` saw its output "
             "match the entry's signatures.",
             "Name the script content/repro/<slug>.py after an existing entry; let verify-repro write "
             "content/repro/reproduced.yaml instead of editing it by hand."),
        Rule("E054", "bad-sample-log", "A sample log on /diagnose/ is a real log a reader can load with "
             "one click; it must be there, small and readable.",
             "Put the log beside content/samples/samples.yaml, as UTF-8 text of at most 64 KiB, and "
             "name it in the `file` field."),
        Rule("E035", "seen-in-mismatch", "Each example line says where it was seen, so that a reader can "
             "check it against the real log.",
             "Give `seen_in` one item per example, in the same order: the public thread's URL, or `repro` "
             "for a line printed by content/repro/<slug>.py."),
        Rule("E041", "missing-provenance", "In a reviewed entry, every signature names the file that prints "
             "its message, at a release tag or commit, and every example where it was seen, so that each "
             "quoted string can be checked in one click (a warning; an error under --strict).",
             "Add `source: {repo: owner/name, ref: <tag or commit>, path: <file>}` (or, for a message only "
             "closed software prints, `closed_source: <program>`) and `seen_in:` with one thread URL (or "
             "`repro`) per example."),
        Rule("E040", "quality-minimum", "Reviewed entries meet the content minimums "
             "(checked with --strict).",
             "Add the missing rows, steps, examples, FAQ answers, references or relations; write each "
             "confirm step as the command or code to run, in backticks."),
    ]
}


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong in one file, at one position."""

    path: str
    line: int
    col: int
    field: str
    message: str
    code: str
    warning: bool = False

    def format(self) -> str:
        """Return `path:line:col: field: message [CODE name]`."""
        field = f" {self.field}:" if self.field else ""
        return f"{self.path}:{self.line}:{self.col}:{field} {self.message} [{self.code} {RULES[self.code].name}]"


@dataclass(frozen=True)
class Waiting:
    """References to an entry file that could not be read: not reported one by one as dangling,
    since they are checked again once the file reads."""

    path: str
    counts: tuple[tuple[str, int], ...]  # (kind, how many), e.g. ("relation", 19)

    def format(self) -> str:
        """Return `path: N references wait on this entry (19 relations, 5 hub rows, ...); ...`."""
        total = sum(n for _, n in self.counts)
        kinds = ", ".join(f"{n} {kind}{'s' * (n != 1)}" for kind, n in self.counts)
        return (f"{self.path}: {total} reference{'s' * (total != 1)} {'wait' if total != 1 else 'waits'} on this entry "
                f"({kinds}); {'they are' if total != 1 else 'it is'} checked once it can be read")


class GeneratorError(Exception):
    """The one error the CLI catches: a message for the user, never a traceback."""


class ContentError(GeneratorError):
    """The content has problems; nothing was written."""

    def __init__(self, problems: list[Problem], waiting: list[Waiting] | None = None) -> None:
        self.problems = sorted(problems)
        self.waiting = waiting or []
        files = len({p.path for p in self.problems})
        n = len(self.problems)
        super().__init__(f"{n} error{'s' * (n != 1)} in {files} file{'s' * (files != 1)}")
