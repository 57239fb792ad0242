"""Where a shared workload's expected answers follow rdflib against the W3C SPARQL results.

The workloads' ``expected.jsonl`` came from rdflib SPARQL over the owlrl closure. rdflib
orders terms of different kinds: ``"phone" >= "2015-04-12"^^xsd:date`` and a date against
``765`` are true there. SPARQL 1.1 (section 17.3, the operator table) makes them type errors,
and the W3C tests say so (``open-world/open-cmp-01``, ``open-cmp-02``: a FILTER ordering an
integer and a string, a dateTime and a date, is an error). semps follows the W3C results
(issue 14). The counts below are Oxigraph's, an engine independent of semps that passes the
W3C suites; ``tests/conformance/test_oracle_corrections.py`` checks each one against
Oxigraph and against rdflib, so the list cannot go stale.
"""

from __future__ import annotations

import json

from semps.matcher.results import result_line, result_record

#: case -> event -> subscription -> the W3C solution count (0: no match).
CORRECTIONS: dict[str, dict[str, dict[str, int]]] = {
    "synthetic-s7": {
        "e002": {"s0006": 0},
        "e003": {"s0006": 0},
        "e004": {"s0006": 0},
        "e014": {"s0086": 1},
        "e015": {"s0006": 0},
        "e016": {"s0006": 0, "s0091": 0},
        "e017": {"s0086": 0},
        "e022": {"s0006": 0},
        "e023": {"s0006": 0},
        "e027": {"s0091": 1},
    }
}


def corrected_record(case: str, record: dict) -> dict:
    """One ``expected.jsonl`` record with the W3C counts in place of rdflib's."""
    fixes = CORRECTIONS.get(case, {}).get(record["event"])
    if not fixes:
        return record
    counts = dict(record.get("solutions", {}))
    for subscription, count in fixes.items():
        if count:
            counts[subscription] = count
        else:
            counts.pop(subscription, None)
    return result_record(record["event"], counts)


def corrected_lines(case: str, text: str) -> list[dict]:
    """Every record of an ``expected.jsonl`` text, corrected."""
    return [corrected_record(case, json.loads(line)) for line in text.splitlines()]


def corrected_text(case: str, text: str) -> str:
    """An ``expected.jsonl`` text, corrected, as ``semps match`` writes it."""
    return "".join(
        result_line(r["event"], r["solutions"]) + "\n" for r in corrected_lines(case, text)
    )
