"""Content and symmetric subscriptions through the HTTP API of a real server: JSON and text
subscriptions, JSON events on the one publish path (notifications, batches, restarts), RDF
literals seen through the ontology, and clear 4xx errors for bad input."""

from __future__ import annotations

import json

import httpx
import pytest
from semps_test_support import Server

pytestmark = pytest.mark.server
JSON = {"Content-Type": "application/json"}
EX = "http://ex.org/"


def stored(client: httpx.Client, sub_id: str) -> list[dict]:
    text = client.get(f"/subscriptions/{sub_id}/notifications?once=true").text
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def subscribe(client: httpx.Client, body: str, kind: str, **headers: str) -> str:
    response = client.post("/subscriptions", content=body, params={"kind": kind}, headers=headers)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_content_and_symmetric_subscriptions_hear_json_events(server: Server) -> None:
    with server.client("subscriber") as sub, server.client("publisher") as pub:
        contract = {
            "constraints": [
                {"attr": "a3", "op": "between", "low": 0.1, "high": 0.6},
                {"attr": "a7", "op": ">=", "value": 0.3},
                {"attr": "a1", "op": "=", "value": 5},
            ]
        }
        by_json = subscribe(sub, json.dumps(contract), "content", **JSON)
        by_text = subscribe(sub, 'a3 <= 0.2 and colour = "red"', "content")
        region = subscribe(sub, '{"region": {"x": [0.1, 0.3], "y": [0.5, 0.5]}}', "symmetric")

        event = {"values": {"a3": 0.2, "a7": 0.3, "a1": 5, "colour": "red"}}
        posted = pub.post("/events", json=event)
        assert posted.status_code == 202 and posted.json()["matched"] == 2
        assert pub.post("/events", json={"values": {"a3": 0.5}}).json()["matched"] == 0
        assert pub.post("/events", json={"region": {"x": [0.2, 0.4]}}).json()["matched"] == 1
        assert pub.post("/events", json={"region": {"y": [0.6, 0.7]}}).json()["matched"] == 0

        (note,) = stored(sub, by_json)
        assert note["event"] == posted.json()["id"] and note["subscription"] == by_json
        assert [n["subscription"] for n in stored(sub, by_text)] == [by_text]
        assert len(stored(sub, region)) == 1


def test_replace_delete_batch_and_restart(server: Server) -> None:
    with server.client("subscriber") as sub, server.client("publisher") as pub:
        sub_id = subscribe(sub, "price >= 10", "content")
        assert pub.post("/events", json={"values": {"price": 12}}).json()["matched"] == 1
        replaced = sub.put(f"/subscriptions/{sub_id}?kind=content", content="price >= 20")
        assert replaced.status_code == 200
        batch = {
            "events": [
                {"media_type": "application/json", "body": '{"values": {"price": 12}}'},
                {"media_type": "application/json", "body": '{"values": {"price": 25}}'},
                {"media_type": "application/json", "body": '{"values": {"price": [1]}}'},
            ]
        }
        results = pub.post("/events/batch", json=batch).json()["events"]
        assert [r.get("matched", r.get("error")) for r in results] == [0, 1, "bad_event"]
    server.stop()
    server.start()  # the index is rebuilt from the stored subscriptions
    with server.client("subscriber") as sub, server.client("publisher") as pub:
        assert pub.post("/events", json={"values": {"price": 30}}).json()["matched"] == 1
        assert sub.delete(f"/subscriptions/{sub_id}").status_code == 204
        assert pub.post("/events", json={"values": {"price": 30}}).json()["matched"] == 0


def test_rdf_literals_match_content_subscriptions_through_the_ontology(server: Server) -> None:
    ontology = f"<{EX}listPrice> <http://www.w3.org/2000/01/rdf-schema#subPropertyOf> <{EX}price> ."
    with (
        server.client("admin") as admin,
        server.client("subscriber") as sub,
        server.client("publisher") as pub,
    ):
        loaded = admin.post(
            "/ontology", content=ontology, headers={"Content-Type": "application/n-triples"}
        )
        assert loaded.status_code == 200, loaded.text
        sub_id = subscribe(sub, f"<{EX}price> between 100 and 200", "content")
        event = f'<{EX}item> <{EX}listPrice> "150"^^<http://www.w3.org/2001/XMLSchema#integer> .'
        posted = pub.post("/events", content=event, headers={"Content-Type": "text/plain"})
        assert posted.json()["matched"] == 1
        assert stored(sub, sub_id)[0]["event"] == posted.json()["id"]


@pytest.mark.parametrize(
    ("path", "body", "kind", "status", "error", "detail"),
    [
        ("/subscriptions", "a >> 1", "content", 400, "syntax_error", "1:3: unexpected character"),
        ("/subscriptions", '{"constraints": [{"attr": "a"}]}', "content", 400, "bad_request",
         '"op" must be one of'),
        ("/subscriptions", '{"constraints": [', "content", 400, "syntax_error", "invalid JSON"),
        ("/subscriptions", '{"region": {"x": [1, 0]}}', "symmetric", 400, "bad_request",
         "has low 1 > high 0"),
        ("/subscriptions", "[" * 50_000, "content", 400, "syntax_error", "unexpected character"),
        ("/events", '{"values": {"a": true}}', None, 400, "bad_event", "number or a string"),
        ("/events", '{"values": ', None, 400, "bad_event", "invalid JSON"),
        ("/events", "[" * 50_000, None, 400, "bad_event", "maximum recursion depth"),
        ("/events", '{"region": {}}', None, 400, "bad_event", "at least one attribute"),
    ],
)  # fmt: skip
def test_bad_input_is_a_clear_4xx(
    server: Server, path: str, body: str, kind: str | None, status: int, error: str, detail: str
) -> None:
    role = "subscriber" if path == "/subscriptions" else "publisher"
    with server.client(role) as client:
        params = {"kind": kind} if kind else {}
        response = client.post(path, content=body, params=params, headers=JSON)
    assert response.status_code == status, response.text
    assert response.json()["error"] == error
    assert detail in response.json()["detail"]
