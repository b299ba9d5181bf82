"""Cross-entry checks and inverse relations."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import entry_yaml, write_tree

from generator.catalog import Link, build_catalog
from generator.errors import ContentError
from generator.loading import load_content


def _errors(content: Path) -> list[str]:
    with pytest.raises(ContentError) as caught:
        build_catalog(load_content(content))
    return [p.format() for p in caught.value.problems]


def test_inverse_relation_is_shown_on_the_other_entry(content: Path) -> None:
    catalog = build_catalog(load_content(content))
    assert catalog.links["first-failure"] == [Link("causes", "second-failure", True)]
    assert catalog.links["second-failure"] == [Link("caused-by", "first-failure", False)]
    assert {k: t.entries for k, t in catalog.taxonomies["categories"].items()} == {
        "distributed-training": ["first-failure"], "memory": ["second-failure"]}
    assert catalog.taxonomies["tags"]["nccl"].entries == ["first-failure", "second-failure"]
    assert list(catalog.taxonomies["severities"]) == ["high"]



def test_an_entrys_relations_keep_its_files_order_then_others_by_id(content: Path) -> None:
    """"Caused by" lists the causes in the order the entry gives them (the most frequent first),
    then those that name it as their effect, by ID: never by slug."""
    write_tree(content, {
        "failures/second-failure.yaml": entry_yaml("MTF-0002", "Second failure", "- slug: fourth\n  type: caused-by\n"
                                                   "- slug: third\n  type: caused-by\n", category="memory"),
        "failures/third.yaml": entry_yaml("MTF-0003", "Third"),
        "failures/fourth.yaml": entry_yaml("MTF-0004", "Fourth"),
        "failures/aardvark.yaml": entry_yaml("MTF-0006", "Aardvark", "- slug: second-failure\n  type: causes\n"),
    })
    links = build_catalog(load_content(content)).links["second-failure"]
    assert [(l.slug, l.declared) for l in links] == [("fourth", True), ("third", True), ("first-failure", False), ("aardvark", False)]


def test_a_catalog_takes_the_previous_ones_links_only_while_relations_and_ids_are_the_same(content: Path) -> None:
    """serve passes the last build's catalog: its links are taken again when no relation, ID or
    alias changed (equal models from re-read files count as unchanged), and made afresh otherwise."""
    write_tree(content, {"failures/third.yaml": entry_yaml("MTF-0003", "Third", "- slug: second-failure\n  type: causes\n"),
                         "failures/fourth.yaml": entry_yaml("MTF-0004", "Fourth", "- slug: second-failure\n  type: causes\n")})
    first = build_catalog(load_content(content))
    assert build_catalog(load_content(content), first).links is first.links
    write_tree(content, {"failures/third.yaml": entry_yaml("MTF-0005", "Third", "- slug: second-failure\n  type: causes\n")})
    renumbered = build_catalog(load_content(content), first)
    assert [l.slug for l in renumbered.links["second-failure"]] == ["first-failure", "fourth", "third"]  # by ID
    write_tree(content, {"failures/first-failure.yaml": entry_yaml("MTF-0001", "First failure", "- slug: second-failure\n  type: see-also\n")})
    relinked = build_catalog(load_content(content), renumbered)
    assert relinked.links["second-failure"][-1] == Link("see-also", "first-failure", False)

@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {"failures/third.yaml": entry_yaml("MTF-0001", "Third")},
            "content/failures/third.yaml:1:5: id: 'MTF-0001' is already used by content/failures/first-failure.yaml (expected a unique ID) [E020 duplicate-id]",
            id="duplicate-id",
        ),
        pytest.param(
            {"failures/third.yaml": entry_yaml("MTF-0003", "Third", "- slug: no-such-entry\n  type: see-also\n")},
            "content/failures/third.yaml:21:11: related[0].slug: no entry 'no-such-entry' (expected the slug of an existing entry) [E022 dangling-relation]",
            id="dangling-relation",
        ),
        pytest.param(
            {"failures/third.yaml": entry_yaml("MTF-0003", "Third", "- slug: third\n  type: see-also\n")},
            "content/failures/third.yaml:21:11: related[0].slug: 'third' is this entry (expected another entry) [E023 self-relation]",
            id="self-relation",
        ),
        pytest.param(
            {"failures/third.yaml": entry_yaml("MTF-0003", "Third", category="nowhere")},
            "content/failures/third.yaml:3:11: category: 'nowhere' is not a category (expected one of: distributed-training, memory) [E021 unknown-category]",
            id="unknown-category",
        ),
        pytest.param(
            {"failures/third.yaml": entry_yaml("MTF-0003", "Third", "- slug: first-failure\n  type: causes\n- slug: first-failure\n  type: caused-by\n")},
            "content/failures/third.yaml:24:11: related[1].type: third both causes and is caused by first-failure (expected one direction) [E025 contradictory-relation]",
            id="causes-and-caused-by",
        ),
        pytest.param(
            {"failures/second-failure.yaml": entry_yaml("MTF-0002", "Second", "- slug: first-failure\n  type: causes\n")},
            "content/failures/first-failure.yaml:22:11: related[0].type: first-failure causes second-failure, but content/failures/second-failure.yaml:22:11 says second-failure causes first-failure (expected one consistent direction) [E025 contradictory-relation]",
            id="both-sides-cause",
        ),
    ],
)
def test_cross_entry_problem(content: Path, files: dict[str, str], expected: str) -> None:
    write_tree(content, files)
    assert expected in _errors(content)


def test_hub_rows_must_link_existing_entries_and_documented_variables(content: Path) -> None:
    write_tree(content, {"hubs/nccl.yaml": """\
        title: NCCL errors
        summary: Side by side.
        rows:
          - anchor: timeout
            error: Watchdog timeout
            says: A collective took too long.
            indicates: A rank is missing.
            where: Elsewhere.
            env: [NCCL_DEBUG]
            entries: [first-failure, missing-entry]
        """})
    assert _errors(content) == [
        "content/hubs/nccl.yaml:9:11: rows[0].env[0]: NCCL_DEBUG is not in env_vars (expected every variable a row names to be explained) [E028 undocumented-env-var]",
        "content/hubs/nccl.yaml:10:30: rows[0].entries[1]: no entry 'missing-entry' (expected the slug of an existing entry) [E026 dangling-hub-entry]",
    ]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {"failures/third.yaml": entry_yaml("MTF-0003", "Third", extra="aliases: [first-failure]\n")},
            "content/failures/third.yaml:20:11: aliases[0]: 'first-failure' is the slug of a live entry, content/failures/first-failure.yaml (expected an old slug no entry uses) [E050 alias-collision]",
            id="alias-is-live-slug",
        ),
        pytest.param(
            {"failures/third.yaml": entry_yaml("MTF-0003", "Third", extra="aliases: [old-name]\n"),
             "failures/fourth.yaml": entry_yaml("MTF-0004", "Fourth", extra="aliases: [old-name]\n")},
            "content/failures/third.yaml:20:11: aliases[0]: 'old-name' is already an alias of content/failures/fourth.yaml (expected each old slug on one entry) [E050 alias-collision]",
            id="alias-twice",
        ),
        pytest.param(
            {"ledger.yaml": "MTF-0001: [first-failure, first-name]\nMTF-0002: [second-failure]\n"},
            "content/ledger.yaml:1:27: MTF-0001[1]: 'first-name' was published for MTF-0001 but no longer leads to it (expected 'first-name' in the aliases of content/failures/first-failure.yaml) [E051 broken-permalink]",
            id="renamed-without-alias",
        ),
        pytest.param(
            {"ledger.yaml": "MTF-0001: [first-failure]\nMTF-0002: [second-failure]\nMTF-0007: [deleted-entry]\n"},
            "content/ledger.yaml:3:12: MTF-0007[0]: 'deleted-entry' was published for MTF-0007 but no longer leads to it (expected 'deleted-entry' in the aliases of the entry that replaced it) [E051 broken-permalink]",
            id="deleted-entry",
        ),
    ],
)
def test_permalink_problem(content: Path, files: dict[str, str], expected: str) -> None:
    write_tree(content, files)
    assert expected in _errors(content)


def test_merged_entry_id_redirects_through_the_alias(content: Path) -> None:
    write_tree(content, {
        "ledger.yaml": "MTF-0001: [first-failure]\nMTF-0002: [second-failure]\nMTF-0007: [merged-away]\n",
        "failures/second-failure.yaml": entry_yaml("MTF-0002", "Second failure", extra="aliases: [merged-away]\n"),
    })
    catalog = build_catalog(load_content(content))
    assert catalog.ids["MTF-0007"] == "second-failure"
    assert catalog.aliases == {"merged-away": "second-failure"}
