"""The command line: semps parse, semps demo, and the bundled demo case's answers checked
against rdflib SPARQL over the owlrl closure (an independent oracle)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import owlrl
import pytest
import rdflib
from semps_test_support import PATIENCE, WORKLOADS

from semps.cli.demo import demo_dir


def semps(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semps", *args], capture_output=True, text=True, timeout=PATIENCE
    )


def test_demo_runs_the_service_and_streams_every_notification(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = semps("demo", "--once", "--port", str(port), "--data-dir", str(tmp_path / "d"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    notified = [line.split()[1] for line in lines if line.startswith("  notified  ")]
    assert sorted(notified) == [
        "alumni-of-university0",
        "alumni-of-university0",
        "chairs",
        "named-students",
        "named-students",
        "teaching-assistants",
    ]
    assert (tmp_path / "d" / "semps.sqlite3").exists()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_the_demo_service_stops_cleanly_on_sigterm_as_on_ctrl_c(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """A service manager's SIGTERM (``docker stop``, systemd) stops ``semps demo`` as
    Ctrl-C does: the service shut down, exit status 0, no traceback; and the demo's own
    notification streams are ended by the stopping server, not waited for until uvicorn's
    graceful-shutdown time runs out (it waited 10 s each time, then cut them)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "semps", "demo", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--data-dir", str(tmp_path / "d")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    guard = threading.Timer(120, process.kill)  # a demo that never gets ready fails below
    guard.start()
    try:
        assert process.stdout is not None
        seen = []
        for line in process.stdout:
            seen.append(line)
            if line.startswith("Ctrl-C stops the service"):
                break
        assert seen and seen[-1].startswith("Ctrl-C stops the service"), "".join(seen)
        process.send_signal(sig)
        out, err = process.communicate(timeout=PATIENCE)
    finally:
        guard.cancel()
        process.kill()
    assert process.returncode == 0, err
    assert "Traceback" not in err, err
    assert "graceful shutdown exceeded" not in err, err


@pytest.mark.parametrize(
    "event", sorted((demo_dir() / "events").glob("*.rdf")), ids=lambda p: p.stem
)
def test_demo_answers_equal_sparql_over_the_closure(event: Path) -> None:
    graph = rdflib.Graph()
    graph.parse(demo_dir() / "univ-bench.owl")
    graph.parse(event, publicID=f"urn:semps:event:{event.stem}/")
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False).expand(graph)
    want = {}
    for rq in sorted((demo_dir() / "subscriptions").glob("*.rq")):
        n = len(list(graph.query(rq.read_text())))
        if n:
            want[rq.stem] = n
    result = semps(
        "match",
        "--ontology",
        str(demo_dir() / "univ-bench.owl"),
        "--subscriptions",
        str(demo_dir() / "subscriptions"),
        "--events",
        str(event),
    )
    assert json.loads(result.stdout)["solutions"] == want


def test_parse_prints_ntriples_and_partab(tmp_path: Path) -> None:
    doc = WORKLOADS / "synthetic-s7" / "events" / "e000.rdf"
    nt = semps("parse", str(doc))
    assert nt.returncode == 0
    assert len(nt.stdout.splitlines()) == len(rdflib.Graph().parse(doc))
    parts = json.loads(semps("parse", str(doc), "--to", "partab").stdout)
    assert parts["PartB"]["http://example.org/data/item18"] == [
        "http://example.org/onto#ClassAlias0",
        "http://example.org/onto#C10",
    ]
    assert parts["PartA"]["http://example.org/onto#p5"][0] == (
        "<http://example.org/data/item18>-<http://example.org/data/item15>"
    )
    expanded = json.loads(
        semps(
            "parse",
            str(doc),
            "--to",
            "partab",
            "--ontology",
            str(WORKLOADS / "synthetic-s7" / "ontology.owl"),
        ).stdout
    )
    assert len(expanded["PartB"]["http://example.org/data/item18"]) > 2


def test_parse_refuses_a_malformed_document(tmp_path: Path) -> None:
    bad = tmp_path / "bad.rdf"
    bad.write_text(
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n<x></rdf:RDF>'
    )
    result = semps("parse", str(bad))
    assert result.returncode == 2
    assert result.stderr == f"semps: error: {bad}:2:6: malformed XML: mismatched tag\n"
    assert result.stdout == ""


def test_unknown_command_and_no_command() -> None:
    assert semps("frobnicate").returncode == 2
    assert "match" in semps().stdout


def test_composite_run_prints_each_detecting_arrival(tmp_path: Path) -> None:
    defs = tmp_path / "defs.txt"
    defs.write_text("create event ab = a then b;\ncreate event n = no x in a, c within 5s;\n")
    stream = tmp_path / "stream.jsonl"
    lines = ["a", "b", "c", "a", "x", "b", "c"]
    stream.write_text("".join(json.dumps({"event": e}) + "\n" for e in lines))
    result = semps("composite", "run", "--definitions", str(defs), "--stream", str(stream))
    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"at": 1, "detected": ["ab"]},
        {"at": 2, "detected": ["n"]},
        {"at": 5, "detected": ["ab"]},
    ]
    defs.write_text("create event x = a and a;")
    bad = semps("composite", "run", "--definitions", str(defs), "--stream", str(stream))
    assert bad.returncode == 2
    assert bad.stderr == f"semps: error: {defs}:1:1: definition of 'x' names the same event twice\n"
