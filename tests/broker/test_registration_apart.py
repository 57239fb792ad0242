"""New subscriptions checked apart and indexed after (semps.broker.registration): each
worker checks its share of a group (refusing what adding would refuse, indexing nothing),
then every worker indexes the whole group reusing the checks' parses, so no text is parsed
twice, and the snapshot's next part still holds every parse for the next start."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path

import pytest

from semps.broker.worker import Worker
from semps.event import Event
from semps.ingest.sparql import parser
from semps.matcher.base import MatchContext
from semps.matcher.semantic import SemanticMatcher
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


def checked() -> tuple[dict[str, object], list[bytes]]:
    """Each share checked by its own worker: every subscription's outcome, and the works."""
    outcomes: dict[str, object] = {}
    works = []
    for share in shares():
        results, work = Worker().check(share)
        outcomes.update((s.id, r) for s, r in zip(share, results, strict=True))
        works.append(work)
    return outcomes, works


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
    outcomes, _ = worker.check(SUBS)
    added = Worker().add_many(SUBS)
    assert [o is None for o in outcomes] == [a is None for a in added]
    assert [o[0] for o in outcomes if o] == [a[0] for a in added if a]
    assert [o is None for o in outcomes] == [True, False, True, True, True, False, True]
    assert len(worker.matcher("semantic")) == 0


def test_a_worker_indexes_what_others_checked_without_parsing_it_again(
    parses: list[str],
) -> None:
    outcomes, works = checked()
    good = [s for s in SUBS if outcomes[s.id] is None]
    parses.clear()
    worker = Worker()
    assert worker.index(good, works) == 0
    assert parses == []
    reference = SemanticMatcher()  # the same subscriptions added the ordinary way
    for sub in good:
        reference.add(sub)
    got = worker.matcher("semantic").match(MatchContext(EVENT))
    want = reference.match(MatchContext(EVENT))
    assert [(m.subscription, m.count) for m in got] == [(m.subscription, m.count) for m in want]
    assert {m.subscription for m in got} == {"sub-0", "sub-2", "sub-3"}


def test_the_writer_keeps_the_shipped_parses_for_the_next_start(
    tmp_path: Path, parses: list[str]
) -> None:
    outcomes, works = checked()
    good = [s for s in SUBS if outcomes[s.id] is None]
    writer = Worker()
    writer.load([], Expansion(), tmp_path, True)
    writer.index(good, works)
    writer.idle()  # writes the snapshot's next part
    parses.clear()
    restarted = Worker()
    restarted.load(good, Expansion(), tmp_path, False)
    assert len(parses) == 1  # the part's spot check (semantic.snapshot.SPOT_CHECK), no more
    assert len(restarted.matcher("semantic")) == len(good)


def test_checking_and_indexing_leave_no_cyclic_garbage() -> None:
    # They freeze what they made without a collection first (Worker._settle): that is
    # right only while they leave no garbage a collection would find.
    checked()  # once before: the modules' first use (imports, their caches) is not theirs
    gc.unfreeze()  # what anything froze before, garbage or not, is looked at once, now
    gc.collect()
    gc.disable()
    try:
        outcomes, works = checked()
        Worker().index([s for s in SUBS if outcomes[s.id] is None], works)
        del outcomes, works
        gc.unfreeze()
        assert gc.collect() == 0
    finally:
        gc.enable()
