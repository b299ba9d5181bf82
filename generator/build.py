"""The build as named, timed stages: load and validate → catalog → graph → plan → render →
machine-readable files → write (as MkDocs' build() and Zola's Site::load/Site::build read).

Options are fixed before anything is loaded; the CLI only parses arguments, calls build()
and maps errors to exit codes.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import os
import pickle
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from .api import render_api, signatures_json
from .catalog import Catalog, build_catalog, without_drafts
from .errors import GeneratorError
from .export import export_files
from .graph import Graph, build_graph
from .incremental import PageCache, global_digest, render_incrementally
from .inputs import (
    MARKER,
    BuildOptions,
    FileDigest,
    Fingerprint,
    data_digest,
    fingerprint,
    is_up_to_date,
    replace_file,
)
from .loading import EntryCache, describe_pattern, load_content
from .pages import Planned, plan_site
from .rendering import Renderer, category_names, stylesheet
from .schema import SiteConfig
from .site import Deferred, Staging, static_files


@dataclass
class BuildResult:
    entries: int = 0
    cached: int = 0  # entries taken from the validated-entry cache instead of read
    rendered: int = 0
    pages: int = 0
    timings: list[tuple[str, float]] = field(default_factory=list)  # (stage, seconds), in order

    @property
    def up_to_date(self) -> bool:
        return self.pages == 0


class Progress:
    """Stage names and pages rendered, on one terminal line, once a build has run for a second."""

    def __init__(self, enabled: bool) -> None:
        self.enabled, self.start, self.shown = enabled, time.monotonic(), False

    def __call__(self, stage: str, done: int = 0, total: int = 0) -> None:
        if self.enabled and time.monotonic() - self.start > 1.0:
            count = f" {done}/{total} pages" if total else ""
            print(f"\r{stage}{count}\033[K", end="", file=sys.stderr, flush=True)
            self.shown = True

    def finish(self) -> None:
        if self.shown:
            print("\r\033[K", end="", file=sys.stderr, flush=True)


PROSE_PIECES = 100_000  # rendered pieces of Markdown and code of each kind serve keeps (an entry has about 35)


@dataclass
class Memory:
    """What a long-running process (`serve`) keeps between its builds, in place of re-reading the
    caches beside the output: the content files it read, the entries it validated, the graph it
    drew, the pages it wrote and its template renderer (a command's build starts with none)."""

    entries: EntryCache | None = None
    pages: PageCache | None = None
    renderer: tuple[str, Renderer] | None = None  # with the digest of what it was made from
    catalog: Catalog | None = None  # the catalog the last build made, in serve
    graph: Graph | None = None
    views: tuple[Graph, Planned] | None = None  # the views planned on `graph`, for the next plan
    files: dict[str, FileDigest] | None = None  # the content files' digests, by path, as the last build read them
    serving: bool = False  # a long-running process: entries and graph stay here, rendered prose is kept for the next build


def _file_digest(everywhere: str, data: str | bytes | Deferred) -> str:
    """Return the digest of a file that is not a page: of what it is made from, or of its bytes."""
    if isinstance(data, Deferred):
        return data_digest((everywhere, data.inputs))
    return hashlib.sha1(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def _load_graph(path: Path, code: str) -> Graph | None:
    """Return the graph the last build kept beside the output, if the same code made it."""
    try:
        stored = pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
        return None
    return stored[1] if isinstance(stored, tuple) and len(stored) == 2 and stored[0] == code and isinstance(stored[1], Graph) else None


def _save_graph(path: Path, code: str, graph: Graph) -> None:
    """Keep the graph beside the output for the next build made by the same code (_load_graph)."""
    replace_file(path, pickle.dumps((code, graph), protocol=4))


def load_catalog(content_dir: Path, drafts: bool = True, cache: EntryCache | None = None, jobs: int = 1,
                 digests: dict[str, str] | None = None, previous: Catalog | None = None) -> Catalog:
    """Return the validated catalog of a content folder, its draft entries left out unless
    drafts=True; every entry is checked either way (raises ContentError).
    previous: the catalog the last build returned, if the caller kept it (build_catalog)."""
    if not content_dir.is_dir():
        raise GeneratorError(f"{content_dir}: no such content folder")
    content = load_content(content_dir, cache=cache, jobs=jobs, digests=digests)
    catalog = build_catalog(content, previous)
    published = without_drafts(content)
    if drafts or len(published.entries) == len(content.entries):
        return catalog
    return build_catalog(published, previous)


def site_with(site: SiteConfig, options: dict[str, str]) -> SiteConfig:
    """Return the site settings with command-line options in place of content/site.yaml's."""
    try:
        return SiteConfig.model_validate({**site.model_dump(), **options})
    except ValidationError as exc:
        err = exc.errors()[0]
        name = str(err["loc"][0])
        pattern = err.get("ctx", {}).get("pattern")
        why = f"has the wrong format (expected {describe_pattern(pattern)})" if pattern else err["msg"].removeprefix("Value error, ")
        raise GeneratorError(f"--{name.replace('_', '-')} {options[name]!r}: {why}") from None


def build(options: BuildOptions, progress: Progress | None = None, seen: Fingerprint | None = None,
          memory: Memory | None = None, shown: Callable[[], None] | None = None) -> BuildResult:
    """Check, render and write the site; a result with no pages means nothing needed doing.

    The stamp and caches beside the output let a rebuild skip everything when no input changed
    (seen: the inputs' fingerprint, if the caller has taken it), and re-render only the pages
    whose inputs changed otherwise (raises ContentError). A caller that builds again and again
    passes the same memory to every build.
    shown: called as soon as the changed pages and the assets they load are live, when a rebuild
    puts them live before the whole-corpus machine-readable files (as Hugo's server renders the
    pages in view first), so that serve can reload the open page; the build goes on with those files.
    """
    gc.freeze()  # what exists before the build (the last build's caches, in serve) is not garbage
    try:
        memory = memory or Memory()
        seen = seen or fingerprint(options, memory.files)
        memory.files = seen.files
        return _build(options, progress or Progress(enabled=False), seen, memory, shown)
    finally:
        gc.unfreeze()


def keep_beside(options: BuildOptions, memory: Memory) -> None:
    """Write what a long-running process kept in memory (the page and entry caches, the graph)
    beside the output, so that the next command's build starts from them; call it when no build
    of that process is running."""
    if memory.pages is not None:  # None while a build's files go live, and after a build that failed then
        memory.pages.save(options.beside_out("cache"))
    if memory.entries is not None:
        memory.entries.save(options.beside_out("entries"))
        if memory.graph is not None:
            _save_graph(options.beside_out("graph"), memory.entries.code, memory.graph)  # the code the entries were read by


def _build(options: BuildOptions, report: Progress, seen: Fingerprint, memory: Memory,
           shown: Callable[[], None] | None) -> BuildResult:
    result = BuildResult()

    @contextmanager
    def stage(name: str) -> Iterator[None]:
        report(name)
        start = time.perf_counter()
        yield
        result.timings.append((name, time.perf_counter() - start))

    if is_up_to_date(options, seen):
        return result
    options.beside_out("inputs").unlink(missing_ok=True)  # the output is about to stop matching it
    cache_path, entries_path = options.beside_out("cache"), options.beside_out("entries")
    if options.clean:
        cache, entry_cache = PageCache(), EntryCache(seen.code)
    else:
        cache = memory.pages or PageCache.load(cache_path)
        entry_cache = memory.entries if memory.entries and memory.entries.code == seen.code else EntryCache.load(entries_path, seen.code)
    with stage("loading and checking the content"):
        catalog = load_catalog(options.content, options.drafts, entry_cache, options.jobs, {path: digest for path, (_, digest) in seen.files.items()},
                               memory.catalog)
        catalog.site = site_with(catalog.site, options.site)
        if memory.serving:
            memory.catalog = catalog
        options.out.parent.mkdir(parents=True, exist_ok=True)  # the caches and the stamp live beside the output
        if not memory.serving:
            entry_cache.save(entries_path)
        memory.entries = entry_cache.successor()
    with stage("building the related-failure graph"):
        previous = memory.graph or (None if options.clean else _load_graph(options.beside_out("graph"), seen.code))
        graph = memory.graph = build_graph(catalog, previous)
    with stage("planning the pages"):
        signatures = signatures_json(catalog)  # for the diagnosis page and api/signatures.json
        # The views of the plan that drew on the previous graph can be taken again where nothing they show changed.
        last = memory.views[1] if memory.views and previous is memory.views[0] else None
        made = Planned() if memory.serving else None  # kept only by a process that builds again
        plan = plan_site(catalog, graph, signatures, last, made)  # draws the sketches the previous graph did not lend
        if made is not None:
            memory.views = graph, made
        lent = previous and graph.drawn is previous.drawn and graph.rings is previous.rings and graph.similar is previous.similar
        if not (memory.serving or lent):
            _save_graph(options.beside_out("graph"), seen.code, graph)
        everywhere = global_digest(seen.code, catalog)
        if memory.renderer is None or memory.renderer[0] != everywhere:
            memory.renderer = everywhere, Renderer(catalog.site, category_names(catalog), options.templates,
                                                   PROSE_PIECES if memory.serving else 0, options.beside_out("templates"))
        renewed, pages = render_incrementally(plan, memory.renderer[1], cache, options.out, everywhere, options.jobs,
                                              lambda done, total: report("rendering", done, total))
    # The search index covers entry pages only: keep it when the same entry pages are unchanged.
    indexed = {path for path in renewed.pages if path.startswith("failures/")}
    same_entries = indexed == {p for p in cache.pages if p.startswith("failures/")}
    reuse_search = cache.searched and same_entries and all(cache.pages[p] == renewed.pages[p] for p in indexed)
    # Only the changed files are written when the previous build is known and Pagefind need not see the whole site.
    delta = bool(cache.pages) and (options.out / MARKER).is_file() and (reuse_search if options.search else not cache.searched)
    early = shown if delta else None  # told when the pages and assets are live, before the whole-corpus files

    def stage_files(staging: Staging, files: Mapping[str, str | bytes | Deferred]) -> None:
        """Stage the files that are not pages, each only when its bytes changed (in a delta)."""
        root = f"{options.out}{os.sep}"  # a string: a Path per file costs more than the check
        for path, data in sorted(files.items()):
            key = renewed.files[path] = (renewed.kept(cache, path, data.inputs, functools.partial(_file_digest, everywhere, data))
                                         if isinstance(data, Deferred) else _file_digest(everywhere, data))
            unchanged = cache.files.get(path) == key and os.path.isfile(root + path)
            if not (delta and unchanged):
                staging.put(path, options.out / path if unchanged else data.make() if isinstance(data, Deferred) else data)

    def go_live(staging: Staging, removed: set[str], search: bool = False) -> None:
        cache_path.unlink(missing_ok=True)  # a build killed while the files go live renders everything next time
        memory.pages = None
        staging.commit(search, reuse_search, removed=removed)

    with ExitStack() as staged:
        staging = staged.enter_context(Staging(options.out, delta))
        with stage("rendering and writing the pages"):
            for page in pages:
                staging.page(page)
            stage_files(staging, static_files(stylesheet(options.templates), options.templates / "static"))  # what the pages load
        if early is not None:
            with stage("pages going live"):
                go_live(staging, cache.pages.keys() - renewed.pages.keys())
            early()
            staging = staged.enter_context(Staging(options.out, delta))
        with stage("machine-readable files"):
            scripts = {f"repro/{slug}.py": path.read_text(encoding="utf-8") for slug, path in sorted(catalog.repro_scripts.items())}
            stage_files(staging, {**render_api(catalog, signatures), **export_files(catalog), **scripts})
        with stage("search index and swap" if options.search and not reuse_search else "going live"):
            gone = cache.files.keys() if early else cache.pages.keys() | cache.files.keys()  # the pages' went first
            go_live(staging, gone - (renewed.pages.keys() | renewed.files.keys()), options.search)
    report.finish()
    renewed.searched = options.search
    if not memory.serving:  # serve writes its caches when it stops (keep_beside)
        renewed.save(cache_path)
    memory.pages = renewed
    options.beside_out("inputs").write_text(seen.inputs, encoding="ascii")
    result.entries, result.pages, result.cached = len(catalog.entries), len(plan), entry_cache.hits
    result.rendered = sum(1 for p in plan if p.path not in cache.pages or cache.pages[p.path] != renewed.pages[p.path])
    return result
