"""An ontology edit whose re-closing of the knowledge graph passes the graph's bounds, on a
real `semps serve`: a chain of 1,000 ``partOf`` links in the graph, then the one ontology
triple making ``partOf`` transitive (500,500 paths, over ``--max-edit-inferred 100000``).
The edit is refused whole with a 422 naming the limit, the ontology and the graph are as
they were, and an event published right after is matched and notified."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from graph_service import notes
from semps_test_support import Server, wait_for

pytestmark = [pytest.mark.server]

EX = "http://ex.org/chain#"
PART_OF = EX + "partOf"
TURTLE = {"Content-Type": "text/turtle"}
NTRIPLES = {"Content-Type": "application/n-triples"}
TRANSITIVE = (
    f"@prefix owl: <http://www.w3.org/2002/07/owl#> .\n<{PART_OF}> a owl:TransitiveProperty .\n"
).encode()
ALARMS = f"SELECT ?x ?v WHERE {{ ?x <{EX}alarm> ?v }}"


def chain(links: int) -> bytes:
    return "".join(f"<{EX}n{i}> <{PART_OF}> <{EX}n{i + 1}> .\n" for i in range(links)).encode()


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(
        tmp_path_factory.mktemp("bounds") / "data", extra=("--max-edit-inferred", "100000")
    )
    yield server
    server.stop()


def sizes(client: httpx.Client) -> tuple[dict[str, object], bytes, bytes]:
    info = client.get("/graph/info")
    graph = client.get("/graph", headers={"Accept": "application/n-triples"})
    ontology = client.get("/ontology", headers={"Accept": "text/turtle"})
    assert info.status_code == graph.status_code == ontology.status_code == 200
    return info.json(), graph.content, ontology.content


def test_a_transitive_chain_is_refused_whole_and_events_go_on(srv: Server) -> None:
    with srv.client("admin") as admin, srv.client("subscriber") as sub:
        loaded = admin.put("/graph", content=chain(1000), headers=NTRIPLES)
        assert loaded.status_code == 200, loaded.text
        before = sizes(admin)
        assert before[0]["triples"] == 1000

        refused = admin.post("/ontology", content=TRANSITIVE, headers=TURTLE)

        assert refused.status_code == 422, refused.text
        body = refused.json()
        assert body["error"] == "limit_exceeded"
        assert "max_edit_inferred" in body["detail"] and "100000" in body["detail"]
        assert sizes(admin) == before

        sub_id = sub.post("/subscriptions", content=ALARMS).json()["id"]
        event = f'<{EX}n7> <{EX}alarm> "hot" .\n'.encode()
        posted = admin.post("/events", content=event, headers=NTRIPLES)
        assert posted.status_code == 202, posted.text
        assert wait_for(lambda: len(notes(sub, sub_id)) == 1)
        (note,) = notes(sub, sub_id)
        assert note["event"] == posted.json()["id"]
        assert note["solutions"] == [{"x": f"<{EX}n7>", "v": '"hot"'}]

        within = admin.post(
            "/ontology", content=TRANSITIVE.replace(b"partOf", b"near"), headers=TURTLE
        )
        assert within.status_code == 200, within.text  # a re-close within the bounds applies
        assert sizes(admin)[0]["triples"] == 1000
