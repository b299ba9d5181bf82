"""Incremental builds: re-render only the pages whose view changed since the last build.

A page is a function of its path, template and view (pages.py) and of what every page shares:
the generator's code, templates and assets, the site settings and the category names. The
cache kept beside the output folder maps each page to a digest of all that; on the next build
a page with the same digest is linked from the previous site instead of rendered. An entry in
a view is digested by its file's bytes, since its model is a function of them and the code.
"""

from __future__ import annotations

import functools
import hashlib
import io
import itertools
import os
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .catalog import Catalog
from .graph import Sketch
from .inputs import VERSION, replace_file
from .loading import Source
from .pages import PageSpec
from .pool import run_parallel
from .site import Page


class _Digester(pickle.Pickler):
    """Pickles a view for its digest: an entry or hub as its file's digest, a model as its JSON.
    Without a memo, so equal values give equal bytes whether or not they are one object."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=4)
        self.fast = True

    def reducer_override(self, obj: Any) -> Any:
        kind = _kind(obj.__class__)
        if kind is object:
            return NotImplemented
        if kind is Source:
            return str, (f"{type(obj).__name__}:{obj.slug}:{obj.source.digest}",)
        if kind is Sketch:
            return str, (f"Sketch:{obj.digest}",)
        return str, (obj.model_dump_json(),)


@functools.cache
def _kind(cls: type) -> type:
    """Return which of the digested kinds a type met in a view is (object: none), once per type."""
    return next((k for k in (Source, Sketch, BaseModel) if issubclass(cls, k)), object)


def page_digest(everywhere: str, spec: PageSpec) -> str:
    """Return the digest of everything one page is rendered from."""
    buffer = io.BytesIO()
    _Digester(buffer).dump((everywhere, spec.path, spec.template, spec.listed, spec.view))
    return hashlib.sha1(buffer.getvalue()).hexdigest()


@dataclass
class PageCache:
    """What the last build wrote: the digest of each page and of each other file."""

    pages: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # machine-readable files and assets, by their bytes
    searched: bool = False  # the previous build made a search index
    version: int = VERSION
    everywhere: str = ""  # what every page of that build shared (global_digest)
    sources: dict[str, object] = field(default_factory=dict)  # what each page (its spec) and deferred file were made from; in a process's memory only

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "sources": {}}

    def kept(self, last: PageCache, path: str, source: object, digest: Callable[[], str]) -> str:
        """Record what a page or file is made from and return its digest: the last build's when
        that build (kept in memory) made it from an equal source with the same `everywhere`.
        Sources are frozen dataclasses and tuples compared by value; an unchanged entry is the
        same object, so the comparison is quick."""
        self.sources[path] = source
        known = last.pages.get(path) or last.files.get(path)
        if known and last.everywhere == self.everywhere and path in last.sources and last.sources[path] == source:
            return known
        return digest()

    @staticmethod
    def load(path: Path) -> PageCache:
        try:
            cache = pickle.loads(path.read_bytes())
            return cache if isinstance(cache, PageCache) and cache.version == VERSION else PageCache()
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError):
            return PageCache()

    def save(self, path: Path) -> None:
        replace_file(path, pickle.dumps(self, protocol=4))


def global_digest(code: str, catalog: Catalog) -> str:
    """Return a digest of what every page sees beside its view: the generator's code, templates
    and assets (digested as `code`), the site settings and the categories."""
    everywhere = (catalog.site.model_dump_json(), [c.model_dump_json() for c in catalog.categories.values()])
    return hashlib.sha1(pickle.dumps((VERSION, code, everywhere), protocol=4)).hexdigest()


def render_incrementally(plan: list[PageSpec], render: Callable[[PageSpec], Page], cache: PageCache, previous: Path, everywhere: str,
                         jobs: int, done: Callable[[int, int], None] | None = None) -> tuple[PageCache, Iterator[Page]]:
    """Return the cache for the next build and every page, as rendered: unchanged pages are links
    to the previous site's files, the others are rendered as the iterator is consumed.

    A page whose spec equals the last build's, in a cache kept in memory, keeps its digest."""
    renewed = PageCache(everywhere=everywhere)
    reused: list[Page] = []
    stale: list[PageSpec] = []
    root = f"{previous}{os.sep}"  # a string: a Path per page costs more than the check
    for spec in plan:
        renewed.pages[spec.path] = digest = renewed.kept(cache, spec.path, spec, functools.partial(page_digest, everywhere, spec))
        if cache.pages.get(spec.path) == digest and os.path.isfile(root + spec.path):
            reused.append(Page(spec.path, "", spec.listed, reuse=True))
        else:
            stale.append(spec)
    return renewed, itertools.chain(reused, run_parallel([functools.partial(render, spec) for spec in stale], jobs, done))
