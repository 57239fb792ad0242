"""The Solid channels against an independent client: npm's
``@inrupt/solid-client-notifications`` (3.0.1) run by node against a real ``semps serve``.
That client speaks Inrupt's gateway negotiation (``notificationGateway``: protocols and
features, then a connection request with the topic) rather than the Solid Notifications
Protocol's subscription request; semps answers both (``/solid/gateway``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from semps_test_support import Server

pytestmark = pytest.mark.server

NPM = Path(
    os.environ.get("SEMPS_NPM")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "semps" / "npm"
)
CLIENT = Path(__file__).parent / "js" / "solid_client.cjs"
HOT = "SELECT ?room ?t WHERE { ?room <http://ex.org/temperature> ?t FILTER(?t > 30) }"


def test_inrupts_client_receives_a_notification(server: Server) -> None:
    node = shutil.which("node")
    if node is None or not (NPM / "node_modules/@inrupt/solid-client-notifications").is_dir():
        pytest.fail(
            f"node or @inrupt/solid-client-notifications in {NPM} missing (scripts/bootstrap)"
        )
    with server.client("subscriber") as client:
        sub = client.post("/subscriptions", content=HOT).json()["id"]
    topic = f"{server.url}/subscriptions/{sub}"
    token = server.tokens["subscriber"]
    gateway = f"{server.url}/solid/gateway"
    with subprocess.Popen(
        [node, str(CLIENT), str(NPM), topic, gateway, token],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as run:
        try:
            _receive_one(server, run, topic)
        finally:
            if run.poll() is None:
                run.kill()


def _receive_one(server: Server, run: subprocess.Popen[str], topic: str) -> None:
    assert run.stdout is not None and run.stderr is not None
    first = run.stdout.readline()
    assert json.loads(first or "{}") == {"connected": True}, run.stderr.read()
    with server.client("publisher") as pub:
        body = b"<http://ex.org/room5> <http://ex.org/temperature> 45 ."
        reply = pub.post("/events", content=body, headers={"Content-Type": "text/turtle"})
        assert reply.status_code == 202
    note = json.loads(run.stdout.readline())
    assert note["type"] == "Add" and note["object"] == topic and note["state"] == "1"
    assert note["semps:solutions"][0]["room"] == "<http://ex.org/room5>"
    assert run.wait(timeout=120) == 0
