"""Hostile content (tests/data/hostile/): neutralised or rejected with file:line, never executed,
never hanging, never writing outside the output folder; a rejected build keeps the old site."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import PageErrors, serve
from conftest import read_tree, write_tree
from htmlparse import ParsedPage

from generator.cli import main

HOSTILE = Path(__file__).resolve().parent / "data/hostile"
BUILDS = ["script-everywhere.yaml", "markdown-links.yaml", "jinja-syntax.yaml"]
REJECTED = {
    "billion-laughs.yaml": "content/failures/hostile.yaml:3:4: b[0]: uses a YAML alias (expected the value written out) [E003 yaml-alias]",
    "non-utf8.yaml": "content/failures/hostile.yaml:2:11: byte 0xe9 is not UTF-8 (expected UTF-8 text) [E004 encoding]",
    "path-traversal.yaml": "content/failures/hostile.yaml:12:11: aliases[0]: '../../../tmp/escaped' has the wrong format (expected lowercase letters and digits in words joined by '-') [E013 invalid-value]",
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_rejected_with_a_position_and_the_old_site_survives(name: str, content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "--no-search", "--out", "site"]) == 0
    before = read_tree(tmp_path / "site")
    shutil.copy(HOSTILE / name, content / "failures/hostile.yaml")
    start = time.monotonic()
    assert main(["build", "--no-search", "--out", "site"]) == 1
    assert time.monotonic() - start < 5
    assert REJECTED[name] in capsys.readouterr().err
    assert read_tree(tmp_path / "site") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.cache", ".site.entries", ".site.graph", ".site.templates", "content", "site"]


def test_a_50_mb_entry_is_refused_without_reading_it(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with (content / "failures/huge.yaml").open("w") as f:
        f.write("id: MTF-0106\nsummary: |\n")
        for _ in range(50 * 1024):
            f.write("  " + "x" * 1021 + "\n")
    start = time.monotonic()
    assert main(["check"]) == 1
    assert time.monotonic() - start < 5
    assert "content/failures/huge.yaml:1:1: is 52,428,824 bytes (expected at most 1,000,000) [E005 file-too-large]" in capsys.readouterr().err


def test_a_symlink_out_of_content_is_refused(content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "secret.yaml").write_text("id: MTF-0107\n")
    (content / "failures/link.yaml").symlink_to(tmp_path / "secret.yaml")
    (content / "hubs").mkdir()
    (content / "hubs/link.yaml").symlink_to("/etc/hostname")
    assert main(["check"]) == 1
    err = capsys.readouterr().err
    assert f"content/failures/link.yaml:1:1: refers to {tmp_path}/secret.yaml, outside the content folder" in err
    assert "content/hubs/link.yaml:1:1: refers to /etc/hostname, outside the content folder" in err


def test_a_sample_log_that_links_out_or_is_binary_is_refused_and_nothing_is_published(content: Path, tmp_path: Path,
                                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(content / "samples", {"samples.yaml": """\
        samples:
          - {file: secret.log, title: T, source: "https://example.org/a", shows: S}
          - {file: binary.log, title: T, source: "https://example.org/b", shows: S}
        """, "binary.log": b"\xff\xfe\x00 not text"})
    (content / "samples/secret.log").symlink_to("/etc/hostname")
    assert main(["build", "--no-search", "--out", "site"]) == 1
    err = capsys.readouterr().err
    assert "content/samples/samples.yaml:2:12: samples[0].file: 'secret.log' is not a regular file inside the content folder" in err
    assert "content/samples/samples.yaml:3:12: samples[1].file: 'binary.log' is not UTF-8 text" in err
    assert not (tmp_path / "site").exists()


def test_a_bom_is_accepted(content: Path) -> None:
    path = content / "failures/first-failure.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert main(["check"]) == 0


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    work = tmp_path_factory.mktemp("hostile")
    from conftest import CATEGORIES

    write_tree(work / "content", {"categories.yaml": CATEGORIES, **{f"failures/{n}": (HOSTILE / n).read_text() for n in BUILDS}})
    before = {p for p in work.parent.iterdir()}
    assert main(["build", "--content", str(work / "content"), "--out", str(work / "site")]) == 0
    assert {p for p in work.parent.iterdir()} == before  # nothing written beside the output folder
    assert sorted(p.name for p in work.iterdir()) == [".site.cache", ".site.entries", ".site.graph", ".site.inputs", ".site.templates", "content", "site"]
    server, base = serve(work / "site")
    yield base, work / "site"
    server.shutdown()


def test_hostile_text_is_shown_as_text(hostile_site: tuple[str, Path]) -> None:
    _, site = hostile_site
    for path in site.rglob("*.html"):
        parsed = ParsedPage(path.read_text())
        assert parsed.inline_scripts == 0 and parsed.handlers == [], path
        assert not any(link.lower().replace("\t", "").startswith(("javascript:", "data:", "vbscript:")) for link in parsed.links), path
    page = (site / "failures/script-everywhere/index.html").read_text()
    assert "&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt;" in page
    links = (site / "failures/markdown-links/index.html").read_text()
    assert 'href="javascript' not in links.lower() and 'href="data:' not in links and 'href="vbscript' not in links
    assert 'src="javascript' not in links.lower() and "<img" not in links
    assert '<a href="https://example.org/">ok</a>' in links
    jinja = (site / "failures/jinja-syntax/index.html").read_text()
    assert "{{ 7*7 }}" in jinja and "49" not in jinja.split("<main", 1)[1].split("</main>", 1)[0]


def test_no_hostile_page_runs_anything_in_chromium(browser, hostile_site: tuple[str, Path]) -> None:
    base, site = hostile_site
    page = browser.new_page()
    errors = PageErrors(page)
    pages = [p.relative_to(site).as_posix().removesuffix("index.html") for p in sorted(site.rglob("*.html"))]
    for path in pages:
        if path.startswith("id/"):  # a redirect page: wait until it has moved on to the entry
            with page.expect_navigation(url="**/failures/**"):
                page.goto(base + path)
        else:
            page.goto(base + path)
        for link in page.locator("main a").all()[:40]:
            href = link.get_attribute("href") or ""
            assert not href.lower().replace("\t", "").startswith(("javascript:", "data:", "vbscript:"))
    page.goto(base + "search/?q=" + "<script>alert('sig')</script>")
    page.wait_for_selector("#search-results p.meta")
    page.goto(base + "diagnose/")
    page.fill("#log-text", "x <script>alert('sig')</script> y\n<img src=x onerror=alert(1)>")
    page.click("#diagnose-form button")
    page.wait_for_selector(".candidates li")
    assert errors.errors == []
