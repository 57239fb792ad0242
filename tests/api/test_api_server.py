"""The broker service, tested through a real uvicorn server process on a real SQLite data
directory: subscriptions, events, Server-Sent Events, ontology edits, errors, and durability
across kill -9."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from semps_test_support import PATIENCE, UNIV_BENCH, Server

from semps.cli.demo import demo_dir

pytestmark = pytest.mark.server
UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
CHAIRS = UB + "SELECT ?who WHERE { ?who a ub:Chair }"
EVENT = (demo_dir() / "events" / "e1-new-chair.rdf").read_bytes()
RDFXML = {"Content-Type": "application/rdf+xml"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with Server(tmp_path / "data", ontology=UNIV_BENCH) as srv:
        yield srv


def stored(client: httpx.Client, sub_id: str, after: int = 0) -> list[dict]:
    """Every notification after ``after``, read through the SSE endpoint (once=true)."""
    headers = {"Last-Event-ID": str(after)} if after else {}
    text = client.get(f"/subscriptions/{sub_id}/notifications?once=true", headers=headers).text
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def test_subscribe_publish_and_stream(server: Server) -> None:
    with server.client("subscriber") as sub, server.client("publisher") as pub:
        created = sub.post("/subscriptions", content=CHAIRS, params={"name": "chairs"})
        assert created.status_code == 201
        sub_id = created.json()["id"]
        posted = pub.post("/events", content=EVENT, headers=RDFXML)
        assert posted.status_code == 202 and posted.json()["matched"] == 1
        (note,) = stored(sub, sub_id)
        assert note["subscription"] == sub_id and note["event"] == posted.json()["id"]
        assert note["solutions"] == [
            {"who": "<http://www.Department7.University3.edu/FullProfessor2>"}
        ]
        pub.post("/events", content=EVENT, headers=RDFXML)
        assert [n["id"] for n in stored(sub, sub_id, after=1)] == [2]
        assert [s["id"] for s in sub.get("/subscriptions").json()["items"]] == [sub_id]


def test_an_ontology_edit_takes_effect_for_the_next_event(server: Server) -> None:
    text = "SELECT ?x WHERE { ?x a <http://ex.org/Boss> }"
    with (
        server.client("subscriber") as sub,
        server.client("publisher") as pub,
        server.client("admin") as admin,
    ):
        sub_id = sub.post("/subscriptions", content=text).json()["id"]
        assert pub.post("/events", content=EVENT, headers=RDFXML).json()["matched"] == 0
        axiom = {
            "kind": "subClassOf",
            "subject": "http://swat.cse.lehigh.edu/onto/univ-bench.owl#Chair",
            "object": "http://ex.org/Boss",
        }
        assert admin.post("/ontology/axioms", json=axiom).status_code == 200
        assert pub.post("/events", content=EVENT, headers=RDFXML).json()["matched"] == 1
        assert len(stored(sub, sub_id)) == 1


def test_subscribers_see_only_their_own_subscriptions(server: Server) -> None:
    with server.client("subscriber") as mine, server.another("subscriber") as theirs:
        sub_id = mine.post("/subscriptions", content=CHAIRS).json()["id"]
        assert theirs.get(f"/subscriptions/{sub_id}").status_code == 404
        assert theirs.get(f"/subscriptions/{sub_id}/notifications?once=true").status_code == 404
        assert theirs.get("/subscriptions").json()["items"] == []


def test_nothing_acknowledged_is_lost_across_kill_9(server: Server) -> None:
    with server.client("subscriber") as sub:
        sub_id = sub.post("/subscriptions", content=CHAIRS).json()["id"]
    publishers = [  # several at once: several batches in flight when the server dies
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _PUBLISHER,
                server.url,
                server.tokens["publisher"],
                str(demo_dir() / "events" / "e1-new-chair.rdf"),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    # Some event acknowledged (a publisher printed its 202), more on the way. readline returns
    # "" if that publisher gives up first (its requests time out after 60 s).
    first = publishers[0].stdout.readline() if publishers[0].stdout else ""
    server.kill()  # while the publishers are posting
    acknowledged = [first.strip()] if first.strip() else []
    for publisher in publishers:
        out, _ = publisher.communicate(timeout=PATIENCE)
        acknowledged += [line for line in out.splitlines() if line]
    assert acknowledged, "the publisher got no 202 before the kill"
    server.start()
    with server.client("subscriber") as sub:
        events = [n["event"] for n in stored(sub, sub_id)]
        ids = [n["id"] for n in stored(sub, sub_id)]
        assert set(acknowledged) <= set(events)
        assert ids == list(range(1, len(ids) + 1))  # resumable: no gaps, none twice
        with server.client("publisher") as pub:  # the index was rebuilt from the store
            assert pub.post("/events", content=EVENT, headers=RDFXML).json()["matched"] == 1


_PUBLISHER = """
import sys, httpx
url, token, path = sys.argv[1:]
data = open(path, 'rb').read()
with httpx.Client(base_url=url, headers={'Authorization': 'Bearer ' + token}, timeout=60) as c:
    for _ in range(10_000):
        try:
            r = c.post('/events', content=data, headers={'Content-Type': 'application/rdf+xml'})
        except httpx.TransportError:
            break
        if r.status_code == 202:
            print(r.json()['id'], flush=True)
"""


def test_a_batch_publishes_the_good_events_and_reports_the_bad(server: Server) -> None:
    with server.client("subscriber") as sub, server.client("publisher") as pub:
        sub_id = sub.post("/subscriptions", content=CHAIRS).json()["id"]
        batch = {
            "events": [
                {"media_type": "application/rdf+xml", "body": EVENT.decode()},
                {"media_type": "application/rdf+xml", "body": "<rdf:RDF"},
                {"media_type": "text/turtle", "body": "<http://a> <http://b> <http://c> ."},
            ]
        }
        response = pub.post("/events/batch", json=batch)
        assert response.status_code == 202
        first, bad, third = response.json()["events"]
        assert first["matched"] == 1 and third["matched"] == 0
        assert bad["error"] == "bad_event" and bad["line"] == 1
        assert [n["event"] for n in stored(sub, sub_id)] == [first["id"]]
        assert pub.post("/events/batch", json={"nope": 1}).status_code == 400


def test_classes_and_properties_are_edited_over_http(server: Server) -> None:
    text = "SELECT ?x WHERE { ?x a <http://ex.org/Staff> }"
    chair = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#Chair"
    with (
        server.client("subscriber") as sub,
        server.client("publisher") as pub,
        server.client("admin") as admin,
    ):
        sub.post("/subscriptions", content=text)
        assert pub.post("/events", content=EVENT, headers=RDFXML).json()["matched"] == 0
        created = admin.post(
            "/ontology/classes", json={"iri": chair, "parents": ["http://ex.org/Staff"]}
        )
        assert created.status_code == 200
        assert pub.post("/events", content=EVENT, headers=RDFXML).json()["matched"] == 1
        assert (
            admin.delete("/ontology/entities", params={"iri": "http://ex.org/Staff"}).status_code
            == 200
        )
        assert pub.post("/events", content=EVENT, headers=RDFXML).json()["matched"] == 0
        turtle = admin.get("/ontology", headers={"Accept": "text/turtle"})
        assert (
            turtle.headers["content-type"].startswith("text/turtle") and b"Chair" in turtle.content
        )
        bad = admin.post("/ontology/properties", json={"parents": []})
        assert bad.status_code == 400 and bad.json()["error"] == "bad_ontology"
        metrics = admin.get("/metrics").text
        assert "semps_events_in_total 3" in metrics
        assert 'semps_publish_latency_seconds_bucket{le="+Inf"} 3' in metrics


def test_a_subscriber_that_never_reads_harms_no_one(server: Server) -> None:
    """A client opens its stream and never reads: publishing and other streams go on.

    (Each stream is its own coroutine reading the store; this checks that isolation, not
    TCP back-pressure, which 60 small notifications do not reach.)
    """
    with server.client("subscriber") as sub:
        stuck = sub.post("/subscriptions", content=CHAIRS).json()["id"]
        reader = sub.post("/subscriptions", content=CHAIRS).json()["id"]
    raw = socket.create_connection(("127.0.0.1", server.port))
    raw.sendall(
        f"GET /subscriptions/{stuck}/notifications HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {server.tokens['subscriber']}\r\n\r\n".encode()
    )
    try:
        with server.client("publisher") as pub:
            codes = [
                pub.post("/events", content=EVENT, headers=RDFXML).status_code for _ in range(60)
            ]
        assert codes == [202] * 60
        with server.client("subscriber") as sub:
            assert [n["id"] for n in stored(sub, reader)] == list(range(1, 61))
    finally:
        raw.close()


def test_composite_subscriptions_survive_a_restart_between_a_and_b(server: Server) -> None:
    profs = UB + "SELECT ?x WHERE { ?x a ub:FullProfessor }"
    chairs = UB + "SELECT ?x WHERE { ?x a ub:Chair }"
    with server.client("subscriber") as sub, server.client("publisher") as pub:
        sub.post("/subscriptions", content=profs, params={"name": "prof"})
        sub.post("/subscriptions", content=chairs, params={"name": "chair"})
        bad = sub.post(
            "/subscriptions", content="create event x = a and a;", params={"kind": "composite"}
        )
        assert bad.status_code == 400 and "names the same event twice" in bad.json()["detail"]
        comp = sub.post(
            "/subscriptions",
            content="create event both = prof and chair; create event again = both then prof;",
            params={"kind": "composite"},
        ).json()["id"]
        pub.post("/events", content=EVENT, headers=RDFXML)  # prof and chair at once: "both"
    server.kill()
    server.start()
    with server.client("subscriber") as sub, server.client("publisher") as pub:
        pub.post("/events", content=EVENT, headers=RDFXML)  # prof after both: "again" fires
        notes = stored(sub, comp)
    assert [n["detail"]["composite"] for n in notes] == ["both", "again", "both"]
    names = [c["name"] for c in notes[0]["detail"]["constituents"]]
    assert sorted(names) == ["chair", "prof"]


def test_a_scraper_reads_metrics_with_the_metrics_token_only(tmp_path: Path) -> None:
    with Server(tmp_path / "data", extra=("--metrics-token", "scrape-me")) as srv:
        with httpx.Client(base_url=srv.url, headers={"Authorization": "Bearer scrape-me"}) as c:
            metrics = c.get("/metrics")
            assert metrics.status_code == 200 and "semps_open_streams 0" in metrics.text
            assert c.get("/subscriptions").status_code == 401
            assert c.get("/ontology").status_code == 401
        with httpx.Client(base_url=srv.url) as anonymous:
            assert anonymous.get("/metrics").status_code == 401
            docs = anonymous.get("/docs")  # public, and every asset from the service itself
            assert docs.status_code == 200 and "https://" not in docs.text
            assert anonymous.get("/docs/assets/swagger-ui-bundle.js").status_code == 200
