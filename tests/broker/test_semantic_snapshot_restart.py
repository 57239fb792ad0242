"""The service restarts from the semantic snapshot and saved index beside its database.

``semps serve`` keeps ``semantic.snap`` in its data directory: its matching workers start
from the parses it holds, with the parts its writing worker adds beside it when idle after
registering subscriptions, and rewrite it (folding the parts in) only when they had to
parse, when it holds removed subscriptions' texts, or when a file is damaged. The writing
worker also saves the built index, ``semantic.state``, once it aged and the service is
quiet, and folds the snapshot's parts then; a restart starts from that index brought up to
date with the subscriptions registered and deleted since (reading the snapshot only when
they are many), and leaves a damaged one aside (saying so). The answers never depend on
either: after each restart they equal pyoxigraph's over the event.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest
from semps_test_support import Server, to_oxigraph, wait_for

from semps.broker.at_rest import SecretBox
from semps.broker.broker import SEMANTIC_SNAPSHOT, SEMANTIC_STATE, STATE_KEY
from semps.errors import SubscriptionError
from semps.ingest.rdf import read_event
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic.snapshot import read_snapshot
from semps.matcher.semantic.snapshot_memo import parts_of

EX = "http://ex.org/"
EVENT = f"""<{EX}a> <{EX}p> <{EX}b> .
<{EX}b> <{EX}p> <{EX}c> .
<{EX}a> <{EX}v> "5"^^<http://www.w3.org/2001/XMLSchema#integer> .
<{EX}b> <{EX}v> "12"^^<http://www.w3.org/2001/XMLSchema#integer> .
<{EX}c> <{EX}label> "c" .
"""
QUERIES = [
    f"SELECT * WHERE {{ ?x <{EX}p> ?y . ?y <{EX}v> ?n FILTER(?n > 10) }}",
    f"SELECT * WHERE {{ ?x <{EX}p> ?y OPTIONAL {{ ?y <{EX}label> ?l }} }}",
    f"SELECT * WHERE {{ ?x <{EX}p>+ ?y }}",
    f"ASK {{ ?x <{EX}v> ?n FILTER(?n > 100) }}",
    f"SELECT * WHERE {{ ?x <{EX}p> ?y . ?y <{EX}v> ?n FILTER(?n > 10) }}",  # a text twice
]
NT = {"Content-Type": "application/n-triples"}


def oracle_counts(texts: dict[str, str]) -> dict[str, int]:
    """Solutions per subscription by pyoxigraph over the event (no ontology: the closure
    adds nothing), the matching ones only."""
    store = ox.Store()
    for s, p, o in read_event(
        EVENT.encode(), event_id="e", media_type="application/n-triples"
    ).triples:
        store.add(ox.Quad(to_oxigraph(s), ox.NamedNode(p), to_oxigraph(o)))
    counts = {}
    for sub_id, text in texts.items():
        result = store.query(text)
        n = int(bool(result)) if isinstance(result, ox.QueryBoolean) else len(list(result))
        if n:
            counts[sub_id] = n
    return counts


def answers(server: Server, ids: list[str]) -> dict[str, int]:
    """Publish the event; the count each subscription was notified with."""
    with server.client("publisher") as pub, server.client("subscriber") as sub:
        event_id = pub.post("/events", content=EVENT, headers=NT).json()["id"]
        found = {}
        for sub_id in ids:
            text = sub.get(f"/subscriptions/{sub_id}/notifications?once=true").text
            for line in text.splitlines():
                note = json.loads(line[6:]) if line.startswith("data: ") else {}
                if note.get("event") == event_id:
                    found[sub_id] = note["count"]
    return found


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path / "data", extra=("--workers", "1"))
    yield srv
    srv.stop()


def _subscribe(client: httpx.Client, text: str) -> str:
    created = client.post("/subscriptions", content=text)
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def test_restarts_load_the_snapshot_and_the_index_saving_folds_the_parts(
    server: Server,
) -> None:
    snap = server.data_dir / SEMANTIC_SNAPSHOT
    with server.client("subscriber") as sub:
        texts = {_subscribe(sub, q): q for q in QUERIES}
    want = oracle_counts(texts)
    assert set(want) == set(texts) - {list(texts)[3]}  # the event makes the test show something
    assert answers(server, list(texts)) == want
    # the writing worker, idle, extends the snapshot with the new subscriptions' parses,
    # then saves the index once quiet, folding the parts into the snapshot
    assert wait_for(lambda: saved_texts(server) == texts and snapshot_ids(snap) == set(texts))
    assert parts_of(snap) == [] and parse_count(snap) == len(set(QUERIES))
    written = files(snap)

    server.kill()
    server.start()  # from the saved index: the snapshot neither read nor rewritten
    assert answers(server, list(texts)) == want
    assert files(snap) == written

    gone = list(texts)[1]  # a text no other subscription has
    with server.client("subscriber") as sub:
        assert sub.delete(f"/subscriptions/{gone}").status_code == 204
    del texts[gone]
    # one change in four: the index is saved again, and its text's parse folded out
    assert wait_for(lambda: saved_texts(server) == texts and snapshot_ids(snap) == set(texts))
    assert parse_count(snap) == len(set(texts.values()))
    server.stop()
    server.start()
    assert answers(server, list(texts)) == oracle_counts(texts)


def snapshot_ids(snap: Path) -> set[str] | None:
    """The subscriptions the snapshot holds (``None``: none readable)."""
    try:
        return {s.id for s in read_snapshot(snap).subscriptions}
    except SubscriptionError:
        return None


def files(snap: Path) -> list[tuple[str, int, bytes]]:
    """The snapshot's and its parts' names, times and bytes."""
    found = [p for p in [snap, *parts_of(snap)] if p.exists()]
    return [(p.name, p.stat().st_mtime_ns, p.read_bytes()) for p in found]


def parse_count(snap: Path) -> int:
    """Distinct texts whose parses the snapshot and its parts hold."""
    texts: set[str] = set()
    for path in [snap, *parts_of(snap)]:
        try:
            texts |= set(read_snapshot(path).queries)
        except SubscriptionError:
            pass
    return len(texts)


def test_a_damaged_snapshot_is_ignored_and_rewritten(server: Server) -> None:
    snap = server.data_dir / SEMANTIC_SNAPSHOT
    with server.client("subscriber") as sub:
        texts = {_subscribe(sub, q): q for q in QUERIES[:3]}
    server.stop()
    snap.write_bytes(b"semps-semantic-index\n{not json")
    (server.data_dir / SEMANTIC_STATE).unlink(missing_ok=True)  # no saved index: read it
    server.start()
    assert answers(server, list(texts)) == oracle_counts(texts)
    assert {s.id for s in read_snapshot(snap).subscriptions} == set(texts)


def test_a_restart_starts_from_the_saved_index_brought_up_to_date(server: Server) -> None:
    state = server.data_dir / SEMANTIC_STATE
    with server.client("subscriber") as sub:
        texts = {_subscribe(sub, q): q for q in QUERIES}
    # saved by the writing worker once the service is quiet
    assert wait_for(lambda: saved_texts(server) == texts)
    assert state.stat().st_mode & 0o777 == 0o600
    saved = state.read_bytes()
    with server.client("subscriber") as sub:  # changes after the save
        gone = list(texts)[0]
        assert sub.delete(f"/subscriptions/{gone}").status_code == 204
        del texts[gone]
        late = QUERIES[1].replace("OPTIONAL", "OPTIONAL { ?y <http://ex.org/v> ?m } OPTIONAL")
        texts[_subscribe(sub, late)] = late
    server.kill()
    state.write_bytes(saved)  # as if the service had stopped before saving again
    server.start()
    assert answers(server, list(texts)) == oracle_counts(texts)
    log = server.log.read_text()
    assert "subscriptions from the saved state, 2 changed since" in log
    assert "not a usable matcher state" not in log


def saved_texts(server: Server) -> dict[str, str] | None:
    """The subscriptions' texts the saved index holds, by id (``None``: none saved)."""
    key = SecretBox.from_dir(server.data_dir).derive(STATE_KEY)
    held = SemanticMatcher().restore_state(server.data_dir / SEMANTIC_STATE, key)
    return None if held is None else dict(held)


def test_a_damaged_saved_index_is_left_aside_and_saved_again(server: Server) -> None:
    state = server.data_dir / SEMANTIC_STATE
    with server.client("subscriber") as sub:
        texts = {_subscribe(sub, q): q for q in QUERIES[:3]}
    assert wait_for(state.exists)
    server.stop()
    damaged = state.read_bytes()[:-1]
    state.write_bytes(damaged)
    server.start()
    assert answers(server, list(texts)) == oracle_counts(texts)
    assert "not a usable matcher state" in server.log.read_text()
    assert wait_for(lambda: state.read_bytes() != damaged)  # saved again, whole
    server.stop()
    server.start()
    assert answers(server, list(texts)) == oracle_counts(texts)
    assert "subscriptions from the saved state, 0 changed since" in server.log.read_text()
