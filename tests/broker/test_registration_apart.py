"""New subscriptions checked apart and indexed after (semps.broker.registration): each
worker checks its share of a group (refusing what adding would refuse, indexing nothing),
then every worker indexes the whole group, parsing only what it did not check itself, and
the writing worker's next snapshot part still holds every parse for the next start."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path

import pytest

from semps.broker.worker import EXTEND_AFTER, Worker
from semps.event import Event
from semps.ingest.sparql import parser
from semps.matcher.base import MatchContext
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic import matcher as matcher_module
from semps.matcher.semantic.snapshot import read_snapshot
from semps.matcher.semantic.snapshot_memo import parts_of
from semps.matcher.values import Subscription
from semps.ontology.expansion import Expansion
from semps.terms import XSD, Literal

EX = "http://ex/"
TEXTS = [
    f"SELECT ?x {{ ?x <{EX}p> ?y }}",
    "SELECT WHERE nothing",  # a syntax error
    f"SELECT ?x {{ ?x a <{EX}C> ; <{EX}q> ?v FILTER(?v > 2) }}",
    f"SELECT ?x {{ ?x <{EX}p> ?y }}",  # the first text again
    f"SELECT ?x {{ ?x <{EX}q> ?v . ?v <{EX}r> ?w }}",
    "SELECT ?x { ?x <relative> ?y }",  # refused: a relative IRI without a base
    f"SELECT ?x {{ ?x <{EX}q> ?v FILTER(regex(?v, 'a')) }}",
]
SUBS = [Subscription(f"sub-{i}", "semantic", text) for i, text in enumerate(TEXTS)]
GOOD = [s for i, s in enumerate(SUBS) if i not in (1, 5)]
EVENT = Event(
    "e1",
    triples=(
        (EX + "a", EX + "p", EX + "b"),
        (EX + "a", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type", EX + "C"),
        (EX + "a", EX + "q", Literal("3", XSD + "integer")),
    ),
)


def shares() -> tuple[list[Subscription], list[Subscription]]:
    """The group split by text between two workers, as the broker splits it."""
    where = {text: i % 2 for i, text in enumerate(dict.fromkeys(TEXTS))}
    return [s for s in SUBS if where[s.text] == 0], [s for s in SUBS if where[s.text] == 1]


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts lexed and parsed from now on."""
    seen: list[str] = []
    real: Callable[..., object] = parser._parse

    def counting(text: str, *args: object) -> object:
        seen.append(text)
        return real(text, *args)

    monkeypatch.setattr(parser, "_parse", counting)
    return seen


def test_checking_refuses_what_adding_refuses_and_indexes_nothing() -> None:
    worker = Worker()
    outcomes = worker.check(SUBS)
    added = Worker().add_many(SUBS)
    assert [o is None for o in outcomes] == [a is None for a in added]
    assert [o[0] for o in outcomes if o] == [a[0] for a in added if a]
    assert [o is None for o in outcomes] == [True, False, True, True, True, False, True]
    assert len(worker.matcher("semantic")) == 0


def test_a_worker_indexes_the_group_parsing_only_the_share_it_did_not_check(
    parses: list[str],
) -> None:
    mine, theirs = shares()
    worker = Worker()
    worker.check(mine)
    parses.clear()
    assert worker.index(GOOD) == 0
    assert sorted(set(parses)) == sorted({s.text for s in theirs if s in GOOD})
    reference = SemanticMatcher()  # the same subscriptions added the ordinary way
    for sub in GOOD:
        reference.add(sub)
    got = worker.matcher("semantic").match(MatchContext(EVENT))
    want = reference.match(MatchContext(EVENT))
    assert [(m.subscription, m.count) for m in got] == [(m.subscription, m.count) for m in want]
    assert {m.subscription for m in got} == {"sub-0", "sub-2", "sub-3"}


def test_checking_parses_and_leaves_compiling_to_the_indexing_after_the_answer(
    monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    # Compiling a parse raises nothing: the check before the answer only parses, and the
    # indexing compiles each text once, from the check's parse.
    compiled: list[str] = []
    real = matcher_module.compile_query

    def counting(sub_id: str, query: object) -> object:
        compiled.append(sub_id)
        return real(sub_id, query)  # type: ignore[arg-type]

    monkeypatch.setattr(matcher_module, "compile_query", counting)
    worker = Worker()
    assert [o is None for o in worker.check(SUBS)] == [i not in (1, 5) for i in range(len(SUBS))]
    assert compiled == [] and len(parses) == len(set(TEXTS))
    worker.index(GOOD)
    assert len(compiled) == len({s.text for s in GOOD})
    assert len(parses) == len(set(TEXTS))  # none parsed again


def test_the_writer_keeps_every_parse_of_a_checked_group_for_the_next_start(
    tmp_path: Path, parses: list[str]
) -> None:
    writer = Worker()
    now = [0.0]
    writer.clock = lambda: now[0]
    writer.load([], Expansion(), tmp_path, True)
    writer.check(shares()[0])  # parsed here, indexed (from the compiled form) below
    writer.index(GOOD)
    now[0] += EXTEND_AFTER
    writer.idle()  # writes the snapshot's next part
    parses.clear()
    restarted = Worker()
    restarted.load(GOOD, Expansion(), tmp_path, False)
    assert len(parses) == 1  # the part's spot check (semantic.snapshot.SPOT_CHECK), no more
    assert len(restarted.matcher("semantic")) == len(GOOD)


def test_the_writer_writes_the_parses_of_a_stream_of_groups_as_one_part(tmp_path: Path) -> None:
    # A group a few milliseconds, each followed by an idle moment: one part once the first
    # group's parses waited EXTEND_AFTER, not one per group (each a file and a listing).
    writer = Worker()
    now = [0.0]
    writer.clock = lambda: now[0]
    writer.load([], Expansion(), tmp_path, True)
    snap = tmp_path / "semantic.snap"
    for i, sub in enumerate(GOOD):
        group = [Subscription(f"s{i}", "semantic", sub.text)]
        assert writer.check(group) == [None]
        writer.index(group)
        assert writer.idle() == pytest.approx(EXTEND_AFTER - 0.01 * i)  # call again then
        now[0] += 0.01
    assert parts_of(snap) == []
    now[0] = EXTEND_AFTER
    writer.idle()
    (part,) = parts_of(snap)
    assert set(read_snapshot(part).queries) == {s.text for s in GOOD}


def test_checking_and_indexing_leave_no_cyclic_garbage() -> None:
    # They freeze what they made without a collection first (Worker._settle): that is
    # right only while they leave no garbage a collection would find.
    Worker().index(GOOD)  # once before: the modules' first use (imports, their caches)
    gc.unfreeze()  # what anything froze before, garbage or not, is looked at once, now
    gc.collect()
    gc.disable()
    try:
        mine, theirs = shares()
        worker = Worker()
        worker.check(mine)
        Worker().check(theirs)
        worker.index(GOOD)
        gc.unfreeze()
        assert gc.collect() == 0
    finally:
        gc.enable()
