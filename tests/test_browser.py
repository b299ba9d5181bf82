"""The built site in real headless Chromium: diagnosis in the page, CSP, no errors."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import PageErrors, serve

from generator.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(built_site: Path) -> Iterator[str]:
    server, base = serve(built_site)
    yield base
    server.shutdown()


def test_diagnose_page_ranks_the_root_cause_first(browser, site: str) -> None:
    page = browser.new_page()
    errors = PageErrors(page)
    page.goto(site + "diagnose/")
    log = ("[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total capacity of 79.11 GiB\n"
           "[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: "
           "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.\n")
    page.fill("#log-text", log)
    page.click("#diagnose-form button")
    first = page.locator(".candidates li").first
    assert first.locator("a").first.inner_text() == "CUDA out of memory (torch.OutOfMemoryError)"
    assert first.locator("a", has_text="The fix").get_attribute("href") == "../failures/cuda-out-of-memory/#fix"
    first.locator("a").first.click()
    assert page.url == site + "failures/cuda-out-of-memory/"
    assert errors.errors == []



@pytest.mark.parametrize(("query", "expected"), [
    ("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE", "NCCL collective watchdog timeout"),
    ("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 3 has a total capacity of 79.1 GiB",
     "CUDA out of memory (torch.OutOfMemoryError)"),
    ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
     "DDP unused parameters: reduction not finished in the prior iteration"),
    ("DataLoader worker (pid 4242) is killed by signal: Bus error.", "DataLoader worker killed by signal Bus error (shared memory exhausted)"),
    ("flight recorder", None),
])
def test_searching_an_error_string_lists_the_right_entry_first(browser, site: str, query: str, expected: str | None) -> None:
    page = browser.new_page()
    errors = PageErrors(page)
    page.goto(site)
    page.fill("#site-q", query)
    page.press("#site-q", "Enter")
    page.wait_for_selector("#search-results p.meta")
    results = page.locator(".search-list li > a").all_inner_texts()
    assert results, page.inner_text("#search-results")
    if expected:
        assert results[0] == expected
    assert errors.errors == []


def test_search_filters_by_category(browser, site: str) -> None:
    page = browser.new_page()
    page.goto(site + "search/?q=timeout&category=launch-rendezvous")
    page.wait_for_selector("#search-results p.meta")
    results = page.locator(".search-list li > a").all_inner_texts()
    assert results and "torchrun elastic rendezvous timeout" in results
    assert "NCCL collective watchdog timeout" not in results


def test_home_box_sends_a_pasted_log_to_diagnosis_in_the_browser(browser, site: str) -> None:
    page = browser.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(site)
    page.fill("#ask-q", "step 1 loss 2.3\nRuntimeError: DataLoader timed out after 3 seconds\n")
    page.click("#ask-form button")
    page.wait_for_selector(".candidates li")
    assert page.url == site + "diagnose/"
    assert page.locator(".candidates li a").first.inner_text() == "DataLoader hang or deadlock (workers stuck, no error)"
    assert not any("DataLoader" in url or "loss" in url for url in requests)  # the log never left the page


@pytest.mark.parametrize("path", ["id/MTF-0001/", "id/mtf-0001/"])
def test_permanent_id_lands_on_the_canonical_page(browser, site: str, path: str) -> None:
    page = browser.new_page()
    response = page.goto(site + path)
    if path.islower():  # IDs are case-sensitive; a wrong one is a 404 page, never a wrong entry
        assert response is not None and response.status == 404
        return
    page.wait_for_url(site + "failures/nccl-watchdog-timeout/")
    assert page.locator("h1").inner_text() == "NCCL collective watchdog timeout"


def test_section_link_scrolls_to_its_section(browser, site: str) -> None:
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    page.goto(site + "failures/nccl-watchdog-timeout/#confirm")
    top = page.evaluate("document.getElementById('confirm').getBoundingClientRect().top")
    assert 0 <= top < 100
    assert page.locator("#confirm a.anchor").get_attribute("href") == "#confirm"


@pytest.fixture(scope="module")
def subpath_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real content with one entry renamed (its old slug kept as an alias), served under /encyclopedia/."""
    work = tmp_path_factory.mktemp("subpath")
    shutil.copytree(ROOT / "content", work / "content")
    old = work / "content/failures/nccl-watchdog-timeout.yaml"
    old.with_name("nccl-collective-watchdog-timeout.yaml").write_text(old.read_text() + "aliases: [nccl-watchdog-timeout]\n")
    old.unlink()
    # Other entries and the hub still name the old slug: the alias resolves it.
    out = work / "site"
    assert main(["build", "--content", str(work / "content"), "--out", str(out), "--base-url", "https://example.org/encyclopedia/"]) == 0
    server, base = serve(out, "/encyclopedia")
    yield base
    server.shutdown()


def test_site_works_from_a_sub_path_with_redirects(browser, subpath_site: str) -> None:
    page = browser.new_page()
    errors = PageErrors(page)
    page.goto(subpath_site + "failures/nccl-watchdog-timeout/")  # the old slug, now an alias
    page.wait_for_url(subpath_site + "failures/nccl-collective-watchdog-timeout/")
    page.click("nav[aria-label=Site] >> text=Categories")
    assert page.url == subpath_site + "categories/"
    page.goto(subpath_site + "id/MTF-0001/")
    page.wait_for_url(subpath_site + "failures/nccl-collective-watchdog-timeout/")
    page.goto(subpath_site + "search/?q=" + "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9")
    page.wait_for_selector("#search-results p.meta")
    assert page.locator(".search-list li > a").first.inner_text() == "NCCL collective watchdog timeout"
    page.goto(subpath_site + "no/such/page/")
    page.click("main >> text=the list of all failures")
    assert page.url == subpath_site + "failures/"
    assert errors.errors == [] or all("404" in e for e in errors.errors)


def test_header_box_finds_nearest_entries_from_a_sub_path(browser, subpath_site: str) -> None:
    page = browser.new_page()
    errors = PageErrors(page)
    page.goto(subpath_site + "failures/cuda-out-of-memory/")
    page.focus("#site-q")
    page.keyboard.insert_text("RuntimeError: CUDA error: misaligned address")  # needs Pagefind, loaded from the sub-path
    page.wait_for_selector("#site-q-listbox [role=option]")
    assert page.inner_text("#site-q-label") == "Nearest entries (no exact match)"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_url(subpath_site + "failures/*/")
    assert errors.errors == []
