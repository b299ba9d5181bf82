"""The validated collection: lookups, cross-references, inverse relations, taxonomies."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import ContentError, Problem, Waiting
from .loading import Content, LoadedEntry, LoadedHub, SourceMap, display_path, per_entry
from .schema import REPRO, Category, Ledger, RelationType, ReproRecord, SampleLog, SiteConfig

INVERSE: dict[str, RelationType] = {
    "causes": "caused-by",
    "caused-by": "causes",
    "confused-with": "confused-with",
    "see-also": "see-also",
}
CAUSAL = {"causes", "caused-by"}


@dataclass(frozen=True)
class Link:
    """A typed relation as one entry's page shows it."""

    type: RelationType
    slug: str
    declared: bool


@dataclass(frozen=True)
class Term:
    """One value of a taxonomy (a category, tag, system, severity or failure mode) and its entries."""

    slug: str
    label: str
    description: str
    entries: list[str]


TAXONOMIES = {
    "categories": "Categories",
    "tags": "Tags",
    "systems": "Affected systems",
    "severities": "Severities",
    "failure-modes": "Failure modes",
}
SEVERITY_ORDER = ["critical", "high", "medium", "low"]
FAILURE_MODES = ["hang", "crash", "slow", "divergence", "silent-corruption", "error"]


def system_label(name: str) -> str:
    """Return an affected system's name without its detail: 'PyTorch (ProcessGroupNCCL)' -> 'PyTorch'."""
    return name.split("(")[0].strip()


def system_slug(name: str) -> str:
    """Return the taxonomy slug of an affected system name: 'PyTorch (ProcessGroupNCCL)' -> 'pytorch'."""
    return re.sub(r"[^a-z0-9]+", "-", system_label(name).lower()).strip("-") or "other"


@dataclass
class Catalog:
    """Every entry by slug, and what links them."""

    entries: dict[str, LoadedEntry]
    categories: dict[str, Category]
    hubs: dict[str, LoadedHub]
    site: SiteConfig = field(default_factory=SiteConfig)
    ledger: Ledger = field(default_factory=lambda: Ledger({}))
    aliases: dict[str, str] = field(default_factory=dict)  # old slug -> live slug
    ids: dict[str, str] = field(default_factory=dict)  # every published ID -> live slug
    reproduced: dict[str, ReproRecord] = field(default_factory=dict)
    repro_scripts: dict[str, Path] = field(default_factory=dict)
    samples: list[tuple[SampleLog, str]] = field(default_factory=list)  # sample logs for /diagnose/, with their text
    links: dict[str, list[Link]] = field(default_factory=dict)
    taxonomies: dict[str, dict[str, Term]] = field(default_factory=dict)
    hub_rows_for: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    set_aside: frozenset[str] = frozenset()  # entries left out (drafts, unreadable files), which references may name
    _ordered: tuple[LoadedEntry, ...] | None = field(default=None, init=False, repr=False)

    def resolve(self, slug: str) -> str | None:
        """Return the live slug a slug or old alias leads to, or None."""
        return slug if slug in self.entries else self.aliases.get(slug)

    def ordered(self) -> tuple[LoadedEntry, ...]:
        """Return entries sorted by title, then slug (sorted once: the entries do not change)."""
        if self._ordered is None:
            self._ordered = tuple(sorted(self.entries.values(), key=lambda e: (e.entry.title.lower(), e.slug)))
        return self._ordered


class _Waits:
    """Counts references to entry files that could not be read, instead of reporting each as dangling."""

    KINDS = ("relation", "hub row", "ledger line", "reproduction script", "reproduction record")

    def __init__(self, unreadable: dict[str, str]) -> None:
        self.unreadable = unreadable
        self.counts: Counter[tuple[str, str]] = Counter()

    def on(self, slug: str, kind: str) -> bool:
        """Return whether slug names an unreadable entry, counting the reference if it does."""
        if slug not in self.unreadable:
            return False
        self.counts[slug, kind] += 1
        return True

    def report(self) -> list[Waiting]:
        """Return one Waiting per unreadable entry that references name, by path."""
        slugs = sorted({slug for slug, _ in self.counts}, key=lambda slug: self.unreadable[slug])
        return [Waiting(self.unreadable[slug], tuple((kind, self.counts[slug, kind]) for kind in self.KINDS if self.counts[slug, kind]))
                for slug in slugs]


def without_drafts(content: Content) -> Content:
    """Return the content as published: draft entries left out, and references to them (relations,
    hub rows, ledger lines) set aside as references to entries not there yet."""
    drafts = {item.slug: item.path for item in content.entries if item.entry.status == "draft"}
    return replace(content, entries=[item for item in content.entries if item.slug not in drafts],
                   unreadable={**content.unreadable, **drafts})


def build_catalog(content: Content, previous: Catalog | None = None) -> Catalog:
    """Return the catalog, or raise ContentError with every problem found.
    previous: a catalog built before (serve keeps it); its links are taken again when no entry's
    relations changed, instead of linking every entry anew."""
    problems = list(content.problems)
    categories = {c.slug: c for c in content.categories.categories} if content.categories else {}
    entries: dict[str, LoadedEntry] = {}
    ids: dict[str, LoadedEntry] = {}
    for item in content.entries:
        entries[item.slug] = item
        first = ids.setdefault(item.entry.id, item)
        if first is not item:
            problems.append(item.source.problem(("id",), "E020", f"{item.entry.id!r} is already used by {first.path} (expected a unique ID)"))
        if categories and item.entry.category not in categories:
            problems.append(item.source.problem(("category",), "E021", f"{item.entry.category!r} is not a category (expected one of: {', '.join(sorted(categories))})"))
    catalog = Catalog(entries, categories, {h.slug: h for h in content.hubs}, content.site, content.ledger)
    catalog.samples, catalog.set_aside = content.samples, frozenset(content.unreadable)
    waits = _Waits(content.unreadable)
    problems += _check_reproductions(catalog, content, waits)
    problems += _resolve_aliases(catalog)
    problems += _check_ledger(catalog, content.ledger_source, waits)
    if previous is not None and _same_relations(previous, catalog):
        catalog.links = previous.links
    else:
        problems += _link_relations(catalog, waits)
    problems += _index_hubs(catalog, waits)
    if problems:
        raise ContentError(problems, waits.report())
    _index_taxonomies(catalog)
    return catalog


def _check_reproductions(catalog: Catalog, content: Content, waits: _Waits) -> list[Problem]:
    problems = []
    for slug, script in content.repro_scripts.items():
        if slug not in catalog.entries and not waits.on(slug, "reproduction script"):
            problems.append(Problem(display_path(script), 1, 1, "", f"no entry {slug!r} (expected the script to be named after an entry's slug)", "E053"))
    for slug, record in sorted(content.reproduced.root.items()):
        if slug in catalog.entries and slug in content.repro_scripts:
            catalog.reproduced[slug] = record
        elif not waits.on(slug, "reproduction record"):
            assert content.reproduced_source is not None
            problems.append(content.reproduced_source.problem((slug,), "E053", f"{slug!r} has no entry or no content/repro/{slug}.py (expected a reproduced entry)", key=True))
    catalog.repro_scripts = {s: p for s, p in content.repro_scripts.items() if s in catalog.entries}
    for slug, item in sorted(catalog.entries.items()):
        for i, sig in enumerate(item.entry.signatures):
            for j, seen in enumerate(sig.seen_in):
                if seen == REPRO and slug not in catalog.repro_scripts:
                    problems.append(item.source.problem(("signatures", i, "seen_in", j), "E053",
                                                        f"says repro, but there is no content/repro/{slug}.py (expected the script that printed it)"))
    return problems


def _resolve_aliases(catalog: Catalog) -> list[Problem]:
    problems = []
    for slug in sorted(catalog.entries):
        item = catalog.entries[slug]
        for i, alias in enumerate(item.entry.aliases):
            if alias in catalog.entries:
                problems.append(item.source.problem(("aliases", i), "E050", f"{alias!r} is the slug of a live entry, {catalog.entries[alias].path} (expected an old slug no entry uses)"))
            elif alias in catalog.aliases:
                owner = catalog.entries[catalog.aliases[alias]].path
                problems.append(item.source.problem(("aliases", i), "E050", f"{alias!r} is already an alias of {owner} (expected each old slug on one entry)"))
            else:
                catalog.aliases[alias] = slug
    catalog.ids = {item.entry.id: slug for slug, item in sorted(catalog.entries.items())}
    return problems


def _check_ledger(catalog: Catalog, source: SourceMap | None, waits: _Waits) -> list[Problem]:
    """Every ID and slug ever published must still lead to an entry: the one that has the ID."""
    problems = []
    for entry_id, slugs in sorted(catalog.ledger.root.items()):
        holder = catalog.ids.get(entry_id)
        unread = [slug for slug in slugs if slug in waits.unreadable]
        if holder is None and unread and waits.on(unread[0], "ledger line"):
            continue  # the ID is most likely in the file that could not be read
        for i, old in enumerate(slugs):
            lands = old if old in catalog.entries else catalog.aliases.get(old)
            if lands is None or (holder is not None and lands != holder):
                where = f"{catalog.entries[holder].path}" if holder else "the entry that replaced it"
                assert source is not None
                problems.append(source.problem((entry_id, i), "E051",
                    f"{old!r} was published for {entry_id} but no longer leads to it (expected {old!r} in the aliases of {where})"))
            elif holder is None:
                catalog.ids[entry_id] = lands  # a merged entry's ID redirects to where its slug lives on
    return problems


def _same_relations(previous: Catalog, catalog: Catalog) -> bool:
    """Return whether what relations are linked from is as in the previous catalog: the entries,
    their relations, IDs (which order the relations others declare) and aliases, and the entries
    set aside (an unchanged file gives the same model)."""
    if (previous.entries.keys() != catalog.entries.keys() or previous.aliases != catalog.aliases
            or previous.set_aside != catalog.set_aside):
        return False
    before = previous.entries
    return all(before[slug].entry is item.entry or (before[slug].entry.related, before[slug].entry.id) == (item.entry.related, item.entry.id)
               for slug, item in catalog.entries.items())


def _link_relations(catalog: Catalog, waits: _Waits) -> list[Problem]:
    problems: list[Problem] = []
    declared: dict[tuple[str, str], tuple[RelationType, LoadedEntry, int]] = {}
    for slug in sorted(catalog.entries):
        item = catalog.entries[slug]
        for i, rel in enumerate(item.entry.related):
            loc = ("related", i, "slug")
            target = catalog.resolve(rel.slug)
            if target == slug:
                problems.append(item.source.problem(loc, "E023", f"{rel.slug!r} is this entry (expected another entry)"))
            elif target is None:
                if not waits.on(rel.slug, "relation"):
                    problems.append(item.source.problem(loc, "E022", f"no entry {rel.slug!r} (expected the slug of an existing entry)"))
            elif (slug, target) in declared:
                first = declared[(slug, target)][0]
                if {first, rel.type} == CAUSAL:
                    problems.append(item.source.problem(("related", i, "type"), "E025", f"{slug} both causes and is caused by {rel.slug} (expected one direction)"))
                else:
                    problems.append(item.source.problem(loc, "E024", f"{rel.slug!r} is listed twice (expected one relation per entry)"))
            else:
                declared[(slug, target)] = (rel.type, item, i)
    links: dict[str, dict[str, Link]] = defaultdict(dict)
    for (a, b), (kind, item, i) in sorted(declared.items()):
        links[a][b] = Link(kind, b, True)
        back = declared.get((b, a))
        if back is None:
            links[b].setdefault(a, Link(INVERSE[kind], a, False))
        elif a < b and {kind, back[0]} <= CAUSAL and back[0] != INVERSE[kind]:
            other = back[1].source.at(("related", back[2], "type"))
            problems.append(item.source.problem(("related", i, "type"), "E025",
                f"{a} {kind} {b}, but {back[1].path}:{other[0]}:{other[1]} says {b} {back[0]} {a} (expected one consistent direction)"))
    # By type; within one, the relations an entry declares in its file's order, then those others declare, by ID.
    place = {pair: i for pair, (_kind, _item, i) in declared.items()}
    catalog.links = {slug: sorted(links[slug].values(), key=lambda l: (l.type, not l.declared, place.get((slug, l.slug), 0),
                                                                      catalog.entries[l.slug].entry.id))
                     for slug in catalog.entries}
    return problems


def _index_hubs(catalog: Catalog, waits: _Waits) -> list[Problem]:
    problems: list[Problem] = []
    rows_for: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for hub_slug, item in sorted(catalog.hubs.items()):
        anchors: set[str] = set()
        documented = {var.name for var in item.hub.env_vars}
        for r, row in enumerate(item.hub.rows):
            for v, name in enumerate(row.env):
                if name not in documented:
                    problems.append(item.source.problem(("rows", r, "env", v), "E028", f"{name} is not in env_vars (expected every variable a row names to be explained)"))
            if row.anchor in anchors:
                problems.append(item.source.problem(("rows", r, "anchor"), "E027", f"{row.anchor!r} is used by another row (expected a unique anchor)"))
            anchors.add(row.anchor)
            for e, slug in enumerate(row.entries):
                target = catalog.resolve(slug)
                if target is None:
                    if not waits.on(slug, "hub row"):
                        problems.append(item.source.problem(("rows", r, "entries", e), "E026", f"no entry {slug!r} (expected the slug of an existing entry)"))
                else:
                    rows_for[target].append((hub_slug, row.anchor))
    catalog.hub_rows_for = dict(rows_for)
    return problems


def _index_taxonomies(catalog: Catalog) -> None:
    members: dict[str, dict[str, list[str]]] = {kind: defaultdict(list) for kind in TAXONOMIES}
    labels: dict[str, str] = {}
    for item in catalog.ordered():
        entry = item.entry
        members["categories"][entry.category].append(item.slug)
        members["severities"][entry.severity].append(item.slug)
        members["failure-modes"][entry.failure_mode].append(item.slug)
        for tag in entry.tags:
            members["tags"][tag].append(item.slug)
        for slug, label in _systems(item):
            members["systems"][slug].append(item.slug)
            labels.setdefault(slug, label)
    order = {
        "categories": sorted(catalog.categories),
        "tags": sorted(members["tags"]),
        "systems": sorted(members["systems"]),
        "severities": [s for s in SEVERITY_ORDER if s in members["severities"]],
        "failure-modes": [m for m in FAILURE_MODES if m in members["failure-modes"]],
    }
    catalog.taxonomies = {
        kind: {term: Term(term, _label(catalog, kind, term, labels), _description(catalog, kind, term), members[kind].get(term, []))
               for term in order[kind]}
        for kind in TAXONOMIES
    }


@per_entry
def _systems(item: LoadedEntry) -> tuple[tuple[str, str], ...]:
    """Return an entry's affected systems as (taxonomy slug, label), each system once."""
    return tuple({system_slug(s.name): system_label(s.name) for s in item.entry.affected_systems}.items())


def _label(catalog: Catalog, kind: str, term: str, systems: dict[str, str]) -> str:
    if kind == "categories":
        return catalog.categories[term].title
    if kind == "systems":
        return systems[term]
    return term.replace("-", " ").capitalize() if kind in ("severities", "failure-modes") else term


def _description(catalog: Catalog, kind: str, term: str) -> str:
    descriptions: dict[str, Callable[[], str]] = {
        "categories": lambda: catalog.categories[term].description,
        "tags": lambda: f"Entries tagged {term}.",
        "systems": lambda: "Entries that list this system among the affected systems.",
        "severities": lambda: f"Entries of {term} severity.",
        "failure-modes": lambda: f"Failures whose mode is: {term.replace('-', ' ')}.",
    }
    return descriptions[kind]()
