"""The publishing fast path answers exactly as the routes it stands in front of.

Two applications on their own data directories, one with the plain-ASGI fast path (the
default) and one without (``fast_publish=False``: FastAPI's routes), get the same requests;
every answer (status, body bytes, the headers a client reads) is the same, and a batch's
good events are published in both."""

from __future__ import annotations

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
#: (method, path, role, request options): the cases the two applications must answer alike.
CASES = [
    ("POST", "/events/batch", "publisher", {"json": BATCH}),
    ("POST", "/events/batch", "publisher", {"json": {"events": []}}),
    ("POST", "/events/batch", "publisher", {"json": {"nope": 1}}),
    ("POST", "/events/batch", "publisher", {"content": b"{not json"}),
    ("POST", "/events/batch", "publisher", {"content": "{}", "headers": N3}),
    ("POST", "/events/batch", "publisher", {"json": BATCH, "headers": {"Content-Type": "x/y"}}),
    ("POST", "/events/batch", None, {"json": BATCH}),
    ("POST", "/events/batch", "subscriber", {"json": BATCH}),
    ("POST", "/events/batch", "publisher", {"content": b"x" * 70_000}),
    ("POST", "/events", "publisher", {"content": GOOD, "headers": N3}),
    ("POST", "/events", "publisher", {"content": "<http://ex.org/a> <bad", "headers": N3}),
    ("POST", "/events", "publisher", {"content": GOOD, "headers": {"Content-Type": "x/y"}}),
    ("POST", "/events", None, {"content": GOOD, "headers": N3}),
    ("POST", "/events", "subscriber", {"content": GOOD, "headers": N3}),
]


def same_ids(body: bytes) -> bytes:
    """``body`` with the event ids' per-broker prefix (``ev-<random hex>-``) made alike."""
    return re.sub(rb'"ev-[0-9a-f]+-', b'"ev-', body)


@pytest.fixture
def apps(tmp_path: Path) -> Iterator[tuple[InProcess, InProcess]]:
    fast = InProcess(tmp_path / "fast", max_body=65_536)
    routes = InProcess(tmp_path / "routes", max_body=65_536, fast_publish=False)
    for app in (fast, routes):
        assert app.request("POST", "/subscriptions", "subscriber", content=SUB).status_code == 201
    yield fast, routes
    fast.close()
    routes.close()


@pytest.mark.parametrize(("method", "path", "role", "options"), CASES)
def test_the_fast_path_answers_as_the_routes(
    apps: tuple[InProcess, InProcess], method: str, path: str, role: str | None, options: dict
) -> None:
    fast, routes = (app.request(method, path, role, **options) for app in apps)
    assert (fast.status_code, same_ids(fast.content)) == (
        routes.status_code,
        same_ids(routes.content),
    )
    for header in ("content-type", "www-authenticate"):
        assert fast.headers.get(header) == routes.headers.get(header)


def test_a_batch_through_the_fast_path_publishes_its_good_events(
    apps: tuple[InProcess, InProcess],
) -> None:
    fast, _ = apps
    answer = fast.request("POST", "/events/batch", "publisher", json=BATCH)
    assert answer.status_code == 202
    good, xml, turtle, media, default = answer.json()["events"]
    assert good == {"id": good["id"], "matched": 1}
    assert xml["error"] == "bad_event" and xml["line"] == 1 and "column" in xml
    assert turtle == {"id": turtle["id"], "matched": 0}
    assert media["error"] == "unsupported_media_type"
    assert default["error"] == "bad_event"  # no media type: RDF/XML
    (sub,) = fast.broker.subscriptions()
    assert [n.event for n in fast.broker.store.notifications_after(sub.id, 0)] == [good["id"]]
