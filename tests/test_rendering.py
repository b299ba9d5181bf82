"""Rendering: sections, anchors, relative links and escaping of hostile text."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import write_tree
from htmlparse import ParsedPage

from generator.catalog import build_catalog
from generator.graph import build_graph
from generator.loading import load_content
from generator.rendering import SECTIONS, render_inline, render_markdown, render_site


def _pages(content: Path) -> dict[str, str]:
    catalog = build_catalog(load_content(content))
    return {p.path: p.text for p in render_site(catalog, build_graph(catalog))}


def test_entry_page_has_every_section_with_a_stable_anchor(content: Path) -> None:
    page = _pages(content)["failures/first-failure/index.html"]
    ids = [i for i in re.findall(r'id="([^"]+)"', page) if i in dict(SECTIONS)]
    assert [anchor for anchor, _ in SECTIONS] == ids
    assert '<a class="anchor" href="#confirm" aria-label="Link to this section: How to confirm it">#</a>' in page
    assert '<a href="../../failures/second-failure/">Second failure</a>' in page
    assert '<link rel="stylesheet" href="../../assets/style.css">' in page


def test_inverse_relation_is_rendered_on_the_undeclared_side(content: Path) -> None:
    page = _pages(content)["failures/second-failure/index.html"]
    assert '<h3 class="relation">Caused by</h3>\n<ul class="related">\n  <li><a href="../../failures/first-failure/">First failure</a></li>' in page


def test_hostile_text_is_shown_as_text(content: Path) -> None:
    write_tree(content, {"failures/first-failure.yaml": (content / "failures/first-failure.yaml").read_text()
                         .replace("title: First failure", "title: \"<script>alert(1)</script>{{ 7*7 }}\"")
                         .replace("mechanism: Why it happens.", "mechanism: \"<img src=x onerror=alert(1)> [x](javascript:alert(1)) {% raw %}\"")})
    pages = _pages(content)
    page = pages["failures/first-failure/index.html"]
    assert "<h1>&lt;script&gt;alert(1)&lt;/script&gt;{{ 7*7 }}</h1>" in page
    assert "&lt;img src=x onerror=alert(1)&gt; [x](javascript:alert(1)) {% raw %}" in page
    for text in pages.values():
        parsed = ParsedPage(text)
        assert parsed.inline_scripts == 0 and parsed.handlers == []
        assert not any(h.lower().startswith("javascript:") for h in parsed.links)


def test_markdown_drops_unsafe_links_and_keeps_safe_ones() -> None:
    assert render_inline("[a](javascript:alert(1)) [b](https://example.org) [c](#fix) [d](data:text/html,x)") == (
        '[a](javascript:alert(1)) <a href="https://example.org">b</a> <a href="#fix">c</a> [d](data:text/html,x)')
    assert render_inline("[e](JaVaScRiPt:alert(1))") == "[e](JaVaScRiPt:alert(1))"
    assert render_markdown("```python\nx = 1\n```") == (
        '<pre class="highlight"><code class="language-python"><span class="n">x</span> <span class="o">=</span> <span class="mi">1</span>\n</code></pre>\n')


def test_site_has_listings_taxonomies_and_404(content: Path) -> None:
    pages = _pages(content)
    assert sorted(pages) == [
        "404.html", "alerts/index.html", "categories/distributed-training/index.html", "categories/index.html", "categories/memory/index.html",
        "diagnose/index.html", "failure-modes/hang/index.html", "failure-modes/index.html",
        "failures/first-failure/index.html", "failures/index.html", "failures/second-failure/index.html", "feed.xml",
        "graph/distributed-training/index.html", "graph/index.html", "graph/memory/index.html", "hubs/index.html", "id/MTF-0001/index.html", "id/MTF-0002/index.html", "index.html",
        "robots.txt", "search/index.html", "severities/high/index.html", "severities/index.html", "sitemap.xml", "systems/index.html", "tags/index.html",
        "tags/nccl/index.html", "tags/timeout/index.html"]
    assert '<a href="/failures/">' in pages["404.html"]
    assert '<a href="failures/first-failure/">First failure</a>' in pages["index.html"]
