"""Shared fixtures for tests in real headless Chromium (Debian's /usr/bin/chromium via Playwright)."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def need_browser() -> None:
    """Skip when Chromium or Playwright is missing, except in CI where a skip would hide a gap."""
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing = "the playwright package"
    else:
        missing = "" if shutil.which(CHROMIUM) else CHROMIUM
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing} is not installed; .ci/run must install it")
        pytest.skip(f"{missing} is not installed")


def serve(root: Path, prefix: str = "") -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve root on a free loopback port under an optional sub-path prefix; return (server, base URL)."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def translate_path(self, path: str) -> str:
            if prefix and path.startswith(prefix):
                path = path[len(prefix):] or "/"
            elif prefix:
                return str(root / "__nowhere__")
            return super().translate_path(path)

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            page = root / "404.html"
            if code != 404 or not page.is_file():
                return super().send_error(code, message, explain)
            body = page.read_bytes()  # what a static host does with the site's 404 page
            self.send_response(404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}{prefix}/"


class PageErrors:
    """Collects console errors, page errors and dialogs, which hostile content must never cause,
    and every address the page requests (tests check that nothing leaves the site)."""

    def __init__(self, page: object) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))  # type: ignore[attr-defined]
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)  # type: ignore[attr-defined]
        page.on("pageerror", lambda e: self.errors.append(str(e)))  # type: ignore[attr-defined]
        page.on("dialog", lambda d: (self.errors.append(f"dialog: {d.message}"), d.dismiss()))  # type: ignore[attr-defined]


def open_page(browser: object, url: str, **options: object) -> tuple[object, PageErrors]:
    """Open url in a new page of the browser (options as for new_page), watching it from the start."""
    page = browser.new_page(**options)  # type: ignore[attr-defined]
    errors = PageErrors(page)
    page.goto(url)  # type: ignore[attr-defined]
    return page, errors
