"""Paths and small helpers shared by the tests (importable because pytest puts tests/ on
sys.path)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from oracle_corrections import corrected_lines

from semps.cli.match import load_subscriptions
from semps.matcher.base import Subscription
from semps.ontology import Expansion, load_expansion

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ROOT.parent / "shared" / "workloads"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A `semps serve` process and bearer tokens for each role."""

    def __init__(
        self, data_dir: Path, max_body: int = 1_000_000, extra: tuple[str, ...] = ()
    ) -> None:
        self.data_dir, self.max_body, self.extra = data_dir, max_body, extra
        self.tokens = {role: self._token(role) for role in ("admin", "publisher", "subscriber")}
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def _token(self, role: str) -> str:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "semps",
                "token",
                "create",
                "--role",
                role,
                "--data-dir",
                str(self.data_dir),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()

    def start(self) -> None:
        self.port = _free_port()
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
                    *self.extra,
                ],
                stdout=log,
                stderr=log,
            )
        for _ in range(200):
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(self.log.read_text())

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)

    def client(self, role: str) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, timeout=30, headers={"Authorization": f"Bearer {self.tokens[role]}"}
        )


class Case:
    """A shared workload folder: subscriptions, ontology, events and expected answers."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.events = folder / "events"
        self.subscriptions: list[Subscription] = load_subscriptions(folder / "subscriptions")
        self.expansion: Expansion = load_expansion(folder / "ontology.owl")
        text = (folder / "expected.jsonl").read_text()
        # W3C answers where the rdflib oracle departs from them (tests/oracle_corrections.py)
        self.expected: dict[str, dict[str, int]] = {
            row["event"]: row["solutions"] for row in corrected_lines(folder.name, text)
        }
