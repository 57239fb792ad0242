"""Helpers of the knowledge graph's service tests: a real `semps serve` driven over HTTP
(ontology, graph, subscriptions, updates, events), its notifications read back from the
streams as the oracle's solutions (:mod:`kg_oracle`), and the service as a
:class:`kg_systems.KgSystem` so the oracle's random cases run through it."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence

import httpx
from kg_oracle import Solutions, Triple
from kg_systems import KgSystem
from semps_test_support import Server, n3

from semps.terms import parse_n3

NT = {"Content-Type": "application/n-triples"}
UPDATE = {"Content-Type": "application/sparql-update"}


def ntriples(triples: Sequence[Triple]) -> bytes:
    """Triples as an N-Triples document."""
    return "".join(f"{n3(s)} {n3(p)} {n3(o)} .\n" for s, p, o in triples).encode()


def notes(client: httpx.Client, sub_id: str, after: int = 0) -> list[dict]:
    """Every notification of ``sub_id`` after seq ``after`` (the SSE stream, once)."""
    headers = {"Last-Event-ID": str(after)} if after else {}
    response = client.get(f"/subscriptions/{sub_id}/notifications?once=true", headers=headers)
    assert response.status_code == 200, response.text
    lines = response.text.splitlines()
    return [json.loads(line[6:]) for line in lines if line.startswith("data: ")]


def solutions(rows: list[dict[str, str]]) -> Solutions:
    """A notification's solutions (N-Triples terms) as the oracle's multiset."""
    return Counter(frozenset((k, parse_n3(v)) for k, v in row.items()) for row in rows)


class Stream:
    """The notifications of a set of subscriptions, read on from where the last read ended."""

    def __init__(self, client: httpx.Client, ids: Mapping[str, str]) -> None:
        self.client, self.ids = client, dict(ids)  # query id -> subscription id
        self.seen = dict.fromkeys(self.ids.values(), 0)

    def new(self) -> dict[str, list[dict]]:
        """Per query id, the notifications since the last call."""
        out: dict[str, list[dict]] = {}
        for qid, sub_id in self.ids.items():
            found = notes(self.client, sub_id, self.seen[sub_id])
            if found:
                self.seen[sub_id] = found[-1]["id"]
            out[qid] = found
        return out


class ServiceSystem(KgSystem):
    """The service over HTTP: the ontology PUT, the graph PUT (blank nodes renamed by the
    load), subscriptions registered, then each update POSTed to ``/graph`` (or each event
    published), the notifications read from the streams."""

    name = "semps-serve"

    def __init__(self, server: Server) -> None:
        self.server = server
        self.subscriptions: list[str] = []

    def _reset(
        self, ontology: Sequence[Triple], graph: Sequence[Triple], queries: Mapping[str, str]
    ) -> Stream:
        with self.server.client("admin") as admin:
            for sub_id in self.subscriptions:
                assert admin.delete(f"/subscriptions/{sub_id}").status_code == 204
            self.subscriptions = []
            put = admin.put("/ontology", content=ntriples(ontology), headers=NT)
            assert put.status_code == 200, put.text
            put = admin.put("/graph", content=ntriples(graph), headers=NT)
            assert put.status_code == 200, put.text
        sub = self.server.client("subscriber")
        ids = {}
        for qid, text in queries.items():
            created = sub.post("/subscriptions", content=text)
            assert created.status_code == 201, created.text
            ids[qid] = created.json()["id"]
            self.subscriptions.append(ids[qid])
        return Stream(sub, ids)

    def added(self, ontology, graph, events, queries):  # type: ignore[no-untyped-def]
        stream = self._reset(ontology, graph, queries)
        out = []
        with self.server.client("publisher") as pub:
            for event in events:
                posted = pub.post("/events", content=ntriples(event), headers=NT)
                assert posted.status_code == 202, posted.text
                found = {}
                for qid, rows in stream.new().items():
                    mine = [n for n in rows if n["event"] == posted.json()["id"]]
                    assert len(mine) == len(rows), "a notification of another event"
                    if mine:
                        found[qid] = solutions(mine[0]["solutions"])
                out.append(found)
        stream.client.close()
        return out

    def change(self, ontology, graph, updates, queries):  # type: ignore[no-untyped-def]
        stream = self._reset(ontology, graph, queries)
        out = []
        with self.server.client("publisher") as pub:
            for text in updates:
                answer = pub.post("/graph", content=text.encode(), headers=UPDATE)
                assert answer.status_code == 200, answer.text
                out.append(changes(stream, f"graph-{answer.json()['version']}"))
        stream.client.close()
        return out


def changes(stream: Stream, event: str) -> dict[str, tuple[Solutions, Solutions]]:
    """Per query id, the (added, removed) solutions of the change named ``event``."""
    found = {}
    for qid, rows in stream.new().items():
        assert [n["event"] for n in rows] in ([], [event]), rows
        if rows:
            (note,) = rows
            assert "solutions_truncated" not in note and "removed_truncated" not in note
            found[qid] = (solutions(note["solutions"]), solutions(note["removed"]))
    return found
