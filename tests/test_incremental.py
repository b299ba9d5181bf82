"""Incremental builds equal clean builds byte for byte, whatever changed; a no-op rebuild does nothing."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import read_tree

from generator import build as pipeline
from generator import pages
from generator.errors import ContentError
from generator.inputs import TEMPLATES

ROOT = Path(__file__).resolve().parent.parent


def _same_as_clean(work: Path, memory: pipeline.Memory | None = None, shown: Callable[[], None] | None = None) -> pipeline.BuildResult:
    """Build as the command does (no memory) or as serve does (memory, and shown: called when its
    changed pages are live), then check the output against a clean build."""
    options = pipeline.BuildOptions(work / "content", work / "site", search=False, templates=work / "templates")
    if memory is not None and shown is None:  # serve always passes one
        shown = lambda: None
    result = pipeline.build(options, memory=memory, shown=shown)
    shutil.rmtree(work / "clean", ignore_errors=True)
    pipeline.build(replace(options, out=work / "clean", clean=True))
    assert read_tree(work / "site") == read_tree(work / "clean")
    return result


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


@pytest.mark.slow
@pytest.mark.parametrize("serving", [False, True], ids=["command", "serve"])
def test_incremental_output_equals_a_clean_build(tmp_path: Path, serving: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rebuilds from the caches beside the output (the command) or from a process's memory (serve)."""
    monkeypatch.setattr(pages, "DRAW_LIMIT", 40)  # the larger categories' graphs have pages, as at 10,000 entries
    shutil.copytree(ROOT / "content", tmp_path / "content")
    shutil.copytree(TEMPLATES, tmp_path / "templates")
    failures = tmp_path / "content/failures"
    memory = pipeline.Memory(serving=True) if serving else None
    total = _same_as_clean(tmp_path, memory).pages
    assert _same_as_clean(tmp_path, memory).up_to_date

    # An entry's title appears on its page, in listings, in neighbours' graphs and in the hub.
    planned = dict(memory.views[1].entries) if memory else {}
    graphs = dict(memory.views[1].graphs) if memory else {}
    _edit(failures / "cuda-out-of-memory.yaml", "title: CUDA out of memory (torch.OutOfMemoryError)", "title: CUDA out of GPU memory")
    live: list[tuple[bool, ...]] = []  # what the site holds when serve is told to reload the open page

    def seen_live(text: str, *paths: str) -> Callable[[], None] | None:
        return (lambda: live.append(tuple(text in (tmp_path / "site" / path).read_text() for path in paths))) if memory else None

    shown = seen_live("CUDA out of GPU memory", "failures/cuda-out-of-memory/index.html", "api/index.json")
    assert 1 < _same_as_clean(tmp_path, memory, shown).rendered < total / 2
    assert live == ([(True, False)] if memory else [])  # serve reloads the page before the whole-corpus files are written
    if memory:  # serve plans again only the entry views that show the title; the others are taken as they were
        again = {slug for slug, entry in memory.views[1].entries.items() if planned[slug] is entry}
        showing = {slug for slug, entry in planned.items()
                   if "cuda-out-of-memory" in {l.slug for l in (*entry.view.related, *entry.view.similar)}
                   | {s for s, _x, _y in entry.view.sketch.position}}
        assert again == set(planned) - showing and len(showing) > 5
        # and only the category graph pages that show it: in their ring, or at the far end of a relation
        again = {path for path, view in memory.views[1].graphs.items() if graphs[path] is view}
        showing = {path for path, view in graphs.items()
                   if "cuda-out-of-memory" in {s for s, _x, _y in view.sketch.position} | {r.target.slug for r in view.relations}}
        assert again == set(graphs) - showing and 0 < len(showing) < len(graphs)
        assert any(view.pager for view in graphs.values())

    # A new relation changes both entries' pages and their neighbours' graphs.
    _edit(failures / "nan-inf-loss.yaml", "related:\n", "related:\n  - slug: cuda-out-of-memory\n    type: see-also\n")
    _same_as_clean(tmp_path, memory)

    # A new tag adds a taxonomy page and changes the tags index; taking it away removes the page.
    _edit(failures / "bf16-divergence.yaml", "tags: [", "tags: [brand-new-tag, ")
    _same_as_clean(tmp_path, memory)
    folder = (tmp_path / "site").stat().st_ino
    _edit(failures / "bf16-divergence.yaml", "tags: [brand-new-tag, ", "tags: [")
    _same_as_clean(tmp_path, memory)
    assert not (tmp_path / "site/tags/brand-new-tag").exists()
    assert (tmp_path / "site").stat().st_ino == folder  # only the changed files were moved in, not a whole new site

    # Entry text shows on its own page and in listings (the quick answer's symptom); a file
    # deleted from the output by hand comes back with the next build.
    (tmp_path / "site/api/signatures.json").unlink()
    _edit(failures / "dataloader-hang-deadlock.yaml", "Training stops making progress", "Training makes no progress")
    _same_as_clean(tmp_path, memory)

    # A category change moves the entry between listings, graphs and neighbours' colours.
    _edit(failures / "dataloader-hang-deadlock.yaml", "category: data-loading", "category: fail-slow")
    _same_as_clean(tmp_path, memory)

    # A hub row's text shows on the hub page, and the hub's title on every entry its rows name.
    hub = tmp_path / "content/hubs/nccl-errors.yaml"
    _edit(hub, "An operating-system call, or a call", "An OS call, or a call")
    _edit(hub, "title: NCCL and ProcessGroupNCCL error messages", "title: NCCL and ProcessGroupNCCL messages")
    _same_as_clean(tmp_path, memory)

    # The stylesheet is shared by every page.
    with (tmp_path / "templates/static/style.css").open("a") as css:
        css.write("\n.hub-box { margin-top: 2rem; }\n")
    live.clear()
    _same_as_clean(tmp_path, memory, seen_live(".hub-box { margin-top: 2rem; }", "assets/style.css"))
    assert live == ([(True,)] if memory else [])  # the stylesheet goes live with the pages that load it

    # A template change re-renders everything that uses it.
    _edit(tmp_path / "templates/base.html", "Every fix is free.", "Every fix is free, always.")
    result = _same_as_clean(tmp_path, memory)
    assert result.rendered == result.pages == total


def test_unchanged_entries_come_from_the_cache_with_their_positions(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "content", tmp_path / "content")
    failures = tmp_path / "content/failures"
    options = pipeline.BuildOptions(tmp_path / "content", tmp_path / "site", search=False)
    entries = len(list(failures.glob("*.yaml")))
    assert pipeline.build(options).cached == 0

    _edit(failures / "nan-inf-loss.yaml", "title: ", "title: Diverged, ")
    assert pipeline.build(options).cached == entries - 1

    # Errors found later in unchanged (cached) entries point where a fresh read points.
    (failures / "nan-inf-loss.yaml").unlink()
    with pytest.raises(ContentError) as cached:
        pipeline.build(options)
    with pytest.raises(ContentError) as fresh:
        pipeline.load_catalog(tmp_path / "content")
    assert sum(p.code == "E022" for p in cached.value.problems) >= 4
    assert cached.value.problems == fresh.value.problems

    # A cached file that changes is read again, and its errors are reported.
    _edit(failures / "bf16-divergence.yaml", "title: ", "title: [unclosed ")
    with pytest.raises(ContentError) as broken:
        pipeline.build(options)
    assert any(p.path.endswith("bf16-divergence.yaml") and p.code == "E001" for p in broken.value.problems)


def test_long_listings_are_paginated_and_an_edit_renders_only_its_page(tmp_path: Path) -> None:
    from corpus import write_corpus

    write_corpus(250, tmp_path / "content")
    options = pipeline.BuildOptions(tmp_path / "content", tmp_path / "site", search=False)
    pipeline.build(options)
    site = tmp_path / "site"
    first, second, third = (site / p / "index.html" for p in ("failures", "failures/page/2", "failures/page/3"))
    assert not (site / "failures/page/4").exists()
    assert first.read_text().count('<li>\n    <a href="') == 100 and third.read_text().count('<li>\n    <a href="') == 50
    assert '250 entries, page 2 of 3.' in second.read_text()
    assert '<a href="../../../failures/" rel="prev">' in second.read_text() and '<a href="../../../failures/page/3/" rel="next">' in second.read_text()
    assert "<loc>https://example.org/failures/page/3/</loc>" in (site / "sitemap.xml").read_text()

    # Rows are ordered by title: change the summary line of the row on page 3 only.
    row = re.search(r'href="\.\./\.\./\.\./failures/(synthetic-failure-\d+)/"', third.read_text()).group(1)  # type: ignore[union-attr]
    before = {p: p.read_bytes() for p in (first, second, third)}
    entry = tmp_path / "content/failures" / f"{row}.yaml"
    entry.write_text(entry.read_text().replace("  symptom: ", "  symptom: Changed. ", 1))
    rendered = pipeline.build(options).rendered
    assert [p.read_bytes() == before[p] for p in (first, second, third)] == [True, True, False]
    assert rendered < 20  # the entry, page 3 of each listing it is on, and nothing that does not show the line


def test_a_no_op_build_answers_before_the_rendering_stack_is_imported(content: Path) -> None:
    build = [sys.executable, "-c", ("import sys; from generator.cli import main; code = main(sys.argv[1:]); "
             "print(sorted(m for m in ('pydantic', 'jinja2', 'pygments', 'yaml') if m in sys.modules)); sys.exit(code)"),
             "build", "--no-search", "--out", "site"]
    first = subprocess.run(build, cwd=content.parent, capture_output=True, text=True, check=True)
    assert first.stdout.endswith("['jinja2', 'pydantic', 'pygments', 'yaml']\n")
    again = subprocess.run(build, cwd=content.parent, capture_output=True, text=True, check=True)
    assert again.stdout == "site/ is up to date\n[]\n"
    _edit(content / "failures/first-failure.yaml", "title: First failure", "title: First failure, edited")  # any input byte counts
    edited = subprocess.run(build, cwd=content.parent, capture_output=True, text=True, check=True)
    assert edited.stdout.startswith("built 2 entries")
