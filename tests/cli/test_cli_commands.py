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
from semps_test_support import WORKLOADS

from semps.cli.demo import demo_dir


def semps(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semps", *args], capture_output=True, text=True, timeout=120
    )


def test_demo_runs_the_service_and_streams_every_notification(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = semps("demo", "--once", "--port", str(port), "--data-dir", str(tmp_path / "d"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    url = f"http://127.0.0.1:{port}"
    assert lines[1:3] == [f"  web console  {url}/console/", f"  API docs     {url}/docs"]
    notified = [line.split()[1] for line in lines if line.startswith("  notified  ")]
    assert sorted(notified) == [
        "alumni-of-university0",
        "alumni-of-university0",
        "chairs",
        "chairs",
        "named-students",
        "named-students",
        "teaching-assistants",
    ]
    # the knowledge graph's change: univ-bench makes the new head of department a Chair
    dept = "<http://www.Department9.University3.edu>"
    head = f"?dept={dept}, ?who=<http://www.Department9.University3.edu/FullProfessor1>"
    assert f"  notified  {'chairs':<24} {head}" in lines
    assert any(line.startswith("graph       graph-update -> version") for line in lines)
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
        out, err = process.communicate(timeout=30)
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


def test_parse_refuses_an_ontology_its_output_would_ignore() -> None:
    doc = WORKLOADS / "synthetic-s7" / "events" / "e000.rdf"
    ontology = WORKLOADS / "synthetic-s7" / "ontology.owl"
    result = semps("parse", str(doc), "--ontology", str(ontology))
    assert result.returncode == 2
    assert result.stderr == (
        "semps: error: --ontology is read by --to partab only: --to ntriples prints the "
        "document's own triples, without inference\n"
    )
    assert result.stdout == ""
    missing = semps("parse", str(doc), "--to", "partab", "--ontology", "nowhere.owl")
    assert missing.stderr == "semps: error: ontology not found: nowhere.owl\n"


S7 = WORKLOADS / "synthetic-s7"


def test_match_takes_one_rq_file_as_its_subscriptions(tmp_path: Path) -> None:
    rq = sorted((S7 / "subscriptions").glob("*.rq"))[3]
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / rq.name).write_bytes(rq.read_bytes())
    options = ["--ontology", str(S7 / "ontology.owl"), "--events", str(S7 / "events")]
    from_file = semps("match", "--subscriptions", str(rq), *options)
    from_folder = semps("match", "--subscriptions", str(alone), *options)
    assert from_file.returncode == 0, from_file.stderr
    assert from_file.stdout == from_folder.stdout
    assert any(json.loads(line)["matches"] == [rq.stem] for line in from_file.stdout.splitlines())


def test_match_says_what_subscriptions_it_expects(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a query")
    events = str(S7 / "events")
    wrong = semps("match", "--subscriptions", str(notes), "--events", events)
    missing = semps("match", "--subscriptions", str(tmp_path / "nowhere"), "--events", events)
    expected = "expected a folder of .rq files, or one .rq file"
    assert wrong.stderr == (
        f"semps: error: --subscriptions {notes} is a file but not a .rq file ({expected})\n"
    )
    assert (
        missing.stderr
        == f"semps: error: subscriptions not found: {tmp_path / 'nowhere'} ({expected})\n"
    )


def test_subscription_and_event_errors_name_their_files_alike(tmp_path: Path) -> None:
    subs, events = tmp_path / "subs", tmp_path / "events"
    subs.mkdir()
    events.mkdir()
    (subs / "good.rq").write_text("SELECT ?x WHERE { ?x a <http://ex/C> }")
    (events / "bad.ttl").write_text("<http://ex/a> a <http://ex/C>")
    bad_event = semps("match", "--subscriptions", str(subs), "--events", str(events))
    (subs / "bad.rq").write_text("SELECT ?x WHERE { ?x a <http://ex/C> . FILTR(?x) }")
    bad_sub = semps("match", "--subscriptions", str(subs), "--events", str(events))
    assert bad_event.stderr.startswith(f"semps: error: {events / 'bad.ttl'}:1:"), bad_event.stderr
    assert bad_sub.stderr == (
        f"semps: error: {subs / 'bad.rq'}:1:40: expected a subject but found 'FILTR' "
        "(did you mean FILTER?)\n"
    )


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
