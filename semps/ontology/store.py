"""OntologyStore: the ontology as an owlready2 World persisted in a SQLite file.

Loading, editing and exporting go through owlready2's quadstore; the rule tables are
compiled from its triples by the same compiler that reads files
(:func:`semps.ontology.compile.compile_axioms`). :meth:`OntologyStore.expansion` is cached
and rebuilt after an edit, so an edit takes effect for the next event, and subscriptions
are never re-registered for it.

owlready2 is not thread-safe: every public method takes the store's lock.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import owlready2
import rdflib

from semps import terms
from semps._types import Term, Triple
from semps.errors import OntologyError
from semps.ontology.compile import (
    EQ_CLASS,
    EQ_PROPERTY,
    INVERSE,
    SUB_CLASS,
    SUB_PROPERTY,
    SYMMETRIC,
    TRANSITIVE,
    compile_axioms,
)
from semps.ontology.expansion import Expansion
from semps.ontology.load import ontology_triples, refuse_facts
from semps.ontology.split import split

AXIOMS: dict[str, str] = {
    "subClassOf": SUB_CLASS,
    "subPropertyOf": SUB_PROPERTY,
    "equivalentClass": EQ_CLASS,
    "equivalentProperty": EQ_PROPERTY,
    "inverseOf": INVERSE,
}
CHARACTERISTICS = {"symmetric": SYMMETRIC, "transitive": TRANSITIVE}
PROPERTY_KINDS = {
    "object": terms.OWL + "ObjectProperty",
    "datatype": terms.OWL + "DatatypeProperty",
}
OWL_CLASS = terms.OWL + "Class"
ONTOLOGY_IRI = "urn:semps:ontology"


def _node(term: Term) -> rdflib.term.Node:
    if isinstance(term, terms.Literal):
        plain = term.lang or term.datatype == terms.XSD_STRING
        return rdflib.Literal(
            term.lexical, lang=term.lang, datatype=None if plain else rdflib.URIRef(term.datatype)
        )
    if term.startswith("_:"):
        return rdflib.BNode(term[2:])
    return rdflib.URIRef(term)


def _term(node: Any) -> Term:
    if isinstance(node, rdflib.BNode):
        return "_:o." + str(node)
    if isinstance(node, rdflib.Literal):
        datatype = str(node.datatype) if node.datatype else None
        return terms.Literal(str(node), datatype, node.language)
    return str(node)


def _check_iri(iri: str) -> str:
    if not isinstance(iri, str) or ":" not in iri or any(c in iri for c in ' <>"{}|\\^`'):
        msg = f"not an absolute IRI: {iri!r}"
        raise OntologyError(msg)
    return iri


class OntologyStore:
    """Load, edit, export and persist an ontology; derive its :class:`Expansion`.

    Args:
        path: the SQLite file (created if missing); ``None`` keeps the ontology in memory.

    Example:
        >>> store = OntologyStore()
        >>> store.add_axiom("subClassOf", "http://ex/Grad", "http://ex/Student")
        >>> sorted(store.expansion().expand_class("http://ex/Grad"))
        ['http://ex/Grad', 'http://ex/Student']
        >>> store.close()
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self._lock = threading.RLock()
        self.path = Path(path) if path is not None else None
        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._world = owlready2.World(filename=str(self.path), exclusive=False)
            else:
                self._world = owlready2.World()
            self._onto = self._world.get_ontology(ONTOLOGY_IRI)
        except Exception as exc:  # owlready2 raises bare Exceptions and sqlite3 errors
            msg = f"cannot open ontology store {self.path}: {exc}"
            raise OntologyError(msg) from exc
        self._graph = self._world.as_rdflib_graph()
        self._version = self._stored_version()
        self._cached: Expansion | None = None

    def _stored_version(self) -> int:
        """The version the file last saved (so it keeps increasing across restarts)."""
        if self.path is None:
            return 0
        try:
            self._world.graph.execute(
                "CREATE TABLE IF NOT EXISTS semps_meta "
                "(name TEXT PRIMARY KEY, value INTEGER NOT NULL)"
            )
            row = self._world.graph.execute(
                "SELECT value FROM semps_meta WHERE name = 'version'"
            ).fetchone()
        except sqlite3.Error as exc:
            msg = f"cannot read the ontology version from {self.path}: {exc}"
            raise OntologyError(msg) from exc
        return int(row[0]) if row else 0

    # -- reading ---------------------------------------------------------------------------

    def triples(self) -> Iterator[Triple]:
        """Every triple of the ontology."""
        with self._lock:
            rows = list(self._graph.triples((None, None, None)))
        for s, p, o in rows:
            subject = _term(s)
            assert isinstance(subject, str)
            yield (subject, str(p), _term(o))

    def expansion(self) -> Expansion:
        """The rule tables of the current ontology (cached until the next edit)."""
        with self._lock:
            if self._cached is None:
                self._cached = compile_axioms(self.triples(), version=self._version)
            return self._cached

    @property
    def version(self) -> int:
        """Increases with every edit made through this store."""
        return self._version

    def classes(self) -> list[str]:
        """The named classes declared in the ontology, sorted."""
        return self._typed(OWL_CLASS)

    def properties(self) -> list[str]:
        """The named object and datatype properties, sorted."""
        return sorted(
            {*self._typed(PROPERTY_KINDS["object"]), *self._typed(PROPERTY_KINDS["datatype"])}
        )

    def _typed(self, cls: str) -> list[str]:
        return sorted(
            s
            for s, p, o in self.triples()
            if p == terms.RDF_TYPE and o == cls and not s.startswith("_:")
        )

    def export(self, format: Literal["rdfxml", "turtle", "ntriples"] = "rdfxml") -> bytes:
        """The ontology serialised as RDF/XML, Turtle or N-Triples."""
        graph = rdflib.Graph()
        for s, p, o in self.triples():
            graph.add((_node(s), _node(p), _node(o)))
        names = {"rdfxml": "xml", "turtle": "turtle", "ntriples": "nt"}
        if format not in names:
            msg = f"unknown export format {format!r} (use rdfxml, turtle or ntriples)"
            raise OntologyError(msg)
        return graph.serialize(format=names[format], encoding="utf-8")

    # -- editing ---------------------------------------------------------------------------

    def load(
        self, source: bytes | str | Path, *, format: str | None = None, replace: bool = False
    ) -> None:
        """Merge an ontology document into the store, or ``replace`` everything with it.

        ``format`` is a media type; by default it comes from the file suffix (RDF/XML for
        bytes). Nothing changes when the document cannot be read, or when it describes
        individuals: those belong in the knowledge graph (:func:`refuse_facts` says so).
        """
        triples = ontology_triples(source, media_type=format)
        refuse_facts(split(triples), "the ontology document")
        with self._lock:
            if replace:
                self._clear()
            self._add_all(triples)
            self._edited()

    def add_class(self, iri: str, parents: tuple[str, ...] | list[str] = ()) -> None:
        """Declare a class, optionally under ``parents``."""
        self._edit([(iri, terms.RDF_TYPE, OWL_CLASS)] + [(iri, SUB_CLASS, p) for p in parents])

    def add_property(
        self,
        iri: str,
        kind: Literal["object", "datatype"] = "object",
        parents: tuple[str, ...] | list[str] = (),
    ) -> None:
        """Declare an object or datatype property, optionally under ``parents``."""
        if kind not in PROPERTY_KINDS:
            msg = f"unknown property kind {kind!r} (use object or datatype)"
            raise OntologyError(msg)
        declared = [(iri, terms.RDF_TYPE, PROPERTY_KINDS[kind])]
        self._edit(declared + [(iri, SUB_PROPERTY, p) for p in parents])

    def remove_class(self, iri: str) -> None:
        """Remove a class and every axiom that mentions it."""
        self._remove_entity(iri)

    def add_axiom(self, kind: str, subject: str, obj: str) -> None:
        """Add ``subject kind obj`` (subClassOf, subPropertyOf, equivalentClass, ...)."""
        self._edit([(subject, self._axiom(kind), obj)])

    def remove_axiom(self, kind: str, subject: str, obj: str) -> None:
        """Remove ``subject kind obj``; :class:`OntologyError` if it is not there."""
        triple = (subject, self._axiom(kind), obj)
        with self._lock:
            node = tuple(_node(_check_iri(t)) for t in triple)
            if node not in self._graph:
                msg = f"no such axiom: {subject} {kind} {obj}"
                raise OntologyError(msg)
            self._graph.get_context(self._onto).remove(node)
            self._edited()

    def set_characteristic(
        self, prop: str, kind: Literal["symmetric", "transitive"], enabled: bool = True
    ) -> None:
        """Make ``prop`` symmetric or transitive (or stop it being so)."""
        if kind not in CHARACTERISTICS:
            msg = f"unknown property characteristic {kind!r} (use symmetric or transitive)"
            raise OntologyError(msg)
        triple = (prop, terms.RDF_TYPE, CHARACTERISTICS[kind])
        if enabled:
            self._edit([triple])
            return
        with self._lock:
            self._graph.get_context(self._onto).remove(tuple(_node(_check_iri(t)) for t in triple))
            self._edited()

    def close(self) -> None:
        """Write everything to disk and release the SQLite file."""
        with self._lock:
            if self.path is not None:
                self._world.save()
            self._world.close()

    # -- internals -------------------------------------------------------------------------

    @staticmethod
    def _axiom(kind: str) -> str:
        try:
            return AXIOMS[kind]
        except KeyError:
            msg = f"unknown axiom kind {kind!r} (use {', '.join(AXIOMS)})"
            raise OntologyError(msg) from None

    def _edit(self, triples: list[tuple[str, str, str]]) -> None:
        for triple in triples:
            for iri in triple:
                _check_iri(iri)
        with self._lock:
            self._add_all(triples)
            self._edited()

    def _add_all(self, triples: Any) -> None:
        context = self._graph.get_context(self._onto)
        for s, p, o in triples:
            context.add((_node(s), _node(p), _node(o)))

    def _remove_entity(self, iri: str) -> None:
        node = rdflib.URIRef(_check_iri(iri))
        with self._lock:
            doomed = [
                *self._graph.triples((node, None, None)),
                *self._graph.triples((None, None, node)),
            ]
            if not doomed:
                msg = f"{iri} is not in the ontology"
                raise OntologyError(msg)
            context = self._graph.get_context(self._onto)
            for triple in doomed:
                context.remove(triple)
            self._edited()

    def _clear(self) -> None:
        context = self._graph.get_context(self._onto)
        for triple in list(self._graph.triples((None, None, None))):
            context.remove(triple)

    def _edited(self) -> None:
        self._version += 1
        self._cached = None
        if self.path is not None:
            self._world.graph.execute(
                "INSERT INTO semps_meta VALUES ('version', ?) "
                "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                (self._version,),
            )
            self._world.save()
