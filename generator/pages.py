"""The page model: every page as a path, a template and a small typed view of exactly what it
shows, built in Python from the catalog and graph (as Zola hands templates a SerializingPage).

Templates see only their view and the site-wide values of rendering.py, so a page depends on
its view and nothing else: the incremental build compares views, not recorded reads.
"""

from __future__ import annotations

import functools
import heapq
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from .api import entry_url
from .catalog import TAXONOMIES, Catalog
from .catalog import Link as GraphLink
from .export import FILES as EXPORT_FILES
from .export import METRIC, alerted
from .graph import Graph, Similar, Sketch, neighbourhood, ring_map
from .loading import LoadedEntry, per_entry
from .schema import Hub, ReproRecord, SampleLog

DRAW_LIMIT = 150  # most entries one drawing shows: above it the overview shows categories only, and a category's graph has pages
PAGE_SIZE = 100  # rows per listing page, as Hugo's paginator: /failures/, /failures/page/2/, …
FEED_SIZE = 50  # newest entries in the Atom feed


@dataclass(frozen=True)
class Row:
    """One entry in a listing."""

    slug: str
    title: str
    id: str
    category: str
    severity: str
    failure_mode: str
    symptom: str

    @staticmethod
    @per_entry
    def of(item: LoadedEntry) -> Row:
        e = item.entry
        return Row(item.slug, e.title, e.id, e.category, e.severity, e.failure_mode, e.quick_answer.symptom)


@dataclass(frozen=True)
class Link:
    """A link to an entry by its title; `type` is the relation, or what it shares (similar entries)."""

    slug: str
    title: str
    type: str = ""


@dataclass(frozen=True)
class HubLink:
    hub: str
    anchor: str
    error: str
    hub_title: str


@dataclass(frozen=True)
class Card:
    """A category or hub on the home page, with its entry count for categories."""

    slug: str
    title: str
    text: str
    count: int = 0


@dataclass(frozen=True)
class Relation:
    source: Link
    type: str
    target: Link


@dataclass(frozen=True)
class EntryView:
    item: LoadedEntry
    reproduced: ReproRecord | None
    hub_links: tuple[HubLink, ...]
    related: tuple[Link, ...]
    similar: tuple[Link, ...]
    sketch: Sketch


@dataclass(frozen=True)
class Pager:
    """Where one page of a long listing sits: its number, how many pages, the site path of each."""

    number: int
    paths: tuple[str, ...]  # site paths of pages 1..n ("failures/", "failures/page/2/", …)
    total: int  # rows in the whole listing

    @property
    def previous(self) -> str | None:
        return self.paths[self.number - 2] if self.number > 1 else None

    @property
    def next(self) -> str | None:
        return self.paths[self.number] if self.number < len(self.paths) else None


@dataclass(frozen=True)
class ListingView:
    title: str
    intro: str
    items: tuple[Row, ...]  # this page's rows
    pager: Pager


@dataclass(frozen=True)
class TaxonomyView:
    title: str
    kind: str
    groups: tuple[tuple[str, str, int], ...]  # (slug, name, entry count)


@dataclass(frozen=True)
class HomeView:
    entry_count: int
    categories: tuple[Card, ...]
    hubs: tuple[Card, ...]
    recent: tuple[Row, ...]


@dataclass(frozen=True)
class HubView:
    hub: Hub
    hub_slug: str
    entries: dict[str, Link]  # every slug a row names (live or an old alias) -> the live entry


@dataclass(frozen=True)
class GraphView:
    category: str | None
    nav: tuple[Card, ...]  # categories with entries
    sketch: Sketch | None  # None: too many entries to draw at once
    count: int
    relations: tuple[Relation, ...]  # the text alternative of the drawing: none without one
    pager: Pager  # which of its category's pages (one drawing of up to DRAW_LIMIT entries each); the overview has one


@dataclass(frozen=True)
class SearchView:
    categories: tuple[tuple[str, str], ...]
    severities: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class DiagnoseView:
    signature_data: Markup
    samples: tuple[SampleLog, ...]
    sample_logs: Markup


@dataclass(frozen=True)
class AlertsView:
    files: dict[str, str]
    metric: str
    alerted: int
    entries: int


@dataclass(frozen=True)
class RedirectView:
    target: Link
    reason: str


@dataclass(frozen=True)
class EmptyView:
    pass


@dataclass(frozen=True)
class SitemapView:
    urls: tuple[tuple[str, str], ...]  # (address, last reviewed date or "")


@dataclass(frozen=True)
class FeedItem:
    title: str
    url: str
    id: str
    updated: str
    category: str
    summary: str


@dataclass(frozen=True)
class FeedView:
    updated: str
    items: tuple[FeedItem, ...]


@dataclass(frozen=True)
class PageSpec:
    """One page to render: where it goes, its template and its view."""

    path: str
    template: str
    view: Any
    listed: bool = True  # in the sitemap (not redirects or the 404 page)

    def context(self) -> dict[str, Any]:
        return {name: getattr(self.view, name) for name in self.view.__dataclass_fields__}


@dataclass(frozen=True)
class PlannedEntry:
    """An entry view and the graph's links and similar entries it was made from."""

    links: list[GraphLink]
    similar: list[Similar]
    view: EntryView

    @functools.cached_property
    def neighbours(self) -> frozenset[str]:
        """The entries the view names (related and similar), whose titles it shows."""
        return frozenset(link.slug for link in (*self.view.related, *self.view.similar))


@dataclass
class Planned:
    """The views a plan made that the next plan may take again (serve): entry views by slug, the
    category graph pages' views by their path."""

    entries: dict[str, PlannedEntry] = field(default_factory=dict)
    graphs: dict[str, GraphView] = field(default_factory=dict)


def plan_site(catalog: Catalog, graph: Graph, signatures: str, last: Planned | None = None,
              made: Planned | None = None) -> list[PageSpec]:
    """Return every page of the site, in a fixed order, with its view: the HTML pages, then the
    sitemap, robots.txt and the Atom feed, which are rendered from templates too (as Zola does).
    signatures: api/signatures.json's text (signatures_json), which the diagnosis page embeds.
    last: the views of the plan that drew the graph this one's lends from (serve keeps them); a
    view whose inputs are the same objects, or equal, is taken again instead of made.
    made: if given, filled with this plan's views, for the next plan."""
    pages = list(_plan(catalog, graph, signatures, last or Planned(), made))
    graph.sketched = True  # _plan drew or brought up to date every entry's neighbourhood
    return [*pages, *_machine_readable(catalog, [spec.path for spec in pages if spec.listed])]


def _machine_readable(catalog: Catalog, html_paths: list[str]) -> Iterator[PageSpec]:
    base = catalog.site.base_url
    lastmod = {f"failures/{slug}/index.html": item.entry.last_reviewed.isoformat() for slug, item in catalog.entries.items()}
    urls = tuple((base + path.removesuffix("index.html"), lastmod.get(path, "")) for path in sorted(html_paths))
    yield PageSpec("sitemap.xml", "sitemap.xml", SitemapView(urls), listed=False)
    yield PageSpec("robots.txt", "robots.txt", EmptyView(), listed=False)
    newest = heapq.nlargest(FEED_SIZE, catalog.entries.values(), key=lambda i: (i.entry.last_reviewed, i.slug))
    items = tuple(FeedItem(i.entry.title, entry_url(base, i.slug), f"{base}id/{i.entry.id}/", i.entry.last_reviewed.isoformat(),
                           i.entry.category, i.entry.summary) for i in newest)
    yield PageSpec("feed.xml", "feed.xml", FeedView(items[0].updated if items else "1970-01-01", items), listed=False)


def _page_paths(folder: str, rows: int, size: int) -> tuple[str, ...]:
    """Return the site paths of a long list's pages of `size` rows each: folder, folder/page/2/, …"""
    return tuple(folder if n == 1 else f"{folder}page/{n}/" for n in range(1, max(1, -(-rows // size)) + 1))


def _listing(folder: str, title: str, intro: str, rows: list[Row]) -> Iterator[PageSpec]:
    """Yield a listing's pages of PAGE_SIZE rows each: the first at folder, the others at folder/page/N/."""
    paths = _page_paths(folder, len(rows), PAGE_SIZE)
    for n, path in enumerate(paths, 1):
        chunk = tuple(rows[(n - 1) * PAGE_SIZE:n * PAGE_SIZE])
        yield PageSpec(f"{path}index.html", "listing.html", ListingView(title, intro, chunk, Pager(n, paths, len(rows))))


def _entry_view(catalog: Catalog, graph: Graph, item: LoadedEntry, link: Callable[..., Link], last: Planned,
                made: Planned | None) -> EntryView:
    slug = item.slug
    hub_links = []
    for hub_slug, anchor in catalog.hub_rows_for.get(slug, []):
        hub = catalog.hubs[hub_slug].hub
        row = next(r for r in hub.rows if r.anchor == anchor)
        hub_links.append(HubLink(hub_slug, anchor, row.error, hub.title))
    links, similar, sketch = graph.links.get(slug, []), graph.similar.get(slug, []), neighbourhood(catalog, graph, slug)
    before, reproduced = last.entries.get(slug), catalog.reproduced.get(slug)
    # An unchanged file gives the same validated model and source map (a new LoadedEntry around them);
    # restyled: the entries whose title (or colour) changed since the graph the last plan drew on.
    if (before is not None and before.view.item.entry is item.entry and before.view.item.source is item.source
            and before.view.sketch is sketch and graph.restyled is not None and before.similar == similar
            and before.links == links and before.view.hub_links == tuple(hub_links) and before.view.reproduced == reproduced
            and graph.restyled.isdisjoint(before.neighbours)):
        planned = before
    else:
        planned = PlannedEntry(links, similar, EntryView(item, reproduced, tuple(hub_links), tuple(link(l.slug, l.type) for l in links),
                                                         tuple(link(s.slug, ", ".join(s.shared)) for s in similar), sketch))
    if made is not None:
        made.entries[slug] = planned
    return planned.view


def _graph_view(catalog: Catalog, graph: Graph, category: str | None, slugs: list[str], nav: tuple[Card, ...],
                link: Callable[..., Link], pager: Pager, draw: bool = True, before: GraphView | None = None) -> GraphView:
    """A graph page: its drawing and, as its text alternative, its relations; an overview too
    large to draw lists none (the category pages hold them, drawn and as text).
    before: the last plan's view of this page, taken again when nothing it shows changed."""
    ring = ring_map(catalog, graph, slugs) if draw else None
    # A ring map the graph lent is of the same members, links and styles; the relations' other ends keep their titles too.
    if (before is not None and ring is not None and before.sketch is ring and before.nav == nav and before.pager == pager
            and graph.restyled is not None and graph.restyled.isdisjoint(r.target.slug for r in before.relations)):
        return before
    relations = tuple(Relation(link(s), l.type, link(l.slug)) for s in slugs for l in graph.links.get(s, []) if l.declared) if draw else ()
    return GraphView(category, nav, ring, len(slugs), relations, pager)


def _category_graph(catalog: Catalog, graph: Graph, card: Card, nav: tuple[Card, ...], link: Callable[..., Link],
                    last: Planned, made: Planned | None) -> Iterator[PageSpec]:
    """Yield a category's graph pages, DRAW_LIMIT entries drawn on each: its entries are split in
    the order of their slugs, which a title edit does not change, and listed by title on a page."""
    members = catalog.taxonomies["categories"][card.slug].entries  # by title
    page_of = {slug: i // DRAW_LIMIT for i, slug in enumerate(sorted(members))}
    paths = _page_paths(f"graph/{card.slug}/", len(members), DRAW_LIMIT)
    on_page: list[list[str]] = [[] for _ in paths]
    for slug in members:
        on_page[page_of[slug]].append(slug)
    for n, path in enumerate(paths, 1):
        view = _graph_view(catalog, graph, card.slug, on_page[n - 1], nav, link, Pager(n, paths, len(members)), before=last.graphs.get(path))
        if made is not None:
            made.graphs[path] = view
        yield PageSpec(f"{path}index.html", "graph.html", view)


@functools.lru_cache(maxsize=1 << 16)
def _link(slug: str, title: str, type: str) -> Link:
    """Return one Link object for equal links across builds, so that comparing a view with the
    last build's finds them identical without comparing their fields (serve)."""
    return Link(slug, title, type)


def _plan(catalog: Catalog, graph: Graph, signatures: str, last: Planned, made: Planned | None) -> Iterator[PageSpec]:
    titles = {slug: item.entry.title for slug, item in catalog.entries.items()}

    def link(slug: str, type: str = "") -> Link:
        return _link(slug, titles[slug], type)

    entries = catalog.ordered()
    rows = {item.slug: Row.of(item) for item in entries}
    counts = {slug: len(term.entries) for slug, term in catalog.taxonomies["categories"].items()}
    recent = sorted(entries, key=lambda e: e.entry.last_reviewed, reverse=True)[:10]  # newest first, then by title (a stable sort)
    yield PageSpec("index.html", "home.html", HomeView(
        len(catalog.entries),
        tuple(Card(slug, c.title, c.description, counts[slug]) for slug, c in sorted(catalog.categories.items())),
        tuple(Card(slug, h.hub.title, h.hub.summary) for slug, h in sorted(catalog.hubs.items())),
        tuple(rows[e.slug] for e in recent)))
    yield from _listing("failures/", "All failures", "Every entry in the encyclopedia, by title.", list(rows.values()))
    for item in entries:
        yield PageSpec(f"failures/{item.slug}/index.html", "entry.html", _entry_view(catalog, graph, item, link, last, made))
    for kind, terms in catalog.taxonomies.items():
        yield PageSpec(f"{kind}/index.html", "taxonomy.html", TaxonomyView(
            TAXONOMIES[kind], kind, tuple((t.slug, t.label, len(t.entries)) for t in terms.values())))
        for term in terms.values():
            title = term.label if kind == "categories" else f"{TAXONOMIES[kind].rstrip('s')}: {term.label}"
            yield from _listing(f"{kind}/{term.slug}/", title, term.description, [rows[s] for s in term.entries])
    yield PageSpec("hubs/index.html", "taxonomy.html", TaxonomyView(
        "Hubs", "hubs", tuple((slug, h.hub.title, len(h.hub.rows)) for slug, h in sorted(catalog.hubs.items()))))
    for slug, hub in sorted(catalog.hubs.items()):
        named = {s: catalog.resolve(s) for row in hub.hub.rows for s in row.entries}
        yield PageSpec(f"hubs/{slug}/index.html", "hub.html",
                       HubView(hub.hub, slug, {s: link(live) for s, live in named.items() if live}))
    nav = tuple(Card(slug, catalog.categories[slug].title, "", counts[slug]) for slug in sorted(catalog.categories) if counts.get(slug))
    everything = sorted(catalog.entries)
    yield PageSpec("graph/index.html", "graph.html", _graph_view(catalog, graph, None, everything, nav, link,
                                                                 Pager(1, ("graph/",), len(everything)), draw=len(everything) <= DRAW_LIMIT))
    for card in nav:
        yield from _category_graph(catalog, graph, card, nav, link, last, made)
    yield PageSpec("search/index.html", "search.html", SearchView(
        tuple((slug, t.label) for slug, t in catalog.taxonomies["categories"].items()),
        tuple((slug, t.label) for slug, t in catalog.taxonomies["severities"].items())))
    yield PageSpec("diagnose/index.html", "diagnose.html", DiagnoseView(
        # {**signature_data, "base": "../"} as script_json writes it: "base" sorts before every other key
        Markup(_script_safe('{"base":"../",' + signatures[1:].removesuffix("\n"))),
        tuple(sample for sample, _text in catalog.samples), Markup(script_json([text for _s, text in catalog.samples]))))
    yield PageSpec("alerts/index.html", "alerts.html", AlertsView(EXPORT_FILES, METRIC, alerted(catalog), len(catalog.entries)))
    yield PageSpec("404.html", "404.html", EmptyView(), listed=False)
    for alias, slug in sorted(catalog.aliases.items()):
        yield PageSpec(f"failures/{alias}/index.html", "redirect.html", RedirectView(link(slug), f"This entry moved: {alias} is now {slug}."), listed=False)
    for entry_id, slug in sorted(catalog.ids.items()):
        yield PageSpec(f"id/{entry_id}/index.html", "redirect.html", RedirectView(link(slug), f"{entry_id} is the permanent ID of this entry."), listed=False)


def script_json(data: object) -> str:
    """Return data as JSON to embed in a <script> element: "<" is escaped, so no content can close it."""
    return _script_safe(json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")))


def _script_safe(json_text: str) -> str:
    """Return JSON text with "<" escaped, so that no content can close the <script> it is in."""
    return json_text.replace("<", "\\u003c")
