"""``/graph`` on a real `semps serve`, as a user meets it: the Graph Store Protocol on the
default graph in each RDF syntax, SPARQL 1.1 Update, who may edit, events matched against
the graph, change notifications with what was added and removed (against the oracle:
pyoxigraph over owlrl's closure, recomputed before and after), and hostile input: a clear
4xx and nothing changed.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pyoxigraph as ox
import pytest
import rdflib
from graph_service import notes, solutions
from kg_oracle import canonical_counter, expected_change
from rdflib.compare import isomorphic
from semps_test_support import Server

pytestmark = [pytest.mark.server]

EX = "http://ex.org/b#"
ONTOLOGY = f"""@prefix ex: <{EX}> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
ex:TempSensor rdfs:subClassOf ex:Point . ex:Point rdfs:subClassOf ex:Entity .
ex:Entity rdfs:subClassOf ex:Thing .
ex:isPointOf a owl:ObjectProperty ; owl:inverseOf ex:hasPoint .
ex:reading a owl:DatatypeProperty .
"""
MODEL = f"""@prefix ex: <{EX}> .
ex:t1 a ex:TempSensor ; ex:isPointOf ex:ahu1 .
ex:t2 a ex:TempSensor ; ex:isPointOf ex:ahu2 .
ex:ahu1 ex:label "AHU 1" .
"""
TURTLE = {"Content-Type": "text/turtle"}
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
UPDATE = {"Content-Type": "application/sparql-update"}
POINTS = f"PREFIX ex: <{EX}> SELECT ?p ?e WHERE {{ ?e ex:hasPoint ?p . ?p a ex:Point }}"
HOT = (
    f"PREFIX ex: <{EX}> SELECT ?p ?e ?v WHERE "
    "{ ?p a ex:Point ; ex:isPointOf ?e ; ex:reading ?v FILTER(?v > 26) }"
)


def _server(path: object, *extra: str) -> Server:
    server = Server(path, extra=extra)  # type: ignore[arg-type]
    with server.client("admin") as admin:
        put = admin.put("/ontology", content=ONTOLOGY.encode(), headers=TURTLE)
        assert put.status_code == 200, put.text
    return server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = _server(tmp_path_factory.mktemp("graph") / "data")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with small graph limits."""
    limits = ("--max-update-bytes", "400", "--max-update-triples", "4")
    limits += ("--max-load-triples", "6", "--max-edit-inferred", "3")
    limits += ("--max-edit-inferred-ratio", "1")
    srv = _server(tmp_path_factory.mktemp("tight") / "data", *limits)
    yield srv
    srv.stop()


@pytest.fixture
def publisher(server: Server) -> Iterator[httpx.Client]:
    with server.client("publisher") as client:
        assert client.put("/graph", content=MODEL.encode(), headers=TURTLE).status_code == 200
        yield client


def _graph(client: httpx.Client) -> rdflib.Graph:
    got = client.get("/graph", headers={"Accept": "application/n-triples"})
    assert got.status_code == 200, got.text
    return rdflib.Graph().parse(data=got.text, format="nt")


MODEL_SYNTAXES = {
    "text/turtle": "turtle",
    "application/n-triples": "nt",
    "application/rdf+xml": "xml",
    "application/ld+json": "json-ld",
}


@pytest.mark.parametrize("media_type", sorted(MODEL_SYNTAXES))
def test_the_graph_put_in_each_syntax_is_exported_in_each(
    publisher: httpx.Client, media_type: str
) -> None:
    """pyoxigraph writes the model in each syntax and reads each export back."""
    model = set(ox.parse(MODEL.encode(), format=ox.RdfFormat.TURTLE))
    body = ox.serialize(model, format=ox.RdfFormat.from_media_type(media_type))
    assert publisher.delete("/graph").json()["deleted"] == len(model)
    put = publisher.put("/graph", content=body, headers={"Content-Type": media_type})
    assert put.status_code == 200, put.text
    assert put.json()["inserted"] == len(model)
    for accept in MODEL_SYNTAXES:
        got = publisher.get("/graph", headers={"Accept": accept})
        assert got.status_code == 200 and got.headers["content-type"].startswith(accept)
        syntax = ox.RdfFormat.from_media_type(accept)
        assert set(ox.parse(got.content, format=syntax)) == model, accept


def test_post_merges_delete_clears_and_the_closure_is_there_on_request(
    publisher: httpx.Client,
) -> None:
    more = f"<{EX}t3> <{RDF_TYPE}> <{EX}TempSensor> .\n".encode()
    merged = publisher.post(
        "/graph", content=more, headers={"Content-Type": "application/n-triples"}
    )
    assert merged.status_code == 200 and merged.json()["inserted"] == 1
    assert (rdflib.URIRef(EX + "t3"), rdflib.RDF.type, rdflib.URIRef(EX + "TempSensor")) in _graph(
        publisher
    )
    closure = publisher.get("/graph?closure=true", headers={"Accept": "application/n-triples"})
    inferred = rdflib.Graph().parse(data=closure.text, format="nt")
    assert (
        rdflib.URIRef(EX + "ahu1"),
        rdflib.URIRef(EX + "hasPoint"),
        rdflib.URIRef(EX + "t1"),
    ) in inferred
    cleared = publisher.delete("/graph")
    assert cleared.status_code == 200 and cleared.json()["deleted"] == 6
    assert len(_graph(publisher)) == 0
    assert publisher.get("/graph/info").json()["asserted"] == 0


def test_a_sparql_update_in_the_body_or_a_form(publisher: httpx.Client) -> None:
    text = (
        f"PREFIX ex: <{EX}> DELETE {{ ?s ex:isPointOf ex:ahu2 }} "
        "WHERE { ?s ex:isPointOf ex:ahu2 }"
    )
    done = publisher.post("/graph", content=text.encode(), headers=UPDATE)
    assert done.status_code == 200 and done.json()["deleted"] == 1, done.text
    form = publisher.post("/graph", data={"update": f"INSERT DATA {{ <{EX}t9> a <{EX}Point> }}"})
    assert form.status_code == 200 and form.json()["inserted"] == 1, form.text
    assert done.json()["version"] < form.json()["version"]


def test_subscribers_read_the_graph_and_only_publishers_and_admins_edit_it(
    server: Server,
) -> None:
    with server.client("subscriber") as sub:
        assert sub.get("/graph").status_code == 200
        assert sub.get("/graph/info").status_code == 200
        before = sub.get("/graph/info").json()
        for method in ("PUT", "POST"):
            refused = sub.request(method, "/graph", content=MODEL.encode(), headers=TURTLE)
            assert refused.status_code == 403 and refused.json()["error"] == "forbidden"
        assert sub.post("/graph", content=b"CLEAR DEFAULT", headers=UPDATE).status_code == 403
        assert sub.delete("/graph").status_code == 403
        assert sub.get("/graph/info").json() == before
    assert httpx.get(server.url + "/graph").status_code == 401
    with server.client("admin") as admin:
        assert admin.post("/graph", content=b"CLEAR DEFAULT", headers=UPDATE).status_code == 200


def test_an_event_is_matched_against_the_graph(server: Server, publisher: httpx.Client) -> None:
    with server.client("subscriber") as sub:
        sub_id = sub.post("/subscriptions", content=HOT).json()["id"]
        reading = f'<{EX}t1> <{EX}reading> "30.5"^^<http://www.w3.org/2001/XMLSchema#decimal> .'
        cold = f'<{EX}t2> <{EX}reading> "20"^^<http://www.w3.org/2001/XMLSchema#integer> .'
        for body in (cold, reading):
            posted = publisher.post(
                "/events", content=body.encode(), headers={"Content-Type": "application/n-triples"}
            )
            assert posted.status_code == 202, posted.text
        (note,) = notes(sub, sub_id)
        assert note["event"] == posted.json()["id"] and "graph_version" not in note
        assert note["solutions"] == [
            {
                "p": f"<{EX}t1>",
                "e": f"<{EX}ahu1>",
                "v": '"30.5"^^<http://www.w3.org/2001/XMLSchema#decimal>',
            }
        ]
        assert sub.delete(f"/subscriptions/{sub_id}").status_code == 204


def test_an_update_notifies_what_it_added_and_removed_as_recomputing_gives(
    server: Server, publisher: httpx.Client
) -> None:
    """t2's type is deleted (its inferred ex:Point and ahu2's inverse link go with it), t5
    is inserted: one notification with both lists."""
    text = (
        f"PREFIX ex: <{EX}> DELETE DATA {{ ex:t2 a ex:TempSensor }} ;\n"
        f"INSERT DATA {{ ex:t5 a ex:TempSensor ; ex:isPointOf ex:ahu1 }}"
    )
    with server.client("subscriber") as sub:
        sub_id = sub.post("/subscriptions", content=POINTS).json()["id"]
        before = _graph(publisher)
        done = publisher.post("/graph", content=text.encode(), headers=UPDATE)
        assert done.status_code == 200, done.text
        (note,) = notes(sub, sub_id)
        assert note["event"] == f"graph-{done.json()['version']}"
        assert note["graph_version"] == done.json()["version"]
        after = _graph(publisher)
        assert sub.delete(f"/subscriptions/{sub_id}").status_code == 204
    ontology = list(rdflib.Graph().parse(data=ONTOLOGY, format="turtle"))
    added, removed = expected_change(ontology, list(before), list(after), POINTS)
    assert canonical_counter(solutions(note["solutions"])) == canonical_counter(added)
    assert canonical_counter(solutions(note["removed"])) == canonical_counter(removed)
    assert (note["count"], note["removed_count"]) == (1, 1)


REFUSED = [
    ("syntax", UPDATE, b"INSERT DATA { <urn:a> <urn:b> }", 400, "update_syntax_error"),
    ("LOAD", UPDATE, b"LOAD <http://example.org/x.ttl>", 422, "unsupported_update"),
    (
        "SERVICE",
        UPDATE,
        b"INSERT { ?s ?p ?o } WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }",
        422,
        "unsupported_update",
    ),
    (
        "named graph",
        UPDATE,
        b"INSERT DATA { GRAPH <urn:g> { <urn:a> <urn:b> <urn:c> } }",
        422,
        None,
    ),
    ("not UTF-8", UPDATE, b'INSERT DATA { <urn:a> <urn:b> "\xff" }', 400, None),
    ("bad Turtle", TURTLE, b"<urn:a> <urn:b> .", 400, "bad_graph"),
    (
        "remote JSON-LD context",
        {"Content-Type": "application/ld+json"},
        b'{"@context": "http://127.0.0.1:9/ctx.jsonld", "@id": "urn:a", "name": "x"}',
        400,
        "bad_graph",
    ),
    (
        "DTD entity",
        {"Content-Type": "application/rdf+xml"},
        b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
        b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">&e;</rdf:RDF>',
        400,
        "hostile_input",
    ),
    ("media type", {"Content-Type": "image/png"}, b"\x89PNG", 415, "unsupported_media_type"),
    (
        "update size",
        UPDATE,
        b"INSERT DATA { " + b"<urn:a> <urn:b> <urn:c> . " * 20 + b"}",
        None,
        "limit_exceeded",
    ),
    (
        "update triples",
        UPDATE,
        b"INSERT DATA { <urn:a> <urn:b> 1, 2, 3, 4, 5 }",
        422,
        "limit_exceeded",
    ),
    (
        "load triples",
        {"Content-Type": "application/n-triples"},
        b"".join(b'<urn:a> <urn:b> "%d" .\n' % i for i in range(7)),
        422,
        "limit_exceeded",
    ),
    (
        "closure growth",
        UPDATE,
        f"INSERT DATA {{ <{EX}x1> a <{EX}TempSensor> ; <{EX}isPointOf> <{EX}ahu9> }}".encode(),
        422,
        "limit_exceeded",
    ),
]


@pytest.mark.parametrize(
    ("content_type", "body", "status", "code"),
    [r[1:] for r in REFUSED],
    ids=[r[0] for r in REFUSED],
)
def test_a_refused_edit_is_a_4xx_and_changes_nothing(
    tight: Server, content_type: dict[str, str], body: bytes, status: int | None, code: str | None
) -> None:
    """The tight server: updates of at most 400 bytes and 4 triples, loads of 6 triples,
    3 inferred triples per edit (or 1 per triple the edit asserts, when more). ``x1`` a
    temperature sensor and a point of ``ahu9`` infers three types and the inverse link:
    4, past 3."""
    with tight.client("publisher") as pub, tight.client("subscriber") as sub:
        sub_id = sub.post("/subscriptions", content=POINTS).json()["id"]
        before = (pub.get("/graph/info").json(), _graph(pub))
        answer = pub.post("/graph", content=body, headers=content_type)
        assert 400 <= answer.status_code < 500, answer.text
        assert status is None or answer.status_code == status, answer.text
        assert set(answer.json()) >= {"error", "detail"}
        assert code is None or answer.json()["error"] == code, answer.text
        assert pub.get("/graph/info").json() == before[0]
        assert isomorphic(_graph(pub), before[1])
        assert notes(sub, sub_id) == []
        assert sub.delete(f"/subscriptions/{sub_id}").status_code == 204


def test_a_syntax_error_says_where(server: Server) -> None:
    with server.client("publisher") as pub:
        answer = pub.post("/graph", content=b"INSERT DATA {\n  <urn:a> <urn:b> }", headers=UPDATE)
    assert answer.status_code == 400
    assert (answer.json()["line"], answer.json()["column"]) == (2, 19), answer.json()


def test_named_graphs_and_unknown_formats_are_refused_by_name(server: Server) -> None:
    with server.client("publisher") as pub:
        named = pub.get("/graph?graph=urn:g")
        assert named.status_code == 404 and "default graph" in named.json()["detail"]
        unacceptable = pub.get("/graph", headers={"Accept": "text/csv"})
        assert unacceptable.status_code == 406 and "text/turtle" in unacceptable.json()["detail"]
