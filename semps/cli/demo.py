"""``semps demo``: the broker service with a live demo.

Starts the real service (uvicorn) on an embedded SQLite data directory, loads the bundled
LUBM univ-bench ontology, registers the bundled subscriptions over HTTP as a subscriber,
listens to their Server-Sent Events streams, publishes the bundled events as a publisher,
then adds a department head to the knowledge graph with a SPARQL Update (a change notifies
the subscriptions whose answers it changes; all through :mod:`semps.client`), and prints
each notification as it streams in. Then it
keeps serving (Ctrl-C stops it), or exits with ``--once``. The demo case ships inside the
package (``semps/demo``): its subscriptions use the ontology's general words and its events
the specific ones, so every match needs the ontology.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import threading
import time
from importlib import resources
from pathlib import Path

from semps.broker.sqlite_store import SQLiteStore
from semps.client import Client, Subscription
from semps.errors import SempsError

DEFAULT_DEMO_DIR = Path("var/semps-demo")

#: Listener threads and the main thread print concurrently; one lock and one write per line
#: keep lines whole (``print`` writes the text and the newline separately).
_PRINT_LOCK = threading.Lock()


def _say(text: str = "") -> None:
    with _PRINT_LOCK:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def demo_dir() -> Path:
    """Where the bundled demo case lives."""
    return Path(str(resources.files("semps") / "demo"))


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps demo``."""
    parser.add_argument("--host", default="127.0.0.1", help="address the demo service listens on")
    parser.add_argument("--port", type=int, default=8000, help="port the demo service listens on")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=DEFAULT_DEMO_DIR,
        help=f"where the demo keeps its data (emptied first; default {DEFAULT_DEMO_DIR})",
    )
    parser.add_argument("--once", action="store_true", help="exit after the demo")
    parser.set_defaults(func=run)


def _first_comment(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("# ")
    return ""


class _Service:
    """The real service in a background thread of this process."""

    def __init__(self, data_dir: Path, host: str, port: int) -> None:
        from semps.api.app import create_app
        from semps.api.server import Server

        # Server ends the streams as it stops.
        self.server = Server.of(create_app(data_dir), host=host, port=port, log_level="warning")
        self.url = f"http://{host}:{port}"
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        for _ in range(300):
            if self.server.started:
                return
            if not self.thread.is_alive():
                msg = f"the service could not start on {self.url} (is the port in use?)"
                raise SempsError(msg)
            time.sleep(0.05)
        msg = f"the service did not start on {self.url}"
        raise SempsError(msg)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def _listen(url: str, token: str, sub: Subscription, received: list[int]) -> None:
    try:
        with Client(url, token) as client:
            for note in client.notifications(sub):
                for verb, rows in (("notified", note.solutions), ("removed", note.removed)):
                    for solution in rows:
                        bound = ", ".join(f"?{k}={v}" for k, v in sorted(solution.items()))
                        _say(f"  {verb:<8}  {sub.name or sub.id:<24} {bound}")
                with _PRINT_LOCK:
                    received.append(1)
    except SempsError as exc:  # the service stopped for good: the demo is over
        _say(f"listener of {sub.name or sub.id} stopped: {exc}")


def run(args: argparse.Namespace) -> int:
    folder = demo_dir()
    if (args.data_dir / "semps.sqlite3").exists():  # every demo starts from a clean slate
        shutil.rmtree(args.data_dir)
    store = SQLiteStore(args.data_dir / "semps.sqlite3")
    tokens = {
        role: store.create_token(role, f"demo-{role}")[1]
        for role in ("admin", "publisher", "subscriber")
    }
    store.close()
    service = _Service(args.data_dir, args.host, args.port)
    _say(f"semps service at {service.url} (data in {args.data_dir})")
    _say(f"  web console  {service.url}/console/")
    _say(f"  API docs     {service.url}/docs")
    # SIGTERM (a service manager, `docker stop`, `kill`) stops the service as Ctrl-C does:
    # uvicorn runs in a thread here, and only the main thread can install its handlers.
    previous = signal.signal(signal.SIGTERM, _interrupted)
    try:
        _demo(service.url, tokens, folder)
        if args.once:
            return 0
        _say(f"\nserving at {service.url} (web console: {service.url}/console/); tokens:")
        for role, token in tokens.items():
            _say(f"  {role:<11} {token}")
        _say("Ctrl-C stops the service.")
        while service.thread.is_alive():
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        service.stop()
        signal.signal(signal.SIGTERM, previous)
    return 0


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _demo(url: str, tokens: dict[str, str], folder: Path) -> None:
    with Client(url, tokens["admin"]) as admin:
        admin.replace_ontology(folder / "univ-bench.owl")
    _say("ontology    univ-bench loaded (PUT /ontology)")
    received: list[int] = []  # one entry per notification, appended by the listeners
    with Client(url, tokens["subscriber"]) as subscriber:
        for rq in sorted((folder / "subscriptions").glob("*.rq")):
            sub = subscriber.subscribe(rq, name=rq.stem)
            _say(f"subscribed  {rq.stem:<24} {_first_comment(rq)}")
            threading.Thread(
                target=_listen, args=(url, tokens["subscriber"], sub, received), daemon=True
            ).start()
    expected = 0
    with Client(url, tokens["publisher"]) as publisher:
        for rdf in sorted((folder / "events").glob("*.rdf")):
            posted = publisher.publish(rdf)
            _say(f"published   {rdf.stem} -> {{'id': {posted.id!r}, 'matched': {posted.matched}}}")
            expected += posted.matched
        update = folder / "graph-update.ru"
        edit = publisher.update_graph(update.read_text(encoding="utf-8"))
        _say(
            f"graph       {update.stem} -> version {edit.version}, {edit.inserted} triples"
            f" inserted, {edit.notified} notified (POST /graph, SPARQL Update)"
        )
        expected += edit.notified
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with _PRINT_LOCK:
            if len(received) >= expected:
                break
        time.sleep(0.1)
    else:
        _say(f"warning: {len(received)} of {expected} notifications arrived within 15 s")
    _say(
        "\nEvery notification above needed the ontology:"
        " no event uses the words its subscription asks for"
        " (and the last one came from a change of the knowledge graph)."
    )
