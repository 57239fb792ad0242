"""The knowledge graph as the SPARQL evaluator reads it (:class:`~semps.ingest.sparql.
evaluate.Pairs`): each property's ``(subject, object)`` pairs, looked up by one end.

:class:`GraphPairs` reads a :class:`~semps.graph.view.GraphView`'s closure, or its asserted
triples only (what a SPARQL Update's WHERE clause sees), with small overlays of triples
added and removed (an update's earlier operations, an event's new triples). Lookups by a
bound end cost one search in the predicate's arrays; a property's full pair list (both ends
unbound) is a scan, kept while the object lives.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from semps._types import Term, Triple
from semps.graph.view import GraphView

Pair = tuple[str, Term]
#: Lookups one view's pairs keep at most.
MEMO = 1 << 20


class _Overlay:
    """Term triples added and removed, indexed by property and end."""

    def __init__(self, plus: Iterable[Triple], minus: Iterable[Triple]) -> None:
        self.minus = set(minus)
        self.by_s: dict[tuple[str, Term], list[Pair]] = {}
        self.by_o: dict[tuple[str, Term], list[Pair]] = {}
        self.by_p: dict[str, list[Pair]] = {}
        for s, p, o in dict.fromkeys(plus):
            pair = (s, o)
            self.by_s.setdefault((p, s), []).append(pair)
            self.by_o.setdefault((p, o), []).append(pair)
            self.by_p.setdefault(p, []).append(pair)


class _ByProperty(Mapping[str, list[Pair]]):
    """``by_prop``: property -> every pair (a scan, cached), iterable over the properties."""

    def __init__(self, owner: GraphPairs) -> None:
        self.owner = owner
        self.cache: dict[str, list[Pair]] = {}
        self._keys: list[str] | None = None

    def _names(self) -> list[str]:
        if self._keys is None:  # (a property whose triples the overlay removes may stay)
            o = self.owner
            at = o.view.terms.by_id
            names: dict[str, None] = {}
            for p, seg in o.view.triples.segments.items():
                if seg.size and (not o.asserted_only or seg.packed()[1].any()):
                    names[str(at[p])] = None
            names.update(dict.fromkeys(o.overlay.by_p))
            self._keys = list(names)
        return self._keys

    def __getitem__(self, prop: str) -> list[Pair]:
        found: list[Pair] | None = self.get(prop)
        if found is None:
            if prop in self._names():  # listed, all its triples removed by the overlay
                return []
            raise KeyError(prop)
        return found

    def get(self, prop: str, default: Any = None) -> Any:
        found = self.cache.get(prop)
        if found is None:
            found = self.cache[prop] = self.owner.all_pairs(prop)
        return found if found else default

    def __contains__(self, prop: object) -> bool:
        return isinstance(prop, str) and bool(self.get(prop))

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


class _Index:
    """One property's pairs by one end (``get(node, default)``)."""

    __slots__ = ("owner", "position", "prop")

    def __init__(self, owner: GraphPairs, prop: str, position: int) -> None:
        self.owner, self.prop, self.position = owner, prop, position

    def get(self, node: Term, default: Any = None) -> Any:
        found = self.owner.lookup(self.prop, node, self.position)
        return found if found else default


class GraphPairs:
    """A view's closure (or its asserted triples) as evaluator pairs, with overlays.

    Args:
        view: the graph (read, never changed).
        asserted_only: only the asserted triples (a SPARQL Update's WHERE clause).
        plus / minus: term triples seen as added / removed on top of the view.
        base: pairs over the same view without overlays, whose lookups (kept while the
            view does not change: the same sensors' classes and equipment are looked up
            event after event) these share.

    Example:
        >>> from semps.graph.graph import KnowledgeGraph
        >>> g = KnowledgeGraph()
        >>> _ = g.insert([("http://ex/a", "http://ex/p", "http://ex/b")])
        >>> pairs = GraphPairs(g.view, plus=[("http://ex/c", "http://ex/p", "http://ex/b")])
        >>> sorted(pairs.index("http://ex/p", ("*", "*"), 1).get("http://ex/b"))
        [('http://ex/a', 'http://ex/b'), ('http://ex/c', 'http://ex/b')]
    """

    def __init__(
        self,
        view: GraphView,
        *,
        asserted_only: bool = False,
        plus: Iterable[Triple] = (),
        minus: Iterable[Triple] = (),
        base: GraphPairs | None = None,
    ) -> None:
        self.view = view
        self.asserted_only = asserted_only
        self.overlay = _Overlay(plus, minus)
        self.by_prop = _ByProperty(self)
        self.path_cache: dict[Any, Any] = {}
        self._indexes: dict[tuple[str, int], _Index] = {}
        self.base = base
        #: Lookups of the view (no overlay), while it holds fewer than MEMO entries.
        self.memo: dict[tuple[str, Term, int], list[Pair]] = {}
        #: :meth:`object_counts` of the view (no overlay), as many.
        self.counted: dict[tuple[str, Term], dict[Term, int]] = {}

    def index(self, prop: str, key: Any, position: int) -> _Index:
        """``prop``'s pairs by subject (0) or object (1) (``key`` is ``("*", "*")``)."""
        found = self._indexes.get((prop, position))
        if found is None:
            found = self._indexes[(prop, position)] = _Index(self, prop, position)
        return found

    def lookup(self, prop: str, node: Term, position: int) -> list[Pair]:
        """The pairs of ``prop`` with ``node`` as subject (0) or object (1)."""
        overlay = self.overlay
        source = self.base if self.base is not None else self
        key = (prop, node, position)
        out = source.memo.get(key)
        if out is None:
            out = source.view_lookup(prop, node, position)
            if len(source.memo) < MEMO:
                source.memo[key] = out
        if overlay.minus and out:
            minus = overlay.minus
            out = [pair for pair in out if (pair[0], prop, pair[1]) not in minus]
        extra = (overlay.by_s if position == 0 else overlay.by_o).get((prop, node))
        if extra:
            out = out + extra
        return out

    def object_counts(self, prop: str, node: Term) -> dict[Term, int]:
        """The objects of ``prop`` with ``node`` as subject, each with how many of
        :meth:`lookup`'s pairs have it (a node's classes, read once for every class
        looked for; never changed by the caller)."""
        overlay = self.overlay
        if overlay.minus or (prop, node) in overlay.by_s:
            return _counts(self.lookup(prop, node, 0))
        source = self.base if self.base is not None else self
        key = (prop, node)
        found = source.counted.get(key)
        if found is None:
            found = _counts(source.lookup(prop, node, 0))
            if len(source.counted) < MEMO:
                source.counted[key] = found
        return found

    def view_lookup(self, prop: str, node: Term, position: int) -> list[Pair]:
        """:meth:`lookup` in the view alone (no overlay)."""
        view = self.view
        terms = view.terms
        out: list[Pair] = []
        p, n = terms.get(prop), terms.get(node)
        if p is not None and n is not None:
            seg = view.triples.segments.get(p)
            if seg is not None:
                at = terms.by_id
                if position == 0:
                    ids = seg.objects(n)
                    if self.asserted_only:
                        ids = [o for o in ids if seg.is_asserted(n, o)]
                    out = [(node, at[o]) for o in ids]  # type: ignore[misc]
                else:
                    ids = seg.subjects(n)
                    if self.asserted_only:
                        ids = [s for s in ids if seg.is_asserted(s, n)]
                    out = [(at[s], node) for s in ids]  # type: ignore[misc]
        return out

    def all_pairs(self, prop: str) -> list[Pair]:
        """Every pair of ``prop`` (a scan of its triples)."""
        view, overlay = self.view, self.overlay
        out: list[Pair] = []
        p = view.terms.get(prop)
        seg = view.triples.segments.get(p) if p is not None else None
        if seg is not None:
            at = view.terms.by_id
            so, flags = seg.packed()
            if self.asserted_only:
                so = so[flags]
            out = [(str(at[k >> 32]), at[k & 0xFFFFFFFF]) for k in so.tolist()]
        if overlay.minus and out:
            minus = overlay.minus
            out = [pair for pair in out if (pair[0], prop, pair[1]) not in minus]
        out.extend(overlay.by_p.get(prop, ()))
        return out


def _counts(pairs: list[Pair]) -> dict[Term, int]:
    out: dict[Term, int] = {}
    for _, o in pairs:
        out[o] = out.get(o, 0) + 1
    return out
