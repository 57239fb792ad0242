"""The ontology's SQLite file, through owlready2: read its triples, and apply a change with
the new version in one transaction.

owlready2 keeps a World in a SQLite file (its quadstore); semps writes through the World's
rdflib view into one ontology of it (:data:`ONTOLOGY_IRI`), and reads that ontology's triples
only (not the declarations owlready2 makes of its own ontologies, ``<http://anonymous> a
owl:Ontology`` and ``<urn:semps:ontology> a owl:Ontology``). The version sits beside them in
``semps_meta``, created and committed when the file is opened, so a failed write never takes
it with it; a change and its version commit together or not at all.

owlready2 is not thread-safe: the caller serialises every call.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import owlready2
import rdflib

from semps import terms
from semps._types import Term, Triple
from semps.errors import OntologyError
from semps.sqlite_errors import storage_error

__all__ = ["ONTOLOGY_IRI", "Quadstore", "normal"]

ONTOLOGY_IRI = "urn:semps:ontology"
_OWN = {ONTOLOGY_IRI, "http://anonymous", "http://anonymous/"}
_ONTOLOGY_CLASS = terms.OWL + "Ontology"


def to_node(term: Term) -> rdflib.term.Node:
    """A semps term as rdflib's (``_:o.<n>``, a blank node of the quadstore, as its number
    there, so it names the same node)."""
    if isinstance(term, terms.Literal):
        plain = term.lang or term.datatype == terms.XSD_STRING
        return rdflib.Literal(
            term.lexical, lang=term.lang, datatype=None if plain else rdflib.URIRef(term.datatype)
        )
    if term.startswith("_:o.") and term[4:].isdigit():
        return rdflib.BNode(term[4:])
    if term.startswith("_:"):
        return rdflib.BNode(term[2:])
    return rdflib.URIRef(term)


def to_term(node: Any) -> Term:
    """An rdflib term as semps' (blank nodes prefixed ``_:o.``, like a read ontology's: the
    quadstore's are ``_:o.<n>``)."""
    if isinstance(node, rdflib.BNode):
        return "_:o." + str(node)
    if isinstance(node, rdflib.Literal):
        datatype = str(node.datatype) if node.datatype else None
        return terms.Literal(str(node), datatype, node.language)
    return str(node)


def normal(term: Term) -> Term:
    """``term`` as the quadstore gives it back: a typed literal with a number value in its
    canonical form (``"01"^^xsd:integer`` is kept as 1, read back as ``"1"``).

    Example:
        >>> normal(terms.Literal("01", terms.XSD + "integer")).lexical
        '1'
    """
    if not isinstance(term, terms.Literal) or term.lang or term.datatype == terms.XSD_STRING:
        return term
    node = to_node(term)
    value = node.toPython() if isinstance(node, rdflib.Literal) else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return to_term(rdflib.Literal(value, datatype=rdflib.URIRef(term.datatype)))
    return term


class Quadstore:
    """One owlready2 World on ``path`` (``None``: in memory).

    Raises:
        OntologyError: the file cannot be opened, or is not an owlready2 quadstore.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        try:
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._world = owlready2.World(filename=str(path), exclusive=False)
            else:
                self._world = owlready2.World()
            self._onto = self._world.get_ontology(ONTOLOGY_IRI)
            self._graph = self._world.as_rdflib_graph()
            self._context = self._graph.get_context(self._onto)
            self._world.graph.execute(
                "CREATE TABLE IF NOT EXISTS semps_meta "
                "(name TEXT PRIMARY KEY, value INTEGER NOT NULL)"
            )
            self._world.save()  # the table (and owlready2's own rows) before any edit
        except Exception as exc:  # owlready2 raises bare Exceptions and sqlite3 errors
            msg = f"cannot open ontology store {path}: {exc}"
            raise OntologyError(msg) from exc

    def version(self) -> int:
        """The version the file last committed (0 for a new one)."""
        try:
            row = self._world.graph.execute(
                "SELECT value FROM semps_meta WHERE name = 'version'"
            ).fetchone()
        except sqlite3.Error as exc:
            msg = f"cannot read the ontology version from {self.path}: {exc}"
            raise OntologyError(msg) from exc
        return int(row[0]) if row else 0

    def triples(self) -> list[Triple]:
        """Every triple of the ontology (none of owlready2's own declarations)."""
        out: list[Triple] = []
        for s, p, o in self._context.triples((None, None, None)):
            subject, obj = to_term(s), to_term(o)
            assert isinstance(subject, str)
            if subject in _OWN and obj == _ONTOLOGY_CLASS:
                continue
            out.append((subject, str(p), obj))
        return out

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Everything done inside commits together at the end, or not at all.

        Raises:
            StorageFull: the disk is full; nothing changed.
            StoreUnavailable: another failure to write; nothing changed.
        """
        db = self._world.graph.db
        try:
            yield
            self._world.save()
        except (sqlite3.Error, OSError) as exc:
            self._rollback(db)
            raise storage_error(exc, "cannot save the ontology") from exc
        except BaseException:
            self._rollback(db)
            raise

    def name_blank_nodes(self, triples: Sequence[Triple]) -> list[Triple]:
        """``triples`` with each blank node renamed to a new blank node of the quadstore
        (``_:o.<n>``: the name it is read back with). Inside a :meth:`transaction`."""
        names: dict[str, str] = {}

        def name(term: Term) -> Term:
            if type(term) is not str or not term.startswith("_:"):
                return term
            found = names.get(term)
            if found is None:
                found = names[term] = f"_:o.{-self._world.graph.new_blank_node()}"
            return found

        return [(name(s), p, name(o)) for s, p, o in triples]  # type: ignore[misc]

    def write(
        self, add: Iterable[Triple], remove: Iterable[Triple], *, clear: bool, version: int
    ) -> None:
        """Remove ``remove`` (everything with ``clear``), add ``add`` and set ``version``.
        Inside a :meth:`transaction`; blank nodes named by :meth:`name_blank_nodes` or read."""
        if clear:
            for triple in list(self._context.triples((None, None, None))):
                self._context.remove(triple)
        for triple in remove:
            self._context.remove(tuple(to_node(t) for t in triple))
        for s, p, o in add:
            self._context.add((to_node(s), to_node(p), to_node(o)))
        self._world.graph.execute(
            "INSERT INTO semps_meta VALUES ('version', ?) "
            "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            (version,),
        )

    def _rollback(self, db: sqlite3.Connection) -> None:
        try:
            db.rollback()
        except sqlite3.Error:
            pass

    def close(self) -> None:
        """Commit and release the file."""
        try:
            if self.path is not None:
                self._world.save()
        finally:
            self._world.close()
