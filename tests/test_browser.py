"""The built site in real headless Chromium: diagnosis in the page, CSP, no errors."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from browser import PageErrors, open_page, serve
from conftest import NO_ENTRY_LINE, REPOSITORY

from generator.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_diagnose_page_ranks_the_root_cause_first(browser, site: str) -> None:
    page, errors = open_page(browser, site + "diagnose/")
    log = ("[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total capacity of 79.11 GiB\n"
           "[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: "
           "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.\n")
    page.fill("#log-text", log)
    page.click("#diagnose-form button")
    first = page.locator(".candidates li").first
    assert first.locator("a").first.inner_text() == "CUDA out of memory (torch.OutOfMemoryError)"
    assert first.get_by_role("link", name="The fix", exact=True).get_attribute("href") == "../failures/cuda-out-of-memory/#fix"
    first.locator("a").first.click()
    assert page.url == site + "failures/cuda-out-of-memory/"
    assert errors.errors == []



def test_sample_logs_load_with_one_click_and_show_what_they_promise(browser, site: str) -> None:
    page, errors = open_page(browser, site + "diagnose/")
    samples = page.locator("button[data-sample]")
    assert samples.count() == 3
    samples.nth(0).click()  # root vs collateral: the OOM first, the NCCL error as its consequence
    answers = page.locator(".candidates > li")
    assert answers.nth(0).locator("a").first.inner_text() == "CUDA out of memory (torch.OutOfMemoryError)"
    assert answers.nth(0).locator("a", has_text="Verify the fix").get_attribute("href") == "../failures/cuda-out-of-memory/#verify"
    assert "is downstream of CUDA out of memory" in answers.nth(1).inner_text()
    assert page.input_value("#log-text").startswith(Path(ROOT / "content/samples/nccl-cuda-failure-oom-open-sora.log").read_text()[:40])
    samples.nth(1).click()  # across ranks
    assert "Rank 2 timed out in SeqNum 808 ALLREDUCE" in page.locator(".cross-rank").inner_text()
    samples.nth(2).click()  # nothing matches: the lines that look like the failure instead
    page.get_by_text("No entry's error signature matched this log.").wait_for()  # the previous sample's answer stays until then
    result = page.locator("#diagnosis-result")
    assert "ImportError: cannot import name 'Trainer'" in result.inner_text()
    assert page.locator(".samples a").nth(0).get_attribute("href") == "https://github.com/PKU-YuanGroup/Open-Sora-Plan/issues/386"
    assert all(url.startswith(site) for url in errors.requests), errors.requests
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
    page, errors = open_page(browser, site)
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
    page, errors = open_page(browser, site)
    page.fill("#ask-q", "step 1 loss 2.3\nRuntimeError: DataLoader timed out after 3 seconds\n")
    page.click("#ask-form button")
    page.wait_for_selector(".candidates li")
    assert page.url == site + "diagnose/"
    assert page.locator(".candidates li a").first.inner_text() == "DataLoader hang or deadlock (workers stuck, no error)"
    assert not any("DataLoader" in url or "loss" in url for url in errors.requests)  # the log never left the page


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
    assert -1 < top < 100  # scroll positions are whole pixels, layout is not (25.6 px lines)
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
    assert main(["build", "--content", str(work / "content"), "--out", str(out), "--base-url", "https://example.org/encyclopedia/",
                 "--repo-url", REPOSITORY]) == 0
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
    # the one missing page the test asked for, and nothing else
    assert errors.errors == ["Failed to load resource: the server responded with a status of 404 (Not Found)"]


def test_edit_and_report_links_follow_a_renamed_entry_from_a_sub_path(browser, subpath_site: str) -> None:
    page = browser.new_page()
    page.goto(subpath_site + "id/MTF-0001/")
    page.wait_for_url(subpath_site + "failures/nccl-collective-watchdog-timeout/")
    edit = page.get_by_role("link", name="Edit this entry").get_attribute("href")
    assert edit == f"{REPOSITORY}/edit/main/content/failures/nccl-collective-watchdog-timeout.yaml"
    report = page.get_by_role("link", name="Report a problem with this entry").get_attribute("href") or ""
    assert report.startswith(f"{REPOSITORY}/issues/new?template=entry-correction.yml&")
    query = dict(parse_qsl(urlsplit(report).query))
    assert query["entry"] == "MTF-0001: NCCL collective watchdog timeout"
    assert query["page"] == "https://example.org/encyclopedia/failures/nccl-collective-watchdog-timeout/"


@pytest.fixture(scope="module")
def forge_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The shipped content built with a repository, so that the page can offer proposals."""
    out = tmp_path_factory.mktemp("forge") / "site"
    assert main(["build", "--content", str(ROOT / "content"), "--out", str(out), "--repo-url", REPOSITORY]) == 0
    server, base = serve(out)
    yield base
    server.shutdown()


def test_an_unmatched_log_offers_a_proposal_that_passes_check(browser, forge_site: str, tmp_path: Path) -> None:
    import datetime
    from urllib.parse import parse_qs, urlsplit

    import yaml

    from generator.scaffold import DEFAULT_CATEGORY, draft_entry

    page, errors = open_page(browser, forge_site + "diagnose/")
    line = f"[rank1]: {NO_ENTRY_LINE}"
    page.fill("#log-text", f"step 1 loss 2.0\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n{line}\n")
    page.click("#diagnose-form button")
    page.click("button.propose")
    assert "remove hostnames, paths" in page.inner_text(".proposal")
    page.click(".proposal summary")
    assert "status: draft" in page.inner_text(".proposal pre")
    href = page.locator(".proposal a").get_attribute("href")
    assert href is not None and href.startswith("https://github.com/example/encyclopedia/new/main?filename=content%2Ffailures%2F")
    query = parse_qs(urlsplit(href).query)
    [filename], [text] = query["filename"], query["value"]
    draft = yaml.safe_load(text)
    assert draft["status"] == "draft" and draft["signatures"][0]["examples"] == [line]
    assert text == draft_entry(draft["id"], draft["title"], DEFAULT_CATEGORY, datetime.date.fromisoformat(str(draft["last_reviewed"])), line)
    content = tmp_path / "content"
    shutil.copytree(ROOT / "content", content)
    (tmp_path / filename).write_text(text)
    assert main(["check", "--content", str(content)]) == 0
    assert all(url.startswith(forge_site) for url in errors.requests), "the page sent a request elsewhere"
    assert errors.errors == []


def test_a_log_that_ends_during_start_up_gets_the_start_up_hang_as_a_note(browser, site: str) -> None:
    page, errors = open_page(browser, site + "diagnose/")
    page.fill("#log-text", "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
                           "All distributed processes registered. Starting with 2 processes\n" + "-" * 40 + "\n")
    page.click("#diagnose-form button")
    note = page.locator("p.stopped")
    assert "The log ends during distributed start-up (line 2: All distributed processes registered" in note.inner_text()
    assert note.locator("a").get_attribute("href") == "../failures/nccl-init-hang/"
    assert page.locator(".candidates").count() == 0
    assert errors.errors == []


def test_a_log_that_ends_inside_a_traceback_says_its_error_line_is_missing(browser, site: str) -> None:
    page, errors = open_page(browser, site + "diagnose/")
    page.fill("#log-text", 'Traceback (most recent call last):\n  File "train.py", line 358, in main\n'
                           "    torch.cuda.set_device(device_ordinal)\n")
    page.click("#diagnose-form button")
    note = page.locator("p.cut")
    assert "The log ends inside a Python traceback (line 3: torch.cuda.set_device(device_ordinal))" in note.inner_text()
    assert note.locator("a").get_attribute("href") == "../search/?q=torch.cuda.set_device(device_ordinal)"
    assert errors.errors == []


def test_a_search_that_finds_nothing_exact_leads_to_a_proposal_of_that_line(browser, forge_site: str) -> None:
    page, errors = open_page(browser, forge_site + "search/?q=" + "ZeroDivisionError: integer division or modulo by zero in collate_fn")
    page.click("#search-results .propose a")
    page.wait_for_selector("button.propose")
    assert page.url == forge_site + "diagnose/"
    assert "ZeroDivisionError: integer division or modulo by zero" in page.inner_text(".notable")
    assert errors.errors == []


def test_header_box_finds_nearest_entries_from_a_sub_path(browser, subpath_site: str) -> None:
    page, errors = open_page(browser, subpath_site + "failures/cuda-out-of-memory/")
    page.focus("#site-q")
    page.keyboard.insert_text(NO_ENTRY_LINE)  # needs Pagefind, loaded from the sub-path
    page.wait_for_selector("#site-q-listbox [role=option]")
    assert page.inner_text("#site-q-label") == "Nearest entries (no exact match)"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_url(subpath_site + "failures/*/")
    assert errors.errors == []


def test_diagnosis_runs_in_a_worker_so_the_page_stays_responsive(browser, site: str, tmp_path: Path) -> None:
    page, errors = open_page(browser, site + "diagnose/")
    oom = "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total capacity of 79.11 GiB\n"
    # While a 20 MB log is scanned, the page's own timers keep firing: the scan is not on its thread.
    ticks, slug = page.evaluate("""async (oom) => {
        const log = "step 12 | loss 2.3141 | lr 3.0e-04 | 912 tokens/s\\n".repeat(400000) + oom;
        let ticks = 0;
        const timer = setInterval(() => { ticks += 1; }, 5);
        const result = await window.encyclopediaDiagnose([["big.log", log]]);
        clearInterval(timer);
        return [ticks, result.candidates[0].slug];
    }""", oom)
    assert slug == "cuda-out-of-memory"
    assert ticks >= 5, f"the page's timers fired {ticks} times during the scan"
    # A chosen file is read by the worker, in slices.
    log = tmp_path / "rank2.log"
    log.write_text("epoch 1 step 10 loss 1.9\n" * 1000 + oom)
    page.set_input_files("#log-file", str(log))
    page.wait_for_selector(".candidates li")
    assert page.locator(".candidates li").first.locator("a").first.inner_text() == "CUDA out of memory (torch.OutOfMemoryError)"
    assert errors.errors == []
