"""Write the rendered site: deterministic bytes, into a temporary folder swapped in atomically."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .errors import GeneratorError

MARKER = ".encyclopedia-build"


@dataclass(frozen=True)
class Page:
    """One output file: its path under the site root and its text, or the unchanged file it reuses."""

    path: str
    text: str
    listed: bool = True  # in the sitemap (not redirects or the 404 page)
    reuse: Path | None = None  # an identical file of the previous build, linked instead of written


def collect_files(pages: Iterable[Page], stylesheet: str, static: Path | None = None,
                  extra: dict[str, str] | None = None) -> dict[str, str | bytes | Path]:
    """Return every output file by site path, refusing two pages with one path.

    Static assets (scripts) are copied from `static` into assets/; the stylesheet is
    given already combined with the code-highlighting colours.
    """
    files: dict[str, str | bytes | Path] = {"assets/style.css": stylesheet}
    for asset in sorted(p for p in static.iterdir() if p.suffix in {".js", ".svg"}) if static else []:
        files[f"assets/{asset.name}"] = asset.read_bytes()
    if static and (static / "favicon.ico").is_file():
        files["favicon.ico"] = (static / "favicon.ico").read_bytes()  # browsers ask for it at the root
    for page in [*pages, *(Page(path, text) for path, text in sorted((extra or {}).items()))]:
        path = PurePosixPath(page.path)
        if path.is_absolute() or ".." in path.parts or not path.parts:
            raise GeneratorError(f"refusing to write {page.path!r}: outside the output folder")
        if page.path in files:
            raise GeneratorError(f"two pages would be written to {page.path}")
        files[page.path] = page.reuse or page.text  # encoded when written: one copy in memory
    return files


def write_site(files: dict[str, str | bytes | Path], out: Path, search: bool = True, reuse_search: bool = False) -> None:
    """Write files into out atomically: a failed write leaves the previous site untouched.

    Text is written as UTF-8. A file given as a Path is an unchanged file of the previous build: it is hard-linked,
    not rewritten. With search, Pagefind indexes the written pages into pagefind/ before
    the swap, unless reuse_search says no indexed page changed and the old index is kept.
    """
    out = out.absolute()
    if out.exists() and not _is_replaceable(out):
        raise GeneratorError(f"refusing to replace {out}: it is not empty and was not built by encyclopedia (no {MARKER} file)")
    out.parent.mkdir(parents=True, exist_ok=True)
    for stale in [*out.parent.glob(f".{out.name}.new-*"), *out.parent.glob(f".{out.name}.old-*")]:
        shutil.rmtree(stale, ignore_errors=True)  # left behind by a build that was killed
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    try:
        made: set[Path] = set()
        for rel in sorted(files):
            _put(staging / rel, files[rel], made)
        old_index = out / "pagefind"
        if search and reuse_search and old_index.is_dir():
            for file in sorted(p for p in old_index.rglob("*") if p.is_file()):
                _put(staging / "pagefind" / file.relative_to(old_index), file, made)
        elif search:
            _index_search(staging)
        (staging / MARKER).write_text("This folder is build output; it is replaced on every build.\n")
        os.chmod(staging, 0o755)
        _swap(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


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
