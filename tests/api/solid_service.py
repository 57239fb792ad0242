"""Helpers of the Solid channel tests on a real ``semps serve``: a real HTTP receiver for
webhook channels, subscriber clients each with its own token, the subscription request
(``application/ld+json``, the notifications context), and readings published."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from semps_test_support import LocalServer, QuietHandler, Server

HOT = "SELECT ?room ?t WHERE { ?room <http://ex.org/temperature> ?t FILTER(?t > 30) }"
TURTLE = {"Content-Type": "text/turtle"}
CONTEXT = "https://www.w3.org/ns/solid/notification/v1"


class Receiver(LocalServer):
    """A webhook endpoint that refuses its first ``failures`` calls (HTTP 500), then
    records each call: its headers, its body and when it came."""

    def __init__(self, failures: int = 0) -> None:
        self.received: list[tuple[dict[str, str], bytes, float]] = []
        self.refused = 0
        outer = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.body()
                if outer.refused < failures:
                    outer.refused += 1
                    self.send_response(500)
                else:
                    outer.received.append((dict(self.headers), body, time.time()))
                    self.send_response(204)
                self.end_headers()

        super().__init__(Handler, 0, "/hook")

    def notes(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _, body, _ in self.received]


class Subscribers:
    """Makes clients, each with a new subscriber token of a subject (and the token's id);
    closes them all on :meth:`close`."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.clients: list[httpx.Client] = []

    def __call__(self, subject: str) -> tuple[httpx.Client, str]:
        with self.server.client("admin") as admin:
            made = admin.post("/tokens", json={"role": "subscriber", "subject": subject}).json()
        headers = {"Authorization": f"Bearer {made['token']}"}
        self.clients.append(httpx.Client(base_url=self.server.url, headers=headers, timeout=None))
        return self.clients[-1], made["id"]

    def close(self) -> None:
        for client in self.clients:
            client.close()


def publish(server: Server, *readings: tuple[int, int]) -> None:
    """Publish a temperature reading per (room, value)."""
    with server.client("publisher") as pub:
        for room, value in readings:
            body = f"<http://ex.org/room{room}> <http://ex.org/temperature> {value} ."
            assert pub.post("/events", content=body, headers=TURTLE).status_code == 202


def request(client: httpx.Client, kind: str, **features: Any) -> httpx.Response:
    """The answer to a subscription request for a ``kind`` channel, as the protocol sends
    it (JSON-LD, the notifications context)."""
    body = {"@context": [CONTEXT], "type": kind, **features}
    return client.post(
        f"/solid/subscription/{kind}",
        content=json.dumps(body),
        headers={"Content-Type": "application/ld+json"},
    )


def establish(client: httpx.Client, kind: str, **features: Any) -> dict[str, Any]:
    """A ``kind`` channel's description (the request must succeed)."""
    reply = request(client, kind, **features)
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"].startswith("application/ld+json")
    channel: dict[str, Any] = reply.json()
    return channel


def hot(client: httpx.Client) -> str:
    """A new subscription of the client's to hot rooms (a Solid topic), by its id."""
    return str(client.post("/subscriptions", content=HOT).json()["id"])


def solutions(note: dict[str, Any]) -> list[str]:
    """The rooms of a notification's solutions."""
    return [row["room"] for row in note["semps:solutions"]]
