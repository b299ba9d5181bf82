"""`encyclopedia serve`: build, serve the output folder on loopback, rebuild on change, reload the page.

A failed rebuild keeps the server running: the previous site stays on disk, and
every page shows the problems until the content is fixed.
"""

from __future__ import annotations

import functools
import html
import http.server
import threading
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import watchfiles

from .errors import ContentError, GeneratorError

RELOAD_JS = b"""// Dev server only: reload the page as soon as the site is rebuilt. The server holds
// each /__version?after=N request until the version is no longer N (or 25 s pass).
(async function () {
  let seen = null;
  for (;;) {
    try {
      const query = seen === null ? "" : "?after=" + encodeURIComponent(seen);
      const now = await (await fetch("/__version" + query, { cache: "no-store" })).text();
      if (seen !== null && now !== seen) { location.reload(); return; }
      seen = now;
    } catch (err) {  // the server is restarting
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
})();
"""
RELOAD_TAG = b'<script src="/__reload.js"></script>'
LONG_POLL_SECONDS = 25


class _State:
    def __init__(self) -> None:
        self.version = 0
        self.problems: list[str] = []
        self.lock = threading.Condition()  # notified when a rebuild bumps the version


def _rebuild(build: Callable[[Callable[[], None]], object], state: _State, log: Callable[[str], None]) -> None:
    """Build, and publish a new version (the open pages reload) as soon as the changed pages are
    live, or when the build is done or has failed."""
    shown = False

    def publish(problems: list[str]) -> None:
        with state.lock:
            state.problems = problems
            state.version += 1
            state.lock.notify_all()

    def pages_live() -> None:
        nonlocal shown
        shown = True
        publish([])

    try:
        build(pages_live)
        if not shown:
            publish([])
        log(f"rebuilt (version {state.version})")
    except ContentError as exc:
        problems = [p.format() for p in exc.problems] + [w.format() for w in exc.waiting] + [str(exc)]
        log("\n".join(problems))
        publish(problems)
    except GeneratorError as exc:
        log(f"error: {exc}")
        publish([str(exc)])


def _error_page(problems: list[str]) -> bytes:
    items = "\n".join(f"<li><code>{html.escape(p)}</code></li>" for p in problems)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Build failed</title></head>'
            f'<body><main><h1>The last build failed</h1><p>The server keeps running; fix the content and '
            f'this page reloads.</p><ul>{items}</ul></main>').encode() + RELOAD_TAG + b"</body></html>"


def _handler(out: Path, state: _State) -> type[http.server.SimpleHTTPRequestHandler]:
    root = out.resolve()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/__reload.js":
                return self._send(200, "text/javascript", RELOAD_JS)
            if path == "/__version":
                after = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("after", [None])[0]
                with state.lock:
                    state.lock.wait_for(lambda: str(state.version) != after, timeout=LONG_POLL_SECONDS)
                    version = state.version
                return self._send(200, "text/plain", str(version).encode())
            with state.lock:
                problems = list(state.problems)
            if problems and path.endswith(("/", ".html")):
                return self._send(500, "text/html; charset=utf-8", _error_page(problems))
            target = Path(self.translate_path(path)).resolve()
            if not target.is_relative_to(root):  # never serve anything outside the output folder
                return self._send(404, "text/plain", b"not found")
            if target.is_dir():
                target = target / "index.html"
            if target.suffix == ".html" and target.is_file():
                body = target.read_bytes().replace(b"</body>", RELOAD_TAG + b"</body>", 1)
                return self._send(200, "text/html; charset=utf-8", body)
            return super().do_GET()

        def _send(self, code: int, kind: str, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return functools.partial(Handler, directory=str(root))  # type: ignore[return-value]


def serve(build: Callable[[Callable[[], None]], object], watched: list[Path], out: Path, host: str, port: int,
          log: Callable[[str], None], ready: Callable[[str], None]) -> None:
    """Build, then serve out/ until interrupted, rebuilding whenever a watched path changes.
    build(shown): one build; it calls shown() if its changed pages go live before it is done."""
    state = _State()
    _rebuild(build, state, log)
    out.mkdir(parents=True, exist_ok=True)
    server = http.server.ThreadingHTTPServer((host, port), _handler(out, state))
    stop = threading.Event()

    def watch() -> None:
        for _changes in watchfiles.watch(*watched, stop_event=stop, debounce=200, rust_timeout=500):
            _rebuild(build, state, log)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    ready(f"http://{host}:{server.server_address[1]}/")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        watcher.join()  # a rebuild under way finishes first
        server.server_close()
