"""Machine-readable files: the JSON API and the JSON Schemas (the sitemap, robots.txt and the
Atom feed are templates, planned with the pages).

Pure functions from the catalog to {site path: text}; all generated from the same
pydantic models as the pages, in a fixed order so that builds are byte-identical.
"""

from __future__ import annotations

import datetime
import functools
import json
import re

from pydantic import BaseModel, ConfigDict

from .catalog import Catalog
from .loading import LoadedEntry, per_entry
from .ranks import RULES
from .scaffold import DEFAULT_CATEGORY, DRAFT_TEMPLATE, next_id
from .schema import Entry, FailureMode, RelationType, Severity
from .signatures import specificity
from .site import Deferred


class ApiLink(BaseModel):
    model_config = ConfigDict(extra="forbid")
    slug: str
    type: RelationType
    declared: bool


class ApiEntry(Entry):
    """/api/failures/<slug>.json: the entry as written, plus its address and all its relations."""

    slug: str
    url: str
    links: list[ApiLink]


class ApiSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    slug: str
    title: str
    category: str
    severity: Severity
    failure_mode: FailureMode
    tags: list[str]
    summary: str
    url: str
    last_reviewed: datetime.date


class ApiIndex(BaseModel):
    """/api/index.json: one summary per entry."""

    model_config = ConfigDict(extra="forbid")
    entries: list[ApiSummary]


SCHEMAS: dict[str, type[BaseModel]] = {"entry": Entry, "api-entry": ApiEntry, "api-index": ApiIndex}


def _json(data: object, pretty: bool = False) -> str:
    if pretty:  # for files people read, such as the editor schema
        return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=1) + "\n"
    return _compact(data) + "\n"


def _compact(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _json_with(data: dict[str, object], **raw: str) -> str:
    """Return _json of data with the given members added, their values already compact JSON text:
    a file of 10,000 entries is joined from each entry's text, which an unchanged entry keeps
    (serve), instead of dumped whole on every build."""
    members = {key: _compact(value) for key, value in data.items()} | raw
    return "{" + ",".join(f"{_compact(key)}:{members[key]}" for key in sorted(members)) + "}\n"


def entry_schema_json() -> str:
    """Return the JSON Schema of an entry file, as editors and `encyclopedia schema` use it."""
    schema = Entry.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "ML Training Failure Encyclopedia entry"
    return _json(schema, pretty=True)


def entry_url(base_url: str, slug: str) -> str:
    """Return the canonical absolute URL of an entry."""
    return f"{base_url}failures/{slug}/"


def render_api(catalog: Catalog, signatures: str) -> dict[str, str | Deferred]:
    """Return the JSON API and schemas by site path; an entry's file and the schemas are made
    only when their inputs changed (an entry's file is a function of its YAML and its links).
    signatures: signatures_json(catalog) (the diagnose page shares it)."""
    base_url = catalog.site.base_url
    files: dict[str, str | Deferred] = {
        "api/index.json": _json_with({}, entries=f"[{','.join(_summary_json(item, base_url) for item in catalog.ordered())}]"),
        "api/signatures.json": signatures,
    }
    for name, model in SCHEMAS.items():
        files[f"schema/{name}.schema.json"] = Deferred(name, entry_schema_json if model is Entry else functools.partial(_schema_json, model))
    for slug, item in sorted(catalog.entries.items()):
        links = tuple(catalog.links.get(slug, ()))  # the same Link objects while no relation changes (serve)
        files[f"api/failures/{slug}.json"] = Deferred((slug, item.source.digest, links), functools.partial(_entry_json, catalog, slug))
    return files


def _entry_json(catalog: Catalog, slug: str) -> str:
    links = [ApiLink(slug=l.slug, type=l.type, declared=l.declared) for l in catalog.links.get(slug, [])]
    full = ApiEntry(**catalog.entries[slug].entry.model_dump(), slug=slug, url=entry_url(catalog.site.base_url, slug), links=links)
    return _json(full.model_dump(mode="json"))


def _schema_json(model: type[BaseModel]) -> str:
    return _json(model.model_json_schema())


@per_entry
def _summary_json(item: LoadedEntry, base_url: str) -> str:
    """Return an entry's item of api/index.json (an ApiSummary), as JSON text."""
    entry = item.entry
    return _compact(ApiSummary(id=entry.id, slug=item.slug, title=entry.title, category=entry.category, severity=entry.severity,
                            failure_mode=entry.failure_mode, tags=entry.tags, summary=entry.summary,
                            url=entry_url(base_url, item.slug), last_reviewed=entry.last_reviewed).model_dump(mode="json"))


def signature_data(catalog: Catalog) -> dict[str, object]:
    """Return what search and diagnosis need, in the CLI and in the browser: every signature,
    the entry facts, and diagnosis.json's rules (patterns, messages, confidence)."""
    return json.loads(signatures_json(catalog))  # type: ignore[no-any-return]


def signatures_json(catalog: Catalog) -> str:
    """Return api/signatures.json, signature_data as JSON text, joined from each entry's text."""
    items = sorted(catalog.entries.items())
    entries = ",".join(_facts_json(item, tuple(_causes(catalog, slug))) for slug, item in items)
    rows = ",".join(text for _slug, item in items if (text := _signature_rows_json(item)))
    shared: dict[str, object] = {
        "rules": RULES,
        "site_url": catalog.site.base_url,
        "repo": {"url": catalog.site.repo_url, "branch": catalog.site.repo_branch} if catalog.site.repo_url else None,
        "draft": {"template": DRAFT_TEMPLATE, "category": DEFAULT_CATEGORY,
                  "next_id": next_id(set(catalog.ids) | set(catalog.ledger.root))},
    }
    return _json_with(shared, entries=f"{{{entries}}}", signatures=f"[{rows}]")


@per_entry
def _facts_json(item: LoadedEntry, causes: tuple[str, ...]) -> str:
    """Return an entry's member of "entries": what the search and diagnosis cards show of it, and
    the entries that can cause it (which other entries declare too), as JSON text."""
    entry = item.entry
    facts = {"id": entry.id, "title": entry.title, "category": entry.category, "severity": entry.severity,
             "look_for": list(dict.fromkeys(s.key for s in entry.signatures if s.role == "root"))[:2],
             "quick": {k: plain_text(v) for k, v in entry.quick_answer.model_dump().items()}, "caused_by": list(causes)}
    return f"{_compact(item.slug)}:{_compact(facts)}"


@per_entry
def _signature_rows_json(item: LoadedEntry) -> str:
    """Return an entry's rows of "signatures", as JSON text."""
    return ",".join(_compact({"slug": item.slug, "key": sig.key, "regex": sig.regex, "role": sig.role, "routine": sig.routine,
                              "specificity": specificity(sig)}) for sig in item.entry.signatures)


def plain_text(markdown: str) -> str:
    """Return short Markdown as plain text for the page's cards (code and emphasis marks dropped)."""
    return re.sub(r"`+|\*\*", "", markdown)


def _causes(catalog: Catalog, slug: str) -> list[str]:
    """Return the entries that can cause this one: the order its own file gives, then those that
    declare it as their effect, by ID (the order of its links)."""
    return [link.slug for link in catalog.links.get(slug, []) if link.type == "caused-by"]

