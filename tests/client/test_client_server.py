"""semps.client against a real `semps serve`, each test on the sync Client and on the
AsyncClient: subscriptions, publishing in every input form (answers checked against rdflib
SPARQL over the owlrl closure), the ontology, tokens, health and metrics."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from pathlib import Path
from typing import Any

import owlrl
import pytest
import rdflib
from semps_test_support import LocalServer, QuietHandler, Server, _free_port

from semps.client import Client, DeadLetter, Notification, Published, Subscription
from semps.client import _calls as calls
from semps.errors import AuthError, IngestError, NotFound, PermissionDenied

pytestmark = pytest.mark.server

UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"


def _event_graph(demo: Path) -> rdflib.Graph:
    return rdflib.Graph().parse(demo / "events" / "e1-new-chair.rdf")


@pytest.fixture(scope="module")
def expected_chairs(demo: Path) -> list[dict[str, str]]:
    """The chairs subscription's answers on e1, from rdflib SPARQL over the owlrl closure of
    the ontology and the event (an oracle independent of semps)."""
    graph = rdflib.Graph().parse(demo / "univ-bench.owl")
    graph += _event_graph(demo)
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False).expand(graph)
    rows = graph.query((demo / "subscriptions" / "chairs.rq").read_text())
    return _canonical(
        [{str(v): row[v].n3() for v in rows.vars if row[v] is not None} for row in rows]  # type: ignore[index,union-attr]
    )


def _canonical(solutions: Any) -> list[dict[str, str]]:
    return sorted((dict(s) for s in solutions), key=lambda s: sorted(s.items()))


def _solutions(notes: list[Notification]) -> list[dict[str, str]]:
    return _canonical(s for n in notes for s in n.solutions)


# -- subscriptions ---------------------------------------------------------------------------


def test_subscribe_from_text_and_file_then_list_get_replace_delete(
    subscriber: Any, demo: Path
) -> None:
    path = demo / "subscriptions" / "chairs.rq"
    from_file = subscriber.subscribe(path, name="chairs")
    from_text = subscriber.subscribe(path.read_text(), name="chairs-text")
    assert isinstance(from_file, Subscription)
    assert from_file.text == path.read_text()
    listed = {s.id: s for s in subscriber.subscriptions()}
    assert set(listed) == {from_file.id, from_text.id}
    assert listed[from_file.id].name == "chairs"
    assert listed[from_file.id].status == "active"
    ta = (demo / "subscriptions" / "teaching-assistants.rq").read_text()
    subscriber.replace(from_text, ta, name="tas")
    got = subscriber.subscription(from_text.id)
    assert (got.text, got.name) == (ta, "tas")
    subscriber.delete(from_file)
    with pytest.raises(NotFound, match=f"no subscription '{from_file.id}'"):
        subscriber.subscription(from_file)
    assert [s.id for s in subscriber.subscriptions()] == [from_text.id]


def test_a_suspended_subscription_is_not_matched_until_resumed(
    subscriber: Any, admin: Any, publisher: Any, demo: Path
) -> None:
    sub = subscriber.subscribe(demo / "subscriptions" / "chairs.rq", name="chairs")
    suspended = admin.suspend(sub, "too noisy")
    assert (suspended.id, suspended.status, suspended.reason) == (sub.id, "suspended", "too noisy")
    assert subscriber.subscription(sub).status == "suspended"
    event = demo / "events" / "e1-new-chair.rdf"
    publisher.publish(event)
    resumed = admin.resume(sub)
    assert (resumed.id, resumed.name, resumed.status) == (sub.id, "chairs", "active")
    after = publisher.publish(event)
    assert [(n.seq, n.event) for n in subscriber.notifications(sub, once=True)] == [(1, after.id)]


def test_subscribe_many_registers_in_bulk_each_outcome_in_its_place(
    subscriber: Any, demo: Path
) -> None:
    """Five subscriptions two a request: texts, a file (named after its stem) and a named
    pair; the one that does not parse is returned as its error, the others registered."""
    chairs = demo / "subscriptions" / "chairs.rq"
    sources = [
        "SELECT ?x WHERE { ?x a <urn:a> }",
        chairs,
        "SELECT WHERE broken",
        ("SELECT ?x WHERE { ?x a <urn:b> }", "b"),
        "SELECT ?x WHERE { ?x a <urn:c> }",
    ]
    carried: list[int] = []
    outcomes = subscriber.subscribe_many(sources, chunk=2, progress=carried.append)
    assert carried == [2, 2, 1]
    assert [type(o).__name__ for o in outcomes] == [
        "Subscription",
        "Subscription",
        "SubscriptionSyntaxError",
        "Subscription",
        "Subscription",
    ]
    listed = {s.id: (s.name, s.text) for s in subscriber.subscriptions()}
    assert listed[outcomes[1].id] == ("chairs", chairs.read_text())
    assert listed[outcomes[3].id] == ("b", "SELECT ?x WHERE { ?x a <urn:b> }")
    assert len(listed) == 4


def test_listing_follows_every_page(subscriber: Any) -> None:
    """Seven subscriptions read two at a time (on a server with cursor pagination) are seven,
    each once."""
    made = {subscriber.subscribe(f"SELECT ?x WHERE {{ ?x a <urn:c{i}> }}").id for i in range(7)}
    first = subscriber.send(calls.subscriptions(cursor=None, limit=2))
    assert len(first.items) == 2 and first.next is not None  # the server does page
    listed = [s.id for s in subscriber.subscriptions(page_size=2)]
    assert sorted(listed) == sorted(made)


def test_a_listing_refused_is_raised_by_the_call_not_by_iterating(server: Server) -> None:
    """The synchronous client asks for the first page when called (the asyncio client's
    listings are async iterators: nothing is sent before the first ``async for`` step)."""
    with Client(server.url, "not-a-token") as stranger:
        with pytest.raises(AuthError, match="unknown, expired or revoked bearer token"):
            stranger.subscriptions()
    with Client(server.url, server.tokens["subscriber"]) as subscriber:
        with pytest.raises(PermissionDenied, match="needs admin"):
            subscriber.tokens()
        with pytest.raises(PermissionDenied, match="needs admin"):
            subscriber.dead_letters()


# -- publishing ------------------------------------------------------------------------------


def _forms(demo: Path, tmp: Path) -> dict[str, tuple[Any, str | None]]:
    """The chair event in every input form publish takes, serialized by rdflib."""
    graph = _event_graph(demo)
    files = {}
    for suffix, fmt in ((".ttl", "turtle"), (".nt", "nt"), (".jsonld", "json-ld")):
        path = tmp / f"e1{suffix}"
        path.write_bytes(graph.serialize(format=fmt, encoding="utf-8"))
        files[suffix] = path
    return {
        "rdfxml-bytes": ((demo / "events" / "e1-new-chair.rdf").read_bytes(), None),
        "rdfxml-file": (demo / "events" / "e1-new-chair.rdf", None),
        "turtle-text": (graph.serialize(format="turtle"), "text/turtle"),
        "turtle-file": (files[".ttl"], None),
        "ntriples-file": (files[".nt"], None),
        "jsonld-file": (files[".jsonld"], None),
        "graph": (graph, None),
    }


FORMS = [
    "rdfxml-bytes",
    "rdfxml-file",
    "turtle-text",
    "turtle-file",
    "ntriples-file",
    "jsonld-file",
    "graph",
]


@pytest.mark.parametrize("form", FORMS)
def test_publish_every_input_form_notifies_what_sparql_answers(
    form: str,
    subscriber: Any,
    publisher: Any,
    demo: Path,
    tmp_path: Path,
    expected_chairs: list[dict[str, str]],
) -> None:
    sub = subscriber.subscribe(demo / "subscriptions" / "chairs.rq")
    source, media_type = _forms(demo, tmp_path)[form]
    published = publisher.publish(source, media_type)
    assert isinstance(published, Published)
    assert published.matched >= 1
    notes = list(subscriber.notifications(sub, once=True))
    assert [n.seq for n in notes] == [1]
    assert notes[0].event == published.id
    assert notes[0].subscription == sub.id
    assert _solutions(notes) == expected_chairs
    listed = subscriber.subscription(sub)
    assert (listed.matches, listed.last_match) == (1, notes[0].time)
    # the same solutions as Python API terms (the chairs' answers are IRIs: bare str)
    as_terms = [{k: f"<{v}>" for k, v in b.items()} for n in notes for b in n.bindings()]
    assert _canonical(as_terms) == expected_chairs


TURTLE = "@prefix ex: <http://ex.org/> .\nex:a a ex:Thing ."


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (TURTLE, "media_type='text/turtle'"),
        (TURTLE.encode(), "media_type='text/turtle'"),
        ("<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .", "application/n-triples"),
        ('{"@id": "http://ex.org/a"}', "application/ld+json"),
    ],
)
def test_text_sent_without_a_media_type_is_told_which_to_pass(
    publisher: Any, source: str | bytes, said: str
) -> None:
    with pytest.raises(IngestError) as info:
        publisher.publish(source)
    assert "sent as application/rdf+xml, the default for text and bytes: pass" in str(info.value)
    assert said in str(info.value)


def test_no_hint_when_the_media_type_is_given_or_the_text_is_xml(publisher: Any) -> None:
    with pytest.raises(IngestError) as info:
        publisher.publish(TURTLE, "application/rdf+xml")
    assert "media_type" not in str(info.value)
    with pytest.raises(IngestError) as info:
        rdf = 'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"'
        publisher.publish(f"<rdf:RDF {rdf}><rdf:Description></rdf:RDF>")
    assert "media_type" not in str(info.value)
    assert publisher.publish(TURTLE, "text/turtle").matched >= 0


def test_json_events_and_a_batch_with_one_bad_item(
    subscriber: Any, publisher: Any, demo: Path
) -> None:
    content = subscriber.subscribe(
        {"constraints": [{"attr": "a1", "op": ">=", "value": 3}]}, kind="content"
    )
    first = publisher.publish({"values": {"a1": 5}})
    assert first.matched >= 1
    assert publisher.publish({"values": {"a1": 1}}).matched == 0
    results = publisher.publish_batch(
        [
            demo / "events" / "e2-new-students.rdf",
            (b"<rdf:RDF", "application/rdf+xml"),
            {"values": {"a1": 7}},
        ]
    )
    assert isinstance(results[0], Published)
    assert isinstance(results[1], IngestError)
    assert "malformed" in str(results[1])
    assert isinstance(results[2], Published) and results[2].matched >= 1
    notes = list(subscriber.notifications(content, once=True))
    assert [(n.seq, n.event) for n in notes] == [(1, first.id), (2, results[2].id)]


@pytest.mark.parametrize(
    ("source", "kind", "event", "registered"),
    [
        ({"region": {"x": [0, 1]}}, None, {"region": {"x": [0.5, 2]}}, "symmetric"),
        (
            {"constraints": [{"attr": "a1", "op": "=", "value": 4}]},
            None,
            {"values": {"a1": 4}},
            "content",
        ),
        (
            'a1 >= 3 and colour = "red"',
            "content",
            {"values": {"a1": 4, "colour": "red"}},
            "content",
        ),
    ],
    ids=["region", "constraints", "content-text"],
)
def test_content_and_region_subscriptions_in_each_form(
    source: Any,
    kind: str | None,
    event: dict[str, Any],
    registered: str,
    subscriber: Any,
    publisher: Any,
) -> None:
    sub = subscriber.subscribe(source, kind=kind)
    assert sub.kind == registered == subscriber.subscription(sub).kind
    published = publisher.publish(event)
    [note] = subscriber.notifications(sub, once=True)
    assert (note.event, note.count, note.solutions) == (published.id, 1, ())


# -- the ontology ----------------------------------------------------------------------------


def test_ontology_read_in_both_syntaxes_and_edited_by_axioms(admin: Any, demo: Path) -> None:
    turtle = rdflib.Graph().parse(data=admin.ontology("turtle"), format="turtle")
    rdfxml = rdflib.Graph().parse(data=admin.ontology("rdfxml"), format="xml")
    assert turtle.isomorphic(rdfxml)
    chair = (rdflib.URIRef(UB + "Chair"), rdflib.RDFS.subClassOf, rdflib.URIRef(UB + "Professor"))
    sub, obj = str(chair[0]), str(chair[2])
    before = admin.add_axiom("subClassOf", sub, obj)
    assert chair in rdflib.Graph().parse(data=admin.ontology("turtle"), format="turtle")
    after = admin.remove_axiom("subClassOf", sub, obj)
    assert after > before
    assert chair not in rdflib.Graph().parse(data=admin.ontology("turtle"), format="turtle")


def test_ontology_merged_from_a_graph_and_replaced_from_a_file(admin: Any, demo: Path) -> None:
    extra = rdflib.Graph()
    axiom = (rdflib.URIRef("urn:test:Dean"), rdflib.RDFS.subClassOf, rdflib.URIRef(UB + "Chair"))
    extra.add(axiom)
    extra.add((axiom[0], rdflib.RDF.type, rdflib.OWL.Class))
    merged = admin.merge_ontology(extra)
    assert axiom in rdflib.Graph().parse(data=admin.ontology("turtle"), format="turtle")
    replaced = admin.replace_ontology(demo / "univ-bench.owl")
    assert replaced > merged
    assert axiom not in rdflib.Graph().parse(data=admin.ontology("turtle"), format="turtle")


# -- administration --------------------------------------------------------------------------


def test_tokens_created_listed_and_revoked(admin: Any, connect: Any, server: Server) -> None:
    new = admin.create_token("subscriber", expires_in=3600)
    assert new.token.role == "subscriber"
    assert new.token.expires is not None
    assert new.id in {t.id for t in admin.tokens()}
    assert list(connect(server.url, new.secret).subscriptions()) == []
    admin.revoke_token(new)
    assert next(t for t in admin.tokens() if t.id == new.id).revoked is not None
    with pytest.raises(AuthError):
        list(connect(server.url, new.secret).subscriptions())


def test_health_and_metrics(admin: Any, connect: Any, server: Server) -> None:
    assert connect(server.url, None).health()["status"] == "ok"
    metrics = admin.metrics()
    assert "semps_events_in_total" in metrics


class _Hook(QuietHandler):
    received: list[tuple[bytes, str]] = []

    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        self.received.append((self.body(), self.headers["X-Semps-Signature"]))
        self.send_response(204)
        self.end_headers()


def test_a_webhook_dead_letter_replayed_to_a_listener_signed_with_the_secret(
    subscriber: Any, publisher: Any, admin: Any, demo: Path
) -> None:
    port = _free_port()  # nothing listens there yet: the one attempt fails
    sub = subscriber.subscribe(
        demo / "subscriptions" / "chairs.rq", callback=f"http://127.0.0.1:{port}/hook"
    )
    assert sub.secret
    published = publisher.publish(demo / "events" / "e1-new-chair.rdf")
    letters: list[DeadLetter] = []
    deadline = time.monotonic() + 30
    while not letters and time.monotonic() < deadline:
        letters = [d for d in admin.dead_letters() if d.subscription == sub.id]
        time.sleep(0.1)
    assert [(d.seq, d.attempts) for d in letters] == [(1, 1)]
    _Hook.received = []
    receiver = LocalServer(_Hook, port)
    try:
        assert admin.replay(letters[0]) is None
    finally:
        receiver.close()
    [(body, signature)] = _Hook.received
    digest = hmac.new(sub.secret.encode(), body, hashlib.sha256).hexdigest()
    assert signature == f"sha256={digest}"
    assert Notification.from_json(json.loads(body)).event == published.id
    assert all(d.subscription != sub.id for d in admin.dead_letters())


def test_metrics_with_the_clients_token(admin: Any) -> None:
    assert "semps_events_in_total" in admin.metrics(admin.token)
