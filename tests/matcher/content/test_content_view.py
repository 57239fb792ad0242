"""The attribute view of events: JSON values, and RDF literals expanded through the
ontology, so a content subscription on a super-property sees a sub-property's literal."""

from __future__ import annotations

from semps.event import Event
from semps.ingest.rdf import read_event
from semps.matcher.base import MatchContext
from semps.matcher.content import ContentMatcher, attribute_view
from semps.matcher.values import Subscription
from semps.ontology import load_expansion

EX = "http://ex.org/"
ONTOLOGY = f"""
@prefix ex: <{EX}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:listPrice rdfs:subPropertyOf ex:price .
""".encode()
EVENT = f"""
@prefix ex: <{EX}> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:item1 ex:listPrice 12 ; ex:colour "red"@en ; ex:made "2024-01-01"^^xsd:date .
ex:item2 ex:listPrice "7.5"^^xsd:decimal ; ex:owner ex:bob .
""".encode()


def test_rdf_literals_become_attributes_under_the_ontology() -> None:
    event = read_event(EVENT, event_id="e", media_type="text/turtle")
    view = attribute_view(
        event, MatchContext(event, load_expansion(ONTOLOGY, media_type="text/turtle"))
    )
    assert view[EX + "listPrice"] == (12, 7.5)
    assert view[EX + "price"] == (12, 7.5)  # the super-property sees both literals
    assert view[EX + "colour"] == ("red",)
    assert view[EX + "made"] == ("2024-01-01",)
    assert EX + "owner" not in view  # an IRI object is not an attribute value


def test_a_subscription_on_a_super_property_matches_a_sub_property_literal() -> None:
    event = read_event(EVENT, event_id="e", media_type="text/turtle")
    context = MatchContext(event, load_expansion(ONTOLOGY, media_type="text/turtle"))
    matcher = ContentMatcher()
    matcher.add(Subscription("cheap", "content", f"<{EX}price> <= 8"))
    matcher.add(Subscription("mid", "content", f"<{EX}price> between 8 and 10"))
    matcher.add(Subscription("red", "content", f'<{EX}colour> = "red" and <{EX}price> >= 10'))
    assert [m.subscription for m in matcher.match(context)] == ["cheap", "red"]
    assert matcher.match(MatchContext(event)) == []  # no ontology: no ex:price


def test_json_values_and_rdf_literals_share_one_view() -> None:
    event = Event("e", values={"a0": 0.5, "colour": "red"}, triples=(("_:x", "colour", "_:y"),))
    assert attribute_view(event) == {"a0": (0.5,), "colour": ("red",)}


def test_batches_answer_like_single_events() -> None:
    matcher = ContentMatcher("hcem", buckets=3, min_batch=1)
    for i in range(20):
        matcher.add(Subscription(f"s{i}", "content", f"a between {i / 20} and {i / 20 + 0.3}"))
    events = [Event(f"e{i}", values={"a": i / 10}) for i in range(12)]
    contexts = [MatchContext(e) for e in events]
    single = [matcher.match(c) for c in contexts]
    assert matcher.match_batch(contexts) == single
    assert [m.subscription for m in single[5]] == ["s10", "s4", "s5", "s6", "s7", "s8", "s9"]
