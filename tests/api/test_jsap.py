"""Reading SEPA's JSAP files (semps.api.jsap): prefixes and forced bindings applied to the
named queries, and each malformed file refused with a message that says what is wrong."""

from __future__ import annotations

import json
import re

import pytest

from semps.api.jsap import JsapError, read_jsap
from semps.ingest.sparql.parser import parse_query


def _jsap(queries: object, namespaces: object = None) -> str:
    doc: dict[str, object] = {"queries": queries}
    if namespaces is not None:
        doc["namespaces"] = namespaces
    return json.dumps(doc)


def _forced(bindings: object, sparql: str = "ASK { ?s ?p ?o }") -> str:
    """A JSAP of one query ``Q`` with ``bindings`` as its forced bindings."""
    return _jsap({"Q": {"sparql": sparql, "forcedBindings": bindings}})


def test_namespaces_become_prefixes_unless_the_query_declares_its_own() -> None:
    text = _jsap(
        {"Q": {"sparql": "PREFIX ex: <http://mine/> SELECT ?s WHERE { ?s ex:p schema:x }"}},
        {"ex": "http://ex.org/", "schema": "http://schema.org/"},
    )
    sparql = read_jsap(text).queries["Q"]
    assert sparql.splitlines()[0] == "PREFIX schema: <http://schema.org/>"
    assert "PREFIX ex: <http://ex.org/>" not in sparql
    assert parse_query(sparql).patterns[0].p == "http://mine/p"


def test_forced_bindings_of_every_type_parse_as_values() -> None:
    bindings = {
        "u": {"type": "uri", "value": "ex:a"},
        "full": {"type": "uri", "value": "http://ex.org/b"},
        "plain": {"type": "literal", "value": 'say "hi"'},
        "typed": {"type": "literal", "value": "2018-06-28T00:00:00", "datatype": "xsd:dateTime"},
        "fr": {"type": "literal", "value": "chat", "xml:lang": "fr"},
    }
    query = "SELECT * WHERE { ?u ?p ?full . ?x ?q ?plain , ?typed , ?fr }"
    sparql = read_jsap(
        _jsap({"Q": {"sparql": query, "forcedBindings": bindings}}, {"ex": "http://ex.org/"})
    ).queries["Q"]
    assert (
        'VALUES (?u ?full ?plain ?typed ?fr) { (<http://ex.org/a> <http://ex.org/b> "say \\"hi\\"" '
        '"2018-06-28T00:00:00"^^<http://www.w3.org/2001/XMLSchema#dateTime> "chat"@fr) }'
    ) in sparql
    assert parse_query(sparql).form == "SELECT"


def test_updates_are_named_not_read() -> None:
    doc = {"queries": {"Q": {"sparql": "ASK {}"}}, "updates": {"U1": {"sparql": "x"}}}
    assert read_jsap(json.dumps(doc)).updates == ("U1",)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{", "the JSAP is not JSON"),
        ("[]", "a JSAP must be a JSON object"),
        (_jsap({"Q": {}}), "query 'Q' has no 'sparql' text"),
        (_jsap({"Q": "ASK {}"}), "query 'Q' must be a JSON object"),
        (_jsap({"Q": {"sparql": "ASK {}"}}, {"ex": 3}), "namespace 'ex' must map a prefix"),
        (
            _jsap({"Q": {"sparql": "ASK {}", "graphs": {"default-graph-uri": ["http://g"]}}}),
            "'graphs' is not supported",
        ),
        (_forced({"s": {"type": "uri"}}), "the forced binding of ?s has no value"),
        (_forced({"s": {"type": "bnode", "value": "b"}}), "has type 'bnode' (uri or literal)"),
        (_forced({"s": {"type": "uri", "value": "nope:x"}}), "unknown prefix 'nope' in 'nope:x'"),
        (_forced({"s": {"type": "uri", "value": "http://x/> }"}}), "is not an IRI"),
        (_forced({"s-1": {"type": "uri", "value": "x:"}}), "'s-1' is not a variable name"),
        (
            _forced({"s": {"type": "uri", "value": "http://x/"}}, "SELECT ?s"),
            "query 'Q' has no WHERE clause",
        ),
    ],
)
def test_malformed_jsaps_are_refused(text: str, problem: str) -> None:
    with pytest.raises(JsapError, match=re.escape(problem)):
        read_jsap(text)
