"""Pure functions from the catalog to HTML pages: Jinja2 templates, markdown-it-py, Pygments."""

from __future__ import annotations

import functools
import json
import multiprocessing
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, urlencode, urlsplit

import jinja2
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from .api import signature_data
from .catalog import TAXONOMIES, Catalog, system_slug
from .export import FILES as EXPORT_FILES
from .export import METRIC, alerted
from .graph import Graph, Layout, neighbourhood, ring_map
from .loading import LoadedEntry
from .schema import SiteConfig, SourceRef

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
RELATION_LABELS = {
    "causes": "Causes",
    "caused-by": "Caused by",
    "confused-with": "Often confused with",
    "see-also": "See also",
}
SECTIONS = [
    ("summary", "What this failure is"),
    ("quick-answer", "Quick answer"),
    ("mechanism", "Why it happens"),
    ("observe", "What you will observe"),
    ("symptoms", "Symptoms and what they mean"),
    ("affected", "Affected systems"),
    ("confirm", "How to confirm it"),
    ("root-causes", "Root causes"),
    ("fix", "Fix"),
    ("verify", "Verify the fix"),
    ("prevention", "Prevention"),
    ("code", "Code examples"),
    ("signatures", "Error signatures"),
    ("faq", "FAQ"),
    ("references", "References"),
    ("related", "Related failures"),
]
_SAFE_SCHEMES = ("https:", "http:", "mailto:")
CORRECTION_FORM = "entry-correction.yml"  # in .github/ISSUE_TEMPLATE/; its field ids are the query keys below


@dataclass(frozen=True)
class Page:
    """One output file: its path under the site root and its text, or the unchanged file it reuses."""

    path: str
    text: str
    listed: bool = True  # in the sitemap (not redirects or the 404 page)
    reuse: Path | None = None  # an identical file of the previous build, linked instead of written


_FORMATTER = HtmlFormatter(nowrap=True)


@functools.lru_cache(maxsize=256)
def _lexer(language: str) -> Lexer:
    try:
        return get_lexer_by_name(language)
    except ClassNotFound:
        return get_lexer_by_name("text")


def _highlight(code: str, language: str) -> str:
    lexer = _lexer(language)
    spans = highlight(code, lexer, _FORMATTER)
    # Starts with <pre so that markdown-it uses it as the whole fenced block.
    return f'<pre class="highlight"><code class="language-{lexer.aliases[0] if lexer.aliases else "text"}">{spans}</code></pre>'


def _is_safe_link(url: str) -> bool:
    """Allow web links, mail links and relative links; refuse javascript:, data: and the like."""
    lowered = "".join(url.split()).lower()
    if ":" not in lowered.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]:
        return True
    return lowered.startswith(_SAFE_SCHEMES)


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table").disable("image")
    md.validateLink = _is_safe_link  # type: ignore[method-assign]
    md.options["highlight"] = lambda code, lang, _attrs: _highlight(code, lang or "text")
    return md


_MD = _markdown()


def render_markdown(text: str) -> Markup:
    """Return Markdown rendered to HTML with raw HTML shown as text and unsafe links dropped."""
    return Markup(_MD.render(text))


def render_inline(text: str) -> Markup:
    """Return one line of Markdown rendered without a wrapping paragraph."""
    return Markup(_MD.renderInline(text))


def contribution_links(site: SiteConfig, item: LoadedEntry) -> dict[str, str]:
    """Return the addresses that edit an entry's file and report a problem with it on GitHub;
    empty when no repository is configured, so that pages never link to a guessed forge."""
    if site.repo_url is None:
        return {}
    entry = item.entry
    query = {"template": CORRECTION_FORM, "title": f"Correction to {entry.id}: {entry.title}",
             "entry": f"{entry.id}: {entry.title}", "page": f"{site.base_url}failures/{item.slug}/"}
    return {"edit": f"{site.repo_url}/edit/{site.repo_branch}/content/failures/{item.slug}.yaml",
            "report": f"{site.repo_url}/issues/new?{urlencode(query, quote_via=quote)}"}


_LEGEND = [("causes", "causes"), ("confused-with", "confused with"), ("see-also", "see also"), ("similar", "similar (inferred)")]


def graph_svg(layout: Layout, svg_id: str, title: str, desc: str, category_names: dict[str, str],
              link: Callable[[str], str]) -> Markup:
    """Return a layout as inline SVG: typed edges, linked nodes, labels and a legend.

    Built as a string in Python rather than a template: it is the hottest markup of a
    build, and every piece of text still goes through escape().
    """
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


def _environment(templates: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md"] = render_markdown
    env.filters["md_inline"] = render_inline
    env.filters["highlight"] = lambda code, lang: Markup(_highlight(code, lang))
    env.filters["source_url"] = source_url
    env.filters["seen_label"] = seen_label
    return env


def source_url(source: SourceRef) -> str:
    """Return the address of the file that prints a signature, at its tag or commit."""
    return f"https://github.com/{source.repo}/blob/{quote(source.ref)}/{quote(source.path)}"


_GITHUB_THREAD = re.compile(r"^https://github\.com/([^/]+/[^/]+)/(?:issues|pull|discussions)/(\d+)")


def seen_label(url: str) -> str:
    """Return a short label for where an example was seen: owner/name#123, or the site's host."""
    thread = _GITHUB_THREAD.match(url)
    return f"{thread.group(1)}#{thread.group(2)}" if thread else urlsplit(url).hostname or url


def _relative(from_path: str) -> Callable[[str], str]:
    """Return a function mapping a site path ('failures/x/') to a link relative to from_path."""
    prefix = "../" * from_path.count("/")
    return lambda target: prefix + target or "./"


OVERVIEW_LIMIT = 150  # above this many entries the graph overview shows categories only
PARALLEL_MIN_PAGES = 300  # below this, starting worker processes costs more than it saves
T = TypeVar("T")
_CALLS: list[Callable[[], Any]] = []  # read by forked workers, which inherit it


@dataclass(frozen=True)
class PlannedPage:
    """A page to render: where it goes, with what template and data, and how to render it."""

    path: str
    template: str
    listed: bool
    context: dict[str, Any]
    render: Callable[[], Page]


def run_parallel(calls: list[Callable[[], T]], jobs: int, done: Callable[[int, int], None] | None = None) -> list[T]:
    """Return the results of calls, in order, computed by `jobs` forked processes when worth it.

    done(finished, total) is called as results arrive, for progress reports.
    """
    global _CALLS
    results: list[T] = []
    if jobs <= 1 or len(calls) < PARALLEL_MIN_PAGES or "fork" not in multiprocessing.get_all_start_methods():
        stream: Iterator[T] = (call() for call in calls)
    else:
        _CALLS = list(calls)  # workers are forked after the calls exist: the catalog is shared, not pickled
        pool = multiprocessing.get_context("fork").Pool(jobs)
        stream = pool.imap(_run_call, range(len(_CALLS)), chunksize=max(1, min(64, len(_CALLS) // (jobs * 8))))
    try:
        for result in stream:
            results.append(result)
            if done and len(results) % 100 == 0:
                done(len(results), len(calls))
        return results
    finally:
        if _CALLS:
            pool.terminate()
            _CALLS = []


def _run_call(index: int) -> Any:
    return _CALLS[index]()


def render_site(catalog: Catalog, graph: Graph, templates: Path = TEMPLATES, jobs: int = 1) -> list[Page]:
    """Return every HTML page of the site, in a fixed order, rendered by `jobs` processes.

    Links are relative so the site works from any sub-path; only 404.html, which a
    host serves at arbitrary URLs, links absolutely from base_path. The output does
    not depend on `jobs`.
    """
    return run_parallel([p.render for p in plan_site(catalog, graph, templates)], jobs)


def plan_site(catalog: Catalog, graph: Graph, templates: Path = TEMPLATES) -> list[PlannedPage]:
    """Return every page of the site, in a fixed order, ready to render."""
    return list(_plan(catalog, graph, templates))


def _plan(catalog: Catalog, graph: Graph, templates: Path) -> Iterator[PlannedPage]:
    env = _environment(templates)
    shared: dict[str, Any] = {
        "catalog": catalog,
        "graph": graph,
        "relation_labels": RELATION_LABELS,
        "sections": SECTIONS,
        "category_names": {slug: c.title for slug, c in catalog.categories.items()},
        "taxonomy_names": TAXONOMIES,
        "system_slug": system_slug,
        "graph_svg": graph_svg,
        "contribution_links": contribution_links,
    }
    base_path = urlsplit(catalog.site.base_url).path

    def render(path: str, template: str, listed: bool, context: dict[str, Any]) -> Page:
        url = (lambda target: base_path + target) if path == "404.html" else _relative(path)
        canonical = catalog.site.base_url + path.removesuffix("index.html")
        if "layout_of" in context:
            context = {**context, "layout": neighbourhood(catalog, graph, context.pop("layout_of"))}
        text = env.get_template(template).render(url=url, entry_url=lambda slug: url(f"failures/{slug}/"), page_path=path,
                                                 canonical=canonical, site=catalog.site, **shared, **context)
        return Page(path, text, listed)

    def page(path: str, template: str, listed: bool = True, **context: Any) -> PlannedPage:
        return PlannedPage(path, template, listed, context, functools.partial(render, path, template, listed, context))

    entries = catalog.ordered()
    recent = sorted(entries, key=lambda e: (-e.entry.last_reviewed.toordinal(), e.entry.title.lower()))[:10]
    yield page("index.html", "home.html", recent=recent)
    yield page("failures/index.html", "listing.html", title="All failures", items=entries, intro="Every entry in the encyclopedia, by title.")
    for item in entries:
        yield page(f"failures/{item.slug}/index.html", "entry.html", item=item, layout_of=item.slug)
    for kind, terms in catalog.taxonomies.items():
        yield page(f"{kind}/index.html", "taxonomy.html", title=TAXONOMIES[kind], kind=kind,
                   groups=[(t.slug, t.label, len(t.entries)) for t in terms.values()])
        for term in terms.values():
            title = term.label if kind == "categories" else f"{TAXONOMIES[kind].rstrip('s')}: {term.label}"
            yield page(f"{kind}/{term.slug}/index.html", "listing.html", title=title,
                       items=[catalog.entries[s] for s in term.entries], intro=term.description)
    yield page("hubs/index.html", "taxonomy.html", title="Hubs", kind="hubs",
               groups=[(slug, hub.hub.title, len(hub.hub.rows)) for slug, hub in sorted(catalog.hubs.items())])
    for slug, hub in sorted(catalog.hubs.items()):
        yield page(f"hubs/{slug}/index.html", "hub.html", hub=hub.hub, hub_slug=slug)
    everything = sorted(catalog.entries)
    yield page("graph/index.html", "graph.html", layout=ring_map(catalog, graph, everything) if len(everything) <= OVERVIEW_LIMIT else None,
               category=None, slugs=everything)
    for slug in sorted(catalog.categories):
        members = catalog.taxonomies["categories"][slug].entries
        if members:
            yield page(f"graph/{slug}/index.html", "graph.html", layout=ring_map(catalog, graph, members), category=slug, slugs=members)
    yield page("search/index.html", "search.html")
    yield page("diagnose/index.html", "diagnose.html", signature_data=Markup(_signature_json(catalog, "../")),
               samples=[sample for sample, _text in catalog.samples], sample_logs=Markup(_script_json([text for _s, text in catalog.samples])))
    yield page("alerts/index.html", "alerts.html", files=EXPORT_FILES, metric=METRIC, alerted=alerted(catalog), entries=len(catalog.entries))
    yield page("404.html", "404.html", listed=False)
    for alias, slug in sorted(catalog.aliases.items()):
        yield page(f"failures/{alias}/index.html", "redirect.html", listed=False, target=slug, reason=f"This entry moved: {alias} is now {slug}.")
    for entry_id, slug in sorted(catalog.ids.items()):
        yield page(f"id/{entry_id}/index.html", "redirect.html", listed=False, target=slug, reason=f"{entry_id} is the permanent ID of this entry.")


def _signature_json(catalog: Catalog, base: str) -> str:
    """Return the signatures and entry facts the in-browser diagnosis needs, safe inside <script>."""
    return _script_json({**signature_data(catalog), "base": base})


def _script_json(data: object) -> str:
    """Return data as JSON to embed in a <script> element: "<" is escaped, so no content can close it."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).replace("<", "\\u003c")


def stylesheet(templates: Path = TEMPLATES) -> str:
    """Return the site's one CSS file: our styles plus Pygments' light and dark colours."""
    light = HtmlFormatter(style="default").get_style_defs(".highlight")  # type: ignore[no-untyped-call]
    dark = HtmlFormatter(style="monokai").get_style_defs(".highlight")  # type: ignore[no-untyped-call]
    dark_block = "\n".join("  " + line for line in dark.splitlines())
    base = (templates / "static" / "style.css").read_text(encoding="utf-8")
    return f"{base}\n/* Pygments */\n{light}\n@media (prefers-color-scheme: dark) {{\n{dark_block}\n}}\n"
