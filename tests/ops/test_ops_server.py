"""Operating the service, through a real ``semps serve`` process on a real data directory:
the start-up line, private files, sealed webhook secrets, what survives a restart
(ontology version, metrics) and notification retention."""

from __future__ import annotations

import json
import sqlite3
import stat
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from semps_test_support import PATIENCE, Server

import semps

pytestmark = pytest.mark.server
NT = {"Content-Type": "application/n-triples"}
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
THINGS = "SELECT ?x WHERE { ?x a <http://ex.org/Thing> }"


def event(n: int) -> bytes:
    return f"<http://ex.org/e{n}> <{RDF_TYPE}> <http://ex.org/Thing> .\n".encode()


def log_rows(server: Server) -> list[dict[str, object]]:
    rows = []
    for line in server.log.read_text().splitlines():
        if line.startswith("{"):
            rows.append(json.loads(line))
    return rows


def startup(server: Server) -> dict[str, object]:
    """The last start-up line of the server's (JSON) log."""
    return [r for r in log_rows(server) if r["logger"] == "semps.serve"][-1]


def wait_for(check: Callable[[], bool], what: str) -> None:
    """Poll ``check`` (no timing is asserted; the bound only ends a broken run)."""
    for _ in range(600):
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"never happened: {what}")


def stored_seqs(data_dir: Path, sub_id: str) -> list[int]:
    """The seqs stored for ``sub_id``, read from the SQLite file itself."""
    db = sqlite3.connect(f"file:{data_dir / 'semps.sqlite3'}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT seq FROM notifications WHERE subscription = ? ORDER BY seq", (sub_id,)
        ).fetchall()
    finally:
        db.close()
    return [r[0] for r in rows]


def streamed_seqs(client: httpx.Client, sub_id: str) -> list[int]:
    text = client.get(f"/subscriptions/{sub_id}/notifications?once=true").text
    return [json.loads(line[6:])["id"] for line in text.splitlines() if line.startswith("data: ")]


def test_the_start_up_line_says_version_address_data_dir_and_counts(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Server(data, extra=("--log-format", "json", "--workers", "1")) as server:
        line = startup(server)
    assert line["level"] == "info"
    assert line["version"] == semps.__version__
    assert line["address"] == server.url
    assert line["data_dir"] == str(data.resolve())
    assert (line["subscriptions"], line["tokens"], line["ontology_version"]) == (0, 3, 0)
    assert line["workers"] == 1
    assert f"semps {semps.__version__} serving on {server.url}" in str(line["message"])


def test_the_access_log_names_each_request_when_asked(tmp_path: Path) -> None:
    with Server(tmp_path / "data", extra=("--log-format", "json", "--access-log")) as server:
        httpx.get(server.url + "/health")
        httpx.get(server.url + "/nowhere")
    access = [r for r in log_rows(server) if r["logger"] == "uvicorn.access"]
    assert [(r["method"], r["path"], r["status"]) for r in access][-2:] == [
        ("GET", "/health", 200),
        ("GET", "/nowhere", 404),
    ]


def test_no_access_log_by_default(tmp_path: Path) -> None:
    with Server(tmp_path / "data", extra=("--log-format", "json")) as server:
        httpx.get(server.url + "/health")
    assert not [r for r in log_rows(server) if r["logger"] == "uvicorn.access"]


def test_data_files_are_private_and_webhook_secrets_are_sealed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Server(data, extra=("--webhook-allow", "127.0.0.1")) as server:
        with server.client("subscriber") as sub, server.client("publisher") as pub:
            created = sub.post("/subscriptions", content=THINGS, params={"callback": CALLBACK})
            assert created.status_code == 201
            secret = created.json()["secret"]
            assert pub.post("/events", content=event(1), headers=NT).status_code == 202
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    kept = [p for p in data.iterdir() if p.name != "server.log"]  # the test's own log
    names = {p.name for p in kept}
    assert {"semps.sqlite3", "ontology.sqlite3", "secret.key"} <= names
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in kept} == {
        name: oct(0o600) for name in names
    }
    for path in kept:
        assert secret.encode() not in path.read_bytes(), path.name


CALLBACK = "http://127.0.0.1:9/hook"  # nothing listens: deliveries fail, which is fine here


def test_the_ontology_version_and_the_metrics_survive_a_restart(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", extra=("--log-format", "json"))
    axiom = {"kind": "subClassOf", "subject": "http://ex.org/A", "object": "http://ex.org/B"}
    try:
        with server.client("admin") as admin, server.client("subscriber") as sub:
            sub.post("/subscriptions", content=THINGS)
            for n in range(3):
                assert admin.post("/events", content=event(n), headers=NT).status_code == 202
            versions = [
                admin.post("/ontology/axioms", json=axiom).json()["version"],
                admin.post("/ontology/axioms", json={**axiom, "object": "http://ex.org/C"}).json()[
                    "version"
                ],
            ]
        server.stop()
        server.start()
        line = startup(server)
        assert (line["subscriptions"], line["ontology_version"]) == (1, versions[-1])
        with server.client("admin") as admin:
            edited = admin.post("/ontology/axioms", json={**axiom, "object": "http://ex.org/D"})
            assert edited.json()["version"] == versions[-1] + 1
            metrics = admin.get("/metrics").text
    finally:
        server.stop()
    assert versions == [versions[0], versions[0] + 1]
    assert "semps_events_in_total 3\n" in metrics
    assert "semps_matches_total 3\n" in metrics


def test_retention_keeps_the_newest_notifications_per_subscription(tmp_path: Path) -> None:
    data = tmp_path / "data"
    extra = ("--retain-count", "3", "--prune-interval", "0.2")
    with Server(data, extra=extra) as server:
        with server.client("subscriber") as sub, server.client("publisher") as pub:
            default = sub.post("/subscriptions", content=THINGS).json()["id"]
            two = sub.post("/subscriptions", content=THINGS, params={"retain_count": 2})
            aged = sub.post("/subscriptions", content=THINGS, params={"retain_age": "1s"})
            kept = sub.post("/subscriptions", content=THINGS, params={"retain_count": 0})
            ids = [default, two.json()["id"], aged.json()["id"], kept.json()["id"]]
            for n in range(6):
                assert pub.post("/events", content=event(n), headers=NT).status_code == 202
            wait_for(lambda: stored_seqs(data, ids[0]) == [4, 5, 6], "the default bound")
            wait_for(lambda: stored_seqs(data, ids[1]) == [5, 6], "a subscription's count")
            wait_for(lambda: stored_seqs(data, ids[2]) == [], "a subscription's age")
            assert stored_seqs(data, ids[3]) == [1, 2, 3, 4, 5, 6]
            # A stream resumes with what is left, and numbering goes on.
            assert streamed_seqs(sub, ids[1]) == [5, 6]
            pub.post("/events", content=event(7), headers=NT)
            assert streamed_seqs(sub, ids[3]) == [1, 2, 3, 4, 5, 6, 7]


def test_bad_retention_parameters_are_400s_and_register_nothing(tmp_path: Path) -> None:
    with Server(tmp_path / "data") as server:
        with server.client("subscriber") as sub:
            age = sub.post("/subscriptions", content=THINGS, params={"retain_age": "soon"})
            count = sub.post("/subscriptions", content=THINGS, params={"retain_count": -1})
            listed = sub.get("/subscriptions").json()["items"]
    assert age.status_code == 400 and "not a duration: 'soon'" in age.json()["detail"]
    assert count.status_code == 422
    assert listed == []


def test_a_bad_setting_stops_serve_with_one_error_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "semps", "serve", "--data-dir", str(tmp_path), "--port", "http"],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert (out.returncode, out.stderr) == (
        2,
        "semps: error: setting port (--port): expected an integer, not 'http'\n",
    )


def test_an_address_in_use_stops_serve_with_one_error_line_before_anything_starts(
    tmp_path: Path,
) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "-m", "semps", "serve", "--port", str(port)]
            + ["--data-dir", str(tmp_path / "data")],
            capture_output=True,
            text=True,
            timeout=PATIENCE,
        )
    assert (out.returncode, out.stderr) == (
        2,
        f"semps: error: cannot listen on 127.0.0.1:{port}: Address already in use\n",
    )
    assert not (tmp_path / "data").exists()


def test_a_stored_ontology_over_the_limits_stops_serve_until_reset_repairs_it(
    tmp_path: Path,
) -> None:
    """The ontology on file breaks ``--max-hierarchy-depth``: ``semps serve`` stops at once
    with one error line naming the limit and the command that repairs the data directory;
    after that command it starts, with an empty ontology one version later."""
    import subprocess
    import sys

    from semps.ontology.store import OntologyStore

    data = tmp_path / "data"
    data.mkdir()
    store = OntologyStore(data / "ontology.sqlite3")
    chain = [f"<http://ex/C{i}> <{SUB_CLASS}> <http://ex/C{i + 1}> ." for i in range(10)]
    store.load("\n".join(chain).encode(), format="application/n-triples")
    store.close()
    limit = ("--max-hierarchy-depth", "5")
    serve = [sys.executable, "-m", "semps", "serve", "--data-dir", str(data), *limit]
    out = subprocess.run(serve, capture_output=True, text=True, timeout=PATIENCE)
    assert (out.returncode, out.stderr) == (
        2,
        f"semps: error: the ontology stored in {data / 'ontology.sqlite3'} breaks a limit: the "
        "class hierarchy is 11 levels deep (below http://ex/C0), over the limit of 5 levels "
        "(max_hierarchy_depth). Start with that limit raised, or empty the ontology with "
        f"`semps ontology reset --data-dir {data}` (the old file is kept beside it)\n",
    )
    reset = [sys.executable, "-m", "semps", "ontology", "reset", "--data-dir", str(data)]
    assert subprocess.run(reset, capture_output=True, timeout=PATIENCE).returncode == 0
    with Server(data, extra=limit) as server:
        assert server.ontology_version() == 2


SUB_CLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
