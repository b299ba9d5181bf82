"""Pydantic models for the content: an entry, its parts, categories and hubs.

Models are frozen and forbid unknown fields, so a typo such as ``symtoms:`` is
an error rather than silently ignored data.
"""

from __future__ import annotations

import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, RootModel, StringConstraints

from .ranks import RULES

SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
ID_PATTERN = r"^MTF-[0-9]{4,6}$"
BRANCH_PATTERN = r"^[A-Za-z0-9._][A-Za-z0-9._/-]*$"
REPO_PATTERN = r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"
# A commit, or a release tag: tags name a version, so they hold a digit; branches such as main do not.
REF_PATTERN = r"^(?:[0-9a-f]{7,40}|[A-Za-z0-9._+-]*[0-9][A-Za-z0-9._+-]*)$"
PATH_PATTERN = r"^[A-Za-z0-9_.+-][A-Za-z0-9_.+/-]*$"
ROUTINE_ANY = int(RULES["routine_any"])  # type: ignore[call-overload]  # the most a routine limit can be: any number

REPRO = "repro"  # in seen_in: the example was printed by the entry's reproduction script

Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN, max_length=80)]
EntryId = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=20_000)]
Line = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
Tag = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._+-]*$", max_length=40)]


HTTPS_PATTERN = r"^https://[^\s/]+(/\S*)?$"
HttpsUrl = Annotated[str, StringConstraints(pattern=HTTPS_PATTERN, max_length=2000)]

Severity = Literal["low", "medium", "high", "critical"]
FailureMode = Literal["hang", "crash", "slow", "divergence", "silent-corruption", "error"]
Status = Literal["draft", "reviewed"]
Role = Literal["root", "collateral"]
RelationType = Literal["causes", "caused-by", "confused-with", "see-also"]
ReferenceKind = Literal["docs", "issue", "source", "paper"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class QuickAnswer(_Model):
    """The three-line answer shown at the top of an entry."""

    symptom: Text
    root_cause: Text
    fix: Text


class SymptomRow(_Model):
    symptom: Text
    meaning: Text


class AffectedSystem(_Model):
    name: Line
    versions: Line | None = None
    fixed_in: Line | None = None


class CodeExample(_Model):
    stack: Line
    title: Line | None = None
    language: Annotated[str, StringConstraints(pattern=r"^[a-z0-9+#-]+$", max_length=30)]
    code: Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
    why: Text


class VerifyStep(_Model):
    """One way to know the fix worked: what to run or watch, and what it shows when it did."""

    check: Text
    code: Annotated[str, StringConstraints(min_length=1, max_length=20_000)] | None = None
    language: Annotated[str, StringConstraints(pattern=r"^[a-z0-9+#-]+$", max_length=30)] = "console"
    expect: Text


class FaqItem(_Model):
    question: Line
    answer: Text


class Reference(_Model):
    title: Line
    url: HttpsUrl
    kind: ReferenceKind


def _no_parent_segment(path: str) -> str:
    if ".." in path.split("/"):
        raise ValueError("must not contain '..' (expected a file path inside the repository)")
    return path


class SourceRef(_Model):
    """Where a message is printed: a file of a public GitHub repository at a release tag or commit."""

    repo: Annotated[str, StringConstraints(pattern=REPO_PATTERN, max_length=140)]
    ref: Annotated[str, StringConstraints(pattern=REF_PATTERN, max_length=100)]
    path: Annotated[str, StringConstraints(pattern=PATH_PATTERN, max_length=300), AfterValidator(_no_parent_segment)]


class Signature(_Model):
    """An error signature: how a log line points at this entry."""

    key: Line
    regex: Annotated[str, StringConstraints(min_length=1, max_length=500)] | None = None
    role: Role
    versions: Line | None = None
    # A healthy run may print up to this many such lines (a recompile warning, an early
    # loss-scale overflow); diagnosis reports that many or fewer as routine, not as a failure.
    # ROUTINE_ANY means any number: such lines alone never show a failure.
    routine: Annotated[int, Field(ge=0, le=ROUTINE_ANY)] = 0
    # A signature for a whole family of messages (any missing module, any CUDA failure NCCL
    # reports): on a line that a specific signature of another entry also matches, it yields.
    catch_all: bool = False
    source: SourceRef | None = None
    # For a message printed by closed software only (nvidia-smi, the TPU compiler): the program, named.
    closed_source: Line | None = None
    examples: Annotated[list[Annotated[str, StringConstraints(min_length=1, max_length=2000)]], Field(min_length=1)]
    # Where each example was seen, in order: a public thread, or "repro" (content/repro/<slug>.py).
    seen_in: list[HttpsUrl | Literal["repro"]] = Field(default_factory=list)


class Relation(_Model):
    slug: Slug
    type: RelationType


class Entry(_Model):
    """One failure, one file: ``content/failures/<slug>.yaml``."""

    id: EntryId
    title: Line
    category: Slug
    severity: Severity
    failure_mode: FailureMode
    tags: list[Tag] = Field(default_factory=list)
    status: Status
    last_reviewed: datetime.date
    aliases: list[Slug] = Field(default_factory=list)

    summary: Text
    quick_answer: QuickAnswer
    mechanism: Text
    observations: list[Text] = Field(default_factory=list)
    symptoms: list[SymptomRow] = Field(default_factory=list)
    affected_systems: list[AffectedSystem] = Field(default_factory=list)
    confirm: list[Text] = Field(default_factory=list)
    root_causes: list[Text] = Field(default_factory=list)
    fix: list[Text] = Field(default_factory=list)
    verify: list[VerifyStep] = Field(default_factory=list)
    prevention: list[Text] = Field(default_factory=list)
    code_examples: list[CodeExample] = Field(default_factory=list)
    signatures: list[Signature] = Field(default_factory=list)
    faq: list[FaqItem] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    related: list[Relation] = Field(default_factory=list)


class Category(_Model):
    slug: Slug
    title: Line
    description: Text


class Categories(_Model):
    categories: Annotated[list[Category], Field(min_length=1)]


class HubEnvVar(_Model):
    name: Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]*$", max_length=80)]
    what: Text
    when: Text


class HubRow(_Model):
    anchor: Slug
    error: Line
    says: Text
    indicates: Text
    where: Text
    env: list[Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]*$")]] = Field(default_factory=list)
    entries: list[Slug] = Field(default_factory=list)


class Hub(_Model):
    """A side-by-side page across many entries, e.g. the NCCL error hub."""

    title: Line
    summary: Text
    rows: Annotated[list[HubRow], Field(min_length=1)]
    env_vars: list[HubEnvVar] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)


def _site_root(url: str) -> str:
    if not url.endswith("/"):
        raise ValueError("must end with '/' (the folder the site is served from)")
    return url


def _repository(url: str) -> str:
    if url.endswith(("/", ".git")):
        raise ValueError("must be the repository's web address without a trailing '/' or '.git' (e.g. https://github.com/owner/name)")
    return url


class SiteConfig(_Model):
    """content/site.yaml: what the site is called, where it is published and where its source lives."""

    title: Line = "ML Training Failure Encyclopedia"
    description: Text = "Open encyclopedia of the ways large ML training runs fail, with the fix for each."
    base_url: Annotated[HttpsUrl, AfterValidator(_site_root)] = "https://example.org/"
    repo_url: Annotated[HttpsUrl, AfterValidator(_repository)] | None = None
    repo_branch: Annotated[str, StringConstraints(pattern=BRANCH_PATTERN, max_length=200)] = "main"


class SampleLog(_Model):
    file: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]*\.log$", max_length=120)]
    title: Line
    source: HttpsUrl
    shows: Text


class SampleLogs(_Model):
    """content/samples/samples.yaml: real logs /diagnose/ offers to a reader with none to hand."""

    samples: Annotated[list[SampleLog], Field(min_length=1, max_length=6)]


class Ledger(RootModel[dict[EntryId, list[Slug]]]):
    """content/ledger.yaml: every ID ever published, with every slug it was published under."""

    model_config = ConfigDict(frozen=True)


class ReproRecord(_Model):
    torch: Line
    device: Literal["cpu", "cuda"]


class Reproduced(RootModel[dict[Slug, ReproRecord]]):
    """content/repro/reproduced.yaml: entries whose reproduction really ran and matched, and with what."""

    model_config = ConfigDict(frozen=True)
