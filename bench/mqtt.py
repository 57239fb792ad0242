"""Benchmark of the MQTT bridge (not a test): telemetry through mosquitto -> semps ->
mosquitto, side by side with the same events through ``POST /events``, in the same run.

A real ``semps serve --mqtt`` and Debian's ``mosquitto`` on 127.0.0.1; ``--subscriptions``
subscriptions, one per sensor (``SELECT ?t WHERE { <sensor-i> ex:temperature ?t }``), so each
reading matches exactly one. Each round sends ``--events`` readings (sensor ``k mod
subscriptions``, the reading's number as its value) through each path in turn, alternating
which goes first:

- **mqtt**: a paho client publishes them with QoS 1 to ``sensors/<k>`` (1,000 in flight);
- **http**: ``--clients`` threads POST them to ``/events`` (N-Triples), each waiting for its
  202 before the next.

Either way the notifications come back through the bridge's QoS 1 publishing to
``semps/<subscription>``, read by a paho subscriber, so the two differ only in how events
come in. 500 readings through ``POST /events`` warm up first, unmeasured. Reported per
path: sustained events/s (readings / (last notification - first send)) and end-to-end
latency p50/p99 (send to notification received). ``--rate`` paces the sending (readings a
second; 0: as fast as each path takes them).

    .venv/bin/python bench/mqtt.py [--subscriptions 10000] [--events 5000] [--rounds 2]
        [--clients 8] [--rate 0]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "bridges"))
from _common import create_tokens, quantile, serve  # noqa: E402
from mqtt_support import Mosquitto  # noqa: E402

EX = "http://ex.org/"


def reading(n: int, subscriptions: int) -> bytes:
    value = f'"{n}"^^<http://www.w3.org/2001/XMLSchema#integer>'
    return f"<{EX}sensor{n % subscriptions}> <{EX}temperature> {value} .".encode()


class Received:
    """Notifications on ``semps/#``: the reading's number -> when it came."""

    def __init__(self, port: int) -> None:
        self.at: dict[int, float] = {}
        self.lock = threading.Lock()
        self.client = paho.Client(CallbackAPIVersion.VERSION2, client_id="bench-watcher")

        def on_connect(c: object, u: object, flags: object, code: object, p: object) -> None:
            self.client.subscribe("semps/#", qos=1)

        def on_message(c: object, u: object, msg: paho.MQTTMessage) -> None:
            now = time.monotonic()
            note = json.loads(msg.payload)
            if "solutions" not in note:
                print(f"  {msg.topic}: {note}", flush=True)
                return
            value = note["solutions"][0]["t"]
            n = int(value.split('"')[1])
            with self.lock:
                self.at.setdefault(n, now)

        self.client.on_connect = on_connect
        self.client.on_message = on_message
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def count(self, numbers: range) -> int:
        with self.lock:
            return sum(1 for n in numbers if n in self.at)


def _pace(i: int, start: float, rate: float) -> None:
    if rate > 0:
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)


def send_mqtt(port: int, numbers: range, subscriptions: int, rate: float) -> dict[int, float]:
    client = paho.Client(CallbackAPIVersion.VERSION2, client_id="bench-sensors")
    client.max_inflight_messages_set(1000)
    client.connect("127.0.0.1", port)
    client.loop_start()
    sent: dict[int, float] = {}
    start = time.monotonic()
    infos = []
    for i, n in enumerate(numbers):
        _pace(i, start, rate)
        sent[n] = time.monotonic()
        infos.append(client.publish(f"sensors/{n % subscriptions}", reading(n, subscriptions), 1))
    for info in infos:
        info.wait_for_publish(600)
    # Stop the network thread first: paho's thread clears its own handle when a
    # disconnect ends its loop, racing loop_stop's check-then-join (AttributeError).
    client.loop_stop()
    client.disconnect()
    return sent


def send_http(
    url: str, token: str, numbers: range, subscriptions: int, rate: float, clients: int
) -> dict[int, float]:
    sent: dict[int, float] = {}
    start = time.monotonic()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/n-triples"}

    def worker(part: list[tuple[int, int]]) -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=600) as http:
            for i, n in part:
                _pace(i, start, rate)
                sent[n] = time.monotonic()
                reply = http.post("/events", content=reading(n, subscriptions))
                assert reply.status_code == 202, reply.text

    indexed = list(enumerate(numbers))
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(worker, [indexed[k::clients] for k in range(clients)]))
    return sent


def measure(sent: dict[int, float], received: Received, numbers: range) -> tuple[float, ...]:
    deadline = time.monotonic() + 600
    while received.count(numbers) < len(numbers) and time.monotonic() < deadline:
        time.sleep(0.05)
    with received.lock:
        got = {n: received.at[n] for n in numbers if n in received.at}
    if len(got) < len(numbers):
        print(f"  only {len(got)} of {len(numbers)} notifications came", flush=True)
    latencies = [got[n] - sent[n] for n in got]
    span = max(got.values()) - min(sent.values())
    return len(got) / span, quantile(latencies, 0.5), quantile(latencies, 0.99)


def subscribe(url: str, token: str, count: int) -> None:
    headers = {"Authorization": f"Bearer {token}"}

    def worker(ids: range) -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=600) as http:
            for i in ids:
                text = f"SELECT ?t WHERE {{ <{EX}sensor{i}> <{EX}temperature> ?t }}"
                reply = http.post("/subscriptions", content=text)
                assert reply.status_code == 201, reply.text

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(worker, [range(k, count, 4) for k in range(4)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subscriptions", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rate", type=float, default=0.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        mosquitto = Mosquitto(Path(folder) / "mosquitto")
        data = Path(folder) / "data"
        tokens = create_tokens(data, {"pub": "publisher", "sub": "subscriber"})
        log = (Path(folder) / "server.log").open("wb")
        served = serve(
            data,
            ["--mqtt", mosquitto.url, "--mqtt-topics", "sensors/#=application/n-triples"],
            log,
        )
        try:
            started = time.monotonic()
            subscribe(served.url, tokens["sub"], args.subscriptions)
            print(f"{args.subscriptions} subscriptions in {time.monotonic() - started:.1f} s")
            received = Received(mosquitto.port)
            warm = range(10**9, 10**9 + min(500, args.events))  # first events: not measured
            measure(
                send_http(served.url, tokens["pub"], warm, args.subscriptions, 0, 4), received, warm
            )
            n = 0
            for round_ in range(args.rounds):
                paths = ["mqtt", "http"] if round_ % 2 == 0 else ["http", "mqtt"]
                for path in paths:
                    numbers = range(n, n + args.events)
                    n += args.events
                    if path == "mqtt":
                        sent = send_mqtt(mosquitto.port, numbers, args.subscriptions, args.rate)
                    else:
                        sent = send_http(
                            served.url,
                            tokens["pub"],
                            numbers,
                            args.subscriptions,
                            args.rate,
                            args.clients,
                        )
                    rate, p50, p99 = measure(sent, received, numbers)
                    print(
                        f"round {round_ + 1} {path:4}: {args.events} readings, {rate:,.0f} "
                        f"events/s, p50 {p50:.0f} ms, p99 {p99:.0f} ms "
                        f"(load {os.getloadavg()[0]:.2f})",
                        flush=True,
                    )
        finally:
            served.process.terminate()
            served.process.wait(30)
            mosquitto.stop()


if __name__ == "__main__":
    main()
