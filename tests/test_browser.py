"""The built site in real headless Chromium: diagnosis in the page, CSP, no errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import PageErrors, browser, serve  # noqa: F401  (browser is a fixture)

from generator.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    out = tmp_path_factory.mktemp("built") / "site"
    assert main(["build", "--content", str(ROOT / "content"), "--out", str(out)]) == 0
    server, base = serve(out)
    yield base
    server.shutdown()


def test_diagnose_page_ranks_the_root_cause_first(browser, site: str) -> None:  # noqa: F811
    page = browser.new_page()
    errors = PageErrors(page)
    page.goto(site + "diagnose/")
    log = ("[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total capacity of 79.11 GiB\n"
           "[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: "
           "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.\n")
    page.fill("#log-text", log)
    page.click("#diagnose-form button")
    first = page.locator(".candidates li").first
    assert first.locator("a").inner_text() == "CUDA out of memory (torch.OutOfMemoryError)"
    first.locator("a").click()
    assert page.url == site + "failures/cuda-out-of-memory/"
    assert errors.errors == []

