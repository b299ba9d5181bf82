"""The related-failure graph: inferred neighbours, layouts, and the SVG on built pages."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import entry_yaml, write_tree

from generator import pages
from generator.catalog import build_catalog
from generator.cli import main
from generator.graph import LABEL_GAP, build_graph, neighbourhood, ring_map
from generator.loading import load_content
from generator.rendering import RELATION_LABELS

SVG = "{http://www.w3.org/2000/svg}"


def _catalog(content: Path, extra: dict[str, str]):  # type: ignore[no-untyped-def]
    write_tree(content, extra)
    return build_catalog(load_content(content))


def test_similarity_comes_from_shared_tags_systems_and_signatures(content: Path) -> None:
    catalog = _catalog(content, {
        "failures/third.yaml": entry_yaml("MTF-0003", "Third").replace("tags: [nccl, timeout]", "tags: [dataloader]")
        .replace("Watchdog caught collective operation timeout", "DataLoader worker"),
    })
    similar = build_graph(catalog).similar
    assert [s.slug for s in similar["first-failure"]] == ["second-failure"]
    assert similar["first-failure"][0].shared[:2] == ("Watchdog caught collective operation timeout", "caught")
    assert similar["third"] == []


def test_neighbourhood_has_one_node_per_neighbour_and_labels_never_overlap(content: Path) -> None:
    files = {f"failures/n{i}.yaml": entry_yaml(f"MTF-01{i:02d}", f"Neighbour number {i} with a long title that gets cut",
                                               "- slug: first-failure\n  type: see-also\n") for i in range(12)}
    files["failures/hop2.yaml"] = entry_yaml("MTF-0200", "Two hops away", "- slug: n3\n  type: causes\n")
    catalog = _catalog(content, files)
    layout = neighbourhood(catalog, build_graph(catalog), "first-failure").draw()
    slugs = [n.slug for n in layout.nodes]
    assert len(slugs) == len(set(slugs))
    assert slugs[0] == "first-failure" and "hop2" in slugs and len(slugs) == 1 + 8 + 1
    for anchor in ("start", "end"):
        ys = sorted(n.label_y for n in layout.nodes if n.anchor == anchor)
        assert all(b - a >= LABEL_GAP - 0.01 for a, b in itertools.pairwise(ys))
    assert all(0 <= n.label_y <= layout.legend_y and 0 <= n.x <= layout.width for n in layout.nodes)
    assert any(e.type == "causes" and e.source == "hop2" for e in layout.edges)
    assert ring_map(catalog, build_graph(catalog), sorted(catalog.entries)).draw().nodes


def test_built_svgs_parse_and_every_node_links_to_a_built_page(content: Path, tmp_path: Path) -> None:
    assert main(["build", "--out", "site"]) == 0
    site = tmp_path / "site"
    pages = [site / "failures/first-failure/index.html", site / "failures/second-failure/index.html", site / "graph/index.html"]
    for page in pages:
        html = page.read_text()
        svg = ET.fromstring(html[html.index("<svg"): html.index("</svg>") + 6].replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))
        assert svg.find(f"{SVG}title") is not None and svg.find(f"{SVG}desc") is not None
        links = [a.get("href") for a in svg.iter(f"{SVG}a")]
        assert len(links) == 2
        for href in links:
            assert (page.parent / str(href) / "index.html").resolve().is_file()


def test_a_large_category_graph_is_split_into_pages_that_together_draw_each_entry_once(
        content: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages, "DRAW_LIMIT", 5)
    files = {f"failures/m{i:02d}.yaml": entry_yaml(f"MTF-01{i:02d}", f"Member {20 - i}", f"- slug: m{(i + 1) % 12:02d}\n  type: see-also\n")
             for i in range(12)}
    files["ledger.yaml"] = "MTF-0001: [first-failure]\nMTF-0002: [second-failure]\n" + "".join(f"MTF-01{i:02d}: [m{i:02d}]\n" for i in range(12))
    write_tree(content, files)
    assert main(["build", "--out", "site"]) == 0
    folder = tmp_path / "site/graph/distributed-training"
    built = [folder / "index.html", folder / "page/2/index.html", folder / "page/3/index.html"]
    assert not (folder / "page/4").exists()
    drawn, listed = [], []
    for page in built:
        html = page.read_text()
        svg = ET.fromstring(html[html.index("<svg"): html.index("</svg>") + 6].replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))
        nodes = [str(a.get("href")) for a in svg.iter(f"{SVG}a")]
        assert len(nodes) <= 5
        drawn += nodes
        relations = html[html.index('id="relations"'):]
        listed += re.findall(r'<li><a href="[./]*failures/([^/"]+)/">[^<]*</a> <span class="meta">([^<]+)</span> <a href="[./]*failures/([^/"]+)/">',
                             relations)
        pager = html[html.index('class="pager"'):]
        for href in re.findall(r'href="([^"]+)"', pager[:pager.index("</nav>")]):
            assert (page.parent / href / "index.html").resolve() in {p.resolve() for p in built}
    members = [f"m{i:02d}" for i in range(12)] + ["first-failure"]
    assert sorted(h.strip("./").split("/")[-1] for h in drawn) == sorted(members)  # slug order: a title edit moves nothing
    catalog = build_catalog(load_content(content))
    declared = [(s, RELATION_LABELS[l.type].lower(), l.slug) for s in members for l in catalog.links[s] if l.declared]
    assert sorted(listed) == sorted(declared)  # each declared relation listed once, on its source's page
