"""The W3C RDF 1.1 RDF/XML test suite: positive tests read to a graph isomorphic to their
N-Triples; negative tests are refused with an RDFSyntaxError."""

from __future__ import annotations

from pathlib import Path

import pytest
import rdflib
from rdflib.compare import isomorphic
from semps_test_support import WORKLOADS

from semps.documents import read_triples
from semps.errors import IngestError
from semps.terms import XSD_STRING, Literal

SUITE = WORKLOADS / "w3c-rdf-xml"
BASE = "https://w3c.github.io/rdf-tests/rdf/rdf11/rdf-xml/"
MF = rdflib.Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
RDFT = rdflib.Namespace("http://www.w3.org/ns/rdftest#")


def _cases() -> list[tuple[str, str, Path, Path | None]]:
    manifest = rdflib.Graph().parse(SUITE / "manifest.ttl", publicID=BASE + "manifest.ttl")
    cases = []
    for test in manifest.subjects(rdflib.RDF.type, None):
        kind = manifest.value(test, rdflib.RDF.type)
        if kind not in (RDFT.TestXMLEval, RDFT.TestXMLNegativeSyntax):
            continue
        action = str(manifest.value(test, MF.action)).removeprefix(BASE)
        result = manifest.value(test, MF.result)
        expected = SUITE / str(result).removeprefix(BASE) if result else None
        name = str(manifest.value(test, MF.name))
        cases.append((name, "positive" if expected else "negative", SUITE / action, expected))
    return sorted(cases)


CASES = _cases()


def _to_rdflib(triples: tuple) -> rdflib.Graph:
    def term(t: object) -> rdflib.term.Node:
        if isinstance(t, Literal):
            plain = t.lang or t.datatype == XSD_STRING
            dt = None if plain else rdflib.URIRef(t.datatype)
            return rdflib.Literal(t.lexical, lang=t.lang, datatype=dt)
        assert isinstance(t, str)
        return rdflib.BNode(t[2:]) if t.startswith("_:") else rdflib.URIRef(t)

    graph = rdflib.Graph()
    for s, p, o in triples:
        graph.add((term(s), term(p), term(o)))
    return graph


def test_the_suite_is_all_there() -> None:
    assert len(CASES) == 166


@pytest.mark.parametrize(("name", "kind", "action", "expected"), CASES, ids=[c[0] for c in CASES])
def test_w3c_rdfxml(name: str, kind: str, action: Path, expected: Path | None) -> None:
    base = BASE + str(action.relative_to(SUITE))
    if expected is None:
        with pytest.raises(IngestError):
            read_triples(action.read_bytes(), media_type="application/rdf+xml", base=base)
        return
    ours = _to_rdflib(read_triples(action.read_bytes(), base=base))
    theirs = rdflib.Graph().parse(expected, format="nt")
    assert isomorphic(ours, theirs), ours.serialize(format="nt")
