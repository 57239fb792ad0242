"""``semps explain`` and ``semps parse --to closed`` through :func:`semps.cli.main`.

The Brick telemetry case (brick-kg-a: Brick 1.2, a building model as the knowledge graph,
telemetry events) is checked against its own oracle: for every subscription, explain's
count is the number of solutions ``expected.jsonl`` gives (pyoxigraph over the closure by
the ``reasonable`` reasoner), and ``parse --to closed`` against owlrl's closure.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import owlrl
import pytest
import rdflib

from semps.cli import main
from semps.terms import RDF_TYPE

EX = "http://example.org/"
ONTOLOGY = f"""@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
<{EX}Sensor> a owl:Class ; rdfs:subClassOf <{EX}Point> .
<{EX}Point> a owl:Class .
<{EX}isPointOf> a owl:ObjectProperty ; owl:inverseOf <{EX}hasPoint> .
<{EX}hasPoint> a owl:ObjectProperty .
"""
EVENT = f"""<{EX}ahu> <{EX}hasPoint> <{EX}t1> .
<{EX}t1> a <{EX}Sensor> ; <{EX}value> 71 .
"""


def semps(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def explain(subscription: Path, event: Path, *options: str) -> tuple[int, str, str]:
    """``semps explain --subscription FILE --event FILE`` with more ``options``."""
    return semps("explain", "--subscription", str(subscription), "--event", str(event), *options)


@pytest.fixture
def case(tmp_path: Path) -> Path:
    (tmp_path / "ontology.ttl").write_text(ONTOLOGY)
    (tmp_path / "e1.ttl").write_text(EVENT)
    (tmp_path / "points.rq").write_text(
        f"PREFIX ex: <{EX}> SELECT ?p ?e WHERE {{ ?p a ex:Point ; ex:isPointOf ?e }}"
    )
    (tmp_path / "hot.rq").write_text(
        f"PREFIX ex: <{EX}> SELECT ?p WHERE {{ ?p a ex:Point ; ex:value ?v FILTER(?v > 80) }}"
    )
    return tmp_path


def test_explain_prints_a_match_with_its_inferences_and_their_axioms(case: Path) -> None:
    status, out, err = explain(
        case / "points.rq", case / "e1.ttl", "--ontology", str(case / "ontology.ttl")
    )
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        "points matches e1: 1 solution(s)",
        "  solution 1: ?p = ex:t1, ?e = ex:ahu",
        "    [inferred] ex:t1 rdf:type ex:Point .",
        "    [inferred] ex:t1 ex:isPointOf ex:ahu .",
        "  inferred:",
        "    ex:t1 rdf:type ex:Point .  by cax-sco",
        "      from ex:t1 rdf:type ex:Sensor .",
        "      axiom ex:Sensor rdfs:subClassOf ex:Point .",
        "    ex:t1 ex:isPointOf ex:ahu .  by prp-inv",
        "      from ex:ahu ex:hasPoint ex:t1 .",
        "      axiom ex:isPointOf owl:inverseOf ex:hasPoint .",
    ]


def test_explain_says_which_filter_failed_and_on_what_values_as_json(case: Path) -> None:
    ontology = str(case / "ontology.ttl")
    status, out, _ = explain(
        case / "hot.rq", case / "e1.ttl", "--ontology", ontology, "--format", "json"
    )
    found = json.loads(out)
    assert (status, found["matched"], found["count"]) == (0, False, 0)
    assert [r["step"] for r in found["reasons"]] == ["filter"]
    assert found["reasons"][0]["nearest"] == [
        {"kind": "values", "text": '?v = "71"^^<http://www.w3.org/2001/XMLSchema#integer>'}
    ]


def test_explain_without_the_ontology_names_the_type_constraint_and_the_nearest_class(
    case: Path,
) -> None:
    _, out, _ = explain(case / "points.rq", case / "e1.ttl")
    lines = out.splitlines()
    assert lines[0] == "points does not match e1"
    assert "counter filter: dropped by the counter filter: 0 of its 2 patterns" in lines[1]
    assert lines[4].startswith("  type: pattern 1 `?p rdf:type ex:Point`: no node of class")
    assert "    same predicate, other class: ex:t1 rdf:type ex:Sensor" in lines


def test_explain_errors_are_one_line(case: Path) -> None:
    status, _, err = explain(case / "none.rq", case / "e1.ttl")
    assert (status, err) == (2, f"semps: error: subscription not found: {case / 'none.rq'}\n")
    status, _, err = explain(case, case / "e1.ttl")
    assert (status, err) == (
        2,
        f"semps: error: --subscription takes one file, not a folder: {case} "
        "(semps match reads folders)\n",
    )
    (case / "bad.rq").write_text("SELECT ?x WHERE { ?x }")
    status, _, err = explain(case / "bad.rq", case / "e1.ttl")
    assert status == 2 and err.startswith(f"semps: error: {case / 'bad.rq'}:1:")
    status, _, err = explain(case / "hot.rq", case / "e9.ttl")
    assert (status, err) == (2, f"semps: error: event not found: {case / 'e9.ttl'}\n")


def test_an_ontology_document_s_facts_join_the_graph_with_the_note_match_gives(
    case: Path,
) -> None:
    """A building model merged into the ontology file is not dropped in silence: its facts
    are read as the knowledge graph, and said so, as ``semps match`` says it."""
    ontology = case / "ontology.ttl"
    ontology.write_text(ONTOLOGY + f"<{EX}t2> a <{EX}Sensor> .\n")
    (case / "e2.ttl").write_text(f"<{EX}ahu> <{EX}hasPoint> <{EX}t2> .\n")
    status, out, err = explain(case / "points.rq", case / "e2.ttl", "--ontology", str(ontology))
    note = (
        f"semps: note: {ontology} holds 1 triples about individuals (facts, not axioms): "
        "they join the knowledge graph (--graph)\n"
    )
    assert (status, err) == (0, note)
    assert out.startswith("points matches e2: 1 solution(s)\n")
    assert "      from ex:t2 rdf:type ex:Sensor .\n" in out  # the fact, read
    events = case / "events"
    events.mkdir()
    (events / "e2.ttl").write_text((case / "e2.ttl").read_text())
    status, _, err = semps("match", "--subscriptions", str(case / "points.rq"),
                           "--events", str(events), "--ontology", str(ontology))  # fmt: skip
    assert (status, err) == (0, note)


def test_parse_to_closed_prints_owlrl_s_closure_of_the_event(case: Path) -> None:
    status, out, _ = semps(
        "parse", str(case / "e1.ttl"), "--to", "closed", "--ontology", str(case / "ontology.ttl")
    )
    assert status == 0
    ours = rdflib.Graph().parse(data=out, format="nt")
    oracle = rdflib.Graph().parse(data=ONTOLOGY + EVENT, format="turtle")
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False).expand(oracle)
    nodes = {rdflib.URIRef(EX + n) for n in ("ahu", "t1")}
    # (owlrl also types every node owl:Thing and relates it to itself by owl:sameAs)
    trivial = {rdflib.OWL.sameAs, rdflib.URIRef(RDF_TYPE)}
    want = {
        t
        for t in oracle
        if t[0] in nodes and not (t[1] in trivial and t[2] in (rdflib.OWL.Thing, t[0]))
    }
    assert set(ours) == want


def test_explain_shows_the_brick_telemetry_case_with_graph_facts_and_inferences(
    workloads: Path,
) -> None:
    case = workloads / "brick-kg-a"
    status, out, _ = explain(
        case / "subscriptions" / "j17-tagged-reading.rq",
        case / "events" / "k00-tel.ttl",
        "--ontology",
        str(case / "ontology.owl"),
        "--graph",
        str(case / "graph" / "site.ttl"),
    )
    site = "<http://example.org/site/hq#"
    assert status == 0
    assert out.startswith("j17-tagged-reading matches k00-tel: 2 solution(s)\n")
    assert f"    [graph] {site}B2-VAV-20.ZN-T> brick:hasTag tag:Temperature .\n" in out
    assert (
        f"    {site}B2-VAV-20> rdf:type brick:Equipment .  by cax-sco\n"
        f"      from {site}B2-VAV-20> rdf:type brick:VAV .\n"
        "      axiom brick:VAV rdfs:subClassOf brick:Terminal_Unit .\n"
        "      axiom brick:Terminal_Unit rdfs:subClassOf brick:HVAC_Equipment .\n"
        "      axiom brick:HVAC_Equipment rdfs:subClassOf brick:Equipment .\n"
    ) in out
