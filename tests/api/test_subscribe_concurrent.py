"""Single ``POST /subscriptions`` from many clients at once, on a real ``semps serve``: the
service registers the requests waiting together in groups (semps.broker.registration), and
each request is still answered on its own: its id, or its own error, never another's; each
tenant lists only its own; an answered subscription is durable (kill -9) and matched by the
next event published after its answer."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from semps_test_support import PATIENCE, UNIV_BENCH, Server

from semps.cli.demo import demo_dir

pytestmark = pytest.mark.server
UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> "
CHAIRS = UB + "SELECT ?who WHERE { ?who a ub:Chair }"
EVENT = (demo_dir() / "events" / "e1-new-chair.rdf").read_bytes()
CLIENTS, EACH = 16, 6


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with Server(tmp_path / "data", ontology=UNIV_BENCH) as srv:
        yield srv


def text(client: int, i: int) -> str:
    """Client ``client``'s ``i``-th text: every third one broken, the others distinct (the
    first of client 0 matches the event, no other does)."""
    if i % 3 == 2:
        return f"SELECT broken_{client}_{i} WHERE {{ }}"
    if (client, i) == (0, 0):
        return CHAIRS
    return UB + f"SELECT ?who WHERE {{ ?who ub:name 'nobody {client} {i}' }}"


def register_at_once(clients: list[httpx.Client]) -> list[list[httpx.Response]]:
    """Each client posts its texts one a request, all clients at the same time."""
    answers: list[list[httpx.Response]] = [[] for _ in clients]
    start = threading.Barrier(len(clients))

    def run(n: int) -> None:
        start.wait(PATIENCE)
        for i in range(EACH):
            answers[n].append(clients[n].post("/subscriptions", content=text(n, i)))

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(PATIENCE)
    return answers


def test_concurrent_registrations_are_answered_each_its_own(server: Server) -> None:
    clients = [server.another("subscriber", f"tenant-{n % 2}") for n in range(CLIENTS)]
    try:
        answers = register_at_once(clients)
    finally:
        for c in clients:
            c.close()
    ids: dict[str, list[str]] = {"tenant-0": [], "tenant-1": []}
    for n, mine in enumerate(answers):
        for i, r in enumerate(mine):
            if i % 3 == 2:
                assert r.status_code == 400, r.text
                assert r.json()["error"] == "syntax_error"
                assert f"broken_{n}_{i}" in r.json()["detail"]  # its own error
            else:
                assert r.status_code == 201, r.text
                ids[f"tenant-{n % 2}"].append(r.json()["id"])
    every = ids["tenant-0"] + ids["tenant-1"]
    assert len(set(every)) == len(every) == CLIENTS * EACH * 2 // 3
    chairs = answers[0][0].json()["id"]
    with server.client("publisher") as pub:
        answer = pub.post("/events", content=EVENT, headers={"Content-Type": "application/rdf+xml"})
    assert answer.json()["matched"] == 1
    server.kill()  # at once: what was answered was stored before
    server.start()
    for tenant, mine_ids in ids.items():
        with server.another("subscriber", tenant) as sub:
            listed = sub.get("/subscriptions?limit=500").json()["items"]
            assert sorted(s["id"] for s in listed) == sorted(mine_ids)
            texts = {s["id"]: s["text"] for s in listed}
            assert all("broken" not in t for t in texts.values())
    with server.another("subscriber", "tenant-0") as sub:
        notes = sub.get(f"/subscriptions/{chairs}/notifications?once=true").text
    assert f'"event":"{answer.json()["id"]}"' in notes.replace(" ", "")
    server.stop()
