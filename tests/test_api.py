"""Machine-readable files: JSON validates against the published schemas; sitemap and feed are XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema

from generator.api import signature_data, signatures_json
from generator.build import load_catalog
from generator.cli import main
from generator.pages import script_json

ROOT = Path(__file__).resolve().parent.parent

ATOM = "{http://www.w3.org/2005/Atom}"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def _build(tmp_path: Path, *extra: str) -> Path:
    assert main(["build", "--out", "site", *extra]) == 0
    return tmp_path / "site"


def test_json_files_validate_against_their_schemas(content: Path, tmp_path: Path) -> None:
    site = _build(tmp_path)
    schema = lambda name: json.loads((site / f"schema/{name}.schema.json").read_text())
    index = json.loads((site / "api/index.json").read_text())
    jsonschema.validate(index, schema("api-index"))
    assert [e["slug"] for e in index["entries"]] == ["first-failure", "second-failure"]
    assert index["entries"][0]["url"] == "https://example.org/failures/first-failure/"
    for path in sorted((site / "api/failures").glob("*.json")):
        document = json.loads(path.read_text())
        jsonschema.validate(document, schema("api-entry"))
        entry_only = {k: v for k, v in document.items() if k not in {"slug", "url", "links"}}
        jsonschema.validate(entry_only, schema("entry"))
    second = json.loads((site / "api/failures/second-failure.json").read_text())
    assert second["links"] == [{"slug": "first-failure", "type": "caused-by", "declared": False}]


def test_signature_files_joined_from_entries_equal_the_whole_dumped_at_once(content: Path, tmp_path: Path) -> None:
    """api/signatures.json and the diagnosis page's copy are joined from each entry's text: they
    must be what dumping signature_data whole gives, byte for byte."""
    dumped = lambda data: json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
    catalog = load_catalog(ROOT / "content")
    assert signatures_json(catalog) == dumped(signature_data(catalog))
    site = _build(tmp_path)
    data = signature_data(load_catalog(content))
    assert (site / "api/signatures.json").read_text(encoding="utf-8") == dumped(data)
    assert script_json({**data, "base": "../"}) in (site / "diagnose/index.html").read_text(encoding="utf-8")


def test_sitemap_feed_and_robots_use_the_base_url(content: Path, tmp_path: Path) -> None:
    site = _build(tmp_path, "--base-url", "https://docs.example.com/encyclopedia/")
    locs = [e.text for e in ET.parse(site / "sitemap.xml").getroot().iter(f"{SITEMAP}loc")]
    assert "https://docs.example.com/encyclopedia/failures/first-failure/" in locs
    assert not any("/id/" in str(loc) or "404" in str(loc) for loc in locs)
    feed = ET.parse(site / "feed.xml").getroot()
    assert [e.find(f"{ATOM}title").text for e in feed.iter(f"{ATOM}entry")] == ["Second failure", "First failure"]  # type: ignore[union-attr]
    assert (site / "robots.txt").read_text().endswith("Sitemap: https://docs.example.com/encyclopedia/sitemap.xml\n")
    page = (site / "failures/first-failure/index.html").read_text()
    assert '<link rel="canonical" href="https://docs.example.com/encyclopedia/failures/first-failure/">' in page
    assert '<meta property="og:type" content="article">' in page
    assert 'href="/encyclopedia/failures/"' in (site / "404.html").read_text()
