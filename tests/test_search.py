"""Search in real headless Chromium: the header box's instant results (an ARIA combobox driven by
the keyboard, same-origin only) and the nearest entries when nothing matches exactly."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from browser import open_page
from conftest import NO_ENTRY_LINE

WATCHDOG = ("[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.")
OPTIONS = "#site-q-listbox [role=option]"


def test_header_box_shows_the_pasted_error_first_and_enter_opens_it(browser, site: str) -> None:
    page, errors = open_page(browser, site + "failures/cuda-out-of-memory/")
    page.keyboard.press("Tab")  # the skip link, then the header's links, then the box: keyboard only
    while page.evaluate("document.activeElement.id") != "site-q":
        page.keyboard.press("Tab")
    box = page.locator("#site-q")
    assert box.get_attribute("role") == "combobox" and box.get_attribute("aria-expanded") == "false"
    page.keyboard.insert_text(WATCHDOG)  # a paste
    page.wait_for_selector(OPTIONS)
    assert box.get_attribute("aria-expanded") == "true"
    assert box.get_attribute("aria-controls") == "site-q-listbox"
    assert page.locator("#site-q-listbox").get_attribute("role") == "listbox"
    first = page.locator(OPTIONS).first
    assert first.locator(".option-title").inner_text() == "NCCL collective watchdog timeout"
    assert box.get_attribute("aria-activedescendant") is None
    page.keyboard.press("ArrowDown")
    assert box.get_attribute("aria-activedescendant") == first.get_attribute("id")
    assert first.get_attribute("aria-selected") == "true"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    assert box.get_attribute("aria-activedescendant") == first.get_attribute("id")
    page.keyboard.press("Enter")
    page.wait_for_url(site + "failures/nccl-watchdog-timeout/")
    assert errors.errors == []
    origin = urlsplit(site).netloc
    assert errors.requests and all(urlsplit(url).netloc == origin for url in errors.requests), [u for u in errors.requests if origin not in u]
    assert any(url.endswith("api/signatures.json") for url in errors.requests)
    assert any("/pagefind/" in url for url in errors.requests)


def test_header_box_loads_nothing_until_used_and_escape_closes(browser, site: str) -> None:
    from playwright.sync_api import expect

    page, errors = open_page(browser, site + "categories/")
    page.wait_for_load_state("networkidle")
    assert not any("signatures.json" in url or "/pagefind/" in url for url in errors.requests)  # lazy: first focus loads them
    page.focus("#site-q")
    page.keyboard.type("DataLoader worker (pid 4242) is killed by signal: Bus error.", delay=5)
    # A slow machine may show a prefix's results first; the whole line's come last.
    expect(page.locator(OPTIONS).first.locator(".option-title")).to_have_text(
        "DataLoader worker killed by signal Bus error (shared memory exhausted)")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Escape")
    assert page.locator("#site-q-popup").is_hidden()
    box = page.locator("#site-q")
    assert box.get_attribute("aria-expanded") == "false" and box.get_attribute("aria-activedescendant") is None
    assert box.input_value().startswith("DataLoader worker")  # Escape closed the list, not cleared the box
    page.keyboard.press("Enter")  # nothing highlighted: the form goes to /search/, the no-JavaScript path
    page.wait_for_url(site + "search/?q=*")
    page.wait_for_selector("#search-results p.meta")
    assert page.locator(".search-list li > a").first.inner_text() == "DataLoader worker killed by signal Bus error (shared memory exhausted)"
    assert errors.errors == []
    assert all(urlsplit(url).netloc == urlsplit(site).netloc for url in errors.requests)


@pytest.mark.parametrize("warm", [True, False])
@pytest.mark.parametrize("query", ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",  # a signature
                                   "flight recorder",  # Pagefind only
                                   NO_ENTRY_LINE])  # nearest entries
def test_header_box_measures_keystroke_to_first_result(browser, site: str, query: str, warm: bool) -> None:
    page = browser.new_page()
    page.goto(site + "failures/nccl-watchdog-timeout/")
    page.wait_for_load_state("networkidle")
    page.focus("#site-q")
    if warm:
        page.wait_for_load_state("networkidle")  # the first focus has loaded the data and Pagefind
    elapsed = page.evaluate("""() => new Promise((resolve) => {
      const box = document.getElementById('site-q');
      const start = performance.now();
      new MutationObserver((_, observer) => {
        if (document.querySelector('#site-q-listbox [role=option]')) { observer.disconnect(); resolve(performance.now() - start); }
      }).observe(document.getElementById('site-q').form, { childList: true, subtree: true });
      box.value = query;
      box.dispatchEvent(new Event('input', { bubbles: true }));
    })""".replace("() =>", "(query) =>"), query)
    print(f"keystroke to first dropdown result ({'warm' if warm else 'cold'}, {query[:20]!r}): {elapsed:.0f} ms (120 ms debounce included)")
    assert elapsed < 3000  # measured here: about 0.15 s for signature matches, 0.6-0.9 s when Pagefind must answer


def test_header_box_labels_nearest_entries(browser, site: str) -> None:
    page, errors = open_page(browser, site)
    page.focus("#site-q")
    page.keyboard.insert_text(NO_ENTRY_LINE)
    page.wait_for_selector(OPTIONS)
    assert page.locator("#site-q-label").inner_text() == "Nearest entries (no exact match)"
    assert page.locator("#site-q-popup a", has_text="Propose an entry").get_attribute("href") == "./diagnose/"
    assert errors.errors == []


def test_search_page_shows_nearest_entries_when_nothing_matches_exactly(browser, site: str) -> None:
    page, errors = open_page(browser, site + "search/?q=" + NO_ENTRY_LINE)
    page.wait_for_selector("#search-results p.meta")
    text = page.inner_text("#search-results")
    assert "No entry matches" not in text
    assert page.locator("#search-results p.meta").first.inner_text() == "Nearest entries (no exact match)"
    nearest = page.locator(".search-list li > a").all_inner_texts()
    assert nearest[0].startswith("CUDA error:"), nearest  # entries about other CUDA errors (the pasted error's family) come first
    assert "matches an error signature" not in text
    link = page.locator("#search-results a", has_text="Propose an entry")
    assert link.get_attribute("href") == "../diagnose/"
    assert page.locator("#search-results p", has_text="Nothing matches exactly?").count() == 1
    assert errors.errors == []


@pytest.mark.parametrize(("query", "words"), [
    (NO_ENTRY_LINE, ["RuntimeError", "CUDA", "error", "too", "many", "blocks", "cooperative", "launch"]),
    (("[rank3]:[E1218 20:27:21.4 ProcessGroupNCCL.cpp:629] NCCL error in: /opt/torch/csrc/x.cpp:42, unhandled cuda error "
      "(run with NCCL_DEBUG=INFO), NCCL version 2.21.5 on host node-17.cluster.local 10.0.0.7:29500 at 0x7f3a2c"),
     ["NCCL", "error", "unhandled", "cuda", "run", "NCCL_DEBUG", "INFO", "version", "host"]),
    ("torch.OutOfMemoryError at step 1200 on rank7", ["torch", "OutOfMemoryError", "step"]),
])
def test_distinctive_words_drop_numbers_paths_hosts_and_ranks(browser, site: str, query: str, words: list[str]) -> None:
    page = browser.new_page()
    page.goto(site + "search/")
    assert page.evaluate("(q) => window.encyclopediaSearchWords(q)", query) == words


@pytest.mark.parametrize("width", [1366, 390])
def test_dropdown_stays_inside_the_window(browser, site: str, width: int) -> None:
    page = browser.new_page(viewport={"width": width, "height": 800})
    page.goto(site + "failures/cuda-out-of-memory/")
    page.focus("#site-q")
    page.keyboard.insert_text(NO_ENTRY_LINE)  # long excerpts in every option
    page.wait_for_selector(OPTIONS)
    page.wait_for_load_state("networkidle")
    page.keyboard.press("ArrowDown")
    box = page.locator("#site-q-popup").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
    assert page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth") <= 0
