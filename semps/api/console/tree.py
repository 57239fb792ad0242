"""The ontology as the console browses it: each tree a level at a time, searched, and the
named axioms in pages.

Built once per ontology version from the ontology's triples (the ones ``GET /ontology``
exports, read through :meth:`~semps.ontology.store.OntologyStore.triples`), so the console
needs no RDF parser of its own and a request does work in proportion to what it answers (a
search scans the entities' names once). Blank nodes (restrictions, anonymous classes) are
left out: the console edits named axioms only.

An entity with several parents sits under each of them; the roots are the entities without a
named parent, plus one entity of each ``subClassOf`` cycle no root reaches, so every entity
can be reached by expanding from the roots.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

from semps import terms
from semps._types import Triple
from semps.api.console.namespaces import namespace_of, suggest_prefixes
from semps.ontology.compile import SYMMETRIC, TRANSITIVE
from semps.ontology.store import AXIOMS, OWL_CLASS, PROPERTY_KINDS

__all__ = [
    "MAX_DEPTH",
    "Entity",
    "OntologyView",
    "Tree",
    "TreeName",
    "ViewCache",
    "ontology_view",
]

LABEL = terms.RDFS + "label"
_AXIOM_KIND = {iri: kind for kind, iri in AXIOMS.items()}
_PROPERTY_KIND = {iri: kind for kind, iri in PROPERTY_KINDS.items()}
_PROPERTY_KIND[terms.RDF + "Property"] = "property"
_CHARACTERISTIC = {SYMMETRIC: "symmetric", TRANSITIVE: "transitive"}
#: Axioms whose two sides are classes (the others relate properties).
_CLASS_AXIOMS = frozenset({"subClassOf", "equivalentClass"})
#: The longest path from a root a search hit carries (deeper ones are cut at the root side).
MAX_DEPTH = 64
#: Namespaces the summary lists (the most used first).
MAX_NAMESPACES = 64

TreeName = Literal["classes", "properties"]


@dataclass(frozen=True, slots=True)
class Entity:
    """A named class or property: its label, direct named parents, and (properties) kinds
    and characteristics."""

    iri: str
    label: str | None
    parents: tuple[str, ...]
    kinds: tuple[str, ...] = ()
    characteristics: tuple[str, ...] = ()


def _sort_key(iri: str) -> tuple[str, str]:
    """Siblings in the order of their local names, case aside."""
    return iri[len(namespace_of(iri)) :].lower(), iri


class Tree:
    """One tree (classes or properties): each entity's children, the roots, and a
    spanning tree (``via``: the parent a path from the roots comes through)."""

    def __init__(self, entities: dict[str, Entity]) -> None:
        self.entities = entities
        found: dict[str, list[str]] = defaultdict(list)
        for entity in entities.values():
            for parent in entity.parents:
                found[parent].append(entity.iri)
        self.children = {p: sorted(cs, key=_sort_key) for p, cs in found.items()}
        ordered = sorted(entities, key=_sort_key)
        roots = [iri for iri in ordered if not entities[iri].parents]
        self.via: dict[str, str | None] = {}
        self._reach(roots)
        for iri in ordered:  # a cycle no root reaches: one of its entities becomes a root
            if iri not in self.via:
                roots.append(iri)
                self._reach([iri])
        self.roots = roots
        self.haystack = [(f"{e.iri}\n{e.label or ''}".lower(), e.iri) for e in entities.values()]

    def _reach(self, starts: list[str]) -> None:
        queue = deque(starts)
        for start in starts:
            self.via.setdefault(start, None)
        while queue:
            iri = queue.popleft()
            for child in self.children.get(iri, ()):
                if child not in self.via:
                    self.via[child] = iri
                    queue.append(child)

    def level(self, parent: str | None) -> list[str]:
        """The roots (``parent`` ``None``) or ``parent``'s children, in order."""
        return self.roots if parent is None else self.children.get(parent, [])

    def path(self, iri: str) -> list[str]:
        """The ancestors of ``iri`` from a root down to its parent, along the spanning tree
        (at most :data:`MAX_DEPTH` of them)."""
        path: list[str] = []
        step = self.via.get(iri)
        while step is not None and len(path) < MAX_DEPTH:
            path.append(step)
            step = self.via.get(step)
        return path[::-1]

    def item(self, iri: str) -> dict[str, object]:
        """An entity as the console draws it."""
        entity = self.entities[iri]
        item: dict[str, object] = {
            "iri": iri,
            "label": entity.label,
            "children": len(self.children.get(iri, ())),
            "parents": len(entity.parents),
        }
        if entity.kinds or entity.characteristics:
            item["kinds"] = list(entity.kinds)
            item["characteristics"] = list(entity.characteristics)
        return item

    def search(self, text: str) -> Iterator[str]:
        """Every entity whose IRI or label holds ``text`` (case aside): those whose local
        name or label is ``text`` first, then those starting with it, then the others."""
        needle = text.lower()
        hits = [iri for hay, iri in self.haystack if needle in hay]

        def rank(iri: str) -> tuple[int, str, str]:
            local, _ = _sort_key(iri)
            label = (self.entities[iri].label or "").lower()
            if needle in (local, label):
                return 0, local, iri
            if local.startswith(needle) or label.startswith(needle):
                return 1, local, iri
            return 2, local, iri

        return iter(sorted(hits, key=rank))


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
            if o.lang in (None, "", "en") or s not in self.labels:
                self.labels[s] = o.lexical
        elif p == terms.RDF_TYPE and o == OWL_CLASS:
            self.classes.add(s)
        elif p == terms.RDF_TYPE and isinstance(o, str) and o in _PROPERTY_KIND:
            self.properties[s].add(_PROPERTY_KIND[o])
        elif p == terms.RDF_TYPE and isinstance(o, str) and o in _CHARACTERISTIC:
            self.flags[s].add(_CHARACTERISTIC[o])
            self.properties.setdefault(s, set())
        elif p in _AXIOM_KIND and isinstance(o, str) and not o.startswith("_:"):
            kind = _AXIOM_KIND[p]
            self.axioms.add((s, kind, o))
            if kind in _CLASS_AXIOMS:
                self.classes.update((s, o))
            else:
                self.properties.setdefault(s, set())
                self.properties.setdefault(o, set())

    def parents(self, kind: str) -> dict[str, tuple[str, ...]]:
        found: dict[str, set[str]] = defaultdict(set)
        for s, k, o in self.axioms:
            if k == kind and s != o:
                found[s].add(o)
        return {iri: tuple(sorted(ps)) for iri, ps in found.items()}

    def trees(self) -> tuple[Tree, Tree]:
        class_parents = self.parents("subClassOf")
        property_parents = self.parents("subPropertyOf")
        classes = {c: Entity(c, self.labels.get(c), class_parents.get(c, ())) for c in self.classes}
        properties = {
            p: Entity(
                p,
                self.labels.get(p),
                property_parents.get(p, ()),
                tuple(sorted(kinds)),
                tuple(sorted(self.flags[p])),
            )
            for p, kinds in self.properties.items()
        }
        return Tree(classes), Tree(properties)


@dataclass(frozen=True)
class OntologyView:
    """One version of the ontology as the console browses it."""

    version: int
    classes: Tree
    properties: Tree
    #: The named axioms as (subject, kind, object), sorted.
    axioms: tuple[tuple[str, str, str], ...]
    #: The namespaces of the named entities, the most used first, as (namespace, count).
    namespaces: tuple[tuple[str, int], ...]

    def tree(self, name: TreeName) -> Tree:
        return self.classes if name == "classes" else self.properties

    def summary(self) -> dict[str, object]:
        """The version, the sizes, and the namespaces with a prefix suggested for each."""
        names = [ns for ns, _ in self.namespaces]
        prefixes = suggest_prefixes(names)
        return {
            "version": self.version,
            "classes": len(self.classes.entities),
            "properties": len(self.properties.entities),
            "axioms": len(self.axioms),
            "namespaces": [
                {"namespace": ns, "prefix": prefixes[ns], "entities": n}
                for ns, n in self.namespaces
            ],
        }

    def level(
        self, name: TreeName, parent: str | None, offset: int, limit: int, focus: str | None = None
    ) -> dict[str, object]:
        """One page of a level (the roots, or ``parent``'s children); with ``focus``, the
        page that holds it."""
        tree = self.tree(name)
        level = tree.level(parent)
        if focus is not None and focus in level:  # a list scan: bounded by the level
            offset = level.index(focus) // limit * limit
        items = [tree.item(iri) for iri in level[offset : offset + limit]]
        return {
            "version": self.version,
            "parent": parent,
            "offset": offset,
            "total": len(level),
            "items": items,
        }

    def search(self, name: TreeName, text: str, limit: int) -> dict[str, object]:
        """The first ``limit`` entities of a tree whose IRI or label holds ``text``, each
        with its path from a root, and how many there are."""
        tree = self.tree(name)
        hits = list(tree.search(text))
        items = [{**tree.item(iri), "path": tree.path(iri)} for iri in hits[:limit]]
        return {"version": self.version, "query": text, "total": len(hits), "items": items}

    def axiom_page(self, text: str, offset: int, limit: int) -> dict[str, object]:
        """One page of the named axioms, those whose subject, kind or object holds
        ``text`` (case aside; all when it is empty)."""
        needle = text.lower()
        chosen = (
            [a for a in self.axioms if needle in "\n".join(a).lower()] if needle else self.axioms
        )
        items = [
            {"subject": s, "kind": k, "object": o} for s, k, o in chosen[offset : offset + limit]
        ]
        return {
            "version": self.version,
            "query": text,
            "offset": offset,
            "total": len(chosen),
            "items": items,
        }


def ontology_view(triples: Iterable[Triple], version: int) -> OntologyView:
    """The console's view of an ontology's triples.

    Example:
        >>> view = ontology_view(
        ...     [("http://ex/Grad", "http://www.w3.org/2000/01/rdf-schema#subClassOf",
        ...       "http://ex/Student")], version=3)
        >>> [item["iri"] for item in view.level("classes", None, 0, 10)["items"]]
        ['http://ex/Student']
        >>> view.search("classes", "grad", 10)["items"][0]["path"]
        ['http://ex/Student']
    """
    seen = _Collector()
    for s, p, o in triples:
        seen.add(s, p, o)
    classes, properties = seen.trees()
    used = Counter(namespace_of(iri) for iri in [*classes.entities, *properties.entities])
    return OntologyView(
        version=version,
        classes=classes,
        properties=properties,
        axioms=tuple(sorted(seen.axioms)),
        namespaces=tuple(used.most_common(MAX_NAMESPACES)),
    )


class _Snapshot(Protocol):
    """One version of an ontology: what the cache reads of it."""

    @property
    def version(self) -> int: ...

    @property
    def triples(self) -> tuple[Triple, ...]: ...


class _Ontology(Protocol):
    """What the cache reads of an ontology store: its current snapshot, never its edit lock."""

    def snapshot(self) -> _Snapshot: ...


class ViewCache:
    """The view of a store's current version, built on first use after each edit (one
    build at a time; readers of the cached version never wait, and a build reads one
    immutable snapshot, so an edit made meanwhile neither blocks it nor mixes versions)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._view: OntologyView | None = None

    def get(self, store: _Ontology) -> OntologyView:
        snap = store.snapshot()
        view = self._view
        if view is not None and view.version == snap.version:
            return view
        with self._lock:
            view = self._view
            if view is not None and view.version >= snap.version:
                return view  # built meanwhile, of this version or a later one
            view = ontology_view(snap.triples, snap.version)
            self._view = view
            return view
