"""Benchmark: bytes -> Event -> PartA/PartB, for small events and LUBM documents (not a test).

    .venv/bin/python bench/ingest.py

Prints triples per second on one core for semps (pyoxigraph + conversion + PartA/PartB, with
and without the LUBM ontology's expansion) and for rdflib's RDF/XML parser alone.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import rdflib
from _results import record  # bench/ is on the path: this file runs as a script

from semps.ingest.rdf import read_event
from semps.matcher.partab import to_partab
from semps.ontology import Expansion, load_expansion

LUBM = Path(__file__).resolve().parents[1].parent / "shared" / "workloads" / "lubm-u0"


def small_event(i: int) -> bytes:
    body = "".join(
        f'<ex:Item rdf:about="http://ex.org/item{i}-{j}"><ex:price rdf:datatype='
        f'"http://www.w3.org/2001/XMLSchema#decimal">{j}.5</ex:price><ex:seller '
        f'rdf:resource="http://ex.org/seller{j}"/><ex:name>item {j}</ex:name>'
        f'<ex:lot rdf:nodeID="b{j}"/></ex:Item>'
        for j in range(4)
    )
    return (
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        f'xmlns:ex="http://ex.org/">{body}</rdf:RDF>'
    ).encode()


def rate(docs: list[bytes], fn) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    triples = 0
    start = time.perf_counter()
    for i, doc in enumerate(docs):
        triples += fn(doc, i)
    return triples / (time.perf_counter() - start), triples


def main() -> None:
    print(f"command: {' '.join(sys.argv)}")
    small = [small_event(i) for i in range(5000)]
    lubm = [p.read_bytes() for p in sorted((LUBM / "events").glob("*.rdf"))]
    ontology = load_expansion(LUBM / "ontology.owl")
    cases = {
        "semps bytes->Event": lambda d, i: len(read_event(d, event_id=f"e{i}").triples),
        "semps bytes->PartA/PartB": lambda d, i: _partab(d, i, Expansion()),
        "semps bytes->PartA/PartB + LUBM ontology": lambda d, i: _partab(d, i, ontology),
        "rdflib RDF/XML parse only": lambda d, i: len(rdflib.Graph().parse(data=d, format="xml")),
    }
    for name, fn in cases.items():
        small_docs = small if "rdflib" not in name else small[:500]
        r_small, n_small = rate(small_docs, fn)
        r_lubm, _ = rate(lubm if "rdflib" not in name else lubm[:2], fn)
        print(
            f"{name:<42} {r_small:>10,.0f} triples/s ({n_small // len(small_docs)}-triple events)"
            f" {r_lubm:>10,.0f} triples/s (LUBM documents)"
        )
        record(
            "ingest",
            {"case": name, "small_triples_s": r_small, "lubm_triples_s": r_lubm},
        )


def _partab(doc: bytes, i: int, expansion: Expansion) -> int:
    event = read_event(doc, event_id=f"e{i}")
    to_partab(event, expansion)
    return len(event.triples)


if __name__ == "__main__":
    main()
