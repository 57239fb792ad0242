"""The MQTT bridge against a real mosquitto and independent paho-mqtt clients: telemetry in,
notifications out; mosquitto killed and restarted mid-stream with nothing lost; a malformed
message dead-lettered while the next one is matched; semps killed and restarted with nothing
lost."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Bridge:
    """``semps serve`` bridged to mosquitto (telemetry from ``sensors/#`` as Turtle), with a
    paho watcher of ``semps/#`` and a paho publisher for the sensors."""

    server: Server
    out: Collector
    sensors: Publisher

    def send(self, room: int, *values: int) -> None:
        """Temperature readings of ``room``, one message each, in order."""
        for value in values:
            self.sensors.send(f"sensors/room{room}/temperature", reading(room, value))

    def notes(self, sub: str) -> list[dict[str, object]]:
        """The notifications of ``sub`` the watcher has received so far."""
        return self.out.json_on(f"semps/{sub}")

    def arrived(self, sub: str, values: range) -> bool:
        """Waits until a notification for every reading in ``values`` has arrived."""
        return wait_for(lambda: set(_values(self.notes(sub))) >= set(values), 300)

    def stored(self, sub: str) -> int:
        """How many notifications of ``sub`` semps has stored."""
        with self.server.client("subscriber") as client:
            text = client.get(f"/subscriptions/{sub}/notifications?once=true").text
        return text.count("event: notification")

    def every_seq_arrived(self, sub: str) -> int:
        """Waits for the seqs of every stored notification of ``sub`` to arrive, checks that
        no other seq did (no gap, none invented), and returns how many semps stored."""
        stored = self.stored(sub)
        every = set(range(1, stored + 1))
        assert wait_for(lambda: {n["id"] for n in self.notes(sub)} >= every, 300)
        assert {int(n["id"]) for n in self.notes(sub)} == every  # type: ignore[call-overload]
        return stored


@pytest.fixture
def bridge(tmp_path: Path, mosquitto: Mosquitto) -> Iterator[Bridge]:
    extra = ("--mqtt", mosquitto.url, "--mqtt-topics", "sensors/#=text/turtle")
    extra += ("--mqtt-client-id", f"semps-{tmp_path.name}")
    with Server(tmp_path / "data", extra=extra) as server:
        out = Collector(mosquitto.port, ["semps/#"], "watcher")
        sensors = Publisher(mosquitto.port, "sensors")
        yield Bridge(server, out, sensors)
        sensors.close()
        out.close()


def _subscribe(server: Server, text: str = HOT) -> str:
    with server.client("subscriber") as client:
        reply = client.post("/subscriptions", content=text, timeout=120)
        assert reply.status_code == 201, reply.text
        return str(reply.json()["id"])


def _rooms(notes: list[dict[str, object]]) -> list[str]:
    return [n["solutions"][0]["room"] for n in notes]  # type: ignore[index]


def _values(notes: list[dict[str, object]]) -> list[int]:
    return [int(str(n["solutions"][0]["t"]).split('"')[1]) for n in notes]  # type: ignore[index]


def _metric(server: Server, name: str) -> int:
    with server.client("admin") as admin:
        text = admin.get("/metrics").text
    (line,) = [x for x in text.splitlines() if x.startswith(f"semps_{name} ")]
    return int(line.split()[1])


def test_telemetry_in_notifications_out(bridge: Bridge) -> None:
    sub = _subscribe(bridge.server)
    bridge.send(1, 20)
    bridge.send(2, 35)
    bridge.send(3, 40)
    assert wait_for(lambda: len(bridge.notes(sub)) == 2, 120)
    notes = bridge.notes(sub)
    assert [n["id"] for n in notes] == [1, 2]
    assert _rooms(notes) == ["<http://ex.org/room2>", "<http://ex.org/room3>"]
    assert all(n["subscription"] == sub for n in notes)


def test_readings_on_one_topic_notify_in_the_order_they_were_published(bridge: Bridge) -> None:
    """MQTT 3.1.1 section 4.6: a topic is ordered. The messages go through the pipeline in
    several batches on two workers, which commits other events whenever they finish; the
    bridge's commit in turn, so a dashboard never sees an older reading after a newer one."""
    sub = _subscribe(bridge.server)
    values = list(range(31, 91))
    bridge.send(5, *values)
    assert wait_for(lambda: len(bridge.notes(sub)) == len(values), 120)
    assert _values(bridge.notes(sub)) == values


def test_a_malformed_message_is_dead_lettered_and_the_next_is_matched(bridge: Bridge) -> None:
    sub = _subscribe(bridge.server)
    bridge.sensors.send("sensors/room9/temperature", b"<not turtle at all")
    bridge.send(4, 50)
    assert wait_for(lambda: len(bridge.notes(sub)) == 1, 120)
    assert wait_for(lambda: len(bridge.out.json_on("semps/dead-letters")) == 1, 120)
    (letter,) = bridge.out.json_on("semps/dead-letters")
    assert letter["topic"] == "sensors/room9/temperature"
    assert letter["error"] == "bad_event"
    assert letter["payload"] == "<not turtle at all"
    assert _rooms(bridge.notes(sub)) == ["<http://ex.org/room4>"]
    assert _metric(bridge.server, "mqtt_dead_lettered_total") == 1
    assert _metric(bridge.server, "mqtt_messages_in_total") == 2


def test_mosquitto_killed_and_restarted_mid_stream_loses_nothing(
    bridge: Bridge, mosquitto: Mosquitto
) -> None:
    """300 readings, mosquitto killed (SIGKILL) after the first 100 were sent and restarted
    with its persistence: every reading's notification arrives, each notification's id
    (seq) without a gap. QoS 1 is at least once: a reading becomes a second event only if
    mosquitto sent its message again (DUP set, counted), and a notification comes twice only
    if its PUBACK was lost with the broker (at most the bridge's window)."""
    sub = _subscribe(bridge.server)
    bridge.send(1, *range(100, 200))
    assert wait_for(lambda: len(bridge.notes(sub)) >= 30, 120)
    mosquitto.kill()
    bridge.send(1, *range(200, 400))  # queued by the sensors' client while the broker is away
    mosquitto.start()
    assert bridge.arrived(sub, range(100, 400))
    stored = bridge.every_seq_arrived(sub)
    assert stored - 300 <= _metric(bridge.server, "mqtt_redelivered_total")
    assert len(bridge.notes(sub)) - stored <= 1000  # repeats: at most what was in flight


def test_semps_killed_and_restarted_publishes_what_was_not_acknowledged(bridge: Bridge) -> None:
    """semps killed (SIGKILL) mid-stream and started again: the readings sent meanwhile wait
    in its persistent session, the notifications not acknowledged are published again from
    the log; every reading's notification arrives, seqs without a gap."""
    sub = _subscribe(bridge.server)
    bridge.send(1, *range(100, 150))
    assert wait_for(lambda: len(bridge.notes(sub)) >= 10, 120)
    bridge.server.kill()
    bridge.send(1, *range(150, 200))  # kept for semps' persistent session
    bridge.server.start()
    assert bridge.arrived(sub, range(100, 200))
    stored = bridge.every_seq_arrived(sub)
    assert set(_values(bridge.notes(sub))) == set(range(100, 200))
    assert stored - 100 <= _metric(bridge.server, "mqtt_redelivered_total")


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


def test_metrics_count_mqtt_notifications(bridge: Bridge) -> None:
    sub = _subscribe(bridge.server)
    bridge.send(1, 31)
    assert wait_for(lambda: len(bridge.notes(sub)) == 1, 120)
    assert wait_for(lambda: _metric(bridge.server, "mqtt_notifications_out_total") == 1, 60)
    body = json.dumps(bridge.notes(sub)[0])
    assert sub in body
    assert httpx.get(f"{bridge.server.url}/health").status_code == 200


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
