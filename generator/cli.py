"""The `encyclopedia` command: the only place that prints problems and picks exit codes.

Each command imports the stages it runs when it runs: `build` with nothing changed answers
from the inputs' fingerprint before pydantic, Jinja and Pygments are loaded.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from .errors import RULES, ContentError, GeneratorError, Problem, Waiting
from .inputs import TEMPLATES, BuildOptions, fingerprint, is_up_to_date
from .scaffold import DEFAULT_CATEGORY, draft_entry, next_id, signature_key, slug_from_title

EXPORT_FORMATS = ("mtail", "prometheus-rules", "grep")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="encyclopedia", description="Build and check the ML Training Failure Encyclopedia.")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="validate the content without writing anything")
    check.add_argument("--content", type=Path, default=Path("content"), help="content folder (default: ./content)")
    check.add_argument("--strict", action="store_true", help="treat content-quality warnings as errors")
    check.add_argument("--format", choices=["text", "github"], default="text", help="github: GitHub Actions annotations")
    check.add_argument("--explain", metavar="CODE", help="explain one rule, e.g. E012, and exit")
    new = sub.add_parser("new", help="write a new draft entry with every section")
    new.add_argument("title", nargs="?", help="the entry's title, e.g. \"NCCL watchdog timeout\" (default with --from-log: the line's message)")
    new.add_argument("--from-log", type=Path, metavar="LOG", help="take the first error signature's example from a log (with --line)")
    new.add_argument("--line", type=int, metavar="N", help="the line of LOG that shows the failure (1 = the first line)")
    new.add_argument("--category", default=DEFAULT_CATEGORY, help="category slug (default: distributed-training)")
    new.add_argument("--content", type=Path, default=Path("content"), help="content folder (default: ./content)")
    schema = sub.add_parser("schema", help="write the JSON Schema of an entry, for editors")
    schema.add_argument("--out", type=Path, default=Path("content/entry.schema.json"), help="where (default: content/entry.schema.json)")
    build = sub.add_parser("build", help="validate the content and write the site")
    build.add_argument("--content", type=Path, default=Path("content"), help="content folder (default: ./content)")
    build.add_argument("--out", type=Path, default=Path("site"), help="output folder (default: ./site)")
    build.add_argument("--no-search", action="store_true", help="skip the Pagefind search index")
    build.add_argument("--quiet", action="store_true", help="no progress report")
    build.add_argument("--clean", action="store_true", help="render every page, ignoring the incremental cache")
    build.add_argument("--timings", action="store_true", help="print how long each stage took")
    build.add_argument("--drafts", action="store_true", help="also publish draft entries (left out of the site, search, API, feed and sitemap by default)")
    build.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes that render pages (default: all cores)")
    build.add_argument("--base-url", help="where the site is published, e.g. https://example.org/encyclopedia/ (default: base_url in content/site.yaml)")
    build.add_argument("--repo-url", help="the repository on GitHub, e.g. https://github.com/owner/name, for the edit and report links (default: repo_url in content/site.yaml)")
    build.add_argument("--repo-branch", help="the branch the edit links open (default: repo_branch in content/site.yaml, else main)")
    serve = sub.add_parser("serve", help="build, serve on 127.0.0.1 and rebuild and reload on every change")
    serve.add_argument("--content", type=Path, default=Path("content"), help="content folder (default: ./content)")
    serve.add_argument("--out", type=Path, default=Path("site"), help="output folder (default: ./site)")
    serve.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0 picks a free one)")
    serve.add_argument("--no-search", action="store_true", help="skip the Pagefind search index (faster rebuilds)")
    serve.add_argument("--no-drafts", action="store_true", help="leave draft entries out, as the published site does (default: show them with a banner)")
    ledger = sub.add_parser("ledger", help="record every live ID and slug in content/ledger.yaml (append-only)")
    ledger.add_argument("--content", type=Path, default=Path("content"), help="content folder (default: ./content)")
    verify = sub.add_parser("verify-repro", help="run the reproduction scripts and record which really reproduce their entry")
    verify.add_argument("slugs", nargs="*", metavar="SLUG", help="entries to verify (default: every script in content/repro/)")
    verify.add_argument("--content", type=Path, default=Path("content"), help="content folder (default: ./content)")
    verify.add_argument("--python", default=sys.executable, help="a Python with torch installed (default: this one)")
    verify.add_argument("--timeout", type=float, default=180.0, help="seconds allowed per script (default: 180)")
    diagnose = sub.add_parser("diagnose", help="match a log against every error signature; nothing leaves this machine")
    diagnose.add_argument("logs", nargs="*", default=["-"], metavar="LOG", help="log files, or - for standard input (default)")
    where = diagnose.add_mutually_exclusive_group()
    where.add_argument("--content", type=Path, help="content folder (default: ./content, else the one this tool was installed from)")
    where.add_argument("--signatures", type=Path, metavar="FILE", help="a built site's api/signatures.json instead of a content folder")
    diagnose.add_argument("--json", action="store_true", help="print the result as JSON")
    diagnose.add_argument("--top", type=int, default=5, help="how many entries to show (default: 5)")
    export = sub.add_parser("export", help="write the error signatures for a log pipeline (mtail, Prometheus alerting rules, grep)")
    export.add_argument("--format", choices=EXPORT_FORMATS, required=True,
                        help="mtail: a program counting matching lines; prometheus-rules: alerts on its counters; grep: a grep -E -f file")
    export.add_argument("--out", type=Path, help="file to write (default: standard output)")
    export.add_argument("--content", type=Path, help="content folder (default: ./content, else the one this tool was installed from)")
    export.add_argument("--base-url", help="where the site is published, for the alerts' links (default: base_url in content/site.yaml)")
    return parser


def _check(args: argparse.Namespace) -> int:
    if args.explain:
        rule = RULES.get(args.explain.upper())
        if rule is None:
            raise GeneratorError(f"no rule {args.explain!r} (expected one of: {', '.join(RULES)})")
        print(f"{rule.code} {rule.name}\n\nWhat it protects: {rule.protects}\n\nHow to fix it: {rule.fix}")
        return 0
    from .build import load_catalog
    from .quality import check_quality

    try:
        catalog = load_catalog(args.content)
        warnings = check_quality(catalog)
        if args.strict and warnings:
            raise ContentError(warnings)
    except ContentError as exc:
        _report(exc.problems, args.format, exc.waiting)
        print(f"{exc}", file=sys.stderr)
        return 1
    _report(warnings, args.format)
    print(f"ok: {len(catalog.entries)} entries, {len(catalog.hubs)} hubs, {len(warnings)} warnings")
    return 0


def _report(problems: list[Problem], style: str, waiting: list[Waiting] | None = None) -> None:
    """Print problems as `path:line:col: ...` lines, or as GitHub Actions annotations, then one line
    per unreadable entry saying how many references wait on it."""
    for p in problems:
        if style == "github":
            level = "warning" if p.warning else "error"
            rule = RULES[p.code]
            message = (f"{p.field}: {p.message}" if p.field else p.message).replace("%", "%25").replace("\n", "%0A")
            print(f"::{level} file={p.path},line={p.line},col={p.col},title={rule.code} {rule.name}::{message}")
        else:
            print(p.format() + (" (warning)" if p.warning else ""), file=sys.stderr)
    for w in waiting or []:
        if style == "github":
            print(f"::notice file={w.path},line=1,col=1,title=references waiting::{w.format().removeprefix(w.path + ': ')}")
        else:
            print(w.format(), file=sys.stderr)


def _log_line(log: Path, number: int | None) -> str:
    """Return line `number` of a log (1-based), for a proposed entry's first signature."""
    if number is None or number < 1:
        raise GeneratorError("--from-log needs --line N (the line that shows the failure, 1 = the first line)")
    try:
        with log.open("rb") as f:
            for i, raw in enumerate(f, 1):
                if i == number:
                    line = raw.decode("utf-8", errors="replace").strip()
                    if not line:
                        raise GeneratorError(f"{log}:{number}: the line is empty (expected the line that shows the failure)")
                    return line
    except OSError as exc:
        raise GeneratorError(f"{log}: cannot read the log ({exc.strerror})") from exc
    raise GeneratorError(f"{log}: has fewer than {number} lines")


def _new(args: argparse.Namespace) -> int:
    line = _log_line(args.from_log, args.line) if args.from_log else None
    if args.title is None and line is None:
        raise GeneratorError("a title is needed (or --from-log LOG --line N to start from a log line)")
    args.title = args.title or signature_key(line or "")[:80]
    from .build import load_catalog

    catalog = load_catalog(args.content)
    if args.category not in catalog.categories:
        raise GeneratorError(f"--category {args.category!r} is not a category (expected one of: {', '.join(sorted(catalog.categories))})")
    slug = slug_from_title(args.title)
    if not slug:
        raise GeneratorError(f"{args.title!r} has no letters or digits to make a slug from")
    path = args.content / "failures" / f"{slug}.yaml"
    if path.exists() or catalog.resolve(slug):
        raise GeneratorError(f"{path} already exists or {slug!r} is taken; choose another title")
    entry_id = next_id(set(catalog.ids) | set(catalog.ledger.root))
    path.write_text(draft_entry(entry_id, args.title, args.category, datetime.date.today(), line), encoding="utf-8")
    print(f"wrote {path} ({entry_id}); fill it in, then run: encyclopedia check --strict")
    return _ledger(args)


def _schema(args: argparse.Namespace) -> int:
    from .api import entry_schema_json

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(entry_schema_json(), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


def _build(args: argparse.Namespace) -> int:
    site = {"base_url": args.base_url, "repo_url": args.repo_url, "repo_branch": args.repo_branch}
    options = BuildOptions(args.content, args.out, {k: v for k, v in site.items() if v is not None}, not args.no_search,
                           args.jobs, args.clean, args.drafts)
    seen = fingerprint(options)
    result = None
    if not is_up_to_date(options, seen):
        from .build import Progress, build  # the heavy stack, imported only when there is work

        result = build(options, Progress(enabled=not args.quiet and sys.stderr.isatty()), seen)
    if result is None or result.up_to_date:
        print(f"{args.out}/ is up to date")
        return 0
    print(f"built {result.entries} entries ({result.rendered} of {result.pages} pages rendered) into {args.out}/ "
          f"(open {args.out / 'index.html'})")
    if args.timings:
        for name, seconds in result.timings:
            print(f"{seconds:8.3f} s  {name}", file=sys.stderr)
        print(f"{result.cached} of {result.entries} entries unchanged, taken from the cache", file=sys.stderr)
    return 0


def _serve(args: argparse.Namespace) -> int:
    from .build import BuildResult, Memory, build, keep_beside
    from .serve import serve

    def ready(url: str) -> None:
        print(f"serving {args.out}/ on {url} (Ctrl-C stops)", flush=True)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    memory = Memory(serving=True)
    options = BuildOptions(args.content, args.out, search=not args.no_search, jobs=os.cpu_count() or 1, drafts=not args.no_drafts)

    def rebuild(shown: Callable[[], None]) -> BuildResult:
        return build(options, memory=memory, shown=shown)

    # Both signals stop serve as Ctrl-C does, so that its caches are written; SIGINT too, since a shell
    # without job control starts a background job with SIGINT ignored.
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, signal.default_int_handler)
    serve(rebuild, [args.content, TEMPLATES], args.out, "127.0.0.1", args.port, log, ready)
    keep_beside(options, memory)
    return 0


LEDGER_HEADER = """\
# Every entry ID ever published, with every slug it was published under.
# Append-only: `encyclopedia ledger` adds new IDs and slugs; `encyclopedia check`
# fails when one of them no longer leads to its entry (add the old slug to the
# entry's `aliases:` when renaming it).
"""


def _ledger(args: argparse.Namespace) -> int:
    from .build import load_catalog

    catalog = load_catalog(args.content)
    recorded = {entry_id: list(slugs) for entry_id, slugs in catalog.ledger.root.items()}
    added = 0
    for slug, item in sorted(catalog.entries.items()):
        slugs = recorded.setdefault(item.entry.id, [])
        if slug not in slugs:
            slugs.append(slug)
            added += 1
    lines = [f"{entry_id}: [{', '.join(slugs)}]" for entry_id, slugs in sorted(recorded.items())]
    (args.content / "ledger.yaml").write_text(LEDGER_HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"recorded {added} new slug{'s' * (added != 1)}; the ledger holds {len(recorded)} IDs")
    return 0


def _verify_repro(args: argparse.Namespace) -> int:
    from .build import load_catalog
    from .repro import run_reproduction, torch_version

    catalog = load_catalog(args.content)
    unknown = [slug for slug in args.slugs if slug not in catalog.repro_scripts]
    if unknown:
        raise GeneratorError(f"no reproduction script for: {', '.join(unknown)} (expected content/repro/<slug>.py)")
    # Scripts run in scratch folders: a relative interpreter path is made absolute here.
    python = os.path.abspath(args.python) if os.sep in args.python else args.python  # a bare name is found on PATH
    version = torch_version(python)
    if version is None:
        print(f"skipped: torch is not importable by {args.python}; install it (pip install torch==2.13.0) or pass --python")
        return 0
    records = {slug: {"torch": r.torch, "device": r.device} for slug, r in catalog.reproduced.items()}
    failed = 0
    for slug in args.slugs or sorted(catalog.repro_scripts):
        result = run_reproduction(slug, catalog.repro_scripts[slug], catalog.entries[slug].entry.signatures, python, args.timeout)
        if result.matched is not None:
            records[slug] = {"torch": version, "device": "cpu"}
            print(f"ok   {slug} ({result.seconds:.1f} s): {result.matched.strip()[:150]}")
        else:
            records.pop(slug, None)
            failed += 1
            print(f"FAIL {slug} ({result.seconds:.1f} s): no output line matched its signatures; output ended with:\n{result.output_tail}")
    lines = [f"{slug}: {{torch: \"{r['torch']}\", device: {r['device']}}}" for slug, r in sorted(records.items())]
    (args.content / "repro" / "reproduced.yaml").write_text(REPRO_HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(records)} entries reproduced with torch {version}; {failed} failed")
    return 1 if failed else 0


REPRO_HEADER = """\
# Written by `encyclopedia verify-repro`: entries whose content/repro/<slug>.py really ran
# and printed a line that the entry's own signatures match, and the torch it ran with.
"""
CHUNK = 1 << 20


def _chunks(name: str) -> Iterator[bytes]:
    """Yield a log's raw bytes in chunks of CHUNK, from a file or standard input."""
    if name == "-":
        yield from iter(lambda: sys.stdin.buffer.read(CHUNK), b"")
        return
    with open(name, "rb") as f:
        yield from iter(lambda: f.read(CHUNK), b"")


def _diagnose(args: argparse.Namespace) -> int:
    from .answers import diagnosis_json, format_diagnosis
    from .api import signature_data
    from .build import load_catalog
    from .diagnosis import SignatureIndex, scan

    for name in args.logs:
        if name != "-" and not Path(name).is_file():
            raise GeneratorError(f"{name}: no such log file")
    payload = _signature_payload(args.signatures) if args.signatures else signature_data(load_catalog(_content_folder(args.content), drafts=False))
    result = scan(SignatureIndex(payload), ((name, _chunks(name)) for name in args.logs))
    search = str(payload.get("site_url", "")) + "search/?q="
    print(json.dumps(diagnosis_json(result), indent=2) if args.json else format_diagnosis(result, args.top, search))
    return 0 if result.candidates else 1


def _export(args: argparse.Namespace) -> int:
    from .build import load_catalog, site_with
    from .export import export

    catalog = load_catalog(_content_folder(args.content), drafts=False)
    catalog.site = site_with(catalog.site, {"base_url": args.base_url} if args.base_url else {})
    text = export(catalog, args.format)
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _content_folder(given: Path | None) -> Path:
    """Return the content folder to read (diagnose, export): the one given, ./content, or the one installed beside this package."""
    if given is not None:
        return given
    for candidate in (Path("content"), Path(__file__).resolve().parent.parent / "content"):
        if candidate.is_dir():
            return candidate
    raise GeneratorError("no content folder here or beside the installed tool (expected --content DIR, "
                         "or --signatures FILE with a built site's api/signatures.json)")


def _signature_payload(path: Path) -> dict[str, object]:
    """Return the signature payload of a built site (its api/signatures.json)."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GeneratorError(f"{path}: cannot read signatures ({exc}; expected a built site's api/signatures.json)") from exc
    if not isinstance(payload, dict) or not {"entries", "signatures"} <= payload.keys():
        raise GeneratorError(f"{path}: not a signatures file (expected a built site's api/signatures.json)")
    return payload


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 content problems, 2 usage, 130 when
    interrupted, 141 when the reader of the output went away, as after `| head`)."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    commands = {"check": _check, "build": _build, "diagnose": _diagnose, "ledger": _ledger, "verify-repro": _verify_repro,
                "new": _new, "schema": _schema, "serve": _serve, "export": _export}
    try:
        return commands[args.command](args)
    except ContentError as exc:
        _report(exc.problems, "text", exc.waiting)
        print(f"{exc}; nothing was written", file=sys.stderr)
        return 1
    except GeneratorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C, or serve's SIGTERM, before the command was done: a build leaves the site as it was
        return 130
    except BrokenPipeError:
        # The reader stopped reading (`| head`): stop quietly, and keep Python's own flush at exit from failing again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
