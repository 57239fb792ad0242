"""The service's semantic snapshot extended in parts: subscriptions added while a worker
runs leave their parses in a part beside the snapshot, the next start parses none of them
and rewrites nothing, and the parts are folded in only when a start parses anyway, when
they hold deleted subscriptions' texts, or when a part is damaged. What registers never
depends on them (the index answers as the one built from text). A start from a saved index
that adds few subscriptions reads none of them, and saving that index folds them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from semps.ingest.sparql import parse_query
from semps.limits import DEFAULT_LIMITS
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic.snapshot import read_snapshot, save_snapshot
from semps.matcher.semantic.snapshot_memo import (
    fold_snapshot,
    parts_of,
    snapshot_extension,
    snapshot_memo,
)
from semps.matcher.values import Subscription

EX = "http://ex/"
SUBS = [
    Subscription("s1", "semantic", f"SELECT * {{ ?x a <{EX}C> ; <{EX}p> ?v FILTER(?v > 2) }}"),
    Subscription("s2", "semantic", f"ASK {{ ?x <{EX}p>+ ?y OPTIONAL {{ ?y <{EX}q> ?z }} }}"),
    Subscription("s3", "semantic", f"SELECT ?x {{ ?x <{EX}q> ?y . ?y <{EX}r> ?z }}"),
    Subscription("s4", "semantic", f"SELECT ?x {{ ?x a <{EX}D> }}"),
]


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    """The snapshot's path after a worker's life: started with ``SUBS[:1]`` (the snapshot
    written), then added ``SUBS[1:3]`` and extended the snapshot with their parses (one
    part)."""
    path = tmp_path / "semantic.snap"
    matcher = SemanticMatcher()
    with snapshot_memo(path, SUBS[:1]):
        matcher.add(SUBS[0])
    with snapshot_extension(path) as write:
        for sub in SUBS[1:3]:
            matcher.add(sub)
    assert write() == path.with_name(path.name + ".part1")
    return path


def files(path: Path) -> dict[str, bytes]:
    """The snapshot at ``path`` and its parts, by name."""
    return {p.name: p.read_bytes() for p in [path, *parts_of(path)]}


def start(path: Path, subs: list[Subscription]) -> SemanticMatcher:
    matcher = SemanticMatcher()
    with snapshot_memo(path, subs):
        for sub in subs:
            matcher.add(sub)
    return matcher


def test_a_start_after_additions_parses_none_and_rewrites_nothing(
    snapshot: Path, count_parses: Callable[[], list[str]]
) -> None:
    before = files(snapshot)
    parsed = count_parses()
    matcher = start(snapshot, SUBS[:3])
    assert len(matcher) == 3
    assert len(parsed) == 2  # one spot check in the snapshot, one in the part
    assert files(snapshot) == before


def test_a_start_that_parses_folds_the_parts_into_the_snapshot(
    snapshot: Path, count_parses: Callable[[], list[str]]
) -> None:
    parsed = count_parses()
    start(snapshot, SUBS)  # s4 is in neither
    assert SUBS[3].text in parsed
    assert read_snapshot(snapshot).subscriptions == tuple(SUBS)
    assert parts_of(snapshot) == []


def test_a_deleted_subscriptions_text_folds_the_parts(snapshot: Path) -> None:
    start(snapshot, SUBS[1:3])  # s1 deleted
    assert read_snapshot(snapshot).subscriptions == tuple(SUBS[1:3])
    assert parts_of(snapshot) == []


def test_a_damaged_part_is_read_as_empty_and_replaced(snapshot: Path) -> None:
    (part,) = parts_of(snapshot)
    part.write_bytes(part.read_bytes()[:-5])
    matcher = start(snapshot, SUBS[:3])
    assert len(matcher) == 3
    assert read_snapshot(snapshot).subscriptions == tuple(SUBS[:3])
    assert parts_of(snapshot) == []


def test_parts_are_numbered_on_and_a_block_that_parsed_nothing_writes_none(
    tmp_path: Path,
) -> None:
    path = tmp_path / "semantic.snap"
    save_snapshot(path, [], {}, DEFAULT_LIMITS)
    for text in (SUBS[0].text, SUBS[1].text):
        with snapshot_extension(path) as write:
            parse_query(text)
        write()
    with snapshot_extension(path) as write:
        pass
    assert write() is None
    assert [p.name for p in parts_of(path)] == ["semantic.snap.part1", "semantic.snap.part2"]
    assert set(read_snapshot(parts_of(path)[1]).queries) == {SUBS[1].text}


def test_a_block_adding_few_of_its_subscriptions_neither_reads_nor_writes_the_snapshot(
    snapshot: Path, count_parses: Callable[[], list[str]]
) -> None:
    before = files(snapshot)
    parsed = count_parses()
    matcher = SemanticMatcher()
    everyone = [*SUBS, *(Subscription(f"x{i}", "semantic", SUBS[0].text) for i in range(20))]
    with snapshot_memo(snapshot, everyone, adding=1):  # a start from a saved index adds one
        matcher.add(SUBS[1])
    assert parsed == [SUBS[1].text]  # parsed, though its part holds it: nothing was read
    assert files(snapshot) == before


def test_folding_keeps_the_registered_subscriptions_parses_and_removes_the_parts(
    snapshot: Path, count_parses: Callable[[], list[str]]
) -> None:
    # s1 in the snapshot, s2 and s3 in a part
    fold_snapshot(snapshot, SUBS[1:3])  # s1 deleted since
    assert read_snapshot(snapshot).subscriptions == tuple(SUBS[1:3])
    assert set(read_snapshot(snapshot).queries) == {s.text for s in SUBS[1:3]}
    assert parts_of(snapshot) == []
    folded = snapshot.read_bytes()
    fold_snapshot(snapshot, SUBS[1:3])  # nothing to fold: nothing written
    assert snapshot.read_bytes() == folded
    parsed = count_parses()
    start(snapshot, SUBS[1:3])
    assert len(parsed) == 1  # the spot check alone
