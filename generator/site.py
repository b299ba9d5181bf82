"""The writer: pages and files (a Deferred one is made only when its inputs changed) stream into
a temporary folder, then go live in one of two ways.

A complete staging folder (first and clean builds, or when Pagefind must index the whole site)
is swapped in place of the output with renames. A delta (an incremental build: only the files
that changed, staged flat) is moved into the output file by file once everything is rendered, and the files
the new site no longer has are removed; each file is replaced whole, so a reader never sees a
half-written page.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Self

from .errors import GeneratorError
from .inputs import MARKER


@dataclass(frozen=True)
class Page:
    """One output file: its path under the site root and its text, or the unchanged file it reuses."""

    path: str
    text: str
    listed: bool = True  # in the sitemap (not redirects or the 404 page)
    reuse: bool = False  # the previous build's file at this path is identical: linked instead of written


@dataclass(frozen=True)
class Deferred:
    """An output file made only when what it is made from changed since the last build; otherwise
    the previous build's file is kept (inputs: plain picklable data, digested with the code)."""

    inputs: object
    make: Callable[[], str]


def static_files(stylesheet: str, static: Path | None = None) -> dict[str, str | bytes]:
    """Return the stylesheet (already combined with the code-highlighting colours) and the
    static assets (scripts, icons) by site path."""
    files: dict[str, str | bytes] = {"assets/style.css": stylesheet}
    for asset in sorted(p for p in static.iterdir() if p.suffix in {".js", ".svg"}) if static else []:
        files[f"assets/{asset.name}"] = asset.read_bytes()
    if static and (static / "favicon.ico").is_file():
        files["favicon.ico"] = (static / "favicon.ico").read_bytes()  # browsers ask for it at the root
    return files


class Staging:
    """The next site, written file by file into a temporary folder beside `out` as pages are
    produced, then put live by commit(); leaving the block without commit removes it, so a
    failed or interrupted build leaves the previous site untouched.

    delta=True: only changed files are given (a page that reuses the previous file is skipped),
    and commit() moves them into `out`; otherwise the folder becomes the whole next site.
    """

    def __init__(self, out: Path, delta: bool = False) -> None:
        self.out, self.delta = out.absolute(), delta
        if self.out.exists() and not _is_replaceable(self.out):
            raise GeneratorError(f"refusing to replace {self.out}: it is not empty and was not built by encyclopedia (no {MARKER} file)")
        self.out.parent.mkdir(parents=True, exist_ok=True)
        for stale in [*self.out.parent.glob(f".{self.out.name}.new-*"), *self.out.parent.glob(f".{self.out.name}.old-*")]:
            shutil.rmtree(stale, ignore_errors=True)  # left behind by a build that was killed
        self.folder = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.new-", dir=self.out.parent))
        self.written: set[str] = set()
        self._made: set[Path] = {self.folder}
        self._moves: list[tuple[Path, str]] = []  # a delta's files, staged flat (no folder per page), and their paths

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)  # gone already after commit()

    def put(self, path: str, data: str | bytes | Path) -> None:
        """Write one file: text as UTF-8; a Path, an unchanged file of the previous build, is hard-linked."""
        parts = PurePosixPath(path)
        if parts.is_absolute() or ".." in parts.parts or not parts.parts:
            raise GeneratorError(f"refusing to write {path!r}: outside the output folder")
        if path in self.written:
            raise GeneratorError(f"two pages would be written to {path}")
        self.written.add(path)
        if self.delta:  # staged flat, moved to its path on commit
            target = self.folder / str(len(self._moves))
            self._moves.append((target, path))
        else:
            target = self.folder / path
        _put(target, data, self._made)

    def page(self, page: Page) -> None:
        if not (self.delta and page.reuse):
            self.put(page.path, self.out / page.path if page.reuse else page.text)

    def commit(self, search: bool = True, reuse_search: bool = False, removed: Iterable[str] = ()) -> None:
        """Put the next site live. A delta: move its files into out and delete `removed` (the
        old index stays). Whole: index the pages with Pagefind (or keep the old index when
        reuse_search says no indexed page changed), mark the folder as ours and swap it in."""
        if self.delta:
            _apply(self._moves, self.out, removed)
            return
        old_index = self.out / "pagefind"
        if search and reuse_search and old_index.is_dir():
            for file in sorted(p for p in old_index.rglob("*") if p.is_file()):
                _put(self.folder / "pagefind" / file.relative_to(old_index), file, self._made)
        elif search:
            _index_search(self.folder)
        (self.folder / MARKER).write_text("This folder is build output; it is replaced on every build.\n")
        os.chmod(self.folder, 0o755)
        _swap(self.folder, self.out)


def _put(target: Path, data: str | bytes | Path, made: set[Path]) -> None:
    if target.parent not in made:
        target.parent.mkdir(parents=True, exist_ok=True)
        made.add(target.parent)
    if isinstance(data, (str, bytes)):
        target.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return
    try:
        os.link(data, target)
    except OSError:  # another file system, or links not allowed
        shutil.copyfile(data, target)


def _apply(moves: list[tuple[Path, str]], out: Path, removed: Iterable[str]) -> None:
    """Move every staged file to its path under out, then delete the removed files and the
    folders they leave empty."""
    made: set[str] = set()
    for staged, path in moves:
        target = os.path.join(out, path)  # strings: a Path per file costs more than the move
        folder = os.path.dirname(target)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        os.replace(staged, target)
    for path in sorted(removed, reverse=True):
        if PurePosixPath(path).is_absolute() or ".." in PurePosixPath(path).parts:
            continue  # the list comes from the cache beside the output: never reach outside it
        gone = out / path
        gone.unlink(missing_ok=True)
        for parent in gone.parents:
            if parent == out or any(parent.iterdir()):
                break
            parent.rmdir()


def _index_search(folder: Path) -> None:
    """Run Pagefind over the entry pages (those marked data-pagefind-body) of a written site."""
    run = subprocess.run([sys.executable, "-m", "pagefind", "--site", str(folder), "--quiet"],
                         capture_output=True, text=True, check=False)
    if run.returncode != 0 or not (folder / "pagefind" / "pagefind.js").is_file():
        raise GeneratorError(f"search indexing with Pagefind failed: {(run.stderr or run.stdout).strip()[-500:]}")


def _is_replaceable(out: Path) -> bool:
    return out.is_dir() and (not any(out.iterdir()) or (out / MARKER).is_file())


def _swap(staging: Path, out: Path) -> None:
    """Put staging in place of out with renames, so readers never see a half-written site."""
    if not out.exists():
        staging.rename(out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    old.rmdir()
    out.rename(old)
    try:
        staging.rename(out)
    except BaseException:
        old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)
