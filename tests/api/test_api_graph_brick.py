"""brick-kg-a through a real `semps serve`: the Brick ontology PUT, the building model PUT
to ``/graph`` over HTTP, the workload's subscriptions registered, each telemetry event
published; the notifications equal ``expected.jsonl`` (the workload's oracle: pyoxigraph
over the ``reasonable`` reasoner's OWL 2 RL closure of O+K+E and of O+K, multiset
difference). Then the server is killed (-9) and started again on its data directory: the
graph is still there, and the events published again notify what they did before.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from graph_service import notes
from semps_test_support import WORKLOADS, Server

from semps.documents import media_type_for

pytestmark = [pytest.mark.server, pytest.mark.slow]

CASE = WORKLOADS / "brick-kg-a"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(tmp_path_factory.mktemp("brick") / "data", max_body=8_000_000) as srv:
        yield srv


def _expected() -> dict[str, dict[str, int]]:
    rows = [json.loads(line) for line in (CASE / "expected.jsonl").read_text().splitlines()]
    return {row["event"]: row["solutions"] for row in rows}


def _publish_all(pub: httpx.Client) -> dict[str, str]:
    """Every event published in name order; event id -> the event's file stem."""
    names = {}
    for path in sorted((CASE / "events").iterdir()):
        headers = {"Content-Type": media_type_for(path.name)}
        posted = pub.post("/events", content=path.read_bytes(), headers=headers)
        assert posted.status_code == 202, f"{path.name}: {posted.text}"
        names[posted.json()["id"]] = path.stem
    return names


def _found(
    sub: httpx.Client, subs: dict[str, str], events: dict[str, str]
) -> dict[str, dict[str, int]]:
    """Per event stem, per subscription stem, the solutions counted in its notification."""
    out: dict[str, dict[str, int]] = {stem: {} for stem in events.values()}
    for sub_id, query in subs.items():
        for note in notes(sub, sub_id):
            if note["event"] in events:
                out[events[note["event"]]][query] = note["count"]
    return out


def test_brick_telemetry_against_the_model_loaded_over_http(server: Server) -> None:
    server.put("admin", "/ontology", CASE / "ontology.owl")
    loaded = server.put("publisher", "/graph", CASE / "graph" / "site.ttl")
    assert loaded.json()["inserted"] > 0 and loaded.json()["inferred_added"] > 0
    with server.client("subscriber") as sub:
        subs = {}
        for path in sorted((CASE / "subscriptions").glob("*.rq")):
            created = sub.post("/subscriptions", content=path.read_text())
            assert created.status_code == 201, f"{path.name}: {created.text}"
            subs[created.json()["id"]] = path.stem
        with server.client("publisher") as pub:
            events = _publish_all(pub)
        assert _found(sub, subs, events) == _expected()

        info = sub.get("/graph/info").json()
    server.kill()
    server.start()
    with server.client("subscriber") as sub, server.client("publisher") as pub:
        assert sub.get("/graph/info").json() == info
        again = _publish_all(pub)
        assert _found(sub, subs, again) == _expected()


def test_the_model_exported_is_the_model_loaded(server: Server, tmp_path: Path) -> None:
    """After the first test (or alone): the graph PUT again, exported as N-Triples, read
    back by rdflib: isomorphic to the file."""
    import rdflib
    from rdflib.compare import isomorphic

    with server.client("publisher") as pub:
        model = (CASE / "graph" / "site.ttl").read_bytes()
        assert pub.put("/graph", content=model, headers={"Content-Type": "text/turtle"}).is_success
        got = pub.get("/graph", headers={"Accept": "application/n-triples"})
        assert got.status_code == 200 and got.headers["content-type"].startswith(
            "application/n-triples"
        )
    exported = rdflib.Graph().parse(data=got.text, format="nt")
    assert isomorphic(exported, rdflib.Graph().parse(CASE / "graph" / "site.ttl"))
