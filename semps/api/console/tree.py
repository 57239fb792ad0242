"""The ontology as the console draws it: class and property trees and the editable axioms.

Built from the ontology's triples (the same ones ``GET /ontology`` exports), so the console
needs no RDF parser of its own. Blank nodes (restrictions, anonymous classes) are left out:
the console edits named axioms only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from semps import terms
from semps._types import Triple
from semps.ontology.compile import SYMMETRIC, TRANSITIVE
from semps.ontology.store import AXIOMS, OWL_CLASS, PROPERTY_KINDS

__all__ = ["ontology_tree"]

LABEL = terms.RDFS + "label"
_AXIOM_KIND = {iri: kind for kind, iri in AXIOMS.items()}
_PROPERTY_KIND = {iri: kind for kind, iri in PROPERTY_KINDS.items()}
_PROPERTY_KIND[terms.RDF + "Property"] = "property"
_CHARACTERISTIC = {SYMMETRIC: "symmetric", TRANSITIVE: "transitive"}
#: Axioms whose two sides are classes (the others relate properties).
_CLASS_AXIOMS = frozenset({"subClassOf", "equivalentClass"})


def _named(term: object) -> bool:
    return isinstance(term, str) and not term.startswith("_:")


class _Collector:
    """Walks the triples once, remembering what each named entity is and its axioms."""

    def __init__(self) -> None:
        self.classes: set[str] = set()
        self.properties: dict[str, set[str]] = defaultdict(set)  # iri -> kinds
        self.flags: dict[str, set[str]] = defaultdict(set)  # iri -> characteristics
        self.labels: dict[str, str] = {}
        self.axioms: set[tuple[str, str, str]] = set()

    def add(self, s: str, p: str, o: object) -> None:
        if s.startswith("_:"):
            return
        if p == LABEL and isinstance(o, terms.Literal):
            self.labels.setdefault(s, o.lexical)
        elif p == terms.RDF_TYPE and o == OWL_CLASS:
            self.classes.add(s)
        elif p == terms.RDF_TYPE and isinstance(o, str) and o in _PROPERTY_KIND:
            self.properties[s].add(_PROPERTY_KIND[o])
        elif p == terms.RDF_TYPE and isinstance(o, str) and o in _CHARACTERISTIC:
            self.flags[s].add(_CHARACTERISTIC[o])
            self.properties.setdefault(s, set())
        elif p in _AXIOM_KIND and _named(o):
            assert isinstance(o, str)
            kind = _AXIOM_KIND[p]
            self.axioms.add((kind, s, o))
            if kind in _CLASS_AXIOMS:
                self.classes.update((s, o))
            else:
                self.properties.setdefault(s, set())
                self.properties.setdefault(o, set())

    def parents(self, kind: str) -> dict[str, list[str]]:
        found: dict[str, set[str]] = defaultdict(set)
        for k, s, o in self.axioms:
            if k == kind and s != o:
                found[s].add(o)
        return {iri: sorted(ps) for iri, ps in found.items()}


def ontology_tree(triples: Iterable[Triple], version: int) -> dict[str, object]:
    """The console's view of an ontology.

    Returns ``{"version", "classes", "properties", "axioms"}``: classes and properties as
    ``{"iri", "label", "parents"}`` (direct named ``subClassOf``/``subPropertyOf`` parents;
    properties also carry ``"kinds"`` and ``"characteristics"``), sorted by IRI, and the
    named axioms as ``{"kind", "subject", "object"}`` in the kinds ``POST /ontology/axioms``
    takes.

    Example:
        >>> tree = ontology_tree(
        ...     [("http://ex/Grad", "http://www.w3.org/2000/01/rdf-schema#subClassOf",
        ...       "http://ex/Student")], version=3)
        >>> [(c["iri"], c["parents"]) for c in tree["classes"]]
        [('http://ex/Grad', ['http://ex/Student']), ('http://ex/Student', [])]
    """
    seen = _Collector()
    for s, p, o in triples:
        seen.add(s, p, o)
    class_parents = seen.parents("subClassOf")
    property_parents = seen.parents("subPropertyOf")
    classes = [
        {"iri": c, "label": seen.labels.get(c), "parents": class_parents.get(c, [])}
        for c in sorted(seen.classes)
    ]
    properties = [
        {
            "iri": p,
            "label": seen.labels.get(p),
            "parents": property_parents.get(p, []),
            "kinds": sorted(seen.properties[p]),
            "characteristics": sorted(seen.flags[p]),
        }
        for p in sorted(seen.properties)
    ]
    axioms = [{"kind": k, "subject": s, "object": o} for k, s, o in sorted(seen.axioms)]
    return {"version": version, "classes": classes, "properties": properties, "axioms": axioms}
