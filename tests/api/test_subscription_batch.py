"""``POST /subscriptions/batch`` on a real ``semps serve``: many subscriptions in one
request (text lines, JSON lines, a tar of .rq files), each registered or refused on its own,
durable once answered, bounded by its limits, and one subscriber's batch never touching
another's subscriptions."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from semps_test_support import UNIV_BENCH, Server

from semps.cli.demo import demo_dir

pytestmark = pytest.mark.server
UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> "
CHAIRS = UB + "SELECT ?who WHERE { ?who a ub:Chair }"
PEOPLE = UB + "SELECT ?who WHERE { ?who a ub:Person }"
NOBODY = UB + "SELECT ?who WHERE { ?who a ub:Dean }"
EVENT = (demo_dir() / "events" / "e1-new-chair.rdf").read_bytes()
RDFXML = {"Content-Type": "application/rdf+xml"}
NDJSON = {"Content-Type": "application/x-ndjson"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """A server of the test's own (it is killed, or loaded with thousands of subscriptions)."""
    with Server(tmp_path / "data", ontology=UNIV_BENCH) as srv:
        yield srv


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the tests whose subscribers are tenants of their own (a token each):
    each lists only its own subscriptions and asks which of its own an event notifies."""
    with Server(tmp_path_factory.mktemp("batch") / "data", ontology=UNIV_BENCH) as srv:
        yield srv


def matched_by(server: Server, among: list[str]) -> set[str]:
    """The subscriptions of ``among`` one published event (a new chair) notifies, read from
    their stored notifications."""
    with server.client("publisher") as pub:
        event_id = pub.post("/events", content=EVENT, headers=RDFXML).json()["id"]
    with server.client("admin") as admin:
        found = set()
        for sub_id in among:
            text = admin.get(f"/subscriptions/{sub_id}/notifications?once=true").text
            events = [json.loads(x[6:])["event"] for x in text.splitlines() if x[:6] == "data: "]
            if event_id in events:
                found.add(sub_id)
    return found


def test_a_text_batch_registers_each_line_and_reports_a_bad_one_in_its_place(
    shared: Server,
) -> None:
    body = "\n".join([CHAIRS, "SELECT WHERE nothing", "", PEOPLE, NOBODY])
    with shared.another("subscriber") as sub:
        r = sub.post("/subscriptions/batch", content=body, headers={"Content-Type": "text/plain"})
        assert r.status_code == 200, r.text
        chairs, bad, people, nobody = r.json()["subscriptions"]
        assert bad["error"] == "syntax_error" and "line" in bad
        ids = [chairs["id"], people["id"], nobody["id"]]
        listed = sub.get("/subscriptions").json()["items"]
        assert [s["id"] for s in listed] == ids
        assert [s["text"] for s in listed] == [CHAIRS, PEOPLE, NOBODY]
    assert matched_by(shared, ids) == {chairs["id"], people["id"]}


def test_json_lines_carry_names_and_a_malformed_line_is_that_items_error(
    shared: Server,
) -> None:
    lines = [
        json.dumps({"text": CHAIRS, "name": "chairs"}),
        "{not json",
        json.dumps({"name": "no text"}),
        json.dumps({"text": PEOPLE}),
    ]
    with shared.another("subscriber") as sub:
        r = sub.post("/subscriptions/batch", content="\n".join(lines), headers=NDJSON)
        assert r.status_code == 200, r.text
        chairs, not_json, no_text, people = r.json()["subscriptions"]
        assert not_json["error"] == "syntax_error" and not_json["line"] == 2
        assert "line 3" in no_text["detail"]
        got = {s["id"]: s["name"] for s in sub.get("/subscriptions").json()["items"]}
        assert got == {chairs["id"]: "chairs", people["id"]: None}


def test_a_tar_of_rq_files_registers_each_named_after_its_file(shared: Server) -> None:
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for name, text in [("q/chairs.rq", CHAIRS), ("README", "not a query"), ("dean.rq", NOBODY)]:
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with shared.another("subscriber") as sub:
        r = sub.post(
            "/subscriptions/batch",
            content=archive.getvalue(),
            headers={"Content-Type": "application/x-tar"},
        )
        assert r.status_code == 200, r.text
        assert len(r.json()["subscriptions"]) == 2
        listed = sub.get("/subscriptions").json()["items"]
        assert [(s["name"], s["text"]) for s in listed] == [("chairs", CHAIRS), ("dean", NOBODY)]
        bad = sub.post(
            "/subscriptions/batch",
            content=b"x" * 600,
            headers={"Content-Type": "application/x-tar"},
        )
        assert bad.status_code == 400 and "not a tar archive" in bad.json()["detail"]


def test_an_answered_batch_survives_kill_9(server: Server) -> None:
    with server.client("subscriber") as sub:
        body = "\n".join([CHAIRS] * 50 + [NOBODY] * 50)
        r = sub.post("/subscriptions/batch", content=body)
        ids = [x["id"] for x in r.json()["subscriptions"]]
    server.kill()  # at once: nothing had time to be written after the answer
    server.start()
    with server.client("subscriber") as sub:
        assert [s["id"] for s in sub.get("/subscriptions?limit=500").json()["items"]] == ids
    assert matched_by(server, ids) == set(ids[:50])  # the workers' indexes were rebuilt
    server.stop()


def test_an_answered_batch_matches_the_very_next_event(server: Server) -> None:
    # The workers index a batch after it is answered; they must do it before matching any
    # event published after the answer. Thousands of distinct texts keep them indexing
    # well after the answer; the last one is the only one the event matches.
    misses = [UB + f"SELECT ?who WHERE {{ ?who ub:name 'nobody {i}' }}" for i in range(3000)]
    with server.client("subscriber") as sub:
        r = sub.post("/subscriptions/batch", content="\n".join([*misses, CHAIRS]))
        assert r.status_code == 200, r.text
        *_, last = r.json()["subscriptions"]
    with server.client("publisher") as pub:
        answer = pub.post("/events", content=EVENT, headers=RDFXML).json()
    assert answer["matched"] == 1
    with server.client("subscriber") as sub:
        text = sub.get(f"/subscriptions/{last['id']}/notifications?once=true").text
    assert f'"event":"{answer["id"]}"' in text.replace(" ", "")


def test_past_a_limit_the_batch_is_refused_whole(tmp_path: Path) -> None:
    limits = ("--max-batch-subscriptions", "3", "--max-batch-bytes", "2000")
    with Server(tmp_path / "data", extra=limits, ontology=UNIV_BENCH) as srv:
        with srv.client("subscriber") as sub:
            four = sub.post("/subscriptions/batch", content="\n".join([CHAIRS] * 4))
            assert four.status_code == 422
            assert four.json()["error"] == "limit_exceeded"
            assert "(max_batch_subscriptions)" in four.json()["detail"]
            large = sub.post("/subscriptions/batch", content=CHAIRS + " " * 2000)
            assert large.status_code == 413
            wrong = sub.post("/subscriptions/batch", json={"text": CHAIRS})
            assert wrong.status_code == 415
            unknown = sub.post("/subscriptions/batch?kind=semantc", content=CHAIRS)
            assert unknown.status_code == 400 and unknown.json()["error"] == "unknown_kind"
            assert sub.get("/subscriptions").json()["items"] == []
            three = sub.post("/subscriptions/batch", content="\n".join([CHAIRS] * 3))
            assert all("id" in x for x in three.json()["subscriptions"])


def test_max_subscriptions_counts_the_batchs_earlier_items(tmp_path: Path) -> None:
    limits = ("--max-subscriptions", "3")
    with Server(tmp_path / "data", extra=limits, ontology=UNIV_BENCH) as srv:
        with srv.client("subscriber") as sub:
            sub.post("/subscriptions", content=CHAIRS).raise_for_status()
            r = sub.post("/subscriptions/batch", content="\n".join([PEOPLE] * 4))
            outcomes = r.json()["subscriptions"]
            assert ["id" in x for x in outcomes] == [True, True, False, False]
            assert {x.get("error") for x in outcomes[2:]} == {"limit_exceeded"}
            assert len(sub.get("/subscriptions").json()["items"]) == 3


def test_a_batch_is_its_senders_and_leaves_another_subscribers_alone(shared: Server) -> None:
    with shared.another("subscriber") as mine, shared.another("subscriber") as theirs:
        their_id = theirs.post("/subscriptions", content=CHAIRS).json()["id"]
        r = mine.post("/subscriptions/batch", content="\n".join([PEOPLE, NOBODY]))
        mine_ids = [x["id"] for x in r.json()["subscriptions"]]
        assert [s["id"] for s in mine.get("/subscriptions").json()["items"]] == mine_ids
        assert [s["id"] for s in theirs.get("/subscriptions").json()["items"]] == [their_id]
        assert theirs.get(f"/subscriptions/{mine_ids[0]}").status_code == 404
    assert matched_by(shared, [their_id, *mine_ids]) == {their_id, mine_ids[0]}
