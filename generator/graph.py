"""The related-failure graph: typed edges, inferred similarity, deterministic SVG layouts.

Pure functions: a catalog in, plain data out. Similarity is computed through
inverted indexes (feature -> entries), skipping features shared by so many
entries that they say nothing, so the cost grows linearly with the catalog.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import cast

from markupsafe import Markup, escape

from .catalog import Catalog, Link, system_label
from .inputs import data_digest
from .loading import LoadedEntry, per_entry

MAX_POSTINGS = 50  # a feature shared by more entries than this says little; the cap bounds the work per entry
TOP_SIMILAR = 5
MIN_SCORE = 1.0
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{4,}")
_PALETTE = ["#0969da", "#bf3989", "#1a7f37", "#9a6700", "#8250df", "#cf222e", "#0a7f83", "#6e7781", "#bc4c00", "#4d2d8f"]


@dataclass(frozen=True)
class Similar:
    slug: str
    score: float
    shared: tuple[str, ...]


@dataclass
class Graph:
    """Typed links (with inverses) and the top inferred neighbours of every entry."""

    links: dict[str, list[Link]]
    similar: dict[str, list[Similar]]
    colours: dict[str, str]
    features: dict[str, dict[str, float]] = field(default_factory=dict)  # what `similar` was inferred from
    drawn: dict[str, Sketch] = field(default_factory=dict)  # neighbourhood sketches made so far, by entry
    rings: dict[tuple[str, ...], Sketch] = field(default_factory=dict)  # ring maps made so far, by members
    shape: object = None  # where the neighbourhoods place their nodes comes from the links and similarity alone
    basis: object = None  # a ring map is drawn from these and the entries' titles and categories
    restyled: frozenset[str] | None = None  # entries whose title, category or colour the lent sketches may show wrong (None: any)
    sketched: bool = False  # every sketch in `drawn` shows this graph's titles and colours (set once the pages are planned)


@per_entry
def _features(item: LoadedEntry) -> dict[str, float]:
    """Return what an entry's similarity is inferred from (kept per entry file: see per_entry)."""
    entry = item.entry
    features: dict[str, float] = {}
    for tag in entry.tags:
        features[f"tag {tag}"] = 1.0
    for system in entry.affected_systems:
        name = system_label(system.name).lower()
        features[f"system {name}"] = 0.5
    for sig in entry.signatures:
        features[f"signature {sig.key}"] = 2.0
        for word in _WORD.findall(sig.key):
            features.setdefault(f"word {word.lower()}", 0.3)
    return features


def _similar(weights: dict[str, dict[str, float]], top: int = TOP_SIMILAR) -> dict[str, list[Similar]]:
    """Return each entry's most similar other entries, best first, from the features they share."""
    postings: dict[str, list[str]] = defaultdict(list)
    for slug, features in weights.items():
        for feature in features:
            postings[feature].append(slug)
    n = len(weights)
    result: dict[str, list[Similar]] = {}
    for slug, features in weights.items():
        scores: dict[str, float] = defaultdict(float)
        shared: dict[str, list[str]] = defaultdict(list)
        for feature, weight in features.items():
            others = postings[feature]
            if len(others) > MAX_POSTINGS or len(others) < 2:
                continue
            idf = math.log(1 + n / len(others))
            for other in others:
                if other != slug:
                    scores[other] += weight * weights[other][feature] ** 0.5 * idf
                    shared[other].append(feature.split(" ", 1)[1])
        best = sorted((s for s in scores.items() if s[1] >= MIN_SCORE), key=lambda s: (-s[1], s[0]))[:top]
        result[slug] = [Similar(other, round(score, 3), tuple(sorted(set(shared[other])))[:6]) for other, score in best]
    return result


def build_graph(catalog: Catalog, previous: Graph | None = None) -> Graph:
    """Return the related-failure graph of the catalog. A previous graph (the last build's) lends
    its inferred similarity when every entry's features are the same, its neighbourhood
    sketches when the links and similarity are (their titles and colours are checked as they
    are used), and its ring maps when everything they are drawn from is the same (with the same
    links, those none of whose members has a new title, category or colour)."""
    colours = {slug: _PALETTE[i % len(_PALETTE)] for i, slug in enumerate(sorted(catalog.categories))}
    features = {slug: _features(catalog.entries[slug]) for slug in sorted(catalog.entries)}
    similar = previous.similar if previous and previous.features == features else _similar(features)
    shape = (catalog.links, similar)
    basis = (shape, colours, [(slug, item.entry.title, item.entry.category) for slug, item in sorted(catalog.entries.items())])
    drawn = previous.drawn if previous and previous.shape == shape else {}
    restyled = None
    if drawn and previous and previous.sketched:
        now, then = _style(basis), _style(previous.basis)
        restyled = frozenset(slug for slug, fact in now.items() if then.get(slug) != fact)
    if previous and previous.basis == basis:
        rings = previous.rings
    elif previous and restyled is not None:  # the same links: a ring map none of whose members was restyled is drawn the same
        rings = {members: ring for members, ring in previous.rings.items() if restyled.isdisjoint(members)}
    else:
        rings = {}
    return Graph(catalog.links, similar, colours, features, drawn, rings, shape, basis, restyled)


def _style(basis: object) -> dict[str, tuple[str, str, str]]:
    """Return what a sketch shows of each entry besides its place: title, category, colour."""
    _shape, colours, rows = cast(tuple[object, dict[str, str], list[tuple[str, str, str]]], basis)
    return {slug: (title, category, colours[category]) for slug, title, category in rows}


@dataclass(frozen=True)
class Node:
    slug: str
    x: float
    y: float
    r: float
    colour: str
    title: str
    label: str
    label_x: float
    label_y: float
    anchor: str  # SVG text-anchor: start, middle or end


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    type: str  # a relation type, or "similar"
    x1: float
    y1: float
    x2: float
    y2: float


@dataclass(frozen=True)
class Layout:
    width: int
    height: int
    legend_y: int
    nodes: list[Node]
    edges: list[Edge]
    categories: list[tuple[str, str]]  # (category slug, colour) present, for the legend


LABEL_GAP = 18.0
_COLUMN = 250.0


def _short(title: str, limit: int = 34) -> str:
    return title if len(title) <= limit else title[: limit - 1].rstrip() + "…"


def _spread(wanted: list[float], gap: float, low: float) -> list[float]:
    """Return positions as close to wanted (sorted) as possible, at least gap apart, not above low."""
    placed: list[float] = []
    for y in wanted:
        placed.append(max(y, placed[-1] + gap) if placed else max(y, low))
    return placed


@dataclass(frozen=True)
class Sketch:
    """What a drawing shows before its labels are placed: where each node sits on its ring,
    each node's title, category and colour, and the typed pairs. Cheap to build and to
    compare (a page that shows it depends on exactly this); draw() makes the Layout."""

    position: tuple[tuple[str, float, float], ...]
    facts: tuple[tuple[str, str, str, str], ...]  # slug, title, category, colour
    pairs: tuple[tuple[str, str, str], ...]
    radius: float
    centre: str | None = None

    def draw(self) -> Layout:
        return _layout(self)

    @functools.cached_property
    def members(self) -> frozenset[str]:
        """The entries the sketch shows (computed once per sketch)."""
        return frozenset(s for s, _x, _y in self.position)

    @functools.cached_property
    def digest(self) -> str:
        """What a page that shows this sketch depends on (computed once per sketch)."""
        return data_digest((self.position, self.facts, self.pairs, self.radius, self.centre))


def _facts(catalog: Catalog, graph: Graph, slugs: Iterable[str]) -> tuple[tuple[str, str, str, str], ...]:
    facts = []
    for s in slugs:
        entry = catalog.entries[s].entry
        facts.append((s, entry.title, entry.category, graph.colours[entry.category]))
    return tuple(facts)


def _sketch(catalog: Catalog, graph: Graph, position: dict[str, tuple[float, float]], pairs: list[tuple[str, str, str]],
            radius: float, centre: str | None = None) -> Sketch:
    return Sketch(tuple((s, x, y) for s, (x, y) in position.items()), _facts(catalog, graph, position), tuple(pairs), radius, centre)


def neighbourhood(catalog: Catalog, graph: Graph, slug: str) -> Sketch:
    """Return a radial sketch: the entry in the centre, 1-hop then 2-hop neighbours on rings
    (placed once per graph shape; a lent sketch gets the current titles and colours)."""
    lent = graph.drawn.get(slug)
    if lent is None:
        graph.drawn[slug] = _neighbourhood(catalog, graph, slug)
    elif graph.restyled is None or not graph.restyled.isdisjoint(lent.members):
        facts = _facts(catalog, graph, (s for s, _x, _y in lent.position))
        if facts != lent.facts:
            graph.drawn[slug] = dataclasses.replace(lent, facts=facts)
    return graph.drawn[slug]


def _neighbourhood(catalog: Catalog, graph: Graph, slug: str, max_first: int = 8, max_second: int = 10) -> Sketch:
    first = [l.slug for l in graph.links.get(slug, [])]
    first += [s.slug for s in graph.similar.get(slug, []) if s.slug not in first]
    first = first[:max_first]
    parent: dict[str, str] = {}
    for hop1 in first:
        for link in graph.links.get(hop1, []):
            if link.slug != slug and link.slug not in first and link.slug not in parent and len(parent) < max_second:
                parent[link.slug] = hop1
    r1, r2 = 110.0, 190.0
    angle: dict[str, float] = {}
    position: dict[str, tuple[float, float]] = {slug: (0.0, 0.0)}
    for i, hop1 in enumerate(first):
        angle[hop1] = -math.pi / 2 + 2 * math.pi * (i + 0.5) / len(first)
        position[hop1] = (r1 * math.cos(angle[hop1]), r1 * math.sin(angle[hop1]))
    children: dict[str, list[str]] = defaultdict(list)
    for hop2, via in parent.items():
        children[via].append(hop2)
    step = 2 * math.pi / max(len(first), 1)
    for via, kids in children.items():
        for j, hop2 in enumerate(kids):
            a = angle[via] + (j - (len(kids) - 1) / 2) * min(0.4, step / len(kids))
            position[hop2] = (r2 * math.cos(a), r2 * math.sin(a))
    typed = {l.slug: l.type for l in graph.links.get(slug, [])}
    pairs = [(slug, hop1, typed.get(hop1, "similar")) for hop1 in first]
    for hop2, via in sorted(parent.items()):
        pairs.append((via, hop2, next(l.type for l in graph.links[via] if l.slug == hop2)))
    return _sketch(catalog, graph, position, pairs, r2, centre=slug)


def ring_map(catalog: Catalog, graph: Graph, slugs: list[str]) -> Sketch:
    """Return the given entries on one ring, grouped by category, with the typed links among them
    (made once per graph, and kept by the next graph while what it is drawn from is unchanged)."""
    members = tuple(sorted(slugs))
    if members not in graph.rings:
        graph.rings[members] = _ring_map(catalog, graph, slugs)
    return graph.rings[members]


def _ring_map(catalog: Catalog, graph: Graph, slugs: list[str]) -> Sketch:
    order = sorted(slugs, key=lambda s: (catalog.entries[s].entry.category, catalog.entries[s].entry.title.lower(), s))
    members = set(order)
    radius = max(160.0, len(order) * LABEL_GAP / math.pi)
    position = {}
    for i, s in enumerate(order):
        a = -math.pi / 2 + 2 * math.pi * (i + 0.5) / max(len(order), 1)
        position[s] = (radius * math.cos(a), radius * math.sin(a))
    pairs: list[tuple[str, str, str]] = [(s, l.slug, l.type) for s in order for l in graph.links.get(s, []) if l.declared and l.slug in members]
    return _sketch(catalog, graph, position, pairs, radius)


def _layout(sketch: Sketch) -> Layout:
    """Place labels in two columns outside the ring (spread so none overlap) and shift to the canvas."""
    position = {s: (x, y) for s, x, y in sketch.position}
    radius, centre = sketch.radius, sketch.centre
    sides: dict[bool, list[str]] = {True: [], False: []}
    for s, (x, _y) in position.items():
        if s != centre:
            sides[x >= 0].append(s)
    labels: dict[str, tuple[float, float, str]] = {}
    top = -radius - 10
    for right, members in sides.items():
        members.sort(key=lambda s: (position[s][1], s))
        for s, y in zip(members, _spread([position[s][1] for s in members], LABEL_GAP, top), strict=True):
            labels[s] = (radius + 24 if right else -radius - 24, y + 4, "start" if right else "end")
    if centre is not None:
        labels[centre] = (0.0, 30.0, "middle")
    bottom = max([radius + 20] + [y + 10 for _x, y, _a in labels.values()])
    dx, dy = radius + 24 + _COLUMN, -top + 20
    facts = {s: (title, category, colour) for s, title, category, colour in sketch.facts}
    nodes = []
    for s in sorted(position, key=lambda s: (s != centre, s)):
        x, y = position[s]
        title, _category, colour = facts[s]
        lx, ly, anchor = labels[s]
        nodes.append(Node(s, round(x + dx, 1), round(y + dy, 1), 12.0 if s == centre else 7.0, colour,
                          title, _short(title, 44 if s == centre else 32), round(lx + dx, 1), round(ly + dy, 1), anchor))
    edges = []
    for a, b, kind in sketch.pairs:
        if kind == "caused-by":  # draw from cause to effect so the arrowhead reads "causes"
            a, b, kind = b, a, "causes"
        (x1, y1), (x2, y2) = position[a], position[b]
        edges.append(Edge(a, b, kind, round(x1 + dx, 1), round(y1 + dy, 1), round(x2 + dx, 1), round(y2 + dy, 1)))
    present = sorted({(category, colour) for _t, category, colour in facts.values()})
    legend_y = int(bottom + dy + 20)
    return Layout(int(2 * dx), legend_y + 64 + 16 * len(present), legend_y, nodes, edges, present)


_LEGEND = [("causes", "causes"), ("confused-with", "confused with"), ("see-also", "see also"), ("similar", "similar (inferred)")]


def graph_svg(sketch: Sketch, svg_id: str, title: str, desc: str, category_names: dict[str, str],
              link: Callable[[str], str]) -> Markup:
    """Return a sketch drawn as inline SVG: typed edges, linked nodes, labels and a legend.

    Built as a string in Python rather than a template: it is the hottest markup of a
    build, and every piece of text still goes through escape().
    """
    layout = sketch.draw()
    arrow = f' marker-end="url(#{svg_id}-arrow)"'
    size = f'viewBox="0 0 {layout.width} {layout.height}" width="{layout.width}" height="{layout.height}"'
    marker = (f'<marker id="{svg_id}-arrow" viewBox="0 0 10 10" refX="20" refY="5" markerUnits="userSpaceOnUse" '
              'markerWidth="10" markerHeight="10" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker>')
    out = [f'<svg class="graph" {size} aria-labelledby="{svg_id}-title {svg_id}-desc">',
           f'<title id="{svg_id}-title">{escape(title)}</title><desc id="{svg_id}-desc">{escape(desc)}</desc>',
           f"<defs>{marker}</defs>"]
    for e in layout.edges:
        out.append(f'<line class="edge edge-{e.type}" x1="{e.x1}" y1="{e.y1}" x2="{e.x2}" y2="{e.y2}"{arrow if e.type == "causes" else ""}/>')
    for n in layout.nodes:
        leader = f'<line class="leader" x1="{n.x}" y1="{n.y}" x2="{n.label_x}" y2="{n.label_y - 4}"/>' if n.anchor != "middle" else ""
        out.append(f'<a href="{escape(link(n.slug))}"><title>{escape(n.title)}</title>{leader}'
                   f'<circle cx="{n.x}" cy="{n.y}" r="{n.r}" fill="{n.colour}"/>'
                   f'<text x="{n.label_x}" y="{n.label_y}" text-anchor="{n.anchor}">{escape(n.label)}</text></a>')
    out.append(f'<g class="legend" transform="translate(10 {layout.legend_y})">')
    for i, (kind, label) in enumerate(_LEGEND):
        out.append(f'<line class="edge edge-{kind}" x1="0" y1="{i * 16}" x2="28" y2="{i * 16}"{arrow if kind == "causes" else ""}/>'
                   f'<text x="34" y="{i * 16 + 4}">{label}</text>')
    for i, (category, colour) in enumerate(layout.categories):
        out.append(f'<circle cx="14" cy="{68 + i * 16}" r="5" fill="{colour}"/><text x="34" y="{72 + i * 16}">{escape(category_names[category])}</text>')
    out.append("</g></svg>")
    return Markup("\n".join(out))
