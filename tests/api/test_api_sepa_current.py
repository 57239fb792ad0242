"""SEPA's current answers and the SPARQL 1.1 Protocol's ``/query``, against a real ``semps
serve`` holding an ontology and a knowledge graph: the first notification of a subscribe
(sequence 0, its ``addedResults``) and ``/query``'s SPARQL 1.1 JSON results carry the
query's answers over the graph's closure, as the independent oracle answers them (owlrl's
closure of the same ontology and graph, queried by pyoxigraph: tests/kg_oracle.py).

The protocol's facts (SEPA's ``SubscribeResponse``: the subscribe request is answered by
the notification of sequence 0 whose ``addedResults`` are the query's results at subscribe
time, ``removedResults`` empty; SPARQL 1.1 Query Results JSON Format: a SELECT's ``head.vars``
and ``results.bindings``, an ASK's ``boolean``) are written here as test data.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pyoxigraph as ox
import pytest
from graph_service import NT, UPDATE, ntriples
from kg_oracle import canonical_counter, closed_store, solutions
from semps_test_support import Server, wait_for
from websockets.sync.client import connect

from semps.terms import OWL, RDF_TYPE, RDFS, Literal

pytestmark = pytest.mark.server

EX = "http://ex.org/"
ONTOLOGY = [
    (EX + "TempSensor", RDFS + "subClassOf", EX + "Sensor"),
    (EX + "isPointOf", OWL + "inverseOf", EX + "hasPoint"),
]
GRAPH = [
    (EX + "s1", RDF_TYPE, EX + "TempSensor"),
    (EX + "s1", EX + "isPointOf", EX + "ahu1"),
    (EX + "s1", EX + "label", Literal("Sonde A", lang="fr")),
    (EX + "s2", RDF_TYPE, EX + "TempSensor"),
    (EX + "s2", EX + "isPointOf", EX + "ahu1"),
    (EX + "s2", EX + "reading", Literal("31.5", "http://www.w3.org/2001/XMLSchema#decimal")),
    (EX + "s3", RDF_TYPE, EX + "Sensor"),
    (EX + "s3", EX + "label", Literal("plain")),
    ("_:b1", RDF_TYPE, EX + "TempSensor"),
]
P = f"PREFIX ex: <{EX}>\n"
#: Each answered over the closure: the sensors are typed ex:Sensor, and ex:hasPoint holds,
#: only by inference.
QUERIES = {
    "optional": P + "SELECT ?s ?label WHERE { ?s a ex:Sensor OPTIONAL { ?s ex:label ?label } }",
    "multiset": P + "SELECT ?a WHERE { ?a ex:hasPoint ?s }",
    "distinct": P + "SELECT DISTINCT ?a WHERE { ?a ex:hasPoint ?s }",
    "minus": P + "SELECT ?s WHERE { ?s a ex:Sensor MINUS { ?s ex:isPointOf ?a } }",
    "filter": P + "SELECT ?s ?r WHERE { ?s ex:reading ?r FILTER(?r > 30) }",
    "ask true": P + "ASK { ex:ahu1 ex:hasPoint ex:s2 }",
    "ask false": P + "ASK { ex:s3 ex:isPointOf ?a }",
    "empty": P + "SELECT ?x WHERE { ?x ex:nothing ?y }",
}

#: The SELECTs' projections, in order (SPARQL 1.1 JSON results, head.vars).
VARS = {
    "optional": ["s", "label"],
    "multiset": ["a"],
    "distinct": ["a"],
    "minus": ["s"],
    "filter": ["s", "r"],
    "empty": ["x"],
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("sepa-current") / "data")
    with srv.client("admin") as admin:
        assert admin.put("/ontology", content=ntriples(ONTOLOGY), headers=NT).status_code == 200
    with srv.client("publisher") as pub:
        reply = pub.put("/graph", content=ntriples(GRAPH), headers=NT)
        assert reply.status_code == 200, reply.text
    yield srv
    srv.stop()


def _term(value: dict[str, str]) -> object:
    """A SPARQL 1.1 JSON results term as a semps term (what the oracle compares)."""
    if value["type"] == "uri":
        return value["value"]
    if value["type"] == "bnode":
        return "_:" + value["value"]
    assert value["type"] == "literal", value
    return Literal(value["value"], value.get("datatype"), value.get("xml:lang"))


def _multiset(bindings: list[dict[str, dict[str, str]]]) -> Counter:
    return canonical_counter(
        Counter(frozenset((n, _term(t)) for n, t in b.items()) for b in bindings)
    )


@functools.cache
def _closed() -> ox.Store:
    return closed_store(ONTOLOGY, GRAPH)


def _oracle(text: str) -> Counter:
    return canonical_counter(solutions(_closed(), text))


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_the_first_notification_carries_the_answers_over_the_closure(
    server: Server, name: str
) -> None:
    text = QUERIES[name]
    url = f"ws://127.0.0.1:{server.port}/sepa/subscribe?token={server.tokens['subscriber']}"
    with connect(url, open_timeout=60) as ws:
        ws.send(json.dumps({"subscribe": {"sparql": text, "alias": name}}))
        first = json.loads(ws.recv(timeout=120))["notification"]
        assert (first["sequence"], first["alias"]) == (0, name)
        assert first["removedResults"]["results"]["bindings"] == []
        bindings = first["addedResults"]["results"]["bindings"]
        assert _multiset(bindings) == _oracle(text)
        ws.send(json.dumps({"unsubscribe": {"spuid": first["spuid"]}}))
        assert json.loads(ws.recv(timeout=120)) == {"unsubscribed": {"spuid": first["spuid"]}}


def _results_multiset(body: dict[str, Any]) -> Counter:
    if "boolean" in body:
        return Counter([frozenset()]) if body["boolean"] else Counter()
    return _multiset(body["results"]["bindings"])


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_query_answers_as_the_oracle_over_get_post_and_form(server: Server, name: str) -> None:
    text = QUERIES[name]
    with server.client("subscriber") as client:
        answers = [
            client.get("/query", params={"query": text}),
            client.post(
                "/query", content=text, headers={"Content-Type": "application/sparql-query"}
            ),
            client.post("/query", data={"query": text}),
        ]
    for reply in answers:
        assert reply.status_code == 200, reply.text
        assert reply.headers["content-type"] == "application/sparql-results+json"
        body = reply.json()
        if name.startswith("ask"):
            assert body == {"head": {}, "boolean": name == "ask true"}
        else:
            assert body["head"]["vars"] == VARS[name]
        assert _results_multiset(body) == _oracle(text)


def test_a_change_after_the_subscribe_is_notified_once_not_in_the_answers(
    server: Server,
) -> None:
    """The answers and the registration happen in one turn of the graph: an update
    committed after the subscribe comes as sequence >= 1, never also in sequence 0."""
    text = P + "SELECT ?s WHERE { ?s a ex:Sensor }"
    insert = P + "INSERT DATA { ex:s9 a ex:TempSensor }"
    delete = P + "DELETE DATA { ex:s9 a ex:TempSensor }"
    url = f"ws://127.0.0.1:{server.port}/sepa/subscribe?token={server.tokens['subscriber']}"
    with connect(url, open_timeout=60) as ws:
        ws.send(json.dumps({"subscribe": {"sparql": text}}))
        first = json.loads(ws.recv(timeout=120))["notification"]
        assert _multiset(first["addedResults"]["results"]["bindings"]) == _oracle(text)
        with server.client("publisher") as pub:  # SEPA's /update
            assert pub.post("/update", content=insert, headers=UPDATE).status_code == 200
            note = json.loads(ws.recv(timeout=120))["notification"]
            assert note["sequence"] >= 1
            assert note["addedResults"]["results"]["bindings"] == [
                {"s": {"type": "uri", "value": EX + "s9"}}
            ]
            reply = pub.post("/update", data={"update": delete})
            assert reply.status_code == 200, reply.text
            gone = json.loads(ws.recv(timeout=120))["notification"]
        assert gone["removedResults"]["results"]["bindings"] == [
            {"s": {"type": "uri", "value": EX + "s9"}}
        ]


def test_a_socket_closed_before_its_answer_leaves_no_subscription(server: Server) -> None:
    """The registration runs to its end when the socket goes away meanwhile; what it
    registered is deleted with the socket, as every subscription of a SEPA socket is."""
    text = P + "SELECT ?s WHERE { ?s a ex:Sensor }"
    url = f"ws://127.0.0.1:{server.port}/sepa/subscribe?token={server.tokens['subscriber']}"
    with server.client("subscriber") as client:
        before = {s["id"] for s in client.get("/subscriptions").json()["items"]}
        with connect(url, open_timeout=60) as ws:
            for _ in range(5):
                ws.send(json.dumps({"subscribe": {"sparql": text}}))

        def none_left() -> bool:
            found = {s["id"] for s in client.get("/subscriptions").json()["items"]}
            return found <= before

        assert wait_for(none_left, 120)


@pytest.mark.parametrize(
    ("request_args", "status", "code"),
    [
        (
            {"params": {"query": P + "SELECT * WHERE { SERVICE <http://x/> { ?s ?p ?o } }"}},
            400,
            None,
        ),
        ({"params": {"query": "SELECT * FROM <http://x/g> WHERE { ?s ?p ?o }"}}, 400, None),
        ({"params": {"query": "ASK {}", "default-graph-uri": "http://x/g"}}, 400, None),
        ({"params": {"query": "SELECT ?x WHERE {"}}, 400, "syntax_error"),
        ({"params": {"query": "ASK {}"}, "headers": {"Accept": "text/csv"}}, 406, "not_acceptable"),
        # An answer sent unsorted to a query that asked for an order would be wrong.
        (
            {"params": {"query": "SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s"}},
            422,
            "unsupported_query",
        ),
    ],
)
def test_query_refusals(
    server: Server, request_args: dict[str, Any], status: int, code: str | None
) -> None:
    with server.client("subscriber") as client:
        reply = client.get("/query", **request_args)
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert set(body) >= {"error", "detail"}
    if code is not None:
        assert body["error"] == code


def test_query_needs_a_token_and_update_a_publisher(server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=None) as anonymous:
        assert anonymous.get("/query", params={"query": "ASK {}"}).status_code == 401
    with server.client("subscriber") as client:
        reply = client.post("/update", content="INSERT DATA { <a:a> <a:b> <a:c> }", headers=UPDATE)
        assert reply.status_code == 403


@pytest.mark.parametrize(
    ("flag", "limit"),
    [("--max-query-rows=5", "max_query_rows"), ("--max-answer-rows=2", "max_answer_rows")],
)
def test_answers_past_a_row_limit_are_refused(tmp_path: Any, flag: str, limit: str) -> None:
    srv = Server(tmp_path / "data", extra=(flag,))
    try:
        with srv.client("publisher") as pub:
            assert pub.put("/graph", content=ntriples(GRAPH), headers=NT).status_code == 200
        text = "SELECT * WHERE { ?s ?p ?o }"
        with srv.client("subscriber") as client:
            reply = client.get("/query", params={"query": text})
        assert reply.status_code == 422
        assert reply.json()["error"] == "limit_exceeded"
        assert limit in reply.json()["detail"]
        url = f"ws://127.0.0.1:{srv.port}/sepa/subscribe?token={srv.tokens['subscriber']}"
        with connect(url, open_timeout=60) as ws:
            ws.send(json.dumps({"subscribe": {"sparql": text, "alias": "all"}}))
            refused = json.loads(ws.recv(timeout=120))
        assert (refused["status_code"], refused["error"]) == (422, "limit_exceeded")
        assert limit in refused["error_description"]
        with srv.client("subscriber") as client:  # nothing registered
            assert client.get("/subscriptions").json()["items"] == []
    finally:
        srv.stop()


# -- a JSAP's named queries (semps sepa queries / subscribe) ----------------------------------

#: A JSAP as SEPA's applications write them (vaimee/SEPA's jsap/*.jsap: host, the two
#: protocols' paths, namespaces, queries with forcedBindings, updates).
JSAP = {
    "host": "localhost",
    "sparql11protocol": {
        "protocol": "http",
        "port": 8000,
        "query": {"path": "/query", "method": "POST", "format": "JSON"},
        "update": {"path": "/update", "method": "POST", "format": "JSON"},
    },
    "sparql11seprotocol": {
        "protocol": "ws",
        "availableProtocols": {"ws": {"port": 8000, "path": "/sepa/subscribe"}},
    },
    "namespaces": {"ex": EX, "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#"},
    "queries": {
        "HOT": {
            "sparql": "SELECT ?s ?r WHERE { ?s ex:reading ?r FILTER(?r > ?min) }",
            "forcedBindings": {
                "min": {"type": "literal", "value": "30", "datatype": "xsd:decimal"}
            },
        },
        "POINTS": {
            "sparql": "SELECT ?s WHERE { ?ahu ex:hasPoint ?s }",
            "forcedBindings": {"ahu": {"type": "uri", "value": "ex:ahu1"}},
        },
        "LABELS": {"sparql": "SELECT * WHERE { ?s ex:label ?l }"},
    },
    "updates": {"ADD": {"sparql": "INSERT DATA { ex:s5 rdf:type ex:Sensor }"}},
}
#: The same queries with the forced bindings substituted into the text, as a SEPA client
#: does before it sends them: what the oracle answers.
SUBSTITUTED = {
    "HOT": P + "SELECT ?s ?r WHERE { ?s ex:reading ?r FILTER(?r > 30.0) }",
    "POINTS": P + "SELECT ?s WHERE { ex:ahu1 ex:hasPoint ?s }",
    "LABELS": P + "SELECT * WHERE { ?s ex:label ?l }",
}


def _semps(*argv: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "semps", *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def test_a_jsaps_queries_answer_as_sepa_substitutes_them(server: Server, tmp_path: Path) -> None:
    path = tmp_path / "app.jsap"
    path.write_text(json.dumps(JSAP))
    done = _semps("sepa", "queries", str(path))
    assert done.returncode == 0, done.stderr
    assert "updates not read (ADD)" in done.stderr
    texts = {line["name"]: line["sparql"] for line in map(json.loads, done.stdout.splitlines())}
    assert set(texts) == set(SUBSTITUTED)
    with server.client("subscriber") as client:
        for name, text in texts.items():
            reply = client.post("/query", data={"query": text})
            assert reply.status_code == 200, reply.text
            assert _results_multiset(reply.json()) == _oracle(SUBSTITUTED[name]), name


def test_semps_sepa_subscribe_registers_the_named_queries(server: Server, tmp_path: Path) -> None:
    path = tmp_path / "app.jsap"
    path.write_text(json.dumps(JSAP))
    token = f"--token={server.tokens['subscriber']}"  # one word: a token may start with "-"
    done = _semps("sepa", "subscribe", str(path), "--url", server.url, token)
    assert done.returncode == 0, done.stderr
    ids = dict(line.split("\t") for line in done.stdout.splitlines())
    assert set(ids) == {"HOT", "POINTS", "LABELS"}
    with server.client("subscriber") as client:
        for name, sub_id in ids.items():
            found = client.get(f"/subscriptions/{sub_id}").json()
            assert found["name"] == name
            assert client.delete(f"/subscriptions/{sub_id}").status_code == 204
    missing = _semps("sepa", "subscribe", str(path), "--url", server.url, token, "--query", "NOPE")
    assert missing.returncode == 2
    assert "no query 'NOPE'" in missing.stderr
