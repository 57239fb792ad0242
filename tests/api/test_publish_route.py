"""``POST /events`` and ``POST /events/batch`` have one handler, the plain-ASGI
:class:`~semps.api.routes.events.PublishRoute`: it answers each case as the API's contract
says (the statuses its OpenAPI document lists, the one error shape), the application mounts
no other route for them, and a batch's good events are published."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from inprocess import InProcess

SUB = "SELECT ?x WHERE { ?x a <http://ex.org/C> }"
GOOD = "<http://ex.org/a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/C> ."
BATCH = {
    "events": [
        {"media_type": "application/n-triples", "body": GOOD},
        {"media_type": "application/rdf+xml", "body": "<rdf:RDF"},
        {"media_type": "text/turtle", "body": "<http://ex.org/b> <http://ex.org/p> 1 ."},
        {"media_type": "application/x-nope", "body": GOOD},
        {"body": "<not xml"},
    ]
}
N3 = {"Content-Type": "application/n-triples"}
SUPPORTED = (
    "application/ld+json, application/n-triples, application/rdf+xml, application/x-turtle, "
    "application/xml, text/plain, text/turtle, text/xml"
)
NO_TOKEN = {
    "error": "unauthorized",
    "detail": "missing bearer token (Authorization: Bearer <token>)",
}
NOT_PUBLISHER = {
    "error": "forbidden",
    "detail": "a subscriber token may not do this (needs publisher)",
}
NOT_A_BATCH = {
    "error": "bad_event",
    "detail": 'expected JSON {"events": [{"media_type": ..., "body": "..."}, ...]}',
}
XML_ERROR = {
    "error": "bad_event",
    "detail": "1:1: malformed XML: unclosed token",
    "line": 1,
    "column": 1,
}
NOPE = "unsupported media type 'application/x-nope'"
#: (method, path, role, request options, status, body): each case and its answer.
CASES = [
    (
        "POST", "/events/batch", "publisher", {"json": BATCH}, 202,
        {
            "events": [
                {"id": "ev-1", "matched": 1},
                XML_ERROR,
                {"id": "ev-3", "matched": 0},
                {
                    "error": "unsupported_media_type",
                    "detail": f"{NOPE} (supported: {SUPPORTED})",
                },
                XML_ERROR,
            ]
        },
    ),
    ("POST", "/events/batch", "publisher", {"json": {"events": []}}, 202, {"events": []}),
    ("POST", "/events/batch", "publisher", {"json": {"nope": 1}}, 400, NOT_A_BATCH),
    ("POST", "/events/batch", "publisher", {"content": b"{not json"}, 400, NOT_A_BATCH),
    (
        "POST", "/events/batch", "publisher", {"content": "{}", "headers": N3}, 415,
        {
            "error": "unsupported_media_type",
            "detail": "unsupported media type 'application/n-triples' here (use application/json)",
        },
    ),
    (
        "POST", "/events/batch", "publisher", {"json": BATCH, "headers": {"Content-Type": "x/y"}},
        415,
        {
            "error": "unsupported_media_type",
            "detail": "unsupported media type 'x/y' here (use application/json)",
        },
    ),
    ("POST", "/events/batch", None, {"json": BATCH}, 401, NO_TOKEN),
    ("POST", "/events/batch", "subscriber", {"json": BATCH}, 403, NOT_PUBLISHER),
    (
        "POST", "/events/batch", "publisher", {"content": b"x" * 70_000}, 413,
        {"error": "too_large", "detail": "body of 70000 bytes exceeds the limit of 65536 bytes"},
    ),
    (
        "POST", "/events", "publisher", {"content": GOOD, "headers": N3}, 202,
        {"id": "ev-1", "matched": 1},
    ),
    (
        "POST", "/events", "publisher", {"content": "<http://ex.org/a> <bad", "headers": N3}, 400,
        {"error": "bad_event", "detail": "1:19: Unexpected end of file", "line": 1, "column": 19},
    ),
    (
        "POST", "/events", "publisher", {"content": GOOD, "headers": {"Content-Type": "x/y"}}, 415,
        {
            "error": "unsupported_media_type",
            "detail": f"unsupported media type 'x/y' (supported: {SUPPORTED})",
        },
    ),
    ("POST", "/events", None, {"content": GOOD, "headers": N3}, 401, NO_TOKEN),
    ("POST", "/events", "subscriber", {"content": GOOD, "headers": N3}, 403, NOT_PUBLISHER),
]  # fmt: skip


def same_ids(doc: object) -> object:
    """``doc`` with the event ids' per-broker prefix (``ev-<random hex>-``) made alike."""
    return json.loads(re.sub(r'"ev-[0-9a-f]+-', '"ev-', json.dumps(doc)))


@pytest.fixture
def app(tmp_path: Path) -> Iterator[InProcess]:
    found = InProcess(tmp_path / "data", max_body=65_536)
    assert found.request("POST", "/subscriptions", "subscriber", content=SUB).status_code == 201
    yield found
    found.close()


@pytest.mark.parametrize(("method", "path", "role", "options", "status", "body"), CASES)
def test_each_request_gets_its_answer_in_the_contract(
    app: InProcess,
    method: str,
    path: str,
    role: str | None,
    options: dict,
    status: int,
    body: dict,
) -> None:
    answer = app.request(method, path, role, **options)
    assert (answer.status_code, same_ids(answer.json())) == (status, body)
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers.get("www-authenticate") == ("Bearer" if status == 401 else None)
    documented = app.request("GET", "/openapi.json", None).json()["paths"][path]["post"]
    assert str(status) in documented["responses"]


def test_the_application_mounts_no_other_handler_for_publishing(app: InProcess) -> None:
    mounted = {(r.path, m) for r in app.app.routes for m in getattr(r, "methods", None) or ()}
    assert ("/events", "POST") not in mounted and ("/events/batch", "POST") not in mounted
    paths = app.request("GET", "/openapi.json", None).json()["paths"]
    assert {"/events", "/events/batch"} <= set(paths)


def test_a_batch_publishes_its_good_events(app: InProcess) -> None:
    answer = app.request("POST", "/events/batch", "publisher", json=BATCH)
    assert answer.status_code == 202
    good, xml, turtle, media, default = answer.json()["events"]
    assert good == {"id": good["id"], "matched": 1}
    assert xml["error"] == "bad_event" and xml["line"] == 1 and "column" in xml
    assert turtle == {"id": turtle["id"], "matched": 0}
    assert media["error"] == "unsupported_media_type"
    assert default["error"] == "bad_event"  # no media type: RDF/XML
    (sub,) = app.broker.subscriptions()
    assert [n.event for n in app.broker.store.notifications_after(sub.id, 0)] == [good["id"]]
