"""Page specs to text: the Jinja2 environment, its filters and site-wide values, and the stylesheet
(HTML pages, and the sitemap, robots.txt and the Atom feed from their own templates)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import jinja2
from markupsafe import Markup, escape
from pygments.formatters import HtmlFormatter

from .api import signatures_json
from .catalog import TAXONOMIES, Catalog, system_slug
from .graph import Graph, graph_svg
from .inputs import TEMPLATES
from .loading import LoadedEntry
from .pages import PageSpec, Relation, plan_site
from .pool import run_parallel
from .prose import highlight_code, render_inline, render_markdown
from .schema import SiteConfig, SourceRef
from .site import Page

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
CORRECTION_FORM = "entry-correction.yml"  # in .github/ISSUE_TEMPLATE/; its field ids are the query keys below


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


def _environment(templates: Path, remember: int = 0, compiled: Path | None = None) -> jinja2.Environment:
    if compiled:
        compiled.mkdir(exist_ok=True)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        bytecode_cache=jinja2.FileSystemBytecodeCache(str(compiled)) if compiled else None,  # by each template's checksum
        autoescape=jinja2.select_autoescape(["html", "xml"]),  # robots.txt is plain text
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    keep = functools.lru_cache(maxsize=remember) if remember else lambda f: f  # unchanged text is rendered once
    env.filters["md"] = keep(render_markdown)
    env.filters["md_inline"] = keep(render_inline)
    env.filters["highlight"] = keep(lambda code, lang: Markup(highlight_code(code, lang)))
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


def relation_items(relations: tuple[Relation, ...], link: Callable[[str], str]) -> Markup:
    """Return a graph page's relations as text, one list item each: built here rather than in the
    template, as graph_svg is, because a category's page lists thousands of them."""
    return Markup("".join(
        f'  <li><a href="{escape(link(r.source.slug))}">{escape(r.source.title)}</a> <span class="meta">{escape(RELATION_LABELS[r.type].lower())}</span>'
        f' <a href="{escape(link(r.target.slug))}">{escape(r.target.title)}</a></li>\n' for r in relations))


class Renderer:
    """Renders PageSpecs with the site's templates; each template sees its page's view and the
    site-wide values below, never the catalog, so a page is a function of its view."""

    def __init__(self, site: SiteConfig, category_names: dict[str, str], templates: Path = TEMPLATES, remember: int = 0,
                 compiled: Path | None = None) -> None:
        """remember: how many rendered pieces of Markdown and code to keep for the next pages
        (for a renderer that outlives one build, as in `serve`); compiled: a folder that keeps
        the compiled templates for the next build."""
        self.site, self.env = site, _environment(templates, remember, compiled)
        self.base_path = urlsplit(site.base_url).path
        self.shared: dict[str, Any] = {
            "site": site,
            "relation_labels": RELATION_LABELS,
            "sections": SECTIONS,
            "category_names": category_names,
            "taxonomy_names": TAXONOMIES,
            "system_slug": system_slug,
            "graph_svg": graph_svg,
            "relation_items": relation_items,
            "contribution_links": contribution_links,
        }

    def __call__(self, spec: PageSpec) -> Page:
        """Return one page. Links are relative so the site works from any sub-path; only 404.html,
        which a host serves at arbitrary URLs, links absolutely from base_path."""
        path = spec.path
        url = (lambda target: self.base_path + target) if path == "404.html" else _relative(path)
        canonical = self.site.base_url + path.removesuffix("index.html")
        text = self.env.get_template(spec.template).render(
            url=url, entry_url=lambda slug: url(f"failures/{slug}/"), page_path=path, canonical=canonical,
            **self.shared, **spec.context())
        return Page(path, text, spec.listed)


def render_site(catalog: Catalog, graph: Graph, templates: Path = TEMPLATES, jobs: int = 1) -> list[Page]:
    """Return every HTML page of the site, in a fixed order; the output does not depend on `jobs`."""
    render = Renderer(catalog.site, category_names(catalog), templates)
    return list(run_parallel([functools.partial(render, spec) for spec in plan_site(catalog, graph, signatures_json(catalog))], jobs))


def category_names(catalog: Catalog) -> dict[str, str]:
    return {slug: c.title for slug, c in catalog.categories.items()}


def stylesheet(templates: Path = TEMPLATES) -> str:
    """Return the site's one CSS file: our styles plus Pygments' light and dark colours."""
    light = HtmlFormatter(style="default").get_style_defs(".highlight")  # type: ignore[no-untyped-call]
    dark = HtmlFormatter(style="monokai").get_style_defs(".highlight")  # type: ignore[no-untyped-call]
    dark_block = "\n".join("  " + line for line in dark.splitlines())
    base = (templates / "static" / "style.css").read_text(encoding="utf-8")
    return f"{base}\n/* Pygments */\n{light}\n@media (prefers-color-scheme: dark) {{\n{dark_block}\n}}\n"
