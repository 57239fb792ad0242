"""A full disk (issue 38, item 8) on a real ``semps serve`` whose data directory is a small
tmpfs: publishing and ontology edits are answered 507 with ``Retry-After`` (not 400 or 500),
a refused edit is never applied, the metadata survives, every acknowledged event's
notification survives a restart, and once space is freed everything works again, the
ontology's version going on from the last edit that was answered with success.

Mounting the tmpfs needs root; without it, the test runs again inside a user and mount
namespace of its own (no privilege needed), so a clean clone's run as any user tests it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from semps_test_support import PATIENCE, Server

pytestmark = [pytest.mark.server, pytest.mark.slow]

EX = "http://ex/"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
NT = {"Content-Type": "application/n-triples"}
#: An event whose notification carries 100 solutions of ~100 bytes (10 KB to store).
EVENT = "\n".join(f'<{EX}s{i}> <{EX}p> "{"x" * 80}{i}" .' for i in range(100)).encode()
GRAPH = f"<{EX}g0> <{EX}link> <{EX}g1> .".encode()
#: A knowledge-graph edit of 1,000 triples (about 100 KB to store).
INSERT = (
    "INSERT DATA { "
    + " ".join(f'<{EX}k{i}> <{EX}label> "{"y" * 80}{i}" .' for i in range(1000))
    + " }"
).encode()
UPDATE = {"Content-Type": "application/sparql-update"}


#: Set in the test's second run, inside a user and mount namespace (:func:`run_in_a_namespace`).
INSIDE = "SEMPS_TEST_IN_A_NAMESPACE"


@contextlib.contextmanager
def small_disk(mount: Path) -> Iterator[bool]:
    """A 24 MB tmpfs mounted at the fresh folder ``mount`` while in the block; False when
    this process may not mount (root may, and anyone inside a user and mount namespace of
    their own)."""
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        yield False
        return
    try:
        yield True
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def run_in_a_namespace(request: pytest.FixtureRequest) -> None:
    """Run this test again in a user and mount namespace of its own (``unshare --user
    --map-root-user --mount``: no privilege needed), where it may mount a tmpfs and the
    server it starts runs too; it must pass there (skipped, saying why, when it cannot)."""
    if os.environ.get(INSIDE) or shutil.which("unshare") is None:
        pytest.skip("cannot mount a tmpfs: not root, and no user namespace to mount it in")
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount"]
        + [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q"]
        + [request.node.nodeid],
        cwd=request.config.rootpath,
        env={**os.environ, INSIDE: "1"},
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    if done.returncode == 0 and "1 skipped" in done.stdout:
        pytest.skip(f"skipped in a user namespace too: {done.stdout[-500:]}")
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


def fill(path: Path) -> None:
    """Write ``path`` until the disk is full."""
    with path.open("wb", buffering=0) as out:
        block = b"\0" * 65536
        try:
            while True:
                out.write(block)
        except OSError:
            pass


def test_a_full_disk_is_507_nothing_refused_is_applied_and_nothing_acknowledged_lost(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with small_disk(tmp_path / "disk") as mounted:
        if mounted:
            a_full_disk(tmp_path / "disk")
        else:
            run_in_a_namespace(request)


def a_full_disk(small_disk: Path) -> None:
    """The test's steps on a mounted ``small_disk``."""
    with Server(small_disk / "data") as srv:
        admin, pub, sub = srv.client("admin"), srv.client("publisher"), srv.client("subscriber")
        axiom = f"<{EX}A> <{RDFS}subClassOf> <{EX}B> .".encode()
        assert admin.put("/ontology", content=axiom, headers=NT).json() == {"version": 1}
        sub_id = sub.post("/subscriptions", content=f"SELECT ?s ?o {{ ?s <{EX}p> ?o }}").json()[
            "id"
        ]
        acknowledged = [pub.post("/events", content=EVENT, headers=NT) for _ in range(3)]
        assert [r.status_code for r in acknowledged] == [202] * 3
        assert admin.put("/graph", content=GRAPH, headers=NT).status_code == 200
        graph = admin.get("/graph/info").json()
        filler = small_disk / "filler"
        fill(filler)

        refused = None
        for _ in range(5000):  # the store's files fill what room is left, then refuse
            reply = pub.post("/events", content=EVENT, headers=NT)
            if reply.status_code == 202:
                acknowledged.append(reply)
            else:
                refused = reply
                break
        assert refused is not None, "5,000 events of 10 KB were stored on a full 24 MB disk"
        assert refused.status_code == 507
        assert refused.headers["Retry-After"] == "5"
        assert refused.json()["error"] == "insufficient_storage"

        edit = {"kind": "subClassOf", "subject": EX + "C", "object": EX + "D"}
        for _ in range(3):  # every edit refused the same way (the metadata is not lost)
            reply = admin.post("/ontology/axioms", json=edit)
            assert (reply.status_code, reply.json()["error"]) == (507, "insufficient_storage")
        assert srv.ontology_version() == 1
        assert f"{EX}C" not in admin.get("/ontology", headers={"Accept": "text/turtle"}).text
        reply = admin.post("/graph", content=INSERT, headers=UPDATE)
        assert (reply.status_code, reply.json()["error"]) == (507, "insufficient_storage")
        assert admin.get("/graph/info").json() == graph  # nothing of the edit applied

        filler.unlink()
        assert pub.post("/events", content=EVENT, headers=NT).status_code == 202
        assert admin.post("/ontology/axioms", json=edit).json() == {"version": 2}
        assert admin.post("/graph", content=INSERT, headers=UPDATE).status_code == 200
        for client in (admin, pub, sub):
            client.close()

        srv.stop()
        srv.start()
        assert srv.ontology_version() == 2
        with srv.client("subscriber") as again:
            text = again.get(f"/subscriptions/{sub_id}/notifications?once=true").text
        events = [
            json.loads(line[6:])["event"] for line in text.splitlines() if line[:6] == "data: "
        ]
        assert {r.json()["id"] for r in acknowledged} <= set(events)
