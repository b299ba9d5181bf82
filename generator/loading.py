"""Read the content tree: YAML with source positions, validated into frozen models.

Every problem is collected with its file, line and column; nothing raises for bad
content. PyYAML's C loader composes the node tree; we build plain values from the
nodes ourselves so that duplicate keys and aliases are caught and every value keeps
its position.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import marshal
import re
import types
import typing
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from .errors import Problem
from .inputs import replace_file
from .pool import run_parallel
from .schema import (
    BRANCH_PATTERN,
    HTTPS_PATTERN,
    ID_PATTERN,
    PATH_PATTERN,
    REF_PATTERN,
    REPO_PATTERN,
    SLUG_PATTERN,
    Categories,
    Entry,
    Hub,
    Ledger,
    Reproduced,
    SampleLog,
    SampleLogs,
    SiteConfig,
)
from .signatures import check_signature

MAX_FILE_BYTES = 1_000_000
_STR = "tag:yaml.org,2002:str"
Loc = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

_PATTERN_NAMES = {
    SLUG_PATTERN: "lowercase letters and digits in words joined by '-'",
    ID_PATTERN: "an ID like MTF-0042",
    HTTPS_PATTERN: "an https:// URL without spaces",
    BRANCH_PATTERN: "a branch name such as main",
    REPO_PATTERN: "a GitHub repository as owner/name, e.g. pytorch/pytorch",
    REF_PATTERN: "a release tag such as v2.5.0 or a commit hash, not a branch",
    PATH_PATTERN: "a file path inside the repository, e.g. torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
    r"^[a-z0-9][a-z0-9._+-]*$": "lowercase letters, digits, '.', '_', '+' or '-'",
    r"^[A-Z][A-Z0-9_]*$": "an environment variable name in capitals",
    r"^[a-z0-9+#-]+$": "a lowercase language name such as python or bash",
}


@dataclass(frozen=True)
class SourceMap:
    """Positions (1-based line, column) of every key and value in one file."""

    path: str
    keys: dict[Loc, tuple[int, int]]
    values: dict[Loc, tuple[int, int]]
    digest: str = ""  # of the file's bytes: what a page built from it depends on

    def at(self, loc: Loc, *, key: bool = False) -> tuple[int, int]:
        """Return the position of a key (or its value), or of its nearest parent that exists."""
        table = self.keys if key else self.values
        while loc not in table and loc:
            loc, table = loc[:-1], self.values
        return table.get(loc, (1, 1))

    def problem(self, loc: Loc, code: str, message: str, *, key: bool = False) -> Problem:
        """Return a Problem pointing at loc."""
        line, col = self.at(loc, key=key)
        return Problem(self.path, line, col, format_loc(loc), message, code)


@dataclass(frozen=True)
class Source:
    """A validated model with where it came from."""

    path: str
    slug: str
    source: SourceMap


@dataclass(frozen=True)
class LoadedEntry(Source):
    entry: Entry


PER_ENTRY_LIMIT = 1 << 16  # results per_entry keeps of each function (an edit adds one per function)


def per_entry(fn: Callable[..., T]) -> Callable[..., T]:
    """Keep fn(item, *more)'s result by the entry's slug and file digest (and the hashable `more`):
    an entry's model is a function of its file's bytes, so a process that builds again and again
    (serve) works out each fact of an unchanged entry once."""
    kept: dict[tuple[Hashable, ...], T] = {}

    @functools.wraps(fn)
    def cached(item: LoadedEntry, *more: Hashable) -> T:
        if not item.source.digest:  # made in memory, not read from a file
            return fn(item, *more)
        key = (item.slug, item.source.digest, *more)
        try:
            return kept[key]
        except KeyError:
            if len(kept) >= PER_ENTRY_LIMIT:
                kept.clear()
            found = kept[key] = fn(item, *more)
            return found

    return cached


@dataclass(frozen=True)
class LoadedHub(Source):
    hub: Hub


@dataclass
class Content:
    """Everything read from content/, plus every problem found on the way."""

    root: Path
    categories: Categories | None = None
    categories_source: SourceMap | None = None
    site: SiteConfig = field(default_factory=SiteConfig)
    ledger: Ledger = field(default_factory=lambda: Ledger({}))
    ledger_source: SourceMap | None = None
    reproduced: Reproduced = field(default_factory=lambda: Reproduced({}))
    reproduced_source: SourceMap | None = None
    repro_scripts: dict[str, Path] = field(default_factory=dict)
    samples: list[tuple[SampleLog, str]] = field(default_factory=list)  # with each log's text
    entries: list[LoadedEntry] = field(default_factory=list)
    hubs: list[LoadedHub] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)  # slug -> path of an entry file that failed to load
    problems: list[Problem] = field(default_factory=list)


def describe_pattern(pattern: str) -> str:
    """Return what a value of a pattern-checked field looks like, in words."""
    return _PATTERN_NAMES.get(pattern, pattern)


def format_loc(loc: Loc) -> str:
    """Return a location as `symptoms[2].meaning`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


# What the cache keeps of one entry file, in types marshal can store (several times faster than
# pickle for these nested dicts and tuples): the entry's JSON, the source map's path, key and value
# positions and digest, and the file's own problems as tuples.
_Stored = tuple[str, str, dict[Loc, tuple[int, int]], dict[Loc, tuple[int, int]], str, list[tuple[str, int, int, str, str, str, bool]]]
_Valid = tuple[Entry, SourceMap, list[Problem]]


class EntryCache:
    """Validated entries of a previous run, by file and content digest, for one version of the
    generator: an unchanged entry file skips YAML and its checks, and keeps its positions for
    errors found later. Stored as each entry's JSON, which pydantic validates fastest."""

    def __init__(self, code: str, known: dict[tuple[str, str], _Stored] | None = None,
                 models: dict[tuple[str, str], _Valid] | None = None) -> None:
        self.code, self.known = code, known or {}
        self.models = models or {}  # entries already validated by this process (serve), by the same keys
        self.kept: dict[tuple[str, str], _Stored] = {}  # what this run read
        self.validated: dict[tuple[str, str], _Valid] = {}
        self.hits = 0

    def successor(self) -> EntryCache:
        """Return the cache for this process's next run: what this run read, as validated models."""
        return EntryCache(self.code, self.kept, self.validated)

    @staticmethod
    def load(path: Path, code: str) -> EntryCache:
        try:
            stored = marshal.loads(path.read_bytes())
            if isinstance(stored, tuple) and len(stored) == 2 and stored[0] == code and isinstance(stored[1], dict):
                return EntryCache(code, stored[1])
        except (OSError, EOFError, ValueError, TypeError):
            pass
        return EntryCache(code)

    def save(self, path: Path) -> None:
        """Store what this run read; nothing to do when every entry came from the cache."""
        if self.hits == len(self.kept) and self.kept.keys() == self.known.keys() and path.is_file():
            return
        replace_file(path, marshal.dumps((self.code, self.kept)))

    def find(self, path: Path, root: Path, shown: str, digest: str | None = None) -> _Valid | None:
        """Return the entry of an unchanged regular file inside root, with its own problems
        (digest: of the file's bytes, when the caller has read them; only a file that passed
        every check is ever kept, so a symbolic link or an oversized file finds nothing)."""
        if digest is None:
            resolved = path.resolve()
            if path.is_symlink() or not resolved.is_relative_to(root) or not resolved.is_file() or resolved.stat().st_size > MAX_FILE_BYTES:
                return None
            digest = hashlib.sha1(resolved.read_bytes()).hexdigest()
        key = (shown, digest)
        if key not in self.known:
            return None
        self.kept[key] = stored = self.known[key]
        self.hits += 1
        if key not in self.models:
            data, source_path, keys, values, digest, problems = stored
            self.models[key] = Entry.model_validate_json(data), SourceMap(source_path, keys, values, digest), [Problem(*p) for p in problems]
        self.validated[key] = self.models[key]
        return self.models[key]

    def keep(self, entry: Entry, source: SourceMap, problems: list[Problem]) -> None:
        key = (source.path, source.digest)
        self.kept[key] = (entry.model_dump_json(), source.path, source.keys, source.values, source.digest,
                          [(p.path, p.line, p.col, p.field, p.message, p.code, p.warning) for p in problems])
        self.validated[key] = entry, source, problems


def load_content(content_dir: Path, display_root: Path | None = None, cache: EntryCache | None = None, jobs: int = 1,
                 digests: dict[str, str] | None = None) -> Content:
    """Return the validated content of a content folder with every problem found (entry files
    not in the cache are read by `jobs` processes when there are many; digests: of files whose
    bytes the caller has read already, by path as a string)."""
    root = content_dir.resolve()
    base = (display_root or Path.cwd()).resolve()
    content = Content(root=content_dir)
    cat_path = content_dir / "categories.yaml"
    if cat_path.exists():
        loaded = _load_model(cat_path, root, base, Categories, content.problems)
        if loaded:
            content.categories, content.categories_source = loaded
    else:
        content.problems.append(Problem(display_path(cat_path, base), 1, 1, "", "file missing (expected the list of categories)", "E021"))
    site_path = content_dir / "site.yaml"
    if site_path.exists():
        loaded_site = _load_model(site_path, root, base, SiteConfig, content.problems)
        if loaded_site:
            content.site = loaded_site[0]
    ledger_path = content_dir / "ledger.yaml"
    if ledger_path.exists():
        loaded_ledger = _load_model(ledger_path, root, base, Ledger, content.problems)
        if loaded_ledger:
            content.ledger, content.ledger_source = loaded_ledger
    record = content_dir / "repro" / "reproduced.yaml"
    if record.exists():
        loaded_record = _load_model(record, root, base, Reproduced, content.problems)
        if loaded_record:
            content.reproduced, content.reproduced_source = loaded_record
    content.repro_scripts = {p.stem: p for p in sorted((content_dir / "repro").glob("*.py"))}
    samples_path = content_dir / "samples" / "samples.yaml"
    if samples_path.exists():
        loaded_samples = _load_model(samples_path, root, base, SampleLogs, content.problems)
        if loaded_samples:
            content.samples = _read_samples(samples_path.parent, root, *loaded_samples, content.problems)
    paths = list(_yaml_files(content_dir / "failures", base, content.problems))
    digests = digests or {}
    shown = display_path(content_dir / "failures", base) + "/"  # of every entry file: display_path's, made once
    shown = "" if shown == "./" else shown
    found = {path: cache.find(path, root, shown + path.name, digests.get(str(path))) if cache else None for path in paths}
    misses = [path for path in paths if found[path] is None]  # read and checked in parallel when there are many
    read = dict(zip(misses, run_parallel([functools.partial(_load_entry, path, root, base) for path in misses], jobs)))
    for path in paths:
        valid = found[path]
        if valid is None:
            problems, valid = read[path]
            content.problems.extend(problems)
            if valid is None:
                content.unreadable[path.stem] = display_path(path, base)
                continue
            if cache:
                cache.keep(*valid)
        entry, source, own = valid
        content.entries.append(LoadedEntry(source.path, path.stem, source, entry))
        content.problems.extend(own)
    for path in _yaml_files(content_dir / "hubs", base, content.problems):
        loaded_hub = _load_model(path, root, base, Hub, content.problems)
        if loaded_hub:
            content.hubs.append(LoadedHub(loaded_hub[1].path, path.stem, loaded_hub[1], loaded_hub[0]))
    return content


def _load_entry(path: Path, root: Path, base: Path) -> tuple[list[Problem], tuple[Entry, SourceMap, list[Problem]] | None]:
    """Return the problems of reading one entry file and, if it is valid, the entry, its source
    map and the problems of its signatures."""
    problems: list[Problem] = []
    loaded = _load_model(path, root, base, Entry, problems)
    if loaded is None:
        return problems, None
    entry, source = loaded
    own = [source.problem(("signatures", i, *sub), code, message)
           for i, sig in enumerate(entry.signatures) for sub, code, message in check_signature(sig)]
    return problems, (entry, source, own)


SAMPLE_LIMIT = 64 * 1024


def _read_samples(folder: Path, root: Path, samples: SampleLogs, source: SourceMap,
                  problems: list[Problem]) -> list[tuple[SampleLog, str]]:
    """Return each sample log with its text; a missing, outside, large or non-UTF-8 one is a problem at its `file`."""
    read = []
    for i, sample in enumerate(samples.samples):
        path = folder / sample.file
        if path.is_symlink() or not path.resolve().is_relative_to(root) or not path.is_file():
            reason = "is not a regular file inside the content folder (expected a log beside samples.yaml)"
        elif (size := path.stat().st_size) > SAMPLE_LIMIT:
            reason = f"is {size:,} bytes (expected at most {SAMPLE_LIMIT:,})"
        else:
            try:
                read.append((sample, path.read_bytes().decode("utf-8")))
                continue
            except UnicodeDecodeError:
                reason = "is not UTF-8 text (expected a log as text)"
        problems.append(source.problem(("samples", i, "file"), "E054", f"{sample.file!r} {reason}"))
    return read


def display_path(path: Path, base: Path | None = None) -> str:
    """Return a path as shown in messages: relative to base (default: the working folder) when inside it."""
    base = base or Path.cwd().resolve()  # callers pass a resolved base: resolving costs a stat per part
    absolute = path.absolute()
    try:
        return absolute.relative_to(base).as_posix()
    except ValueError:
        return absolute.as_posix()


def _yaml_files(folder: Path, base: Path, problems: list[Problem]) -> Iterator[Path]:
    if not folder.is_dir():
        return
    for path in sorted(folder.iterdir(), key=lambda path: path.name):
        if path.name.startswith("."):
            continue
        if path.suffix != ".yaml" or not re.fullmatch(SLUG_PATTERN, path.stem):
            problems.append(Problem(display_path(path, base), 1, 1, "", f"file name {path.name!r} is not a slug (expected lowercase words joined by '-', ending in .yaml)", "E007"))
            continue
        yield path


def _load_model(path: Path, root: Path, base: Path, model: type[M], problems: list[Problem]) -> tuple[M, SourceMap] | None:
    shown = display_path(path, base)
    data = _read_yaml(path, root, shown, problems)
    if data is None:
        return None
    value, source = data
    try:
        return model.model_validate(value), source
    except ValidationError as exc:
        problems.extend(_problem_from_pydantic(err, model, source) for err in exc.errors())
        return None


def _read_yaml(path: Path, root: Path, shown: str, problems: list[Problem]) -> tuple[Any, SourceMap] | None:
    resolved = path.resolve()
    if path.is_symlink() or not resolved.is_relative_to(root):
        problems.append(Problem(shown, 1, 1, "", f"refers to {resolved.as_posix()}, outside the content folder (expected a regular file inside it)", "E006"))
        return None
    if not resolved.is_file():
        problems.append(Problem(shown, 1, 1, "", "is not a regular file (expected a YAML file)", "E007"))
        return None
    size = resolved.stat().st_size
    if size > MAX_FILE_BYTES:
        problems.append(Problem(shown, 1, 1, "", f"is {size:,} bytes (expected at most {MAX_FILE_BYTES:,})", "E005"))
        return None
    raw = resolved.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        problems.append(Problem(shown, line, col, "", f"byte 0x{raw[exc.start]:02x} is not UTF-8 (expected UTF-8 text)", "E004"))
        return None
    text = text.removeprefix("\ufeff")
    try:
        node = yaml.compose(text, Loader=yaml.CSafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        what = exc.problem or "invalid YAML"
        if exc.context and exc.context_mark and exc.context_mark is not mark:
            what += f" {exc.context} that starts at {exc.context_mark.line + 1}:{exc.context_mark.column + 1}"
        problems.append(Problem(shown, line, col, "", f"YAML syntax error: {what} (expected valid YAML)", "E001"))
        return None
    except yaml.YAMLError as exc:
        problems.append(Problem(shown, 1, 1, "", f"YAML error: {exc} (expected valid YAML)", "E001"))
        return None
    builder = _Builder(shown)
    if node is None:
        problems.append(Problem(shown, 1, 1, "", "file is empty (expected a mapping of fields)", "E010"))
        return None
    value = builder.build(node, ())
    if builder.problems:
        problems.extend(builder.problems)
        return None
    return value, SourceMap(shown, builder.keys, builder.values, hashlib.sha1(raw).hexdigest())


class _Builder:
    """Turns a composed YAML node tree into plain values, recording positions."""

    _constructor = yaml.constructor.SafeConstructor()

    def __init__(self, path: str) -> None:
        self.path = path
        self.keys: dict[Loc, tuple[int, int]] = {}
        self.values: dict[Loc, tuple[int, int]] = {}
        self.problems: list[Problem] = []
        self._seen: set[int] = set()

    def build(self, node: yaml.Node, loc: Loc) -> Any:
        pos = (node.start_mark.line + 1, node.start_mark.column + 1)
        if id(node) in self._seen:
            # An alias shares the anchored node and its mark; point at where it is used instead.
            where: tuple[int, int] = self.keys.get(loc) or self.values.get(loc[:-1], pos)
            self.problems.append(Problem(self.path, *where, format_loc(loc), "uses a YAML alias (expected the value written out)", "E003"))
            return None
        self.values[loc] = pos
        self._seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, loc)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*loc, i)) for i, item in enumerate(node.value)]
        if node.tag == _STR:
            return node.value  # most values: skip the generic constructor
        if node.tag == "tag:yaml.org,2002:merge" or node.tag not in self._constructor.yaml_constructors:
            self.problems.append(Problem(self.path, *pos, format_loc(loc), f"unsupported YAML tag {node.tag!r} (expected plain values)", "E001"))
            return None
        try:
            return self._constructor.construct_object(node)
        except (yaml.YAMLError, ValueError) as exc:
            self.problems.append(Problem(self.path, *pos, format_loc(loc), f"cannot read value: {exc} (expected a plain value)", "E001"))
            return None

    def _mapping(self, node: yaml.MappingNode, loc: Loc) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            kpos = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if key_node.tag == "tag:yaml.org,2002:merge":
                self.problems.append(Problem(self.path, *kpos, format_loc(loc), "uses a YAML merge key '<<' (expected fields written out)", "E003"))
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self.problems.append(Problem(self.path, *kpos, format_loc(loc), "has a key that is not text (expected field names)", "E012"))
                continue
            key = str(key_node.value)
            if key in out:
                first = self.keys[(*loc, key)]
                self.problems.append(Problem(self.path, *kpos, format_loc((*loc, key)), f"duplicate key (first defined at line {first[0]}; expected each key once)", "E002"))
                continue
            self.keys[(*loc, key)] = kpos
            out[key] = self.build(value_node, (*loc, key))
        return out


def _problem_from_pydantic(err: ErrorDetails, model: type[BaseModel], source: SourceMap) -> Problem:
    loc: Loc = tuple(err["loc"])
    kind = err["type"]
    if loc and loc[-1] == "[key]":  # a mapping key (in the ledger) has the wrong format
        loc = loc[:-1]
        return source.problem(loc, "E013", f"{loc[-1]!r} has the wrong format (expected {_PATTERN_NAMES.get(err.get('ctx', {}).get('pattern', ''), 'a valid key')})", key=True)
    annotation = _annotation_at(model, loc)
    given = err.get("input")
    if kind == "missing":
        return source.problem(loc, "E010", f"field required (expected {_describe(annotation)})")
    if kind == "extra_forbidden":
        allowed = list(_annotation_at(model, loc[:-1]).model_fields)
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"expected one of: {', '.join(allowed)}"
        return source.problem(loc, "E011", f"unknown field {loc[-1]!r} ({hint})", key=True)
    if kind.endswith("_type") or kind in {"date_from_datetime_parsing", "date_parsing", "date_from_datetime_inexact"}:
        return source.problem(loc, "E012", f"got {_kind_of(given)} (expected {_describe(annotation)})")
    if kind == "literal_error":
        return source.problem(loc, "E013", f"{given!r} is not allowed (expected {_describe(annotation)})")
    if kind == "string_pattern_mismatch":
        pattern = err.get("ctx", {}).get("pattern", "")
        return source.problem(loc, "E013", f"{given!r} has the wrong format (expected {_PATTERN_NAMES.get(pattern, pattern)})")
    if kind == "string_too_short":
        return source.problem(loc, "E013", "is empty (expected text)")
    if kind in {"string_too_long", "too_long"}:
        return source.problem(loc, "E013", f"is too long (expected at most {err.get('ctx', {}).get('max_length')} {'characters' if kind == 'string_too_long' else 'items'})")
    if kind == "too_short":
        return source.problem(loc, "E013", f"has too few items (expected at least {err.get('ctx', {}).get('min_length')})")
    if kind == "value_error":
        return source.problem(loc, "E013", f"{given!r} {err.get('ctx', {}).get('error', err['msg'])!s}")
    return source.problem(loc, "E013", f"{err['msg']} (got {given!r:.60})")


def _unwrap(annotation: Any) -> Any:
    """Strip Annotated[...] and Optional[...] down to the core type."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            annotation = args[0] if len(args) == 1 else annotation
            if len(args) != 1:
                return annotation
        else:
            return annotation


def _annotation_at(model: type[BaseModel], loc: Loc) -> Any:
    annotation: Any = model
    for part in loc:
        annotation = _unwrap(annotation)
        if isinstance(part, int):
            args = typing.get_args(annotation)
            annotation = args[0] if args else None
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel) and part in annotation.model_fields:
            annotation = annotation.model_fields[part].annotation
        else:
            return None
    return _unwrap(annotation)


def _describe(annotation: Any) -> str:
    annotation = _unwrap(annotation)
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return "one of: " + ", ".join(str(a) for a in typing.get_args(annotation))
    if origin is list:
        return "a list"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        required = [n for n, f in annotation.model_fields.items() if f.is_required()]
        return "a mapping with " + ", ".join(required) if required else "a mapping"
    names = {str: "text", int: "a whole number", dict: "a mapping"}
    if annotation in names:
        return names[annotation]
    if getattr(annotation, "__name__", "") == "date":
        return "a date such as 2026-01-31"
    return "a value of the documented type"


def _kind_of(value: Any) -> str:
    if value is None:
        return "nothing"
    names = {bool: "true/false (quote it for text)", int: "a number", float: "a number", str: f"text {value!r:.40}", list: "a list", dict: "a mapping (quote text that contains ': ')"}
    return names.get(type(value), type(value).__name__)
