"""Through ``semps match``: ill-typed literals and unbound projections are ordinary input
(exit 0, nothing on stderr), answered as the W3C results say."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

EVENT = """@prefix : <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:a :at "1999-12-31T24:00:00"^^xsd:dateTime ; :n "abc"^^xsd:integer ; :d "x"^^xsd:date .
:b :at "2000-01-01T00:00:00"^^xsd:dateTime ; :n 5 ; :d "2006-08-23Z"^^xsd:date .
"""
SUBSCRIPTIONS = {
    # 24:00:00 is the next day's midnight: :a's instant equals :b's
    "midnight": "SELECT ?x { ?x <http://example.org/at> ?t "
    'FILTER(?t = "2000-01-01T00:00:00"^^<http://www.w3.org/2001/XMLSchema#dateTime>) }',
    # an ill-typed integer has no value: only 5 is > 1
    "ill-typed": "SELECT ?x { ?x <http://example.org/n> ?n FILTER(?n > 1) }",
    # ?p never occurs: allowed, unbound in every solution
    "unbound": "SELECT ?p { ?x <http://example.org/n> 5 }",
    # a date with a timezone against one without, on the same day: indeterminate (error)
    "dates": "SELECT ?x { ?x <http://example.org/d> ?d "
    'FILTER(?d = "2006-08-23"^^<http://www.w3.org/2001/XMLSchema#date>) }',
}


def _match(subs: Path, events: Path) -> subprocess.CompletedProcess[str]:
    """``semps match`` run as a process over a subscription folder and events."""
    command = [sys.executable, "-m", "semps", "match", "--subscriptions", str(subs)]
    return subprocess.run([*command, "--events", str(events)], capture_output=True, text=True)


def test_ill_typed_literals_are_quiet_and_answered_as_the_w3c_results(tmp_path: Path) -> None:
    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "e1.ttl").write_text(EVENT)
    subs = tmp_path / "subs"
    subs.mkdir()
    for name, text in SUBSCRIPTIONS.items():
        (subs / f"{name}.rq").write_text(text)
    done = _match(subs, tmp_path / "events")
    assert (done.returncode, done.stderr) == (0, "")
    (record,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert record["solutions"] == {"ill-typed": 1, "midnight": 2, "unbound": 1}


RDF_XML = """<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">
  <rdf:Description rdf:about="http://example.org/a">
    <ex:n rdf:datatype="http://www.w3.org/2001/XMLSchema#integer">abc</ex:n>
    <ex:x rdf:parseType="Literal"><b>an XML literal: read by rdflib</b></ex:x>
  </rdf:Description>
</rdf:RDF>
"""


def test_an_ill_typed_literal_read_by_rdflib_prints_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "e1.rdf").write_text(RDF_XML)
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "n.rq").write_text("SELECT ?x { ?x <http://example.org/n> ?n FILTER(?n > 1) }")
    done = _match(subs, tmp_path / "e1.rdf")
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["matches"] == []
