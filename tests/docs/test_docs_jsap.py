"""docs/sepa.md's JSAP example is one SEPA clients can use against semps and one
``semps sepa`` reads."""

from __future__ import annotations

import json

from docs_support import blocks
from semps_test_support import ROOT

from semps.api.jsap import read_jsap
from semps.ingest.sparql.parser import parse_query

SEPA_PAGE = ROOT / "docs" / "sepa.md"


def test_the_pages_jsap_points_at_semps_and_reads() -> None:
    """docs/sepa.md's JSAP: its paths are the ones semps serves, its query reads and parses."""
    (text,) = [code for lang, code in blocks(SEPA_PAGE.read_text()) if lang == "json"]
    doc = json.loads(text)
    protocol = doc["sparql11protocol"]
    assert (protocol["query"]["path"], protocol["update"]["path"]) == ("/query", "/update")
    assert doc["sparql11seprotocol"]["availableProtocols"]["ws"]["path"] == "/sepa/subscribe"
    sparql = read_jsap(text).queries["HOT"]
    assert parse_query(sparql).projected() == ("room", "t")
    assert "VALUES (?min)" in sparql
