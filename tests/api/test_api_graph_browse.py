"""Browsing the knowledge graph over HTTP (``GET /graph/resources``, ``GET /graph/resource``)
on a real ``semps serve`` holding brick-kg-a's building model under its Brick ontology.

The oracle is rdflib: the model's file read on its own gives the asserted triples, and the
closure the service exports (``GET /graph?closure=true``) read by rdflib gives every triple;
the pages must list exactly those subjects, in order, with their counts, and a resource's
triples must be exactly the closure's, flagged asserted when the file has them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import httpx
import pytest
import rdflib
from semps_test_support import WORKLOADS, Server

pytestmark = [pytest.mark.server]

CASE = WORKLOADS / "brick-kg-a"
SITE = "http://example.org/site/hq#"
LABEL = rdflib.RDFS.label


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("browse") / "data"
    with Server(data, max_body=8_000_000, ontology=CASE / "ontology.owl") as srv:
        srv.put("admin", "/graph", CASE / "graph" / "site.ttl")
        yield srv


def _closure(client: httpx.Client) -> rdflib.Graph:
    got = client.get("/graph", params={"closure": "true"}, headers={"Accept": "text/turtle"})
    assert got.status_code == 200, got.text
    return rdflib.Graph().parse(data=got.text, format="turtle")


def _asserted() -> rdflib.Graph:
    return rdflib.Graph().parse(CASE / "graph" / "site.ttl", format="turtle")


def _pages(client: httpx.Client, q: str, limit: int) -> list[dict[str, object]]:
    items: list[dict[str, object]] = []
    after = None
    while True:
        params = {"q": q, "limit": limit, **({"after": after} if after else {})}
        page = client.get("/graph/resources", params=params)
        assert page.status_code == 200, page.text
        doc = page.json()
        assert len(doc["items"]) <= limit
        items.extend(doc["items"])
        assert doc["total"] >= len(items)
        after = doc["next"]
        if after is None:
            assert doc["total"] == len(items)
            return items


def _n3(term: object) -> str:
    """A term as N-Triples text, blank nodes without their labels (each side names them
    its own way)."""
    text = term if isinstance(term, str) and not isinstance(term, rdflib.term.Node) else None
    text = text if text is not None else term.n3()  # type: ignore[attr-defined]
    return "_:" if text.startswith("_:") else text


def _label(graph: rdflib.Graph, subject: rdflib.term.Node) -> str | None:
    labels = sorted(str(o) for o in graph.objects(subject, LABEL))
    return labels[0] if labels else None


def test_the_pages_list_every_subject_once_in_order_with_its_counts(server: Server) -> None:
    with server.client("subscriber") as sub:
        closure = _closure(sub)
        items = _pages(sub, "", 37)
    asserted = _asserted()
    every = Counter(str(s) for s, _, _ in closure)
    mine = Counter(str(s) for s, _, _ in asserted)
    names = [str(i["iri"]) for i in items]
    assert names == sorted(every)  # each once, in IRI order, none left out
    for item in items:
        iri = str(item["iri"])
        assert item["triples"] == every[iri], iri
        assert item["asserted"] == mine[iri], iri
        assert item["label"] == _label(closure, rdflib.URIRef(iri)), iri


@pytest.mark.parametrize("q", ["ahu-1", "VAV", "rm-1", "zzz-nothing"])
def test_a_search_finds_the_subjects_whose_iri_or_label_holds_the_text(
    server: Server, q: str
) -> None:
    with server.client("subscriber") as sub:
        closure = _closure(sub)
        items = _pages(sub, q, 5)
    wanted = sorted(
        str(s)
        for s in set(closure.subjects())
        if q.lower() in str(s).lower() or q.lower() in (_label(closure, s) or "").lower()
    )
    assert [i["iri"] for i in items] == wanted


def test_a_resource_shows_its_triples_both_ways_asserted_and_inferred(server: Server) -> None:
    asserted = _asserted()
    with server.client("subscriber") as sub:
        closure = _closure(sub)
        for local in ("B1-AHU-1", "B1-AHU-1.RA-T"):
            node = rdflib.URIRef(SITE + local)
            got = sub.get("/graph/resource", params={"iri": str(node), "limit": 500})
            assert got.status_code == 200, got.text
            doc = got.json()
            out = Counter((p.n3(), _n3(o), (node, p, o) in asserted) for p, o in closure[node::])
            into = Counter((_n3(s), p.n3(), (s, p, node) in asserted) for s, p in closure[::node])
            shown_out = Counter(
                (t["predicate"], _n3(t["object"]), t["asserted"]) for t in doc["outgoing"]
            )
            shown_in = Counter(
                (_n3(t["subject"]), t["predicate"], t["asserted"]) for t in doc["incoming"]
            )
            assert shown_out == out and doc["outgoing_total"] == out.total()
            assert shown_in == into and doc["incoming_total"] == into.total()
            assert any(not a for _, _, a in out | into), "the model infers about it"
            assert doc["label"] == _label(closure, node)


def test_a_resource_page_is_cut_to_its_limit(server: Server) -> None:
    with server.client("subscriber") as sub:
        whole = sub.get("/graph/resource", params={"iri": SITE + "B1-AHU-1"}).json()
        assert whole["outgoing_total"] > 2
        first = sub.get("/graph/resource", params={"iri": SITE + "B1-AHU-1", "limit": 2}).json()
        rest = sub.get(
            "/graph/resource", params={"iri": SITE + "B1-AHU-1", "limit": 500, "offset": 2}
        ).json()
    assert len(first["outgoing"]) == 2
    assert first["outgoing"] + rest["outgoing"] == whole["outgoing"]


def test_an_edit_is_seen_by_the_next_page(server: Server) -> None:
    iri = SITE + "Browse-New-Sensor"
    update = f'INSERT DATA {{ <{iri}> <{LABEL}> "Freshly added" }}'
    with server.client("publisher") as pub:
        before = pub.get("/graph/resources", params={"q": "freshly"}).json()
        edit = pub.post(
            "/graph", content=update, headers={"Content-Type": "application/sparql-update"}
        )
        assert edit.status_code == 200, edit.text
        after = pub.get("/graph/resources", params={"q": "freshly"}).json()
    assert before["total"] == 0
    assert [i["iri"] for i in after["items"]] == [iri]
    assert after["version"] == edit.json()["version"] > before["version"]


@pytest.mark.parametrize(
    ("path", "params", "status"),
    [
        ("/graph/resources", {"limit": 501}, 422),
        ("/graph/resources", {"limit": 0}, 422),
        ("/graph/resources", {"q": "x" * 2049}, 422),
        ("/graph/resources", {"after": "x" * 2049}, 422),
        ("/graph/resource", {}, 422),
        ("/graph/resource", {"iri": SITE + "B1-AHU-1", "limit": 501}, 422),
        ("/graph/resource", {"iri": SITE + "no-such-thing"}, 404),
        ("/graph/resource", {"iri": "_:nobody"}, 404),
    ],
)
def test_bad_requests_are_refused_with_a_reason(
    server: Server, path: str, params: dict[str, object], status: int
) -> None:
    with server.client("subscriber") as sub:
        got = sub.get(path, params=params)
    assert got.status_code == status, got.text
    assert {"error", "detail"} <= set(got.json())


def test_reading_the_graph_needs_a_token(server: Server) -> None:
    for path in ("/graph/resources", "/graph/resource?iri=x"):
        assert httpx.get(server.url + path).status_code == 401
