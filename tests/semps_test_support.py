"""Paths and small helpers shared by the tests (importable because pytest puts tests/ on
sys.path)."""

from __future__ import annotations

import io
import json
import os
import resource
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TypeVar

import httpx
import pyoxigraph as ox
import pytest
from hypothesis import strategies as st

from semps.cli import main as semps_main
from semps.cli.demo import demo_dir
from semps.cli.match import load_subscriptions
from semps.documents import media_type_for
from semps.matcher.values import Subscription
from semps.ontology import Expansion, load_expansion
from semps.terms import RDF_TYPE, Literal

ROOT = Path(__file__).resolve().parent.parent
#: The longest a test waits for one thing to happen (a server to answer, a stream's next
#: message, a process to end). It only ends a broken run: a test waits on the event itself,
#: and a loaded machine (load 8 on 2 cores runs the suite 3.5 times slower) must not fail one.
PATIENCE = 600.0
WORKLOADS = ROOT.parent / "shared" / "workloads"
#: The demo's ontology (LUBM's univ-bench), which most service tests start with.
UNIV_BENCH = demo_dir() / "univ-bench.owl"
E = TypeVar("E", bound=BaseException)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler of a test's local HTTP server: logs nothing; subclasses answer."""

    def body(self) -> bytes:
        return self.rfile.read(int(self.headers["Content-Length"]))

    def log_message(self, *args: object) -> None:
        pass


class LocalServer:
    """A local HTTP server (a webhook's receiver) answering with ``handler`` in daemon
    threads, on ``port`` (default: a free one); :attr:`url` is its address plus ``path``."""

    def __init__(
        self, handler: type[BaseHTTPRequestHandler], port: int = 0, path: str = ""
    ) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_port}{path}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def wait_for(predicate: Callable[[], bool], seconds: float = PATIENCE) -> bool:
    """Whether ``predicate`` holds within ``seconds``, polled (no timing is asserted: the
    bound only ends a broken run)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def rss_kib(pid: int) -> int:
    """A process's resident memory in KiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def stalled_reader(port: int, request: bytes) -> socket.socket:
    """A client that sends ``request`` to a local port and never reads (a 4 KiB receive
    buffer: the server's writes soon block)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(request)
    return s


class Server:
    """A `semps serve` process and bearer tokens for each role (``nofile``: the process's
    file limit, soft and hard; ``ontology``: a file PUT to ``/ontology`` once started). As a
    context manager, the server stops on leaving."""

    def __init__(
        self,
        data_dir: Path,
        max_body: int = 1_000_000,
        extra: tuple[str, ...] = (),
        nofile: int | None = None,
        ontology: Path | None = None,
    ) -> None:
        self.data_dir, self.max_body, self.extra, self.nofile = data_dir, max_body, extra, nofile
        self.tokens = {role: self._token(role) for role in ("admin", "publisher", "subscriber")}
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()
        if ontology is not None:
            self.put("admin", "/ontology", ontology)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def put(self, role: str, route: str, document: Path) -> httpx.Response:
        """``document`` PUT to ``route`` as ``role``, read as its suffix says; the answer,
        asserted 200."""
        headers = {"Content-Type": media_type_for(document.name)}
        with self.client(role) as client:
            answer = client.put(route, content=document.read_bytes(), headers=headers)
        assert answer.status_code == 200, f"PUT {route} {document.name}: {answer.text}"
        return answer

    def _token(self, role: str, subject: str | None = None) -> str:
        """A token made by ``semps token create`` (run in this process: the same command
        and store, without a second of interpreter start-up for each server)."""
        out, err = io.StringIO(), io.StringIO()
        argv = ["token", "create", "--role", role, "--data-dir", str(self.data_dir)]
        if subject is not None:
            argv += ["--subject", subject]
        with redirect_stdout(out), redirect_stderr(err):
            status = semps_main(argv)
        assert status == 0, err.getvalue()
        return out.getvalue().strip()

    def start(self, port: int | None = None) -> None:
        """Start the server on ``port`` (default: a free one) and wait until it answers."""
        self.port = _free_port() if port is None else port
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = self.data_dir / "server.log"
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "semps",
                    "serve",
                    "--port",
                    str(self.port),
                    "--data-dir",
                    str(self.data_dir),
                    "--max-body",
                    str(self.max_body),
                    *self._patient(),
                    *self.extra,
                ],
                stdout=log,
                stderr=log,
                preexec_fn=self._limit if self.nofile else None,
            )
        # Wait for the server to answer, or to die: no fixed bound (a loaded machine may take
        # long to start it; the test's own time-out ends a hung run).
        while self.proc.poll() is None:
            try:
                if httpx.get(self.url + "/health", timeout=None).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(self.log.read_text())

    def _patient(self) -> tuple[str, ...]:
        """The watchdog's budget, PATIENCE unless the test sets one: a batch that a loaded
        machine slows past the default 2 s must not suspend a subscription in a test whose
        subject is something else (the watchdog's own tests set a short budget)."""
        return () if "--match-timeout" in self.extra else ("--match-timeout", str(PATIENCE))

    def _limit(self) -> None:
        assert self.nofile is not None
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.nofile, self.nofile))

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=PATIENCE)

    def restart(self) -> None:
        """Stop the server and start it again on the same port (a client that reconnects
        to the same address reaches it again)."""
        self.stop()
        self.start(self.port)

    def client(self, role: str) -> httpx.Client:
        """A client with ``role``'s token and no time-out (a slow machine is not a failure;
        the test's own time-out ends a hung run)."""
        return self.bearer(self.tokens[role])

    def ontology_version(self) -> int:
        """The stored ontology's version (1 for the first one), as the console reads it."""
        with self.client("subscriber") as sub:
            return int(sub.get("/console/api/ontology-summary").json()["version"])

    def another(self, role: str, subject: str | None = None) -> httpx.Client:
        """A client with a token of its own for ``role`` (another caller than
        :meth:`client`'s: another tenant), made for ``subject`` when given."""
        return self.bearer(self._token(role, subject))

    def bearer(self, token: str) -> httpx.Client:
        """A client sending ``token``, with no time-out (as :meth:`client`)."""
        auth = {"Authorization": f"Bearer {token}"}
        return httpx.Client(base_url=self.url, timeout=None, headers=auth)


class Case:
    """A shared workload folder: subscriptions, ontology, events and expected answers."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.events = folder / "events"
        self.subscriptions: list[Subscription] = load_subscriptions(folder / "subscriptions")
        self.expansion: Expansion = load_expansion(folder / "ontology.owl")
        lines = (folder / "expected.jsonl").read_text().splitlines()
        self.expected: dict[str, dict[str, int]] = {
            row["event"]: row["solutions"] for row in map(json.loads, lines)
        }


def raised(error: type[E], call: Callable[..., object], *args: object, **kwargs: object) -> E:
    """The ``error`` that ``call(*args, **kwargs)`` raises (the test fails when it raises
    nothing or another error)."""
    with pytest.raises(error) as info:
        call(*args, **kwargs)
    return info.value


def workload_options(folder: Path, events: Path | str | None = None) -> list[str]:
    """The command-line options naming a shared workload folder's ontology, subscriptions and
    events (``events``: others than the folder's own, e.g. a converted table)."""
    return [
        "--ontology",
        str(folder / "ontology.owl"),
        "--subscriptions",
        str(folder / "subscriptions"),
        "--events",
        str(folder / "events" if events is None else events),
    ]


def store_backlog(srv: Server, sub_id: str, count: int, pad: int = 100) -> None:
    """Store ``count`` notifications of ``sub_id`` (``pad`` bytes of filler each) straight
    into the server's SQLite file (the server is restarted)."""
    srv.stop()
    db = sqlite3.connect(srv.data_dir / "semps.sqlite3")
    filler = "x" * pad
    rows = (
        (sub_id, seq, f"ev-{seq}", json.dumps({"subscription": sub_id, "pad": filler, "id": seq}))
        for seq in range(1, count + 1)
    )
    with db:
        db.executemany(
            "INSERT INTO notifications (subscription, seq, event, payload, created) "
            "VALUES (?, ?, ?, ?, 0)",
            rows,
        )
    db.close()
    srv.start()


# -- pyoxigraph, the reference SPARQL engine of the oracle tests -----------------------------


def to_oxigraph(term: object) -> ox.NamedNode | ox.Literal | ox.BlankNode:
    """A semps term as pyoxigraph's (the reference engine the oracle tests run)."""
    if isinstance(term, Literal):
        if term.lang:
            return ox.Literal(term.lexical, language=term.lang)
        return ox.Literal(term.lexical, datatype=ox.NamedNode(term.datatype))
    if str(term).startswith("_:"):
        return ox.BlankNode(str(term)[2:])
    return ox.NamedNode(str(term))


def n3(term: object) -> str:
    """A semps term in N-Triples: an IRI in ``<>``, a blank node as it is, a literal as its
    own ``n3()`` writes it."""
    if isinstance(term, Literal):
        return term.n3()
    text = str(term)
    return text if text.startswith("_:") else f"<{text}>"


def from_oxigraph(term: object) -> object:
    """A pyoxigraph term as semps' (``str`` IRIs and blank nodes, :class:`Literal`)."""
    if isinstance(term, ox.Literal):
        if term.language:
            return Literal(term.value, lang=term.language)
        return Literal(term.value, term.datatype.value)
    if isinstance(term, ox.BlankNode):
        return "_:" + term.value
    return term.value  # type: ignore[attr-defined]


# -- random events, drawn by hypothesis ------------------------------------------------------


def events_over(
    nodes: list[str], classes: list[str], props: list[str], data: str, numbers: list[Literal]
) -> st.SearchStrategy[list[tuple[str, str, object]]]:
    """Events of 1 to 10 triples about ``nodes``: typed with ``classes``, linked by ``props``
    to other nodes, and given ``numbers`` through the ``data`` property."""
    return st.lists(
        st.one_of(
            st.tuples(st.sampled_from(nodes), st.just(RDF_TYPE), st.sampled_from(classes)),
            st.tuples(st.sampled_from(nodes), st.sampled_from(props), st.sampled_from(nodes)),
            st.tuples(st.sampled_from(nodes), st.just(data), st.sampled_from(numbers)),
        ),
        min_size=1,
        max_size=10,
    )


def diamonds(steps: int) -> str:
    """Composite definitions over ``a``, ``b``, ``c`` whose detections double at each step:
    ``2**steps`` from one match of ``a``."""
    lines = ["create event d0 = a or b;"]
    for i in range(1, steps + 1):
        lines += [
            f"create event l{i} = d{i - 1} or b;",
            f"create event r{i} = d{i - 1} or c;",
            f"create event d{i} = l{i} or r{i};",
        ]
    return "\n".join(lines)
