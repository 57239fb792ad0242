"""What the service benchmarks share (not a test): a real ``semps serve`` on a fresh data
directory with tokens made by the CLI, a free port, the latency quantiles they report and
the N-Triples text of a generated event; and the commands of the benchmarks that write their
workload to a folder first."""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, NamedTuple

import httpx

#: The CLI, run as the benchmark's own interpreter runs it.
SEMPS = [sys.executable, "-m", "semps"]
#: Where ``semps`` subprocesses run: not the checkout, whose ``semps/`` would come first on
#: their path (``-m`` puts the working directory there) and hide a ``PYTHONPATH`` naming
#: another checkout (the previous release, for side-by-side figures).
OUTSIDE = tempfile.gettempdir()


class WorkloadCommands(NamedTuple):
    """The parser of a benchmark that writes its workload to a folder (``write FOLDER
    [--seed N]``), then times it (``run FOLDER``): each command gets its own options, and
    ``commands`` may add more."""

    parser: argparse.ArgumentParser
    commands: argparse._SubParsersAction[argparse.ArgumentParser]
    write: argparse.ArgumentParser
    run: argparse.ArgumentParser


def workload_commands(doc: str) -> WorkloadCommands:
    """The ``write`` and ``run`` commands of a benchmark whose module docstring is ``doc``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    write = commands.add_parser("write")
    write.add_argument("folder", type=Path)
    write.add_argument("--seed", type=int, default=1)
    run = commands.add_parser("run")
    run.add_argument("folder", type=Path)
    return WorkloadCommands(parser, commands, write, run)


def workers_option(parser: argparse.ArgumentParser, default: int = 0) -> None:
    """``--workers N``: the matching processes of the ``semps serve`` the benchmark starts."""
    parser.add_argument(
        "--workers", type=int, default=default, help="matching processes (0: default)"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def quantile(values: list[float], q: float) -> float:
    """A quantile in milliseconds of values in seconds (NaN for none)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def answer(reply: httpx.Response, matched: bool = False) -> str:
    """A reply in a word: its status, with the error's name (``413 too_large``) or, when
    ``matched``, how many subscriptions a published event matched (``202 (matched 3)``)."""
    try:
        body = reply.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "error" in body:
        return f"{reply.status_code} {body['error']}"
    if matched and isinstance(body, dict) and "matched" in body:
        return f"{reply.status_code} (matched {body['matched']})"
    return str(reply.status_code)


def ntriples(event: object) -> str:
    """A generated event's triples as N-Triples lines."""
    from semps.terms import n3

    return "\n".join(f"{n3(s)} <{p}> {n3(o)} ." for s, p, o in event.triples)  # type: ignore[attr-defined]


def create_tokens(data: Path, roles: Mapping[str, str]) -> dict[str, str]:
    """A token per name (``semps token create``), of the role it is mapped to."""
    return {
        name: subprocess.run(
            [*SEMPS, "token", "create", "--role", role, "--data-dir", str(Path(data).resolve())],
            capture_output=True,
            cwd=OUTSIDE,
            text=True,
            check=True,
        ).stdout.strip()
        for name, role in roles.items()
    }


class Served(NamedTuple):
    """A running ``semps serve``."""

    process: subprocess.Popen[bytes]
    url: str
    port: int


def serve(
    data: Path,
    extra: list[str],
    log: IO[bytes] | int = subprocess.DEVNULL,
    prefix: Sequence[str] = (),
    wait: float = 20,
) -> Served:
    """``semps serve`` on a free port with ``extra`` arguments (run through ``prefix``, e.g.
    ``prlimit --nofile=1024:1024 --``), answering ``/health`` (waited for up to ``wait``
    seconds)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [*prefix, *SEMPS, "serve", "--port", str(port), "--data-dir", str(Path(data).resolve())]
    cmd += extra
    print(f"server: {' '.join(cmd[len(prefix) + 1 :])}", flush=True)
    server = subprocess.Popen(cmd, stdout=log, stderr=log, cwd=OUTSIDE)
    for _ in range(int(wait * 10)):
        try:
            httpx.get(url + "/health")
            break
        except httpx.TransportError:
            time.sleep(0.1)
    return Served(server, url, port)
