"""Per-subscriber limits, suspension status and atomic replacement, through a real server
(`semps serve` with small limits on a real SQLite data directory)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from semps_test_support import Server

pytestmark = pytest.mark.server
QUERY = "SELECT ?x WHERE { ?x <http://ex/p> ?y }"
NT = {"Content-Type": "application/n-triples"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path / "data", extra=("--max-subscriptions", "2", "--max-query-bytes", "200"))
    yield srv
    srv.stop()


def test_a_subscriber_may_hold_max_subscriptions(server: Server) -> None:
    with server.client("subscriber") as sub, server.client("admin") as admin:
        first = sub.post("/subscriptions", content=QUERY).json()["id"]
        sub.post("/subscriptions", content=QUERY).raise_for_status()

        third = sub.post("/subscriptions", content=QUERY)

        assert third.status_code == 422
        subject = sub.get(f"/subscriptions/{first}").json()["owner"]
        assert third.json() == {
            "error": "limit_exceeded",
            "detail": f"subscriber {subject!r} already holds 2 subscriptions, "
            "the limit (max_subscriptions)",
        }
        # Replacing one is not a new one; other subscribers have their own allowance.
        assert sub.put(f"/subscriptions/{first}", content=QUERY).status_code == 200
        assert admin.post("/subscriptions", content=QUERY).status_code == 201
        # Deleting frees a place.
        assert sub.delete(f"/subscriptions/{first}").status_code == 204
        assert sub.post("/subscriptions", content=QUERY).status_code == 201


def test_a_subscription_over_max_query_bytes_is_refused(server: Server) -> None:
    text = "SELECT ?x WHERE { ?x <http://ex/" + "p" * 200 + "> ?y }"
    with server.client("admin") as admin:
        r = admin.post("/subscriptions", content=text)
    assert r.status_code == 422
    size = len(text.encode())
    assert r.json() == {
        "error": "limit_exceeded",
        "detail": f"the subscription is {size} bytes, over the limit of 200 bytes "
        "(max_query_bytes)",
    }


def test_a_refused_replacement_keeps_the_old_subscription_matching(server: Server) -> None:
    with server.client("admin") as admin, server.client("publisher") as pub:
        sub_id = admin.post("/subscriptions", content=QUERY).json()["id"]

        bad = admin.put(
            f"/subscriptions/{sub_id}?kind=content",
            content=b'{"constraints": [{"attr": "a", "op": "~", "value": 1}]}',
            headers={"Content-Type": "application/json"},
        )

        assert bad.status_code == 400
        assert admin.get(f"/subscriptions/{sub_id}").json()["kind"] == "semantic"
        r = pub.post("/events", content=b"<http://ex/a> <http://ex/p> <http://ex/b> .", headers=NT)
        assert r.status_code == 202
        stored = admin.get(f"/subscriptions/{sub_id}/notifications?once=true").text
        assert r.json()["id"] in stored


def test_subscriptions_report_their_status_and_only_admins_resume(server: Server) -> None:
    with server.client("admin") as admin, server.client("publisher") as pub:
        sub_id = admin.post("/subscriptions", content=QUERY).json()["id"]
        assert admin.get(f"/subscriptions/{sub_id}").json()["status"] == "active"

        assert pub.post(f"/subscriptions/{sub_id}/resume").status_code == 403
        resumed = admin.post(f"/subscriptions/{sub_id}/resume")

        assert resumed.status_code == 200
        assert resumed.json()["status"] == "active"
        assert admin.post("/subscriptions/sub-999999/resume").status_code == 404
