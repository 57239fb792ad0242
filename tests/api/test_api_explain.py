"""``GET /events/{id}`` and ``POST /subscriptions/{id}/explain`` on a real ``semps serve``:
the stored document, its triples and its closure; explanations of a match and of a
non-match, of a posted and of a stored event; and the tenant rules (a publisher reads its
own events, a subscriber those that notified its subscriptions, an admin all; no one
explains another's subscription)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from semps_test_support import Server

from semps.terms import RDF_TYPE

EX = "http://example.org/"
TTL = {"Content-Type": "text/turtle"}
ONTOLOGY = f"""@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
<{EX}Sensor> a owl:Class . <{EX}Point> a owl:Class .
<{EX}Sensor> rdfs:subClassOf <{EX}Point> .
"""
EVENT = f"<{EX}s1> a <{EX}Sensor> ; <{EX}value> 71 ."
POINTS = f"SELECT ?p WHERE {{ ?p a <{EX}Point> }}"
HOT = f"SELECT ?p ?v WHERE {{ ?p a <{EX}Point> ; <{EX}value> ?v FILTER(?v > 80) }}"


def _explained(client: httpx.Client, sub_id: str, event: str = EVENT) -> httpx.Response:
    """``sub_id`` explained on ``event``, posted with the request (Turtle)."""
    return client.post(f"/subscriptions/{sub_id}/explain", content=event, headers=TTL)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(Path(tmp_path_factory.mktemp("explain")) / "data") as srv:
        with srv.client("admin") as admin:
            answer = admin.put("/ontology", content=ONTOLOGY, headers=TTL)
            assert answer.status_code == 200, answer.text
        yield srv


@pytest.fixture(scope="module")
def published(server: Server) -> dict[str, str]:
    """Two subscribers' subscriptions, and an event that notifies one of them."""
    ann, bob = server._token("subscriber", "ann"), server._token("subscriber", "bob")
    with server.bearer(ann) as a, server.bearer(bob) as b:
        points = a.post("/subscriptions", content=POINTS).json()["id"]
        hot = b.post("/subscriptions", content=HOT).json()["id"]
    with server.client("publisher") as publisher:
        answer = publisher.post("/events", content=EVENT, headers=TTL).json()
    assert answer["matched"] == 1
    return {"ann": ann, "bob": bob, "points": points, "hot": hot, "event": answer["id"]}


def test_a_publisher_reads_its_event_as_stored_and_after_inference(
    server: Server, published: dict[str, str]
) -> None:
    event_id = published["event"]
    with server.client("publisher") as publisher:
        plain = publisher.get(f"/events/{event_id}").json()
        closed = publisher.get(f"/events/{event_id}?closed=true").json()
    assert plain["document"] == EVENT and plain["media_type"] == "text/turtle"
    assert [f"<{EX}s1>", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", f"<{EX}Point>"] in (
        closed["triples"]
    )
    assert len(plain["triples"]) == 2 and plain["inferred"] == 0
    assert closed["inferred"] >= 1 and len(closed["triples"]) == 2 + closed["inferred"]


def test_a_subscriber_reads_only_the_events_that_notified_it(
    server: Server, published: dict[str, str]
) -> None:
    event_id = published["event"]
    with server.bearer(published["ann"]) as ann, server.bearer(published["bob"]) as bob:
        assert ann.get(f"/events/{event_id}").status_code == 200
        refused = bob.get(f"/events/{event_id}")
    assert refused.status_code == 404
    assert refused.json() == {"error": "not_found", "detail": f"no event '{event_id}'"}


def test_another_publisher_cannot_read_the_event_and_an_unknown_one_looks_the_same(
    server: Server, published: dict[str, str]
) -> None:
    other = server._token("publisher", "someone-else")
    with server.bearer(other) as publisher:
        theirs = publisher.get(f"/events/{published['event']}")
        unknown = publisher.get("/events/ev-nope-1")
    assert theirs.status_code == unknown.status_code == 404
    assert unknown.json()["detail"] == "no event 'ev-nope-1'"


def test_the_explanation_of_a_stored_match_names_the_inference(
    server: Server, published: dict[str, str]
) -> None:
    path = f"/subscriptions/{published['points']}/explain?event={published['event']}"
    with server.bearer(published["ann"]) as ann:
        found = ann.post(path).json()
    assert (found["matched"], found["count"]) == (True, 1)
    (derivation,) = found["derivations"]
    assert derivation["rule"] == "cax-sco"
    assert derivation["axioms"] == [
        f"<{EX}Sensor> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <{EX}Point> ."
    ]
    assert found["text"].startswith(f"{published['points']} matches {published['event']}")


def test_the_explanation_of_a_posted_non_match_names_the_filter_and_its_values(
    server: Server, published: dict[str, str]
) -> None:
    with server.bearer(published["bob"]) as bob:
        found = _explained(bob, published["hot"]).json()
    assert found["matched"] is False
    (reason,) = found["reasons"]
    assert reason["step"] == "filter" and "?v > " in reason["message"]
    assert reason["nearest"] == [
        {"kind": "values", "text": '?v = "71"^^<http://www.w3.org/2001/XMLSchema#integer>'}
    ]


def test_no_one_explains_another_subscription_or_an_event_not_theirs(
    server: Server, published: dict[str, str]
) -> None:
    with server.bearer(published["bob"]) as bob:
        theirs = _explained(bob, published["points"])
        stored = bob.post(f"/subscriptions/{published['hot']}/explain?event={published['event']}")
    assert theirs.status_code == 404 and theirs.json()["detail"].startswith("no subscription")
    assert stored.status_code == 404 and stored.json()["detail"].startswith("no event")


def test_an_explanation_without_an_event_or_of_a_bad_one_is_a_clear_400(
    server: Server, published: dict[str, str]
) -> None:
    path = f"/subscriptions/{published['hot']}/explain"
    with server.bearer(published["bob"]) as bob:
        empty = bob.post(path, headers=TTL)
        broken = bob.post(path, content="<a> <b> .", headers=TTL)
    assert empty.status_code == 400 and "?event=ID" in empty.json()["detail"]
    assert broken.status_code == 400 and broken.json()["error"] == "bad_event"


def test_a_content_subscription_is_not_explained_and_a_json_event_shows_no_triples(
    server: Server, published: dict[str, str]
) -> None:
    with server.bearer(published["ann"]) as ann:
        text = {"Content-Type": "text/plain"}
        sub_id = ann.post("/subscriptions?kind=content", content="price <= 20", headers=text)
        assert sub_id.status_code == 201, sub_id.text
        sub_id = sub_id.json()["id"]
        with server.client("publisher") as publisher:
            event_id = publisher.post("/events", json={"values": {"price": 12}}).json()["id"]
        refused = ann.post(f"/subscriptions/{sub_id}/explain?event={event_id}")
        shown = ann.get(f"/events/{event_id}").json()
    assert refused.status_code == 400
    assert refused.json()["detail"] == "a JSON event has no triples to show or explain (send RDF)"
    assert (shown["triples"], shown["media_type"]) == ([], "application/json")
    with server.bearer(published["ann"]) as ann:
        posted = _explained(ann, sub_id)
    assert posted.status_code == 422
    assert posted.json() == {
        "error": "not_supported",
        "detail": "the content matcher does not explain its matches",
    }


def test_a_service_told_to_keep_no_event_documents_shows_none(tmp_path: Path) -> None:
    with Server(tmp_path / "data", extra=("--keep-event-bytes", "0")) as srv:
        with srv.client("publisher") as publisher:
            event_id = publisher.post("/events", content=EVENT, headers=TTL).json()["id"]
            answer = publisher.get(f"/events/{event_id}")
    assert answer.status_code == 404
    assert answer.json()["detail"] == f"no event '{event_id}'"


def test_an_explanation_reads_the_service_s_knowledge_graph(
    server: Server, published: dict[str, str]
) -> None:
    with server.client("admin") as admin:
        fact = f"<{EX}t2> <{EX}partOf> <{EX}ahu2> ."
        loaded = admin.post("/graph", content=fact, headers=TTL)
        assert loaded.status_code in (200, 201, 204), loaded.text
    query = f"SELECT ?p ?e WHERE {{ ?p a <{EX}Point> ; <{EX}partOf> ?e }}"
    with server.bearer(published["ann"]) as ann:
        sub_id = ann.post("/subscriptions", content=query).json()["id"]
        event = f"<{EX}t2> a <{EX}Sensor> ."
        found = _explained(ann, sub_id, event).json()
    assert (found["matched"], found["count"]) == (True, 1)
    assert found["solutions"][0]["triples"] == [
        {"triple": f"<{EX}t2> <{RDF_TYPE}> <{EX}Point> .", "source": "inferred"},
        {"triple": f"<{EX}t2> <{EX}partOf> <{EX}ahu2> .", "source": "graph"},
    ]
