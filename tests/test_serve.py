"""`encyclopedia serve`: real server process, real HTTP requests, real file edits."""

from __future__ import annotations

import concurrent.futures
import http.client
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def server(content: Path, tmp_path: Path) -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, "-m", "generator", "serve", "--port", "0", "--no-search"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("serving site/ on http://127.0.0.1:"), line + (proc.stderr.read() if proc.stderr else "")
    yield line.split(" on ")[1].split(" ")[0]
    proc.terminate()
    proc.wait(timeout=10)


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _wait_for(url: str, text: str, seconds: float = 30) -> tuple[int, str]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status, body = _get(url)
        if text in body:
            return status, body
        time.sleep(0.3)
    raise AssertionError(f"{text!r} never appeared at {url}; last body:\n{body[:2000]}")


def test_edit_rebuilds_and_a_broken_entry_shows_an_error_page_until_fixed(server: str, content: Path) -> None:
    page = server + "failures/first-failure/"
    status, body = _get(page)
    assert status == 200 and "<h1>First failure</h1>" in body
    assert '<script src="/__reload.js"></script></body>' in body
    version = _get(server + "__version")[1]
    # The reload script asks for "the version after this one"; the server holds the request until
    # a rebuild bumps the version (just after the new site is swapped in), then answers at once.
    held = concurrent.futures.ThreadPoolExecutor(1).submit(_get, server + f"__version?after={version}")
    time.sleep(1)
    assert not held.done()
    entry = content / "failures/first-failure.yaml"
    good = entry.read_text()
    entry.write_text(good.replace("title: First failure", "title: Renamed failure"))
    status, bumped = held.result(timeout=30)
    assert status == 200 and bumped != version
    assert "<h1>Renamed failure</h1>" in _get(page)[1]
    start = time.monotonic()
    assert _get(server + f"__version?after={int(bumped) + 1}")[1] == bumped  # not the current version: no wait
    assert time.monotonic() - start < 1
    entry.write_text(good.replace("severity: high", "severity: urgent"))
    status, body = _wait_for(page, "The last build failed")
    assert status == 500
    assert "content/failures/first-failure.yaml:4:11: severity: &#x27;urgent&#x27; is not allowed" in body
    entry.write_text(good)
    status, body = _wait_for(page, "<h1>First failure</h1>")
    assert status == 200



@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "terminate"])
def test_stopping_writes_the_caches_so_the_next_build_renders_only_what_changed(content: Path, tmp_path: Path, stop: int) -> None:
    """serve keeps its caches in memory while it runs and writes them beside the output when it stops."""
    proc = subprocess.Popen([sys.executable, "-m", "generator", "serve", "--port", "0", "--no-search"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    server = proc.stdout.readline().split(" on ")[1].split(" ")[0]
    entry = content / "failures/first-failure.yaml"
    entry.write_text(entry.read_text().replace("title: First failure", "title: Renamed failure"))
    _wait_for(server + "failures/first-failure/", "<h1>Renamed failure</h1>")
    proc.send_signal(stop)
    assert proc.wait(timeout=30) == 0
    assert all((tmp_path / f".site.{kind}").is_file() for kind in ("cache", "entries", "graph"))

    def build() -> tuple[int, int]:
        """Return (pages rendered, pages) of a command's build (which leaves drafts out, unlike serve)."""
        out = subprocess.run([sys.executable, "-m", "generator", "build", "--no-search"], cwd=tmp_path,
                             capture_output=True, text=True, check=True).stdout
        rendered, pages = re.search(r"\((\d+) of (\d+) pages rendered\)", out).groups()  # type: ignore[union-attr]
        return int(rendered), int(pages)
    assert build()[0] == 0
    second = content / "failures/second-failure.yaml"
    second.write_text(second.read_text().replace("title: Second failure", "title: Renamed second failure"))
    rendered, pages = build()
    assert 0 < rendered < pages

@pytest.mark.parametrize("path", ["/../../../etc/passwd", "/..%2f..%2f..%2fetc%2fpasswd", "/%2e%2e/%2e%2e/content/ledger.yaml"])
def test_only_files_inside_the_output_folder_are_served(server: str, path: str) -> None:
    host = server.split("//")[1].rstrip("/")
    conn = http.client.HTTPConnection(host, timeout=10)
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read().decode(errors="replace")
    assert response.status == 404
    assert "root:" not in body and "MTF-0001" not in body


def test_the_open_page_reloads_itself_when_the_rebuild_is_done(server: str, content: Path, browser: object) -> None:
    from browser import open_page

    page, errors = open_page(browser, server + "failures/first-failure/")
    page.wait_for_timeout(300)  # type: ignore[attr-defined]  # the reload script has asked for the next version
    entry = content / "failures/first-failure.yaml"
    entry.write_text(entry.read_text().replace("title: First failure", "title: Renamed failure"))
    page.wait_for_selector("h1:text-is('Renamed failure')", timeout=30_000)  # type: ignore[attr-defined]
    assert errors.errors == []
    page.close()  # type: ignore[attr-defined]
