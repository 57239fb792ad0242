"""OntologyStore: the ontology as an owlready2 World persisted in a SQLite file, read from an
immutable snapshot.

Loading, editing and exporting go through owlready2's quadstore
(:mod:`semps.ontology.quadstore`); the rule tables are compiled from the triples by the
same compiler that reads files (:func:`semps.ontology.compile.compile_axioms`).

Readers never wait: :meth:`OntologyStore.snapshot` (the triples, their version and their
compiled :class:`Expansion`, immutable) is replaced whole after each edit, so the event path,
``GET /ontology`` and the console read whatever snapshot is current. An edit, one at a time,
compiles the ontology it would make under the limits' budget
(:mod:`semps.ontology.budget`) *before* touching the file, then writes its change and the new
version in one transaction, and only then publishes the new snapshot: a refused, cut-off or
failed edit (a full disk) leaves the file, the version and the snapshot as they were. An
ontology on file that breaks the limits is refused when the store opens, with the command
that repairs the data directory.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pyoxigraph as ox

from semps import terms
from semps._types import Term, Triple
from semps.errors import DocumentTooLarge, OntologyError, OntologyLimitExceeded
from semps.limits import DEFAULT_LIMITS, Limits
from semps.ontology.budget import OntologyBudget
from semps.ontology.compile import (
    EQ_CLASS,
    EQ_PROPERTY,
    INVERSE,
    SUB_CLASS,
    SUB_PROPERTY,
    SYMMETRIC,
    TRANSITIVE,
    Kept,
    compile_axioms,
)
from semps.ontology.expansion import Expansion
from semps.ontology.load import ontology_triples, refuse_facts
from semps.ontology.quadstore import ONTOLOGY_IRI, Quadstore, normal
from semps.ontology.split import split

__all__ = ["AXIOMS", "ONTOLOGY_IRI", "OntologySnapshot", "OntologyStore"]

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
_FORMATS = {
    "rdfxml": ox.RdfFormat.RDF_XML,
    "turtle": ox.RdfFormat.TURTLE,
    "ntriples": ox.RdfFormat.N_TRIPLES,
}
_PREFIXES = {"rdf": terms.RDF, "rdfs": terms.RDFS, "owl": terms.OWL, "xsd": terms.XSD}


def _check_iri(iri: str) -> str:
    if not isinstance(iri, str) or ":" not in iri or any(c in iri for c in ' <>"{}|\\^`'):
        msg = f"not an absolute IRI: {iri!r}"
        raise OntologyError(msg)
    return iri


def _exported(term: Term) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    """A term as an exported document writes it (a blank node's label a valid NCName)."""
    if isinstance(term, terms.Literal):
        if term.lang:
            return ox.Literal(term.lexical, language=term.lang)
        return ox.Literal(term.lexical, datatype=ox.NamedNode(term.datatype))
    if term.startswith("_:"):
        return ox.BlankNode("b" + term[2:].replace(".", "_"))
    return ox.NamedNode(term)


@dataclass(frozen=True, slots=True, eq=False)
class OntologySnapshot:
    """The ontology at one version: its triples and their compiled rule tables."""

    version: int
    triples: tuple[Triple, ...]
    expansion: Expansion


@dataclass(frozen=True, slots=True)
class _Change:
    """What an edit does: triples to add, triples to remove, or everything replaced."""

    add: Sequence[Triple] = ()
    remove: frozenset[Triple] = frozenset()
    clear: bool = False


class OntologyStore:
    """Load, edit, export and persist an ontology; derive its :class:`Expansion`.

    Args:
        path: the SQLite file (created if missing); ``None`` keeps the ontology in memory.
        limits: the ontology's budget (``max_ontology_*``, ``max_hierarchy_depth``,
            ``ontology_timeout``) and the document screen's depth.

    Raises:
        OntologyLimitExceeded: the ontology on file breaks a limit (the message says how to
            repair the data directory).

    Example:
        >>> store = OntologyStore()
        >>> store.add_axiom("subClassOf", "http://ex/Grad", "http://ex/Student")
        >>> sorted(store.expansion().expand_class("http://ex/Grad"))
        ['http://ex/Grad', 'http://ex/Student']
        >>> store.close()
    """

    def __init__(self, path: str | Path | None = None, *, limits: Limits = DEFAULT_LIMITS) -> None:
        self._lock = threading.Lock()  # edits, one at a time; readers never take it
        self.path = Path(path) if path is not None else None
        self.limits = limits
        self.budget = OntologyBudget.of(limits)
        self._quads = Quadstore(self.path)
        triples = tuple(self._quads.triples())
        version = self._quads.version()
        # What is stored passed the clock when it was edited: at start-up only the limits of
        # what the ontology holds apply (a loaded machine must not refuse to start).
        structural = dataclasses.replace(self.budget, timeout=0.0)
        self._kept = Kept()  # the class closure, updated edge by edge by each edit
        try:
            expansion = compile_axioms(triples, version=version, budget=structural, kept=self._kept)
        except OntologyLimitExceeded as exc:
            self._quads.close()
            raise OntologyLimitExceeded(self._refusal(exc)) from exc
        self._snapshot = OntologySnapshot(version, triples, expansion)
        self._exports: dict[str, tuple[int, bytes]] = {}
        self._export_lock = threading.Lock()
        self._checks = threading.local()

    def _refusal(self, exc: OntologyLimitExceeded) -> str:
        where = self.path.parent if self.path is not None else "DIR"
        return (
            f"the ontology stored in {self.path} breaks a limit: {exc}. Start with that limit "
            f"raised, or empty the ontology with `semps ontology reset --data-dir {where}` "
            "(the old file is kept beside it)"
        )

    # -- reading (never waits for an edit) -------------------------------------------------

    def snapshot(self) -> OntologySnapshot:
        """The current version, its triples and its rule tables."""
        return self._snapshot

    def triples(self) -> Iterator[Triple]:
        """Every triple of the ontology."""
        return iter(self._snapshot.triples)

    def expansion(self) -> Expansion:
        """The rule tables of the current ontology."""
        return self._snapshot.expansion

    @property
    def version(self) -> int:
        """Increases with every edit, across restarts."""
        return self._snapshot.version

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
            for s, p, o in self._snapshot.triples
            if p == terms.RDF_TYPE and o == cls and not s.startswith("_:")
        )

    def export(self, format: Literal["rdfxml", "turtle", "ntriples"] = "rdfxml") -> bytes:
        """The ontology serialised as RDF/XML, Turtle or N-Triples (made once per version
        and format by pyoxigraph's serialiser: concurrent readers share the work)."""
        if format not in _FORMATS:
            msg = f"unknown export format {format!r} (use rdfxml, turtle or ntriples)"
            raise OntologyError(msg)
        snap = self._snapshot
        with self._export_lock:
            cached = self._exports.get(format)
            if cached is not None and cached[0] == snap.version:
                return cached[1]
            made = [
                ox.Triple(_exported(s), ox.NamedNode(p), _exported(o))  # type: ignore[arg-type]
                for s, p, o in snap.triples
            ]
            prefixes = None if format == "ntriples" else _PREFIXES
            body = ox.serialize(made, format=_FORMATS[format], prefixes=prefixes) or b""
            self._exports[format] = (snap.version, body)
            return body

    # -- editing ---------------------------------------------------------------------------

    def load(
        self, source: bytes | str | Path, *, format: str | None = None, replace: bool = False
    ) -> None:
        """Merge an ontology document into the store, or ``replace`` everything with it.

        ``format`` is a media type; by default it comes from the file suffix (RDF/XML for
        bytes). Nothing changes when the document cannot be read, when it describes
        individuals (those belong in the knowledge graph: :func:`refuse_facts` says so), or
        when the ontology it would make breaks a limit.

        Raises:
            DocumentTooLarge: the document is over ``max_ontology_bytes``.
            OntologyError: it does not parse (or is refused by the document screen), or it
                describes individuals.
            OntologyLimitExceeded: the ontology it would make breaks a limit.
        """
        limit = self.limits.max_ontology_bytes
        if isinstance(source, bytes) and len(source) > limit:
            msg = (
                f"the ontology document is {len(source)} bytes, over the limit of {limit} "
                "bytes (max_ontology_bytes)"
            )
            raise DocumentTooLarge(msg)
        triples = ontology_triples(source, media_type=format, limits=self.limits)
        refuse_facts(split(triples), "the ontology document")
        self.budget.check_triples(len(triples))
        self._change(lambda snap: _Change(add=triples, clear=replace))

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
        """Remove a class (or property) and every axiom that mentions it."""
        _check_iri(iri)

        def change(snap: OntologySnapshot) -> _Change:
            doomed = frozenset(t for t in snap.triples if t[0] == iri or t[2] == iri)
            if not doomed:
                msg = f"{iri} is not in the ontology"
                raise OntologyError(msg)
            return _Change(remove=doomed)

        self._change(change)

    def add_axiom(self, kind: str, subject: str, obj: str) -> None:
        """Add ``subject kind obj`` (subClassOf, subPropertyOf, equivalentClass, ...)."""
        self._edit([(subject, self._axiom(kind), obj)])

    def remove_axiom(self, kind: str, subject: str, obj: str) -> None:
        """Remove ``subject kind obj``; :class:`OntologyError` if it is not there."""
        triple = (_check_iri(subject), self._axiom(kind), _check_iri(obj))

        def change(snap: OntologySnapshot) -> _Change:
            if triple not in snap.triples:
                msg = f"no such axiom: {subject} {kind} {obj}"
                raise OntologyError(msg)
            return _Change(remove=frozenset({triple}))

        self._change(change)

    def set_characteristic(
        self, prop: str, kind: Literal["symmetric", "transitive"], enabled: bool = True
    ) -> None:
        """Make ``prop`` symmetric or transitive (or stop it being so)."""
        if kind not in CHARACTERISTICS:
            msg = f"unknown property characteristic {kind!r} (use symmetric or transitive)"
            raise OntologyError(msg)
        triple = (_check_iri(prop), terms.RDF_TYPE, CHARACTERISTICS[kind])
        if enabled:
            self._edit([triple])
        else:
            self._change(lambda snap: _Change(remove=frozenset({triple})))

    @contextmanager
    def checking(self, check: Callable[[Expansion], object]) -> Iterator[None]:
        """Within the block, every edit made on this thread calls ``check`` with the
        ontology it would make, once compiled and before anything is written: when it
        raises, the edit is refused whole (the knowledge graph's re-closing is checked
        this way against the graph's limits)."""
        self._checks.check = check
        try:
            yield
        finally:
            self._checks.check = None

    def close(self) -> None:
        """Write everything to disk and release the SQLite file."""
        with self._lock:
            self._quads.close()

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
        self._change(lambda snap: _Change(add=triples))

    def _change(self, plan: Callable[[OntologySnapshot], _Change]) -> None:
        """Apply one edit: plan it on the current snapshot, compile the ontology it makes
        within the budget, check it (:meth:`checking`), write it with its version, then
        publish it (in that order, so any refusal or failure leaves everything as it
        was)."""
        with self._lock:
            old = self._snapshot
            change = plan(old)
            kept: list[Triple] = [] if change.clear else list(old.triples)
            if change.remove:
                kept = [t for t in kept if t not in change.remove]
            present = set(kept)
            added: list[Triple] = []
            for s, p, o in change.add:
                triple: Triple = (s, p, normal(o))
                if triple not in present:
                    present.add(triple)
                    added.append(triple)
            version = old.version + 1
            removed = [] if change.clear else list(change.remove & set(old.triples))
            with self._quads.transaction():
                added = self._quads.name_blank_nodes(added)
                triples = tuple(kept + added)
                expansion = compile_axioms(
                    triples, version=version, budget=self.budget, kept=self._kept
                )
                check = getattr(self._checks, "check", None)
                if check is not None:
                    check(expansion)
                self._quads.write(added, removed, clear=change.clear, version=version)
            self._snapshot = OntologySnapshot(version, triples, expansion)
