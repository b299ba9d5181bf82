"""Quality gates on the built site: the Nu HTML checker, links and fragments, CSP, accessibility
with axe-core in Chromium, keyboard reach, and what a reader sees at desktop and phone widths."""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from browser import open_page
from htmlparse import ParsedPage

ROOT = Path(__file__).resolve().parent.parent
VNU = Path(os.environ.get("VNU_JAR", ROOT / ".tools/node_modules/vnu-jar/build/dist/vnu.jar"))
ARTIFACTS = ROOT / "artifacts/screenshots"
PAGES = {"home": "", "entry": "failures/nccl-watchdog-timeout/", "taxonomy": "categories/distributed-training/",
         "hub": "hubs/nccl-errors/", "graph": "graph/", "diagnose": "diagnose/", "search": "search/?q=watchdog"}


def _pages(site: Path) -> dict[Path, ParsedPage]:
    return {path: ParsedPage(path.read_text(encoding="utf-8")) for path in sorted(site.rglob("*.html"))}


def _serious_violations(page: object) -> list[str]:
    """Return axe-core's serious and critical violations on the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe

    violations = Axe().run(page).response["violations"]
    return [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}" for v in violations
            if v["impact"] in ("serious", "critical")]


@pytest.mark.slow
def test_nu_html_checker_reports_no_errors(built_site: Path) -> None:
    if not VNU.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{VNU} is missing; .ci/run installs it (npm vnu-jar)")
        pytest.skip("the Nu checker (npm vnu-jar) is not installed")
    run = subprocess.run(["java", "-jar", str(VNU), "--errors-only", "--skip-non-html", str(built_site)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0 and run.stderr.strip() == "", run.stderr[:5000]
    assert len(list(built_site.rglob("*.html"))) > 200


def test_no_broken_internal_links_or_fragments(built_site: Path) -> None:
    pages = _pages(built_site)
    checked, broken = 0, []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "data:")):
                continue
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if path.name == "404.html" and parts.path.startswith("/"):
                target = (built_site / parts.path.lstrip("/")).resolve()
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            if not target.is_file():
                broken.append(f"{path.relative_to(built_site)}: {link}")
            elif parts.fragment and target.suffix == ".html" and parts.fragment not in pages[target].ids:
                broken.append(f"{path.relative_to(built_site)}: {link} (no id {parts.fragment!r})")
    assert broken == []
    assert checked > 5000


def test_every_page_has_a_strict_content_security_policy(built_site: Path) -> None:
    for path, page in _pages(built_site).items():
        csp = dict(d.strip().split(" ", 1) for d in page.csp.split(";") if " " in d.strip())
        assert csp.get("default-src") == "'none'", path
        assert "unsafe-inline" not in page.csp and "http" not in page.csp, path
        assert csp.get("script-src", "'self'").split()[0] == "'self'", path
        assert page.inline_scripts == 0 and page.handlers == [], path


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", sorted(PAGES))
def test_axe_finds_no_serious_violations(browser, site: str, name: str, scheme: str) -> None:
    page, errors = open_page(browser, site + PAGES[name], color_scheme=scheme)
    page.wait_for_load_state("networkidle")
    assert _serious_violations(page) == []
    assert errors.errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("query", ["Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5", "RuntimeError: CUDA error: misaligned address"])
def test_axe_finds_no_serious_violations_with_the_search_dropdown_open(browser, site: str, query: str, scheme: str) -> None:
    page, errors = open_page(browser, site + PAGES["entry"], color_scheme=scheme)
    page.focus("#site-q")
    page.keyboard.insert_text(query)
    page.wait_for_selector("#site-q-listbox [role=option]")
    page.wait_for_load_state("networkidle")
    page.keyboard.press("ArrowDown")  # a highlighted option too
    assert page.get_attribute("#site-q", "aria-expanded") == "true"
    assert _serious_violations(page) == []
    assert errors.errors == []


DIAGNOSIS_STATES = {
    "answers": "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total capacity of 79 GiB\n"
               "[rank0]:[E1218 20:27:21.4 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: "
               "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds\n",
    "proposal": "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\nZeroDivisionError: division by zero\n",
}


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("state", sorted(DIAGNOSIS_STATES))
def test_axe_finds_no_serious_violations_in_the_diagnosis_states(browser, site: str, state: str, scheme: str) -> None:
    """The diagnose page with answers (quick answers, possible causes) and with a proposal opened."""
    page, errors = open_page(browser, site + PAGES["diagnose"], color_scheme=scheme)
    page.fill("#log-text", DIAGNOSIS_STATES[state])
    page.click("#diagnose-form button")
    if state == "proposal":
        page.click("button.propose")
        page.click(".proposal summary")
    else:
        page.wait_for_selector(".candidates .quick-answer")
    assert _serious_violations(page) == []
    assert errors.errors == []


def test_keyboard_reaches_search_and_every_link(browser, site: str) -> None:
    page = browser.new_page()
    page.goto(site)
    links = page.evaluate("document.querySelectorAll('a[href], input, textarea, button, select').length")
    reached: set[str] = set()
    for _ in range(links + 5):
        page.keyboard.press("Tab")
        reached.add(page.evaluate("(() => { const e = document.activeElement; return e.id || e.getAttribute('href') || e.tagName; })()"))
    assert "site-q" in reached and "ask-q" in reached
    hrefs = set(page.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))"))
    assert hrefs <= reached


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1366, 390, 320])
def test_screenshots_and_no_sideways_scroll_on_a_phone(browser, site: str, width: int, scheme: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": width, "height": 900}, color_scheme=scheme)
    for name in ("home", "entry", "hub", "graph", "diagnose"):
        page.goto(site + PAGES[name])
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}-{scheme}.png"), full_page=True)
        overflow = page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} scrolls sideways by {overflow}px at {width}px"


OVERFLOW = """(() => {
  const main = document.querySelector('main'), box = main.getBoundingClientRect(), style = getComputedStyle(main);
  const left = box.left + parseFloat(style.paddingLeft), right = box.right - parseFloat(style.paddingRight);
  const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className ? '.' + e.className : '');
  const found = [];
  for (const e of main.querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (r.width <= 1) continue;  // closed or visually hidden
    const scrolls = ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
    if (e.clientWidth && e.scrollWidth > e.clientWidth + 1) found.push((scrolls ? 'scrolls: ' : 'text runs out of: ') + name(e));
    if (r.left < left - 0.5 || r.right > right + 0.5) found.push('sticks out: ' + name(e));
  }
  if (document.scrollingElement.scrollWidth > window.innerWidth) found.push('the page scrolls sideways');
  return found;
})()"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1366, 1024, 390])
def test_hub_reads_side_by_side_on_a_laptop_and_as_cards_on_a_phone(browser, site: str, width: int, scheme: str) -> None:
    page, errors = open_page(browser, site + "hubs/nccl-errors/#nccl-system-error", viewport={"width": width, "height": 900}, color_scheme=scheme)
    row = page.locator("#nccl-system-error")
    explanation = row.locator("details p").first
    assert row.is_visible() and not explanation.is_visible()  # the long explanation opens on demand
    row.locator("summary").click()
    assert explanation.is_visible() and "InfiniBand verbs library" in explanation.inner_text()
    page.screenshot(path=str(ARTIFACTS / f"hub-open-{width}-{scheme}.png"))
    parts = [row.locator(part).bounding_box() or {} for part in ("h3", "dl > div:nth-child(1)", "dl > div:nth-child(2)", "dl > div:nth-child(3)")]
    pairs = list(itertools.pairwise(parts))
    if width >= 1024:  # error, meaning, where and entries side by side, each under its column head
        assert all(a["x"] + a["width"] <= b["x"] and abs(a["y"] - b["y"]) < 8 for a, b in pairs), parts
        heads = page.locator(".hub-errors .side-head span")
        assert heads.all_inner_texts() == ["Error", "What it means", "Where the failure usually is", "Read"]
        assert [round(h.bounding_box()["x"]) for h in heads.all()] == [round(p["x"]) for p in parts]  # type: ignore[index]
        head = page.locator(".hub-errors .side-head").bounding_box() or {}
        assert row.bounding_box()["y"] >= head["y"] + head["height"]  # type: ignore[index]  # the target row is not under the sticky heads
    else:  # a card: the parts one below the other, each with its label
        assert all(a["y"] + a["height"] <= b["y"] and a["x"] == b["x"] for a, b in pairs), parts
        assert row.locator("dt").all_inner_texts() == ["What it means", "Where the failure usually is", "Read"]
        assert row.locator("dt").first.is_visible()
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert page.evaluate(OVERFLOW) == []
    assert _serious_violations(page) == []
    assert errors.errors == []
