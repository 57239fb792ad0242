"""Benchmark of delivery isolation (not a test): a real server process, real clients.

1. **Streams that never read.** A subscription gets a stored backlog (``--backlog``
   notifications of ``--pad`` bytes, written to SQLite before the server starts); then
   ``--streams`` clients open its SSE stream from the start and never read. Reports the
   server's RSS (``/proc/<pid>/status``) at start, its peak over ``--seconds``, and after the
   clients closed.
2. **Hanging webhooks.** ``--hanging`` subscriptions call endpoints that accept the
   connection and never answer, one more calls a healthy endpoint; one event is published.
   Reports how long the healthy endpoint waited for its notification.

    .venv/bin/python bench/delivery.py [--backlog 20000] [--pad 10000] [--streams 40]
        [--hanging 10] [--seconds 10] [--old]

``--old`` leaves out the flags older servers lack (``--max-streams``, ``--webhook-allow``),
to measure a checkout from before them with the same script.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from semps_test_support import Server, rss_kib, stalled_reader, store_backlog  # noqa: E402

from semps.cli.demo import demo_dir  # noqa: E402

UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
CHAIRS = UB + "SELECT ?who WHERE { ?who a ub:Chair }"
EVENT = (demo_dir() / "events" / "e1-new-chair.rdf").read_bytes()
RDFXML = {"Content-Type": "application/rdf+xml"}


def rss_mb(pid: int) -> int:
    return rss_kib(pid) // 1024


def streams(srv: Server, sub_id: str, count: int, seconds: float) -> None:
    assert srv.proc is not None
    pid = srv.proc.pid
    start = rss_mb(pid)
    request = (
        f"GET /subscriptions/{sub_id}/notifications HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {srv.tokens['subscriber']}\r\n\r\n"
    ).encode()
    socks = []
    for _ in range(count):
        socks.append(stalled_reader(srv.port, request))
    peak = start
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        peak = max(peak, rss_mb(pid))
        time.sleep(0.1)
    for s in socks:
        s.close()
    time.sleep(3)
    print(
        f"streams: {count} never reading; server RSS {start} MB at start, peak {peak} MB, ", end=""
    )
    print(f"{rss_mb(pid)} MB 3 s after they closed")


def hanging(srv: Server, count: int) -> None:
    holders: list[socket.socket] = []
    held: list[socket.socket] = []

    def hold(sock: socket.socket) -> None:
        while True:
            try:
                held.append(sock.accept()[0])
            except OSError:
                return

    for _ in range(count):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        holders.append(sock)
        threading.Thread(target=hold, args=(sock,), daemon=True).start()
    got: list[float] = []

    class Healthy(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            self.rfile.read(int(self.headers["Content-Length"]))
            got.append(time.monotonic())
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    live = HTTPServer(("127.0.0.1", 0), Healthy)
    threading.Thread(target=live.serve_forever, daemon=True).start()
    with srv.client("subscriber") as sub:
        for sock in holders:
            url = f"http://127.0.0.1:{sock.getsockname()[1]}/hook"
            sub.post("/subscriptions", content=CHAIRS, params={"callback": url})
        url = f"http://127.0.0.1:{live.server_port}/ok"
        sub.post("/subscriptions", content=CHAIRS, params={"callback": url})
    with srv.client("publisher") as pub:
        sent = time.monotonic()
        pub.post("/events", content=EVENT, headers=RDFXML)
    while not got and time.monotonic() - sent < 30:
        time.sleep(0.01)
    waited = f"{got[0] - sent:.2f} s" if got else "more than 30 s"
    print(
        f"webhooks: {count} hanging endpoints; the healthy one got its notification after {waited}"
    )
    live.shutdown()
    for sock in holders + held:
        sock.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backlog", type=int, default=20_000)
    parser.add_argument("--pad", type=int, default=10_000, help="bytes per notification")
    parser.add_argument("--streams", type=int, default=40)
    parser.add_argument("--hanging", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--old", action="store_true", help="a server without the new flags")
    args = parser.parse_args()
    extra = () if args.old else ("--max-streams", str(args.streams), "--webhook-allow", "127.0.0.1")
    srv = Server(Path(tempfile.mkdtemp()) / "data", extra=extra)
    try:
        with srv.client("admin") as admin:
            ontology = (demo_dir() / "univ-bench.owl").read_bytes()
            admin.put("/ontology", content=ontology, headers=RDFXML)
        with srv.client("subscriber") as sub:
            sub_id = sub.post("/subscriptions", content=CHAIRS).json()["id"]
        store_backlog(srv, sub_id, args.backlog, args.pad)
        streams(srv, sub_id, args.streams, args.seconds)
        hanging(srv, args.hanging)
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
