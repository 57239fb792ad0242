"""Closing an event is bounded: transitive properties close in work proportional to what
they produce (a chain of n links yields its n(n+1)/2 pairs, no more work), and an event
whose closure passes ``max_closure_triples`` is refused as soon as it does."""

from __future__ import annotations

import owlrl
import pytest
import rdflib
from hypothesis import given, settings
from hypothesis import strategies as st

from semps.errors import EventLimitExceeded
from semps.event import Event
from semps.limits import DEFAULT_LIMITS, Limits
from semps.matcher.partab import to_partab
from semps.ontology import Expansion, compile_axioms
from semps.ontology import closure as closure_module
from semps.ontology.closure import close
from semps.terms import OWL, RDF_TYPE, RDFS

EX = "http://ex/"
P, Q, R = EX + "p", EX + "q", EX + "r"
TRANSITIVE = compile_axioms([(P, RDF_TYPE, OWL + "TransitiveProperty")])


def chain(links: int, prop: str = P) -> list[tuple[str, str, str]]:
    return [(f"{EX}n{i}", prop, f"{EX}n{i + 1}") for i in range(links)]


def all_pairs(links: int) -> set[tuple[str, str, str]]:
    return {
        (f"{EX}n{i}", P, f"{EX}n{j}") for i in range(links + 1) for j in range(i + 1, links + 1)
    }


def message(limit: int) -> str:
    return (
        f"the event closes to more than the limit of {limit} triples under the ontology "
        "(max_closure_triples, or max_closure_ratio times the event's triples when larger)"
    )


@pytest.mark.parametrize("order", ["forward", "backward", "interleaved"])
def test_a_300_link_chain_closes_to_every_pair_under_the_default_limit(order: str) -> None:
    links = chain(300)
    if order == "backward":
        links.reverse()
    elif order == "interleaved":
        links = links[::2] + links[1::2]
    closed = close(TRANSITIVE, links)
    assert len(closed) == 300 * 301 // 2 <= DEFAULT_LIMITS.max_closure_triples
    assert set(closed) == all_pairs(300)
    assert closed[:300] == links  # the originals first, in order


def test_a_400_link_chain_passes_the_default_limit_and_is_refused() -> None:
    assert 400 * 401 // 2 > DEFAULT_LIMITS.max_closure_triples == 50_000
    assert DEFAULT_LIMITS.closure_limit(400) == 50_000
    with pytest.raises(EventLimitExceeded) as info:
        close(TRANSITIVE, chain(400))
    assert str(info.value) == message(50_000)


def test_a_large_event_may_close_to_max_closure_ratio_times_its_size() -> None:
    """The limit grows with what the event sent: 10,000 triples may close to 80,000."""
    assert DEFAULT_LIMITS.closure_limit(10_000) == 80_000
    links = chain(120)  # 7,260 pairs: 60.5 times its 120 triples
    closed = close(TRANSITIVE, links, limits=Limits(max_closure_triples=100, max_closure_ratio=61))
    assert len(closed) == 7_260
    with pytest.raises(EventLimitExceeded) as info:
        close(TRANSITIVE, links, limits=Limits(max_closure_triples=100, max_closure_ratio=50))
    assert str(info.value) == message(6_000)


def _steps(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, str]]:
    """The transitive edges the closure steps through, recorded as it goes."""
    steps: list[tuple[str, str, str]] = []
    original = closure_module._Closure._on_transitive

    def counting(self: object, s: str, p: str, o: str) -> None:
        steps.append((s, p, o))
        original(self, s, p, o)  # type: ignore[arg-type]

    monkeypatch.setattr(closure_module._Closure, "_on_transitive", counting)
    return steps


def test_the_refusal_comes_before_the_rest_of_the_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 5,000-link chain closes to 12.5 million triples; with a limit of 10,000 the closure
    stops after looking at about that many, not after computing them all."""
    steps = _steps(monkeypatch)
    with pytest.raises(EventLimitExceeded, match="limit of 10000 triples"):
        close(
            TRANSITIVE, chain(5000), limits=Limits(max_closure_triples=10_000, max_closure_ratio=1)
        )
    assert len(steps) <= 10_001


def test_joining_two_long_chains_is_refused_while_queueing_not_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The last link joins 201 nodes to 201 nodes: 40,401 new pairs from one triple. The
    refusal comes inside that triple's step, before any of them is processed."""
    left = chain(200)
    right = [(f"{EX}m{i}", P, f"{EX}m{i + 1}") for i in range(200)]
    bridge = (f"{EX}n200", P, f"{EX}m0")
    limit = 50_000
    assert 2 * (200 * 201 // 2) < limit < 2 * (200 * 201 // 2) + 201 * 201
    steps = _steps(monkeypatch)
    with pytest.raises(EventLimitExceeded, match=f"limit of {limit} triples"):
        close(TRANSITIVE, [*left, *right, bridge], limits=Limits(max_closure_triples=limit))
    assert len(steps) == 2 * (200 * 201 // 2) + 1


def test_without_an_ontology_nothing_is_inferred_and_nothing_refused() -> None:
    limits = Limits(max_closure_triples=10, max_closure_ratio=1)
    assert len(close(Expansion(), chain(11), limits=limits)) == 11


def test_to_partab_passes_its_limits_to_the_closure() -> None:
    event = Event("e", tuple(chain(20)))
    assert len(to_partab(event, TRANSITIVE).part_a[P]) == 210
    with pytest.raises(EventLimitExceeded, match="limit of 209 triples"):
        to_partab(event, TRANSITIVE, limits=Limits(max_closure_triples=209))


def test_a_cycle_reaches_every_node_from_every_node_itself_included() -> None:
    cycle = [*chain(4), (f"{EX}n4", P, f"{EX}n0")]
    nodes = [f"{EX}n{i}" for i in range(5)]
    assert set(close(TRANSITIVE, cycle)) == {(a, P, b) for a in nodes for b in nodes}


# --- the same closure as owlrl, on small random graphs --------------------------------------

NODES = [f"{EX}n{i}" for i in range(6)]
AXIOMS = [
    (P, RDF_TYPE, OWL + "TransitiveProperty"),
    (P, RDF_TYPE, OWL + "ObjectProperty"),
    (Q, RDF_TYPE, OWL + "ObjectProperty"),
    (R, RDF_TYPE, OWL + "ObjectProperty"),
    (Q, RDFS + "subPropertyOf", P),
    (R, OWL + "inverseOf", P),
]


def owlrl_closure(event: list[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
    graph = rdflib.Graph()
    for s, p, o in [*AXIOMS, *event]:
        graph.add((rdflib.URIRef(s), rdflib.URIRef(p), rdflib.URIRef(o)))
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False).expand(graph)
    return {
        (str(s), str(p), str(o))
        for s, p, o in graph
        if str(s) in NODES and str(p) in (P, Q, R) and str(o) in NODES
    }


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(NODES), st.sampled_from([P, P, Q, R]), st.sampled_from(NODES)),
        min_size=1,
        max_size=14,
    )
)
def test_transitive_closure_with_subproperties_and_inverses_equals_owlrl(
    event: list[tuple[str, str, str]],
) -> None:
    ours = {t for t in close(compile_axioms(AXIOMS), event) if t[1] != RDF_TYPE}
    assert ours == owlrl_closure(event)
