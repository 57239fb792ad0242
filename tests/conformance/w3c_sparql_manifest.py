"""Read the W3C SPARQL test manifests (``../shared/workloads/w3c-sparql/``) as data.

- :func:`load_tests`: every test of every ``manifest*.ttl`` (``mf:entries``), as
  :class:`W3CTest` records: its kind, query, data files and expected result.
- :func:`read_result`: an expected result (``.srx``, ``.srj``, or a ``.ttl``/``.rdf`` graph in
  the DAWG result-set vocabulary) as a boolean (ASK) or a list of rows (variable -> term),
  in semps terms (IRIs and ``_:`` blank nodes as ``str``, :class:`Literal` values).
- :func:`same_solutions`: two solution multisets equal under W3C term equality, blank nodes
  compared up to a consistent renaming.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal as Kind

import rdflib
from rdflib.collection import Collection

from semps._types import Term
from semps.ingest.sparql._values import typed
from semps.terms import RDF_LANGSTRING, XSD_STRING, Literal

BASE = "https://w3c.github.io/rdf-tests/sparql/"
MF = rdflib.Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
QT = rdflib.Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-query#")
DAWGT = rdflib.Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#")
SD = rdflib.Namespace("http://www.w3.org/ns/sparql-service-description#")
RS = rdflib.Namespace("http://www.w3.org/2001/sw/DataAccess/tests/result-set#")
SRX = "{http://www.w3.org/2005/sparql-results#}"

TestKind = Kind["evaluation", "entailment", "positive-syntax", "negative-syntax", "other"]
Row = dict[str, Term]

_KINDS: dict[str, TestKind] = {
    "QueryEvaluationTest": "evaluation",
    "PositiveSyntaxTest": "positive-syntax",
    "PositiveSyntaxTest11": "positive-syntax",
    "NegativeSyntaxTest": "negative-syntax",
    "NegativeSyntaxTest11": "negative-syntax",
}


@dataclass(frozen=True)
class W3CTest:
    """One manifest entry.

    Attributes:
        id: ``<suite folder>/<test name>`` (e.g. ``sparql10/expr-equals/eq-2-1``).
        kind: evaluation, entailment (an evaluation test under an entailment regime),
            positive or negative syntax, or other (result-format tests).
        query: the query file (``None`` when the subset does not hold it).
        data: the default-graph data files.
        graph_data: True when the test also reads named graphs (``qt:graphData``).
        result: the expected result file.
        regimes: the entailment regimes' local names (``RDFS``, ``OWL-RDF-Based``, ...).
        lax: ``mf:LaxCardinality`` (REDUCED): compare the distinct solutions only.
        approved: the approval status's local name (``Approved``, ``NotClassified``, ...).
    """

    id: str
    kind: TestKind
    query: Path | None
    data: tuple[Path, ...] = ()
    graph_data: bool = False
    result: Path | None = None
    regimes: tuple[str, ...] = ()
    lax: bool = False
    approved: str = ""

    def address(self, path: Path, root: Path) -> str:
        """The W3C address of a file of the suite (the base IRI its contents use)."""
        return BASE + path.relative_to(root).as_posix()


def load_tests(root: Path) -> list[W3CTest]:
    """Every test listed by the manifests under ``root`` (the folder holding ``sparql10``
    and ``sparql11``), sorted by id."""
    tests: list[W3CTest] = []
    for manifest in sorted(root.rglob("manifest*.ttl")):
        graph = rdflib.Graph().parse(manifest, publicID=BASE + _relative(manifest, root))
        for entries in graph.objects(None, MF.entries):
            for node in Collection(graph, entries):
                tests.append(_test(graph, node, manifest.parent, root))
    return sorted(tests, key=lambda t: t.id)


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _local(node: object) -> str:
    return str(node).rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _file(node: object, root: Path) -> Path | None:
    if node is None:
        return None
    path = root / str(node).removeprefix(BASE)
    return path if path.is_file() else None


def _test(graph: rdflib.Graph, node: rdflib.term.Node, folder: Path, root: Path) -> W3CTest:
    kind = _KINDS.get(_local(graph.value(node, rdflib.RDF.type)), "other")
    name = _local(node)
    action = graph.value(node, MF.action)
    regimes: list[str] = []
    data: list[Path] = []
    graph_data = False
    if isinstance(action, rdflib.BNode):
        query = _file(graph.value(action, QT.query), root)
        for item in graph.objects(action, QT.data):
            path = _file(item, root)
            if path is not None:
                data.append(path)
        graph_data = graph.value(action, QT.graphData) is not None
        for regime in graph.objects(action, SD.entailmentRegime):
            if isinstance(regime, rdflib.BNode):
                regimes.extend(_local(r) for r in Collection(graph, regime))
            else:
                regimes.append(_local(regime))
    else:
        query = _file(action, root)
    if kind == "evaluation" and regimes:
        kind = "entailment"
    return W3CTest(
        id=f"{_relative(folder, root)}/{name}",
        kind=kind,
        query=query,
        data=tuple(sorted(data)),
        graph_data=graph_data,
        result=_file(graph.value(node, MF.result), root),
        regimes=tuple(regimes),
        lax=_local(graph.value(node, MF.resultCardinality)) == "LaxCardinality",
        approved=_local(graph.value(node, DAWGT.approval)),
    )


# -- expected results ----------------------------------------------------------------------


def read_result(path: Path, base: str) -> bool | list[Row]:
    """An expected result: ``True``/``False`` for ASK, else the rows (unbound variables are
    absent from a row)."""
    suffix = path.suffix.lower()
    if suffix == ".srx":
        return _read_srx(path)
    if suffix == ".srj":
        return _read_srj(path)
    if suffix in (".ttl", ".rdf"):
        return _read_result_graph(path, base)
    msg = f"no reader for the result format of {path.name}"
    raise ValueError(msg)


def _literal(text: str, datatype: str | None, lang: str | None) -> Literal:
    if lang:
        return Literal(text, RDF_LANGSTRING, lang.lower())
    return Literal(text, datatype or XSD_STRING)


def _read_srx(path: Path) -> bool | list[Row]:
    root = ET.parse(path).getroot()  # noqa: S314  (a W3C test file, not input)
    boolean = root.find(f"{SRX}boolean")
    if boolean is not None:
        return (boolean.text or "").strip() == "true"
    rows: list[Row] = []
    for result in root.iter(f"{SRX}result"):
        row: Row = {}
        for binding in result.findall(f"{SRX}binding"):
            (value,) = list(binding)
            tag = value.tag.removeprefix(SRX)
            text = value.text or ""
            if tag == "uri":
                row[binding.attrib["name"]] = text
            elif tag == "bnode":
                row[binding.attrib["name"]] = "_:" + text
            else:
                lang = value.attrib.get("{http://www.w3.org/XML/1998/namespace}lang")
                row[binding.attrib["name"]] = _literal(text, value.attrib.get("datatype"), lang)
        rows.append(row)
    return rows


def _read_srj(path: Path) -> bool | list[Row]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    if "boolean" in doc:
        return bool(doc["boolean"])
    rows: list[Row] = []
    for binding in doc["results"]["bindings"]:
        row: Row = {}
        for name, value in binding.items():
            kind = value["type"]
            if kind == "uri":
                row[name] = value["value"]
            elif kind == "bnode":
                row[name] = "_:" + value["value"]
            else:
                row[name] = _literal(value["value"], value.get("datatype"), value.get("xml:lang"))
        rows.append(row)
    return rows


def _term(node: rdflib.term.Node) -> Term:
    if isinstance(node, rdflib.Literal):
        datatype = str(node.datatype) if node.datatype else None
        return _literal(str(node), datatype, node.language)
    if isinstance(node, rdflib.BNode):
        return "_:" + str(node)
    return str(node)


def _read_result_graph(path: Path, base: str) -> bool | list[Row]:
    fmt = "xml" if path.suffix.lower() == ".rdf" else "turtle"
    graph = rdflib.Graph().parse(path, format=fmt, publicID=base)
    result_set = next(graph.subjects(rdflib.RDF.type, RS.ResultSet))
    boolean = graph.value(result_set, RS.boolean)
    if boolean is not None:
        return bool(boolean.toPython())
    rows: list[Row] = []
    for solution in graph.objects(result_set, RS.solution):
        row: Row = {}
        for binding in graph.objects(solution, RS.binding):
            name = str(graph.value(binding, RS.variable))
            row[name] = _term(graph.value(binding, RS.value))  # type: ignore[arg-type]
        rows.append(row)
    return rows


# -- comparison ----------------------------------------------------------------------------


def _key(term: Term) -> object:
    """W3C term equality: language tags compare case-insensitively (ours are lower-cased).
    Numbers and booleans of one datatype compare by value: the expected results write
    computed values in no one canonical form (``xsd:float("1.5")`` is ``1.5E0``, of 1
    ``1.0``, of ``"0"`` ``0``)."""
    if isinstance(term, Literal):
        if term.lang:
            return Literal(term.lexical, RDF_LANGSTRING, term.lang.lower())
        kind, value = typed(term)
        if kind in ("num", "bool"):
            return (term.datatype, kind, value)
    return term


def _is_blank(term: Term) -> bool:
    return isinstance(term, str) and term.startswith("_:")


def _shape(row: Row) -> tuple[tuple[str, object], ...]:
    """A row with its blank nodes anonymised (rows of different shapes never match)."""
    return tuple(sorted((k, "_:" if _is_blank(v) else _key(v)) for k, v in row.items()))


def same_solutions(ours: list[Row], theirs: list[Row], *, lax: bool = False) -> bool:
    """Equal solution multisets (sets when ``lax``), blank nodes up to a bijection."""
    if lax:
        ours, theirs = _distinct(ours), _distinct(theirs)
    if Counter(map(_shape, ours)) != Counter(map(_shape, theirs)):
        return False
    if not any(_is_blank(v) for row in theirs for v in row.values()):
        return Counter(_canonical(r) for r in ours) == Counter(_canonical(r) for r in theirs)
    return _bijection(ours, theirs, {}, {})


def _canonical(row: Row) -> tuple[tuple[str, object], ...]:
    return tuple(sorted((k, _key(v)) for k, v in row.items()))


def _distinct(rows: list[Row]) -> list[Row]:
    seen: dict[tuple[tuple[str, object], ...], Row] = {}
    for row in rows:
        seen.setdefault(_canonical(row), row)
    return list(seen.values())


def _bijection(
    ours: list[Row], theirs: list[Row], fwd: dict[Term, Term], back: dict[Term, Term]
) -> bool:
    """Backtracking search for a blank-node renaming mapping ``ours`` onto ``theirs``."""
    if not ours:
        return not theirs
    row, rest = ours[0], ours[1:]
    for i, candidate in enumerate(theirs):
        if _shape(candidate) != _shape(row):
            continue
        new_fwd, new_back = dict(fwd), dict(back)
        if _extend(row, candidate, new_fwd, new_back) and _bijection(
            rest, theirs[:i] + theirs[i + 1 :], new_fwd, new_back
        ):
            return True
    return False


def _extend(row: Row, candidate: Row, fwd: dict[Term, Term], back: dict[Term, Term]) -> bool:
    for name, ours in row.items():
        theirs = candidate[name]
        if not _is_blank(ours):
            continue
        if fwd.setdefault(ours, theirs) != theirs or back.setdefault(theirs, ours) != ours:
            return False
    return True
