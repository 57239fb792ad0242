"""``semps demo``: the broker service with a live demo.

Starts the real service (uvicorn) on an embedded SQLite data directory, loads the bundled
LUBM univ-bench ontology, registers the bundled subscriptions over HTTP as a subscriber,
listens to their Server-Sent Events streams, publishes the bundled events as a publisher,
and prints each notification as it streams in. Then it keeps serving (Ctrl-C stops it), or
exits with ``--once``. The demo case ships inside the package (``semps/demo``): its
subscriptions use the ontology's general words and its events the specific ones, so every
match needs the ontology.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import threading
import time
from importlib import resources
from pathlib import Path

import httpx

from semps.broker.store import Store
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
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DEMO_DIR)
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
        import uvicorn

        from semps.api.app import create_app

        config = uvicorn.Config(create_app(data_dir), host=host, port=port, log_level="warning")
        self.server = uvicorn.Server(config)
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


def _listen(url: str, token: str, sub_id: str, name: str, received: list[int]) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.stream(
        "GET", f"{url}/subscriptions/{sub_id}/notifications", headers=headers, timeout=None
    ) as response:
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            note = json.loads(line[6:])
            for solution in note["solutions"]:
                bound = ", ".join(f"?{k}={v}" for k, v in sorted(solution.items()))
                _say(f"  notified  {name:<24} {bound}")
            with _PRINT_LOCK:
                received.append(1)


def run(args: argparse.Namespace) -> int:
    folder = demo_dir()
    if (args.data_dir / "semps.sqlite3").exists():  # every demo starts from a clean slate
        shutil.rmtree(args.data_dir)
    store = Store(args.data_dir / "semps.sqlite3")
    tokens = {
        role: store.create_token(role, f"demo-{role}")[1]
        for role in ("admin", "publisher", "subscriber")
    }
    store.close()
    service = _Service(args.data_dir, args.host, args.port)
    _say(
        f"semps service at {service.url} (data in {args.data_dir}, API docs at {service.url}/docs)"
    )
    try:
        _demo(service.url, tokens, folder)
        if args.once:
            return 0
        _say(f"\nserving at {service.url}; tokens:")
        for role, token in tokens.items():
            _say(f"  {role:<11} {token}")
        _say("Ctrl-C stops the service.")
        while service.thread.is_alive():
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        service.stop()
    return 0


def _demo(url: str, tokens: dict[str, str], folder: Path) -> None:
    def client(role: str) -> httpx.Client:
        return httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {tokens[role]}"}, timeout=30
        )

    with client("admin") as admin:
        admin.put(
            "/ontology",
            content=(folder / "univ-bench.owl").read_bytes(),
            headers={"Content-Type": "application/rdf+xml"},
        ).raise_for_status()
    _say("ontology    univ-bench loaded (PUT /ontology)")
    received: list[int] = []  # one entry per notification, appended by the listeners
    with client("subscriber") as sub:
        for rq in sorted((folder / "subscriptions").glob("*.rq")):
            created = sub.post("/subscriptions", content=rq.read_text(), params={"name": rq.stem})
            created.raise_for_status()
            sub_id = created.json()["id"]
            _say(f"subscribed  {rq.stem:<24} {_first_comment(rq)}")
            threading.Thread(
                target=_listen,
                args=(url, tokens["subscriber"], sub_id, rq.stem, received),
                daemon=True,
            ).start()
    expected = 0
    with client("publisher") as pub:
        for rdf in sorted((folder / "events").glob("*.rdf")):
            posted = pub.post(
                "/events", content=rdf.read_bytes(), headers={"Content-Type": "application/rdf+xml"}
            )
            posted.raise_for_status()
            _say(f"published   {rdf.stem} -> {posted.json()}")
            expected += posted.json()["matched"]
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
        " no event uses the words its subscription asks for."
    )
