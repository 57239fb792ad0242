"""The MQTT bridge against a real mosquitto and independent paho-mqtt clients: telemetry in,
notifications out; mosquitto killed and restarted mid-stream with nothing lost; a malformed
message dead-lettered while the next one is matched; semps killed and restarted with nothing
lost."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mqtt_support import Collector, Mosquitto, Publisher
from semps_test_support import Server, wait_for

pytestmark = [pytest.mark.server, pytest.mark.slow]

HOT = "SELECT ?room ?t WHERE { ?room <http://ex.org/temperature> ?t FILTER(?t > 30) }"


def reading(room: int, value: int) -> bytes:
    return f"<http://ex.org/room{room}> <http://ex.org/temperature> {value} .".encode()


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    broker = Mosquitto(tmp_path / "mosquitto")
    yield broker
    broker.stop()


def _serve(tmp_path: Path, mosquitto: Mosquitto, *extra: str) -> Server:
    return Server(
        tmp_path / "data",
        extra=(
            "--mqtt",
            mosquitto.url,
            "--mqtt-topics",
            "sensors/#=text/turtle",
            "--mqtt-client-id",
            f"semps-{tmp_path.name}",
            *extra,
        ),
    )


def _subscribe(server: Server, text: str = HOT) -> str:
    with server.client("subscriber") as client:
        reply = client.post("/subscriptions", content=text, timeout=120)
        assert reply.status_code == 201, reply.text
        return str(reply.json()["id"])


def _rooms(notes: list[dict[str, object]]) -> list[str]:
    return [n["solutions"][0]["room"] for n in notes]  # type: ignore[index]


def test_telemetry_in_notifications_out(tmp_path: Path, mosquitto: Mosquitto) -> None:
    server = _serve(tmp_path, mosquitto)
    out = Collector(mosquitto.port, ["semps/#"], "watcher")
    sensors = Publisher(mosquitto.port, "sensors")
    try:
        sub = _subscribe(server)
        for room, value in [(1, 20), (2, 35), (3, 40)]:
            sensors.send(f"sensors/room{room}/temperature", reading(room, value))
        assert wait_for(lambda: len(out.json_on(f"semps/{sub}")) == 2, 120)
        notes = out.json_on(f"semps/{sub}")
        assert [n["id"] for n in notes] == [1, 2]
        assert _rooms(notes) == ["<http://ex.org/room2>", "<http://ex.org/room3>"]
        assert all(n["subscription"] == sub for n in notes)
    finally:
        sensors.close()
        out.close()
        server.stop()


def test_readings_on_one_topic_notify_in_the_order_they_were_published(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """MQTT 3.1.1 section 4.6: a topic is ordered. The messages go through the pipeline in
    several batches on two workers, which commits other events whenever they finish; the
    bridge's commit in turn, so a dashboard never sees an older reading after a newer one."""
    server = _serve(tmp_path, mosquitto)
    out = Collector(mosquitto.port, ["semps/#"], "watcher")
    sensors = Publisher(mosquitto.port, "sensors")
    try:
        sub = _subscribe(server)
        values = list(range(31, 91))
        for value in values:
            sensors.send("sensors/room5/temperature", reading(5, value))
        assert wait_for(lambda: len(out.json_on(f"semps/{sub}")) == len(values), 120)
        assert _values(out.json_on(f"semps/{sub}")) == values
    finally:
        sensors.close()
        out.close()
        server.stop()


def test_a_malformed_message_is_dead_lettered_and_the_next_is_matched(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    server = _serve(tmp_path, mosquitto)
    out = Collector(mosquitto.port, ["semps/#"], "watcher")
    sensors = Publisher(mosquitto.port, "sensors")
    try:
        sub = _subscribe(server)
        sensors.send("sensors/room9/temperature", b"<not turtle at all")
        sensors.send("sensors/room4/temperature", reading(4, 50))
        assert wait_for(lambda: len(out.json_on(f"semps/{sub}")) == 1, 120)
        assert wait_for(lambda: len(out.json_on("semps/dead-letters")) == 1, 120)
        (letter,) = out.json_on("semps/dead-letters")
        assert letter["topic"] == "sensors/room9/temperature"
        assert letter["error"] == "bad_event"
        assert letter["payload"] == "<not turtle at all"
        assert _rooms(out.json_on(f"semps/{sub}")) == ["<http://ex.org/room4>"]
        with server.client("admin") as admin:
            metrics = admin.get("/metrics").text
        assert "semps_mqtt_dead_lettered_total 1" in metrics
        assert "semps_mqtt_messages_in_total 2" in metrics
    finally:
        sensors.close()
        out.close()
        server.stop()


def _values(notes: list[dict[str, object]]) -> list[int]:
    return [int(str(n["solutions"][0]["t"]).split('"')[1]) for n in notes]  # type: ignore[index]


def _metric(server: Server, name: str) -> int:
    with server.client("admin") as admin:
        text = admin.get("/metrics").text
    (line,) = [x for x in text.splitlines() if x.startswith(f"semps_{name} ")]
    return int(line.split()[1])


def _stored(server: Server, sub: str) -> int:
    with server.client("subscriber") as client:
        stored = client.get(f"/subscriptions/{sub}/notifications?once=true").text
    return stored.count("event: notification")


def test_mosquitto_killed_and_restarted_mid_stream_loses_nothing(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """300 readings, mosquitto killed (SIGKILL) after the first 100 were sent and restarted
    with its persistence: every reading's notification arrives, each notification's id
    (seq) without a gap. QoS 1 is at least once: a reading becomes a second event only if
    mosquitto sent its message again (DUP set, counted), and a notification comes twice only
    if its PUBACK was lost with the broker (at most the bridge's window)."""
    server = _serve(tmp_path, mosquitto)
    out = Collector(mosquitto.port, ["semps/#"], "watcher")
    sensors = Publisher(mosquitto.port, "sensors")
    try:
        sub = _subscribe(server)
        for value in range(100, 200):
            sensors.send("sensors/room1/temperature", reading(1, value))
        assert wait_for(lambda: len(out.json_on(f"semps/{sub}")) >= 30, 120)
        mosquitto.kill()
        for value in range(200, 400):  # queued by the sensors' client while the broker is away
            sensors.send("sensors/room1/temperature", reading(1, value))
        mosquitto.start()
        assert wait_for(
            lambda: set(_values(out.json_on(f"semps/{sub}"))) >= set(range(100, 400)), 300
        )
        stored = _stored(server, sub)
        assert wait_for(
            lambda: {n["id"] for n in out.json_on(f"semps/{sub}")} >= set(range(1, stored + 1)), 300
        )
        notes = out.json_on(f"semps/{sub}")
        assert {int(n["id"]) for n in notes} == set(range(1, stored + 1))  # type: ignore[call-overload]
        assert stored - 300 <= _metric(server, "mqtt_redelivered_total")
        assert len(notes) - stored <= 1000  # repeats: at most what was in flight
    finally:
        sensors.close()
        out.close()
        server.stop()


def test_semps_killed_and_restarted_publishes_what_was_not_acknowledged(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """semps killed (SIGKILL) mid-stream and started again: the readings sent meanwhile wait
    in its persistent session, the notifications not acknowledged are published again from
    the log; every reading's notification arrives, seqs without a gap."""
    server = _serve(tmp_path, mosquitto)
    out = Collector(mosquitto.port, ["semps/#"], "watcher")
    sensors = Publisher(mosquitto.port, "sensors")
    try:
        sub = _subscribe(server)
        for value in range(100, 150):
            sensors.send("sensors/room1/temperature", reading(1, value))
        assert wait_for(lambda: len(out.json_on(f"semps/{sub}")) >= 10, 120)
        server.kill()
        for value in range(150, 200):  # kept for semps' persistent session
            sensors.send("sensors/room1/temperature", reading(1, value))
        server.start()
        assert wait_for(
            lambda: set(_values(out.json_on(f"semps/{sub}"))) >= set(range(100, 200)), 300
        )
        stored = _stored(server, sub)
        assert wait_for(
            lambda: {n["id"] for n in out.json_on(f"semps/{sub}")} >= set(range(1, stored + 1)), 300
        )
        assert {int(n["id"]) for n in out.json_on(f"semps/{sub}")} == set(range(1, stored + 1))  # type: ignore[call-overload]
        assert set(_values(out.json_on(f"semps/{sub}"))) == set(range(100, 200))
        assert stored - 100 <= _metric(server, "mqtt_redelivered_total")
    finally:
        sensors.close()
        out.close()
        server.stop()


def test_a_bad_mqtt_url_stops_semps_serve_with_the_reason(tmp_path: Path) -> None:
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-m", "semps", "serve", "--data-dir", str(tmp_path), "--mqtt", "http://x"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode != 0
    assert "not an MQTT URL: 'http://x'" in run.stderr


def test_metrics_count_mqtt_notifications(tmp_path: Path, mosquitto: Mosquitto) -> None:
    server = _serve(tmp_path, mosquitto)
    out = Collector(mosquitto.port, ["semps/#"], "watcher")
    sensors = Publisher(mosquitto.port, "sensors")
    try:
        sub = _subscribe(server)
        sensors.send("sensors/room1/temperature", reading(1, 31))
        assert wait_for(lambda: len(out.json_on(f"semps/{sub}")) == 1, 120)

        def counted() -> bool:
            with server.client("admin") as admin:
                text = admin.get("/metrics").text
            return "semps_mqtt_notifications_out_total 1" in text

        assert wait_for(counted, 60)
        body = json.dumps(out.json_on(f"semps/{sub}")[0])
        assert sub in body
        assert httpx.get(f"{server.url}/health").status_code == 200
    finally:
        sensors.close()
        out.close()
        server.stop()


def test_tls_and_a_password(tmp_path: Path) -> None:
    """mosquitto with TLS only (a CA made by the test) and a password file: semps connects
    with mqtts://, the CA and its credentials, and carries telemetry both ways; a wrong
    password is refused by mosquitto and logged by semps, which keeps trying."""
    users = {"semps": "s3cret pass", "device": "d3vice"}
    mosquitto = Mosquitto(tmp_path / "mosquitto", secure=users)
    ca = mosquitto.folder / "ca.crt"
    wrong = Server(
        tmp_path / "wrong",
        extra=(
            "--mqtt",
            f"mqtts://semps:nope@127.0.0.1:{mosquitto.port}",
            "--mqtt-ca-file",
            str(ca),
        ),
    )
    server = Server(
        tmp_path / "data",
        extra=(
            "--mqtt",
            f"mqtts://127.0.0.1:{mosquitto.port}",
            "--mqtt-ca-file",
            str(ca),
            "--mqtt-username",
            "semps",
            "--mqtt-password",
            users["semps"],
            "--mqtt-topics",
            "sensors/+/temperature=text/turtle",
        ),
    )
    device = (ca, "device", users["device"])
    out = Collector(mosquitto.port, ["semps/#"], "watcher", secure=device)
    sensors = Publisher(mosquitto.port, "sensors", secure=device)
    try:
        sub = _subscribe(server)
        sensors.send("sensors/room7/temperature", reading(7, 45))
        assert wait_for(lambda: len(out.json_on(f"semps/{sub}")) == 1, 120)
        assert _rooms(out.json_on(f"semps/{sub}")) == ["<http://ex.org/room7>"]
        assert wait_for(lambda: "connection: Not authorized" in wrong.log.read_text(), 120)
    finally:
        sensors.close()
        out.close()
        server.stop()
        wrong.stop()
        mosquitto.stop()
