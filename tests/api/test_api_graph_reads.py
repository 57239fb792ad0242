"""Reading the knowledge graph never holds its edits up, on a real `semps serve` (issue 38):
a subscriber's long query runs on a snapshot of the graph while an admin's edit is planned,
committed and answered; the query then answers over the graph as it was when it started;
one principal has at most ``max_queries_in_flight`` queries running (429 with
``Retry-After`` past it), others are not counted against it.

The order of events is asserted, not durations: "the first query is still running" is
observed as the subscriber's next query being refused 429, before and after the edit is
answered.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest
from semps_test_support import Server, wait_for

pytestmark = [pytest.mark.server]

EX = "http://ex.org/reads#"
LINKS = 2000
NTRIPLES = {"Content-Type": "application/n-triples"}
UPDATE = {"Content-Type": "application/sparql-update"}
#: Every (a, c) pair of the graph compared with every other: 4,000,000 rows visited (about
#: five seconds of CPU), little memory (each NOT EXISTS keeps its 2,000 rows only).
SLOW = "SELECT ?a WHERE { ?a ?b ?c FILTER NOT EXISTS { ?d ?e ?f FILTER(?d = ?c && ?f = ?a) } }"
#: The edit: a triple that would add one answer to SLOW had the query seen it.
EDIT = f"INSERT DATA {{ <{EX}x> <{EX}q> <{EX}y> }}"


def chain(links: int) -> bytes:
    return "".join(f"<{EX}n{i}> <{EX}p> <{EX}n{i + 1}> .\n" for i in range(links)).encode()


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    # The query budget raised so that the slow query runs to its end (by default,
    # max_query_rows cuts it off after 1,000,000 rows: tests/graph/test_query.py), and its
    # clock too (a loaded machine may take longer than graph_timeout's 30 s over it).
    extra = ("--max-query-rows", "100000000", "--graph-timeout", "3600")
    server = Server(tmp_path_factory.mktemp("reads") / "data", extra=extra)
    with server.client("admin") as admin:
        loaded = admin.put("/graph", content=chain(LINKS), headers=NTRIPLES)
        assert loaded.status_code == 200, loaded.text
    yield server
    server.stop()


def refused_as_busy(client: httpx.Client) -> httpx.Response | None:
    """The subscriber's next (cheap) query, when refused 429; ``None`` when it ran."""
    reply = client.get("/query", params={"query": "ASK {}"})
    if reply.status_code == 429:
        return reply
    assert reply.status_code == 200, reply.text
    return None


def test_an_edit_is_answered_while_a_subscriber_s_query_runs(srv: Server) -> None:
    found: list[httpx.Response] = []

    def slow_query() -> None:
        # The poller below is the same principal: its cheap query may be in flight when the
        # slow one arrives, which is then refused 429 as the poller's would be; sent again.
        with srv.client("subscriber") as client:
            reply = client.get("/query", params={"query": SLOW})
            while reply.status_code == 429:
                reply = client.get("/query", params={"query": SLOW})
            found.append(reply)

    reader = threading.Thread(target=slow_query)
    reader.start()
    with srv.client("subscriber") as sub, srv.client("admin") as admin:
        busy: list[httpx.Response] = []

        def refused() -> bool:
            reply = refused_as_busy(sub)
            busy.extend([reply] if reply is not None else [])
            return bool(busy) or bool(found)

        assert wait_for(refused)  # the slow query runs
        assert not found, found[0].text  # it was still running when refused
        refusal = busy[0]
        assert refusal.json()["error"] == "too_many_requests"
        assert "max_queries_in_flight" in refusal.json()["detail"]
        assert refusal.headers["Retry-After"] == "1"

        another = admin.get("/query", params={"query": "ASK { ?s ?p ?o }"})  # not counted
        edited = admin.post("/graph", content=EDIT, headers=UPDATE)

        assert another.status_code == 200 and another.json()["boolean"] is True
        assert edited.status_code == 200, edited.text
        assert refused_as_busy(sub) is not None  # the slow query still runs: the edit came first
        assert not found
    reader.join()
    assert found[0].status_code == 200, found[0].text
    # Answered over the graph as it was when the query started: the edit's triple is not in it.
    assert len(found[0].json()["results"]["bindings"]) == LINKS
    with srv.client("subscriber") as sub:
        ask = sub.get("/query", params={"query": f"ASK {{ <{EX}x> <{EX}q> <{EX}y> }}"})
        assert ask.json()["boolean"] is True
