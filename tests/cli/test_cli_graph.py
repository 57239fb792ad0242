"""``semps graph`` and ``semps match --graph`` from the command line: exit codes, the
``semps: error:`` lines, the note when an ontology document holds individuals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from semps_test_support import WORKLOADS

CASE = WORKLOADS / "brick-kg-a"
EX = "http://ex/"


def semps(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semps", *args], capture_output=True, text=True, input=stdin
    )


def test_load_update_export_round(tmp_path: Path) -> None:
    data = tmp_path / "data"
    doc = tmp_path / "g.ttl"
    doc.write_text(f"<{EX}a> <{EX}p> <{EX}b> .\n")
    loaded = semps("graph", "load", str(doc), "--data-dir", str(data))
    assert loaded.returncode == 0, loaded.stderr
    assert "graph version" in loaded.stderr and "1 triples inserted" in loaded.stderr
    update = semps(
        "graph",
        "update",
        "--file",
        "-",
        "--data-dir",
        str(data),
        stdin=f"INSERT DATA {{ <{EX}c> <{EX}p> 1 }}",
    )
    assert update.returncode == 0, update.stderr
    out = semps("graph", "export", "--format", "nt", "--data-dir", str(data))
    assert sorted(out.stdout.splitlines()) == sorted(
        [
            f"<{EX}a> <{EX}p> <{EX}b> .",
            f'<{EX}c> <{EX}p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .',
        ]
    )
    info = json.loads(semps("graph", "info", "--data-dir", str(data)).stdout)
    assert (info["version"], info["asserted"], info["closure"]) == (3, 2, 2)


def test_bad_input_gets_an_error_line_and_exit_2(tmp_path: Path) -> None:
    data = tmp_path / "data"
    missing = semps("graph", "update", "CLEAR ALL", "--data-dir", str(data))
    assert missing.stderr == f"semps: error: data directory not found: {data}\n"
    data.mkdir()
    bad = semps(
        "graph", "update", "INSERT DATA {\n <http://a> <http://b> }", "--data-dir", str(data)
    )
    assert (bad.returncode, bad.stderr) == (
        2,
        "semps: error: 2:24: expected a object but found '}'\n",
    )
    load = semps("graph", "update", "LOAD <http://example.org/>", "--data-dir", str(data))
    assert load.returncode == 2 and "LOAD (semps never fetches remote data)" in load.stderr
    doc = tmp_path / "broken.ttl"
    doc.write_text("<http://a> <http://b> .\n")
    broken = semps("graph", "load", str(doc), "--data-dir", str(data))
    assert broken.returncode == 2 and broken.stderr.startswith(f"semps: error: {doc}:1:")
    fmt = semps("graph", "export", "--format", "csv", "--data-dir", str(data))
    assert fmt.returncode == 2 and "cannot export the graph as 'csv'" in fmt.stderr


def test_an_ontology_with_individuals_feeds_them_to_the_graph_with_a_note(tmp_path: Path) -> None:
    """The issue's second symptom: the model loaded as the ontology was dropped in silence."""
    both = tmp_path / "brick+model.ttl"
    both.write_bytes((CASE / "graph" / "site.ttl").read_bytes())
    onto_nt = semps("parse", str(CASE / "ontology.owl"))  # the ontology as N-Triples
    with both.open("a") as f:
        f.write("\n" + onto_nt.stdout)
    result = semps(
        "match",
        "--ontology",
        str(both),
        "--subscriptions",
        str(CASE / "subscriptions"),
        "--events",
        str(CASE / "events" / "k00-tel.ttl"),
    )
    assert result.returncode == 0, result.stderr
    assert (
        "triples about individuals (facts, not axioms): they join the knowledge graph"
        in result.stderr
    )
    expected = json.loads((CASE / "expected.jsonl").read_text().splitlines()[0])
    assert json.loads(result.stdout) == expected
    parse = semps(
        "parse", "--to", "partab", "--ontology", str(both), str(CASE / "events" / "k00-tel.ttl")
    )
    assert parse.returncode == 2 and "belong in the knowledge graph" in parse.stderr
