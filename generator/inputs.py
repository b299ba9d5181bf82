"""What a build is given: its options, and a fingerprint of every file it reads and of the
generator itself (with each content file's own digest, and the digest of plain data that the
caches compare). Standard library only, so that a build with nothing changed answers before
pydantic, Jinja and Pygments are imported (the stamp beside the output holds the fingerprint
of the inputs the site was last built from)."""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

GENERATOR = Path(__file__).resolve().parent
TEMPLATES = GENERATOR.parent / "templates"
MARKER = ".encyclopedia-build"  # in every folder the generator wrote
VERSION = 6  # of the caches and the stamp kept beside the output


@dataclass(frozen=True)
class BuildOptions:
    content: Path
    out: Path
    site: dict[str, str] = field(default_factory=dict)  # base_url, repo_url, repo_branch in place of content/site.yaml's
    search: bool = True
    jobs: int = 1
    clean: bool = False
    drafts: bool = False
    templates: Path = TEMPLATES  # templates, stylesheet and assets

    def beside_out(self, kind: str) -> Path:
        """Return the path of one of the files kept beside the output (cache, entries, graph, inputs, templates)."""
        return self.out.parent / f".{self.out.name}.{kind}"


@dataclass(frozen=True)
class Fingerprint:
    code: str  # the generator's code, templates and assets
    inputs: str  # the code, the content folder and the options that change the output
    files: dict[str, FileDigest] = field(default_factory=dict, compare=False)  # each content file's, by path (a string: a Path per file costs more than its stat)


FileDigest = tuple[tuple[int, int, int], str]  # (mtime_ns, size, inode) when read, digest of the bytes


def replace_file(path: Path, data: bytes) -> None:
    """Write a file kept beside the output whole, through a temporary name of its own, so that a
    killed build never leaves half of one."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def data_digest(data: object) -> str:
    """Return a digest of plain data (tuples, lists, dicts, strings, numbers): equal values give
    equal digests whether or not they share objects, since they are pickled without a memo."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=4)
    pickler.fast = True
    pickler.dump(data)
    return hashlib.sha1(buffer.getvalue()).hexdigest()


def files_digest(paths: list[Path], extra: str, files: dict[str, FileDigest] | None = None,
                 known: dict[str, FileDigest] | None = None) -> str:
    """Return a digest of every file under paths (names and bytes) and extra; each file's own
    digest goes into files. A file whose mtime, size and inode are those `known` (a previous
    call's files, in `serve`) recorded is not read again."""
    h = hashlib.sha1(f"{VERSION}:{extra}".encode())
    for root in paths:
        for name, file, status in _regular_files(root):
            stamp = (status.st_mtime_ns, status.st_size, status.st_ino)
            seen = known.get(file) if known else None
            digest = seen[1] if seen and seen[0] == stamp else hashlib.sha1(Path(file).read_bytes()).hexdigest()
            if files is not None:
                files[file] = stamp, digest
            h.update(name.encode() + b"\0" + digest.encode() + b"\0")
    return h.hexdigest()


def _regular_files(root: Path) -> Iterator[tuple[str, str, os.stat_result]]:
    """Yield (name relative to root, path, status) of every regular file under root: a folder's
    files by name, then its subfolders by name; __pycache__ is left out."""
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        where = os.path.relpath(folder, root).replace(os.sep, "/")
        for name in sorted(names):
            path = os.path.join(folder, name)
            try:
                status = os.stat(path)
            except OSError:  # a broken link
                continue
            if stat.S_ISREG(status.st_mode):
                yield (name if where == "." else f"{where}/{name}"), path, status


def fingerprint(options: BuildOptions, known: dict[str, FileDigest] | None = None) -> Fingerprint:
    """Return the fingerprint of what a build with these options reads (known: the content
    files of a previous fingerprint, whose unchanged files are not read again)."""
    code = files_digest([options.templates, GENERATOR], "")
    files: dict[str, FileDigest] = {}
    extra = f"{code}:{sorted(options.site.items())}:{options.search}:{options.drafts}"
    return Fingerprint(code, files_digest([options.content], extra, files, known), files)


def is_up_to_date(options: BuildOptions, seen: Fingerprint) -> bool:
    """Return whether the output folder is the build of exactly these inputs."""
    try:
        stamp = options.beside_out("inputs").read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return False
    return not options.clean and stamp == seen.inputs and (options.out / MARKER).is_file()
