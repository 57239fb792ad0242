"""kill -9 of a real `semps serve` while SPARQL Updates are being made and a subscriber is
listening: after a restart on the same data directory every acknowledged update is in the
graph with its notification, nothing is half there (an update and its notification are
both stored or neither), what the subscriber saw live is what is stored, and the stream
resumes by seq."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from graph_service import notes
from semps_test_support import Server

pytestmark = [pytest.mark.server, pytest.mark.slow]

EX = "http://ex.org/crash#"
ONTOLOGY = f"<{EX}Sensor> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <{EX}Point> ."
POINTS = f"SELECT ?s WHERE {{ ?s a <{EX}Point> }}"
ACKED_BEFORE_KILL = 8


def _insert(i: int) -> bytes:
    return f"INSERT DATA {{ <{EX}n{i:03d}> a <{EX}Sensor> }}".encode()


class Updates(threading.Thread):
    """Updates one after another until the server goes away; ``acked`` the ones answered
    200 (the condition the test waits on)."""

    def __init__(self, server: Server) -> None:
        super().__init__(daemon=True)
        self.client = server.client("publisher")
        self.acked: list[int] = []
        self.progress = threading.Condition()

    def run(self) -> None:
        headers = {"Content-Type": "application/sparql-update"}
        try:
            for i in range(1000):
                answer = self.client.post("/graph", content=_insert(i), headers=headers)
                assert answer.status_code == 200, answer.text
                with self.progress:
                    self.acked.append(i)
                    self.progress.notify_all()
        except httpx.TransportError:
            return  # the server was killed
        finally:
            self.client.close()


class Listener(threading.Thread):
    """A subscriber's live SSE stream, read until the connection drops."""

    def __init__(self, server: Server, sub_id: str) -> None:
        super().__init__(daemon=True)
        self.client = server.client("subscriber")
        self.sub_id = sub_id
        self.seen: list[dict] = []
        self.open = threading.Event()

    def run(self) -> None:
        try:
            with self.client.stream("GET", f"/subscriptions/{self.sub_id}/notifications") as r:
                self.open.set()
                for line in r.iter_lines():
                    if line.startswith("data: "):
                        self.seen.append(json.loads(line[6:]))
        except (httpx.TransportError, httpx.StreamError):
            return
        finally:
            self.open.set()
            self.client.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path / "data")
    yield srv
    srv.stop()


def test_kill_9_during_updates_loses_nothing_acknowledged_and_half_applies_nothing(
    server: Server,
) -> None:
    nt = {"Content-Type": "application/n-triples"}
    with server.client("admin") as admin:
        assert admin.put("/ontology", content=ONTOLOGY.encode(), headers=nt).status_code == 200
    with server.client("subscriber") as sub:
        sub_id = sub.post("/subscriptions", content=POINTS).json()["id"]
    listener = Listener(server, sub_id)
    listener.start()
    assert listener.open.wait(30)
    updates = Updates(server)
    updates.start()
    with updates.progress:
        assert updates.progress.wait_for(lambda: len(updates.acked) >= ACKED_BEFORE_KILL, 120)
    server.kill()
    updates.join(30)
    listener.join(30)
    acked = list(updates.acked)

    server.start()
    with server.client("subscriber") as sub:
        got = sub.get("/graph", headers={"Accept": "application/n-triples"})
        nodes = sorted(line.split()[0][len(EX) + 1 : -1] for line in got.text.splitlines())
        stored = notes(sub, sub_id)
        info = sub.get("/graph/info").json()
    # every acknowledged update is there; at most the one in flight besides, and in order
    kept = [int(n[1:]) for n in nodes]
    assert kept[: len(acked)] == acked and len(kept) - len(acked) in (0, 1)
    assert info["asserted"] == len(kept)
    # one notification per update kept, each naming its change, seqs 1..n without a gap
    assert [n["id"] for n in stored] == list(range(1, len(kept) + 1))
    assert [n["solutions"] for n in stored] == [[{"s": f"<{EX}n{i:03d}>"}] for i in kept]
    assert [n["graph_version"] for n in stored] == sorted({n["graph_version"] for n in stored})
    assert stored[-1]["graph_version"] == info["version"]
    # what was seen live was stored first
    assert listener.seen == stored[: len(listener.seen)]
    # and the stream goes on after a restart, from where it was
    with server.client("publisher") as pub:
        headers = {"Content-Type": "application/sparql-update"}
        assert pub.post("/graph", content=_insert(999), headers=headers).status_code == 200
    with server.client("subscriber") as sub:
        (after,) = notes(sub, sub_id, after=len(kept))
    assert after["id"] == len(kept) + 1 and after["solutions"] == [{"s": f"<{EX}n999>"}]
