"""SEPA's SPARQL 1.1 Subscribe protocol (``WS /sepa/subscribe``): the messages as the
protocol's implementation writes them (vaimee/SEPA's ``SubscribeResponse``,
``Notification``, ``UnsubscribeResponse`` and ``ErrorResponse``, quoted as test data below),
against a real ``semps serve``; the solutions against pyoxigraph's answer to the same query
over the same event (an independent SPARQL engine)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
from semps_test_support import Server
from websockets.sync.client import ClientConnection, connect

from semps.api import sepa
from semps.errors import SempsError

pytestmark = pytest.mark.server

# The protocol's messages, as SEPA's sources document them (facts, not our output):
#   {"subscribe":{"sparql":"...","authorization":"Bearer JWT","alias":"..."}}
#   {"unsubscribe":{"spuid":"SPUID","authorization":"Bearer JWT"}}
#   {"notification":{"spuid":"SPUID","alias":"ALIAS","addedResults":<BindingsResults>,
#                    "removedResults":{},"sequence":0}}
#   {"notification":{"spuid":"SPUID","sequence":N,"addedResults":...,"removedResults":...}}
#   {"unsubscribed":{"spuid":"SPUID"}}
#   {"error":"...","status_code":400,"error_description":"..."}
NOTIFICATION_KEYS = {"spuid", "alias", "sequence", "addedResults", "removedResults"}

QUERY = (
    "PREFIX ex: <http://ex.org/>\n"
    "SELECT ?room ?t ?label WHERE { ?room ex:temperature ?t "
    "OPTIONAL { ?room ex:label ?label } FILTER(?t > 30) }"
)
EVENT = b"""@prefix ex: <http://ex.org/> .
ex:room1 ex:temperature 35 ; ex:label "Salle \\"A\\""@fr .
ex:room2 ex:temperature 40 .
ex:room3 ex:temperature 20 ; ex:label "cold" .
_:b1 ex:temperature 31.5 .
"""


def _socket(server: Server, token: str | None = None) -> ClientConnection:
    query = f"?token={token}" if token else ""
    return connect(f"ws://127.0.0.1:{server.port}/sepa/subscribe{query}", open_timeout=60)


def _receive(ws: ClientConnection) -> dict[str, Any]:
    return json.loads(ws.recv(timeout=120))  # type: ignore[no-any-return]


def _oracle_term(term: ox.NamedNode | ox.BlankNode | ox.Literal) -> tuple[str, ...]:
    if isinstance(term, ox.NamedNode):
        return ("uri", term.value)
    if isinstance(term, ox.BlankNode):
        return ("bnode",)  # labels are the engine's own
    if term.language:
        return ("literal", term.value, "lang", term.language)
    datatype = term.datatype.value
    if datatype == "http://www.w3.org/2001/XMLSchema#string":
        return ("literal", term.value)
    return ("literal", term.value, "datatype", datatype)


def _ours(term: dict[str, str]) -> tuple[str, ...]:
    if term["type"] == "bnode":
        return ("bnode",)
    if "xml:lang" in term:
        return (term["type"], term["value"], "lang", term["xml:lang"])
    if "datatype" in term:
        return (term["type"], term["value"], "datatype", term["datatype"])
    return (term["type"], term["value"])


def _oracle() -> list[dict[str, tuple[str, ...]]]:
    store = ox.Store()
    store.load(EVENT, ox.RdfFormat.TURTLE)
    answers = store.query(QUERY)
    names = [v.value for v in answers.variables]  # type: ignore[union-attr]
    return [
        {n: _oracle_term(s[n]) for n in names if s[n] is not None}
        for s in answers  # type: ignore[union-attr]
    ]


def _key(row: dict[str, tuple[str, ...]]) -> str:
    return json.dumps(row, sort_keys=True)


def test_subscribe_notify_unsubscribe_as_sepa_does(server: Server) -> None:
    token = server.tokens["subscriber"]
    with _socket(server) as ws:  # the token in the request, as SEPA's secure clients send it
        request = {"sparql": QUERY, "alias": "hot", "authorization": f"Bearer {token}"}
        ws.send(json.dumps({"subscribe": request}))
        first = _receive(ws)["notification"]
        assert set(first) == NOTIFICATION_KEYS
        assert first["sequence"] == 0 and first["alias"] == "hot"
        assert first["addedResults"] == {
            "head": {"vars": ["room", "t", "label"]},
            "results": {"bindings": []},
        }
        assert first["removedResults"]["results"]["bindings"] == []
        spuid = first["spuid"]

        with server.client("publisher") as pub:
            reply = pub.post("/events", content=EVENT, headers={"Content-Type": "text/turtle"})
            assert reply.status_code == 202, reply.text
        note = _receive(ws)["notification"]
        assert note["spuid"] == spuid and note["alias"] == "hot" and note["sequence"] == 1
        assert note["removedResults"]["results"]["bindings"] == []
        got = [
            {n: _ours(t) for n, t in b.items()} for b in note["addedResults"]["results"]["bindings"]
        ]
        assert sorted(map(_key, got)) == sorted(map(_key, _oracle()))

        ws.send(json.dumps({"unsubscribe": {"spuid": spuid}}))
        assert _receive(ws) == {"unsubscribed": {"spuid": spuid}}
    with server.client("subscriber") as client:
        assert client.get(f"/subscriptions/{spuid}").status_code == 404


def test_errors_are_answered_in_sepas_shape_and_the_socket_goes_on(server: Server) -> None:
    with _socket(server, server.tokens["subscriber"]) as ws:
        ws.send(json.dumps({"subscribe": {"sparql": "SELECT ?x WHERE {", "alias": "broken"}}))
        broken = _receive(ws)
        assert set(broken) == {"error", "status_code", "error_description", "alias"}
        assert broken["status_code"] == 400 and broken["error"] == "syntax_error"
        assert broken["alias"] == "broken"
        ws.send("not json")
        assert _receive(ws)["status_code"] == 400
        ws.send(json.dumps({"unsubscribe": {"spuid": "sub-never"}}))
        missing = _receive(ws)
        assert (missing["status_code"], missing["error"]) == (404, "not_found")
        ws.send(json.dumps({"subscribe": {"sparql": QUERY}}))
        assert _receive(ws)["notification"]["sequence"] == 0


def test_a_publisher_token_is_refused(server: Server) -> None:
    with _socket(server) as ws:
        request = {"sparql": QUERY, "authorization": f"Bearer {server.tokens['publisher']}"}
        ws.send(json.dumps({"subscribe": request}))
        assert _receive(ws)["status_code"] == 403


def test_subscriptions_live_with_the_socket(server: Server, tmp_path: Path) -> None:
    with _socket(server, server.tokens["subscriber"]) as ws:
        ws.send(json.dumps({"subscribe": {"sparql": QUERY}}))
        spuid = _receive(ws)["notification"]["spuid"]
    with server.client("subscriber") as client:

        def gone() -> bool:
            return client.get(f"/subscriptions/{spuid}").status_code == 404

        from semps_test_support import wait_for

        assert wait_for(gone, 60)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"subscribe": {"alias": "a"}}', "'sparql' must be a non-empty string"),
        ('{"subscribe": {"sparql": 7}}', "'sparql' must be a non-empty string"),
        ('{"query": {"sparql": "ASK {}"}}', "unknown request 'query'"),
        ('{"unsubscribe": {}}', "'spuid' must be a non-empty string"),
        ('{"subscribe": {"sparql": "ASK {}", "named-graph-uri": "http://g"}}', "not supported"),
        ('[{"subscribe": {}}]', "a request is one JSON object"),
    ],
)
def test_malformed_requests_are_refused(text: str, problem: str) -> None:
    with pytest.raises(SempsError, match=problem):
        sepa.parse_request(text)


def test_terms_in_the_sparql_json_results_format() -> None:
    """SPARQL 1.1 Query Results JSON Format, section 3.2.2: IRIs, literals with a language
    or a datatype, simple literals without one, blank nodes by label."""
    assert sepa.term('"4"^^<http://www.w3.org/2001/XMLSchema#integer>') == {
        "type": "literal",
        "value": "4",
        "datatype": "http://www.w3.org/2001/XMLSchema#integer",
    }
    assert sepa.term('"a \\"b\\""') == {"type": "literal", "value": 'a "b"'}
    assert sepa.term("_:x1") == {"type": "bnode", "value": "x1"}


def test_knowledge_graph_changes_add_and_remove_results(server: Server) -> None:
    """SPARQL 1.1 Updates to the knowledge graph (``POST /graph``, as SEPA's ``/update``
    takes them): an INSERT is an addedResults, a DELETE of it a removedResults, each row
    as pyoxigraph answers the query over the graph before and after."""
    query = "PREFIX ex: <http://ex.org/> SELECT ?room ?label WHERE { ?room ex:label ?label }"
    insert = 'PREFIX ex: <http://ex.org/> INSERT DATA { ex:room9 ex:label "Lab"@en }'
    delete = 'PREFIX ex: <http://ex.org/> DELETE DATA { ex:room9 ex:label "Lab"@en }'
    row = {
        "room": {"type": "uri", "value": "http://ex.org/room9"},
        "label": {"type": "literal", "value": "Lab", "xml:lang": "en"},
    }
    oracle = ox.Store()
    oracle.update(insert)
    (solution,) = list(oracle.query(query))  # type: ignore[arg-type]
    assert _ours(row["label"]) == _oracle_term(solution["label"])
    with _socket(server, server.tokens["subscriber"]) as ws:
        ws.send(json.dumps({"subscribe": {"sparql": query, "alias": "labels"}}))
        assert _receive(ws)["notification"]["sequence"] == 0
        sparql = {"Content-Type": "application/sparql-update"}
        with server.client("publisher") as pub:
            assert pub.post("/graph", content=insert, headers=sparql).status_code == 200
            added = _receive(ws)["notification"]
            assert added["addedResults"]["results"]["bindings"] == [row]
            assert added["removedResults"]["results"]["bindings"] == []
            assert pub.post("/graph", content=delete, headers=sparql).status_code == 200
            removed = _receive(ws)["notification"]
        assert removed["sequence"] == added["sequence"] + 1
        assert removed["addedResults"]["results"]["bindings"] == []
        assert removed["removedResults"]["results"]["bindings"] == [row]
