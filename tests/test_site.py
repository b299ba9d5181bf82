"""Writing the site: deterministic, atomic, never outside or over foreign folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import read_tree, write_tree

from generator.cli import main
from generator.errors import GeneratorError
from generator.inputs import MARKER
from generator.site import Page, Staging


def test_two_builds_are_byte_identical_across_hash_seeds(content: Path, tmp_path: Path) -> None:
    for seed, out in [("1", "a"), ("2", "b")]:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "generator", "build", "--out", out], cwd=tmp_path, env=env, check=True, capture_output=True)
    assert read_tree(tmp_path / "a") == read_tree(tmp_path / "b")
    built = read_tree(tmp_path / "a")
    assert {"index.html", "failures/first-failure/index.html", "api/index.json", "pagefind/pagefind.js"} <= set(built)


def test_failed_build_leaves_previous_site_untouched(content: Path, tmp_path: Path) -> None:
    assert main(["build", "--out", "site"]) == 0
    before = read_tree(tmp_path / "site")
    write_tree(content, {"failures/broken.yaml": "id: [\n"})
    assert main(["build", "--out", "site"]) == 1
    assert read_tree(tmp_path / "site") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.cache", ".site.entries", ".site.graph", ".site.templates", "content", "site"]


def test_renamed_entry_keeps_its_old_address_as_a_redirect(content: Path, tmp_path: Path) -> None:
    assert main(["build", "--out", "site"]) == 0
    old = content / "failures/second-failure.yaml"
    old.rename(content / "failures/renamed-failure.yaml")
    assert main(["build", "--out", "site"]) == 1  # the published slug would break
    (content / "failures/renamed-failure.yaml").write_text(old.with_name("renamed-failure.yaml").read_text() + "aliases: [second-failure]\n")
    (content / "failures/first-failure.yaml").write_text((content / "failures/first-failure.yaml").read_text().replace("second-failure", "renamed-failure"))
    assert main(["build", "--out", "site"]) == 0
    redirect = (tmp_path / "site/failures/second-failure/index.html").read_text()
    assert '<meta http-equiv="refresh" content="0; url=../../failures/renamed-failure/">' in redirect
    assert '<link rel="canonical" href="https://example.org/failures/renamed-failure/">' in redirect
    assert (tmp_path / "site/failures/renamed-failure/index.html").is_file()
    assert "../../failures/renamed-failure/" in (tmp_path / "site/id/MTF-0002/index.html").read_text()
    assert (tmp_path / "site" / MARKER).is_file()


def test_refuses_to_replace_a_folder_it_did_not_build(tmp_path: Path) -> None:
    write_tree(tmp_path / "home", {"notes.txt": "precious"})
    with pytest.raises(GeneratorError, match="refusing to replace .*home: it is not empty and was not built by encyclopedia"):
        Staging(tmp_path / "home")
    assert (tmp_path / "home/notes.txt").read_text() == "precious"


@pytest.mark.parametrize("path", ["../escape.html", "/etc/passwd", "a/../../b.html"])
def test_refuses_paths_outside_the_output(path: str, tmp_path: Path) -> None:
    with Staging(tmp_path / "site") as staging, pytest.raises(GeneratorError, match="outside the output folder"):
        staging.page(Page(path, "x"))
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # the staging folder is gone


def test_refuses_two_pages_on_one_path(tmp_path: Path) -> None:
    with Staging(tmp_path / "site") as staging, pytest.raises(GeneratorError, match="two pages would be written to a.html"):
        staging.page(Page("a.html", "x"))
        staging.page(Page("a.html", "y"))


def test_build_into_a_folder_whose_parent_does_not_exist_yet(content: Path, tmp_path: Path) -> None:
    out = tmp_path / "not/yet/site"
    assert main(["build", "--no-search", "--out", str(out)]) == 0
    assert (out / "index.html").is_file() and (out.parent / ".site.entries").is_file()
