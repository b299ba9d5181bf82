"""Incremental builds: re-render only the pages whose inputs changed since the last build.

While a page renders, the catalog and graph record every entry, hub, relation row and
taxonomy it reads (its dependencies). The cache, kept beside the output folder, maps
each page to a digest of its plan (template, path, the data handed to it) and the
digests of its dependencies. On the next build a page whose plan and dependencies
are unchanged is copied from the previous site instead of rendered. Anything global
(templates, assets, the generator's own code, site.yaml, categories) is part of
every plan digest, so changing it re-renders everything.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .catalog import Catalog
from .graph import Graph
from .loading import LoadedEntry, LoadedHub
from .rendering import Page, PlannedPage, run_parallel

VERSION = 1
_recorded: set[str] | None = None  # dependencies of the page being rendered, when recording


class Tracked(dict[str, Any]):
    """A dict that records which keys a page reads, as '<kind>:<key>' dependencies."""

    def __init__(self, kind: str, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.kind = kind

    def _note(self, key: object) -> None:
        if _recorded is not None:
            _recorded.add(f"{self.kind}:{key}")

    def __getitem__(self, key: str) -> Any:
        self._note(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self._note(key)
        return super().get(key, default)

    def __len__(self) -> int:
        self._note("*keys*")
        return super().__len__()

    def __iter__(self) -> Any:
        self._note("*keys*")
        return super().__iter__()

    def __contains__(self, key: object) -> bool:
        self._note("*keys*")
        return super().__contains__(key)

    def values(self) -> Any:
        for key in dict.__iter__(self):
            self._note(key)
        return super().values()

    def items(self) -> Any:
        for key in dict.__iter__(self):
            self._note(key)
        return super().items()


def track(catalog: Catalog, graph: Graph) -> None:
    """Make the catalog and graph record what each page reads."""
    catalog.entries = Tracked("entry", catalog.entries)
    catalog.hubs = Tracked("hub", catalog.hubs)
    catalog.hub_rows_for = Tracked("hubrows", catalog.hub_rows_for)
    catalog.taxonomies = Tracked("taxonomy", catalog.taxonomies)
    graph.links = Tracked("links", graph.links)
    graph.similar = Tracked("similar", graph.similar)


def recording(render: Callable[[], Any]) -> tuple[Any, frozenset[str]]:
    """Return what render() returns and the dependencies it read."""
    global _recorded
    _recorded = set()
    try:
        return render(), frozenset(_recorded)
    finally:
        _recorded = None


def _stable(value: Any) -> Any:
    """Return a plain, picklable, deterministic stand-in for a plan's context value."""
    if isinstance(value, LoadedEntry):
        return ("entry", value.slug)  # its content is a dependency, digested separately
    if isinstance(value, LoadedHub):
        return ("hub", value.slug)
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, tuple(_stable(getattr(value, f.name)) for f in fields(value)))
    if isinstance(value, dict):
        return tuple((k, _stable(v)) for k, v in sorted(value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_stable(v) for v in value)
    return repr(value)


def _context_deps(value: Any) -> Iterator[str]:
    if isinstance(value, LoadedEntry):
        yield f"entry:{value.slug}"
    elif isinstance(value, LoadedHub):
        yield f"hub:{value.slug}"
    elif isinstance(value, dict):
        for v in value.values():
            yield from _context_deps(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _context_deps(v)


def plan_digest(global_digest: str, path: str, template: str, context: dict[str, Any]) -> tuple[str, frozenset[str]]:
    """Return the digest of one page's plan and the dependencies its context carries."""
    data = pickle.dumps((global_digest, path, template, _stable(context)), protocol=4)
    return hashlib.sha1(data).hexdigest(), frozenset(_context_deps(context))


class Digests:
    """The current digest of each dependency, computed when first asked for."""

    def __init__(self, catalog: Catalog, graph: Graph) -> None:
        self.catalog, self.graph = catalog, graph
        self._memo: dict[str, str] = {}

    def __call__(self, dep: str) -> str:
        if dep not in self._memo:
            self._memo[dep] = hashlib.sha1(pickle.dumps(self._value(dep), protocol=4)).hexdigest()
        return self._memo[dep]

    def _value(self, dep: str) -> Any:
        kind, key = dep.split(":", 1)
        sources: dict[str, dict[str, Any]] = {
            "entry": self.catalog.entries, "hub": self.catalog.hubs, "hubrows": self.catalog.hub_rows_for,
            "taxonomy": self.catalog.taxonomies, "links": self.graph.links, "similar": self.graph.similar,
        }
        if key == "*keys*":
            return sorted(dict.keys(sources[kind]))
        found = dict.get(sources[kind], key)  # the plain dict method: reading a digest records nothing
        if isinstance(found, LoadedEntry):
            return found.entry.model_dump_json()
        if isinstance(found, LoadedHub):
            return found.hub.model_dump_json()
        return _stable(found)


@dataclass
class PageCache:
    """What the last build rendered: per page, its plan digest and dependency digests; and a
    fingerprint of every input file, so that a rebuild with nothing changed stops at once."""

    pages: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    inputs: str = ""
    searched: bool = False  # the previous build made a search index
    version: int = VERSION

    @staticmethod
    def load(path: Path) -> PageCache:
        try:
            cache = pickle.loads(path.read_bytes())
            return cache if isinstance(cache, PageCache) and cache.version == VERSION else PageCache()
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError):
            return PageCache()

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps(self, protocol=4))
        tmp.replace(path)

    def is_fresh(self, path: str, digest: str, digests: Digests) -> bool:
        """Return whether the page's plan and every dependency it read are unchanged."""
        cached = self.pages.get(path)
        return cached is not None and cached[0] == digest and all(digests(d) == h for d, h in cached[1].items())


def files_digest(paths: list[Path], extra: str) -> str:
    """Return a digest of every file under paths (names and bytes) and extra."""
    h = hashlib.sha1(f"{VERSION}:{extra}".encode())
    for root in paths:
        for file in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            h.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return h.hexdigest()


def global_digest(code: str, catalog: Catalog) -> str:
    """Return a digest of everything any page may read without it being recorded: the generator's
    code, templates and assets (digested as `code`), site.yaml, categories, aliases, IDs and reproductions."""
    everywhere = (catalog.site.model_dump_json(), [c.model_dump_json() for c in catalog.categories.values()],
                  sorted(catalog.aliases.items()), sorted(catalog.ids.items()),
                  sorted((k, v.model_dump_json()) for k, v in catalog.reproduced.items()))
    return hashlib.sha1(pickle.dumps((VERSION, code, everywhere), protocol=4)).hexdigest()


def render_incrementally(plan: list[PlannedPage], cache: PageCache, previous: Path, digests: Digests,
                         everywhere: str, jobs: int, done: Callable[[int, int], None] | None = None) -> tuple[list[Page], PageCache]:
    """Return every page, copying fresh ones from the previous site, and the cache for the next build."""
    pages: dict[str, Page] = {}
    renewed = PageCache()
    stale: list[tuple[PlannedPage, str, frozenset[str]]] = []
    for planned in plan:
        digest, carried = plan_digest(everywhere, planned.path, planned.template, planned.context)
        old = previous / planned.path
        if cache.is_fresh(planned.path, digest, digests) and old.is_file():
            pages[planned.path] = Page(planned.path, "", planned.listed, reuse=old)
            renewed.pages[planned.path] = cache.pages[planned.path]
        else:
            stale.append((planned, digest, carried))
    for (planned, digest, carried), (page, read) in zip(stale, run_parallel([functools.partial(recording, p.render) for p, _, _ in stale], jobs, done), strict=True):
        pages[page.path] = page
        renewed.pages[page.path] = (digest, {d: digests(d) for d in sorted(read | carried)})
    return [pages[p.path] for p in plan], renewed
