"""The service accepts the wider language through the same parser and evaluator: a real
``semps serve`` process (its broker workers match), subscriptions with OPTIONAL, UNION and a
path, notifications without the unbound variables, and the constructs still outside the
language refused with a 4xx naming them."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from semps_test_support import UNIV_BENCH, Server

from semps.cli.demo import demo_dir

pytestmark = pytest.mark.server
UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
EVENT = (demo_dir() / "events" / "e1-new-chair.rdf").read_bytes()
RDFXML = {"Content-Type": "application/rdf+xml"}
DEPT = "<http://www.Department7.University3.edu>"
ADA = "<http://www.Department7.University3.edu/FullProfessor2>"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(tmp_path_factory.mktemp("algebra") / "data", ontology=UNIV_BENCH) as srv:
        yield srv


def _notes(client: httpx.Client, sub_id: str) -> list[dict]:
    text = client.get(f"/subscriptions/{sub_id}/notifications?once=true").text
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def test_optional_union_and_paths_notify_without_unbound_variables(server: Server) -> None:
    texts = {
        "optional": "SELECT ?who ?name ?mail WHERE { ?who a ub:Chair "
        "OPTIONAL { ?who ub:name ?name } OPTIONAL { ?who ub:emailAddress ?mail } }",
        "union": "SELECT ?x WHERE { { ?x a ub:Chair } UNION { ?x a ub:University } }",
        "path": "SELECT ?who ?org WHERE { ?who ub:worksFor/ub:subOrganizationOf* ?org }",
    }
    with server.client("subscriber") as sub, server.client("publisher") as pub:
        ids = {}
        for name, text in texts.items():
            created = sub.post("/subscriptions", content=UB + text)
            assert created.status_code == 201, created.text
            ids[name] = created.json()["id"]
        posted = pub.post("/events", content=EVENT, headers=RDFXML)
        assert posted.status_code == 202 and posted.json()["matched"] == 3
        (optional,) = _notes(sub, ids["optional"])
        assert optional["solutions"] == [{"who": ADA, "name": '"Ada Byron"'}]
        (union,) = _notes(sub, ids["union"])
        # University0 is typed by the range of doctoralDegreeFrom
        assert sorted(s["x"] for s in union["solutions"]) == [ADA, "<http://www.University0.edu>"]
        (path,) = _notes(sub, ids["path"])  # headOf implies worksFor through the ontology
        assert sorted(s["org"] for s in path["solutions"]) == [
            DEPT,
            "<http://www.University3.edu>",
        ]


@pytest.mark.parametrize(
    ("text", "construct"),
    [
        ("SELECT * WHERE { GRAPH ?g { ?x a ub:Chair } }", "GRAPH"),
        ("SELECT * WHERE { ?x a ub:Chair } LIMIT 1", "LIMIT"),
        ("SELECT (COUNT(?x) AS ?n) WHERE { ?x a ub:Chair }", "aggregate"),
    ],
)
def test_constructs_outside_the_language_are_a_4xx_naming_them(
    server: Server, text: str, construct: str
) -> None:
    with server.client("subscriber") as sub:
        refused = sub.post("/subscriptions", content=UB + text)
    assert 400 <= refused.status_code < 500
    assert f"{construct} is not supported" in refused.text
