"""A full disk (issue 38, item 8) on a real ``semps serve`` whose data directory is a small
tmpfs: publishing and ontology edits are answered 507 with ``Retry-After`` (not 400 or 500),
a refused edit is never applied, the metadata survives, every acknowledged event's
notification survives a restart, and once space is freed everything works again, the
ontology's version going on from the last edit that was answered with success."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from semps_test_support import Server

pytestmark = [pytest.mark.server, pytest.mark.slow]

EX = "http://ex/"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
NT = {"Content-Type": "application/n-triples"}
#: An event whose notification carries 100 solutions of ~100 bytes (10 KB to store).
EVENT = "\n".join(f'<{EX}s{i}> <{EX}p> "{"x" * 80}{i}" .' for i in range(100)).encode()


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 24 MB tmpfs mounted at a fresh folder (needs root: skipped, saying why, without)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


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
    small_disk: Path,
) -> None:
    with Server(small_disk / "data") as srv:
        admin, pub, sub = srv.client("admin"), srv.client("publisher"), srv.client("subscriber")
        axiom = f"<{EX}A> <{RDFS}subClassOf> <{EX}B> .".encode()
        assert admin.put("/ontology", content=axiom, headers=NT).json() == {"version": 1}
        sub_id = sub.post("/subscriptions", content=f"SELECT ?s ?o {{ ?s <{EX}p> ?o }}").json()[
            "id"
        ]
        acknowledged = [pub.post("/events", content=EVENT, headers=NT) for _ in range(3)]
        assert [r.status_code for r in acknowledged] == [202] * 3
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

        filler.unlink()
        assert pub.post("/events", content=EVENT, headers=NT).status_code == 202
        assert admin.post("/ontology/axioms", json=edit).json() == {"version": 2}
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
