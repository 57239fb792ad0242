"""The merged index filters subscriptions beyond basic graph patterns by their required
part: an OPTIONAL part never prunes, a UNION is a candidate when one branch's required part
is hit, a path's first step anchors it; and matching them stays within the work budget."""

from __future__ import annotations

import pytest

from semps.event import Event
from semps.matcher.base import MatchContext
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.values import Subscription
from semps.ontology import compile_axioms
from semps.terms import OWL, RDFS, XSD, Literal

E = "http://e/"
P = f"PREFIX : <{E}> "


def _event(*triples: tuple[str, str, object], eid: str = "e") -> Event:
    return Event(
        eid, tuple((E + s, E + p, E + o if isinstance(o, str) else o) for s, p, o in triples)
    )


def _candidates(matcher: SemanticMatcher, event: Event) -> list[str]:
    pairs = EventPairs(MatchContext(event).parts)
    return [s.id for s in matcher.index.algebra_candidates(pairs)]


def _matcher(**subs: str) -> SemanticMatcher:
    m = SemanticMatcher()
    for sub_id, text in subs.items():
        m.add(Subscription(sub_id, "semantic", P + text))
    return m


def test_an_optional_part_never_prunes_and_the_required_part_does() -> None:
    m = _matcher(opt="SELECT * { ?x :p ?y OPTIONAL { ?y :label ?l } }")
    assert _candidates(m, _event(("a", "q", "b"))) == []
    only_required = _event(("a", "p", "b"))
    assert _candidates(m, only_required) == ["opt"]
    (match,) = m.match(MatchContext(only_required))
    assert match.solutions == ({"x": E + "a", "y": E + "b"},)  # ?l unbound: left out


def test_a_union_is_a_candidate_when_any_branch_is_hit() -> None:
    m = _matcher(u="SELECT ?x { { ?x :p :c } UNION { ?x :q ?y . ?y :r 1 } }")
    assert _candidates(m, _event(("a", "p", "c"))) == ["u"]
    assert _candidates(m, _event(("a", "q", "b"))) == []  # the second branch needs :r too
    one = Literal("1", XSD + "integer")
    assert _candidates(m, _event(("a", "q", "b"), ("b", "r", "x"))) == []
    assert _candidates(m, _event(("a", "q", "b"), ("b", "r", one))) == ["u"]
    assert _candidates(m, _event(("a", "p", "d"))) == []  # the constant :c anchors


def test_a_path_is_anchored_by_its_first_step_from_a_fixed_subject() -> None:
    m = _matcher(path="SELECT ?y { :a :feeds+ ?y }")
    assert _candidates(m, _event(("b", "feeds", "c"))) == []
    chain = _event(("a", "feeds", "b"), ("b", "feeds", "c"))
    assert _candidates(m, chain) == ["path"]
    (match,) = m.match(MatchContext(chain))
    assert match.count == 2


def test_a_variable_predicate_is_anchored_by_its_constant_end() -> None:
    m = _matcher(s="SELECT ?p { :a ?p ?o }", o="SELECT ?p { ?s ?p :a }")
    assert _candidates(m, _event(("b", "q", "c"))) == []
    assert _candidates(m, _event(("a", "q", "c"))) == ["s"]
    assert _candidates(m, _event(("c", "r", "a"))) == ["o"]
    event = _event(("a", "q", "c"), ("a", "r", "a"))
    found = {
        x.subscription: sorted(s["p"] for s in x.solutions) for x in m.match(MatchContext(event))
    }
    assert found == {"s": [E + "q", E + "r"], "o": [E + "r"]}
    assert (
        m.subscription_items(Subscription("s", "semantic", P + "SELECT ?p { :a ?p ?o }"))
        == frozenset()
    )


def test_what_requires_nothing_is_a_candidate_of_every_event() -> None:
    m = _matcher(
        ask="ASK { FILTER(2 IN (1, 2)) }",
        star="SELECT * { ?x :p* ?y }",
        spo="SELECT * { ?s ?p ?o }",
    )
    event = _event(("a", "q", "b"))
    assert _candidates(m, event) == ["ask", "spo", "star"]
    assert {x.subscription: x.count for x in m.match(MatchContext(event))} == {
        "ask": 1,
        "spo": 1,
        "star": 2,  # the zero-length paths of :a and :b
    }


def test_paths_follow_edges_that_exist_only_through_the_closure() -> None:
    ontology = compile_axioms(
        [
            (E + "isFedBy", OWL + "inverseOf", E + "feeds"),
            (E + "feedsAir", RDFS + "subPropertyOf", E + "feeds"),
        ]
    )
    m = _matcher(path="SELECT ?y { :ahu :feeds+ ?y }")
    event = _event(("vav", "isFedBy", "ahu"), ("vav", "feedsAir", "zone"))
    (match,) = m.match(MatchContext(event, ontology))
    assert sorted(s["y"] for s in match.solutions) == [E + "vav", E + "zone"]
    assert m.match(MatchContext(event)) == []  # without the ontology: no feeds edge


def test_removing_and_replacing_a_subscription_updates_its_alternatives() -> None:
    m = _matcher(u="SELECT * { { ?x :p ?y } UNION { ?x :q ?y } }")
    m.add(Subscription("u", "semantic", P + "SELECT * { ?x :r ?y OPTIONAL { ?x :p ?z } }"))
    assert _candidates(m, _event(("a", "p", "b"))) == []
    assert _candidates(m, _event(("a", "r", "b"))) == ["u"]
    m.remove("u")
    assert _candidates(m, _event(("a", "r", "b"))) == []
    assert len(m) == 0


def test_placement_items_are_those_every_alternative_requires() -> None:
    m = SemanticMatcher()
    union = Subscription(
        "u", "semantic", P + "SELECT * { ?x a :C { ?x :p ?y } UNION { ?x :q ?y } }"
    )
    assert m.subscription_items(union) == frozenset({"a <http://e/C>"})
    optional = Subscription("o", "semantic", P + "SELECT * { ?x :p ?y OPTIONAL { ?y :q ?z } }")
    assert m.subscription_items(optional) == frozenset({E + "p"})


def test_a_path_over_a_long_chain_is_cut_by_the_work_budget_not_run_to_the_end() -> None:
    chain = Event("chain", tuple((f"{E}n{i}", E + "p", f"{E}n{i + 1}") for i in range(100)))
    text = P + "SELECT * { ?x :p+ ?y }"
    exact = SemanticMatcher()
    exact.add(Subscription("s", "semantic", text))
    (match,) = exact.match(MatchContext(chain))
    assert match.count == 100 * 101 // 2
    cut = SemanticMatcher(step_budget=1_000)
    cut.add(Subscription("s", "semantic", text))
    assert cut.match(MatchContext(chain)) == []


def test_identical_algebra_subscriptions_share_one_evaluation_and_answer_alike() -> None:
    m = _matcher(**{f"s{i}": "SELECT ?x { ?x :p ?y OPTIONAL { ?y :q ?z } }" for i in range(5)})
    event = _event(("a", "p", "b"), ("b", "q", Literal("1")))
    found = m.match(MatchContext(event))
    assert [x.subscription for x in found] == [f"s{i}" for i in range(5)]
    assert {x.count for x in found} == {1}


@pytest.mark.parametrize("workers", [2])
def test_worker_processes_answer_as_one_process_does(workers: int) -> None:
    subs = {
        "opt": "SELECT * { ?x :p ?y OPTIONAL { ?y :q ?z } }",
        "union": "SELECT ?x { { ?x :p ?y } UNION { ?x :q ?y } }",
        "path": "SELECT * { ?x :p+ ?y }",
        "bgp": "SELECT * { ?x :p ?y }",
    }
    events = [
        _event(("a", "p", "b"), ("b", "q", "c"), eid="e1"),
        _event(("a", "q", "b"), eid="e2"),
        _event(("a", "p", "b"), ("b", "p", "c"), eid="e3"),
    ]
    contexts = [MatchContext(e) for e in events]
    single = _matcher(**subs)
    many = SemanticMatcher(workers=workers)
    for sub_id, text in subs.items():
        many.add(Subscription(sub_id, "semantic", P + text))
    try:
        assert many.count_batch(contexts) == single.count_batch(contexts)
        want = [[(m.subscription, m.count) for m in ms] for ms in single.match_batch(contexts)]
        got = [[(m.subscription, m.count) for m in ms] for ms in many.match_batch(contexts)]
        assert got == want
        assert [m.subscription for m in many.match(contexts[0])] == [
            "bgp",
            "opt",
            "path",
            "union",
        ]
    finally:
        many.close()


def test_past_the_event_cache_bound_answers_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    from semps.ingest.sparql import evaluate

    chain = Event("chain", tuple((f"{E}n{i}", E + "p", f"{E}n{i + 1}") for i in range(30)))
    texts = {"a": "SELECT * { ?x :p+ ?y }", "b": "SELECT * { ?x :p* ?y OPTIONAL { ?y :p ?z } }"}
    cached = {x.subscription: x.count for x in _matcher(**texts).match(MatchContext(chain))}
    monkeypatch.setattr(evaluate, "CACHE_ROWS", 10)
    bounded = {x.subscription: x.count for x in _matcher(**texts).match(MatchContext(chain))}
    assert bounded == cached == {"a": 30 * 31 // 2, "b": 31 * 32 // 2}
