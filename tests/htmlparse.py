"""A small HTML reader for tests: ids, links, scripts and event handlers of a built page."""

from __future__ import annotations

from html.parser import HTMLParser

ASSET_SCRIPTS = ("assets/diagnose.js", "assets/diagnose-engine.js", "assets/search.js")


class ParsedPage(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []  # href and src values a reader's browser would follow or load
        self.inline_scripts = 0  # <script> elements that would run and are not our own files
        self.handlers: list[str] = []  # on* attributes
        self.csp = ""
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.add(a["id"])
        if "href" in a and (tag != "link" or a.get("rel") in ("stylesheet", "icon")):
            self.links.append(a["href"])
        if "src" in a:
            self.links.append(a["src"])
        if tag == "script" and not a.get("src", "").endswith(ASSET_SCRIPTS) and a.get("type") != "application/json":
            self.inline_scripts += 1
        self.handlers += [k for k in a if k.startswith("on")]
        if tag == "meta" and a.get("http-equiv") == "Content-Security-Policy":
            self.csp = a.get("content", "")
