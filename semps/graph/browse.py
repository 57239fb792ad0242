"""The knowledge graph as a person browses it: its subjects a page at a time, searched by
IRI or label, and one resource's triples (asserted and inferred told apart).

:class:`Resources` is built once per graph version from a :class:`~semps.graph.view.GraphView`
(one pass over the closure's keys, sorted). A page then costs a binary search and the page;
a search costs one pass of ``str.find`` over the names and labels joined into one lower-case
text (C speed: no Python loop per subject), plus the page. :func:`describe` reads one term's
triples through the per-predicate indexes, in proportion to its triples.

Example:
    >>> from semps.graph.graph import KnowledgeGraph
    >>> g = KnowledgeGraph()
    >>> _ = g.update('INSERT DATA { <http://ex/a> <http://www.w3.org/2000/01/rdf-schema#label> '
    ...              '"Alpha" . <http://ex/b> <http://ex/p> <http://ex/a> }')
    >>> r = Resources(g.view)
    >>> [i["iri"] for i in r.page("", None, 10)["items"]]
    ['http://ex/a', 'http://ex/b']
    >>> r.page("alp", None, 10)["items"][0]["label"]
    'Alpha'
    >>> describe(g.view, "http://ex/a", 10)["incoming"][0]["subject"]
    '<http://ex/b>'
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

import numpy as np

from semps._types import Term
from semps.graph.terms import LITERAL
from semps.graph.view import GraphView
from semps.terms import RDF, RDFS, Literal, n3

__all__ = ["LABELS", "MAX_PAGE", "Resources", "describe"]

#: Properties whose literal value names a resource, first found wins.
LABELS = (RDFS + "label", "http://www.w3.org/2004/02/skos/core#prefLabel")
RDF_TYPE = RDF + "type"
#: The most subjects a page holds, and the most triples :func:`describe` lists each way.
MAX_PAGE = 500
#: What separates names in the searched text (no IRI or label search can span it).
_SEP = "\x00"


class Resources:
    """The subjects of a graph version, in order of their names (IRIs, ``_:`` blank nodes),
    each with its label and its triple counts.

    Args:
        view: the graph (read now; the object does not follow later versions).
    """

    def __init__(self, view: GraphView) -> None:
        self.version = view.version
        subjects, asserted = _subject_keys(view)
        ids, first = np.unique(subjects, return_index=True)
        counts = np.diff(np.append(first, len(subjects)))
        flagged = np.add.reduceat(asserted.astype(np.int64), first) if len(first) else first
        terms = view.terms
        rows = sorted(
            (str(terms.term(int(s))), int(s), int(n), int(a))
            for s, n, a in zip(ids.tolist(), counts.tolist(), flagged.tolist(), strict=True)
        )
        self.names = [r[0] for r in rows]
        self.ids = [r[1] for r in rows]
        self.triples = [r[2] for r in rows]
        self.asserted = [r[3] for r in rows]
        self.labels = [_label(view, s) for s in self.ids]
        texts = (f"{n}\t{lab or ''}" for n, lab in zip(self.names, self.labels, strict=True))
        self._text = _SEP.join(texts).lower()
        self._starts: list[int] = []
        at = 0
        for name, label in zip(self.names, self.labels, strict=True):
            self._starts.append(at)
            at += len(name) + 1 + len(label or "") + 1

    def __len__(self) -> int:
        return len(self.names)

    def _item(self, i: int) -> dict[str, object]:
        return {
            "iri": self.names[i],
            "label": self.labels[i],
            "triples": self.triples[i],
            "asserted": self.asserted[i],
        }

    def _hits(self, needle: str) -> list[int]:
        """The positions (in name order) of the subjects whose name or label holds
        ``needle`` (case aside)."""
        found: list[int] = []
        text, starts, at = self._text, self._starts, 0
        while True:
            at = text.find(needle, at)
            if at < 0:
                return found
            i = bisect_right(starts, at) - 1
            found.append(i)
            at = starts[i + 1] if i + 1 < len(starts) else len(text)

    def page(self, q: str, after: str | None, limit: int) -> dict[str, object]:
        """Up to ``limit`` subjects after the name ``after`` (``None``: from the first)
        whose name or label holds ``q`` (empty: all of them); ``total`` counts every one
        that qualifies, ``next`` is the ``after`` of the following page (``None``: last)."""
        needle = q.strip().lower()
        hits: Sequence[int] = range(len(self.names))
        if needle:
            hits = [] if _SEP in needle else self._hits(needle)
        start = 0 if after is None else bisect_right(self.names, after)
        begin = bisect_left(hits, start) if needle else start
        chosen = hits[begin : begin + limit]
        more = begin + limit < len(hits)
        last = self.names[chosen[-1]] if chosen and more else None
        return {
            "version": self.version,
            "items": [self._item(i) for i in chosen],
            "total": len(hits),
            "next": last,
        }


def _subject_keys(view: GraphView) -> tuple[np.ndarray, np.ndarray]:
    """Every closure triple's subject id and asserted flag, sorted by subject."""
    keys, flags = [], []
    for seg in view.triples.segments.values():
        so, asserted = seg.packed()
        keys.append(so >> 32)
        flags.append(asserted)
    if not keys:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.bool_)
    subjects, asserted = np.concatenate(keys), np.concatenate(flags)
    order = np.argsort(subjects, kind="stable")
    return subjects[order], asserted[order]


def _label(view: GraphView, s: int) -> str | None:
    """The least literal value of the first of :data:`LABELS` the term has."""
    terms = view.terms
    for prop in LABELS:
        p = terms.get(prop)
        if p is None:
            continue
        found = [
            t.lexical for t in terms.terms(view.triples.objects(p, s)) if isinstance(t, Literal)
        ]
        if found:
            return str(min(found))
    return None


def describe(view: GraphView, term: Term, limit: int, offset: int = 0) -> dict[str, object]:
    """A term's triples: ``outgoing`` (it is the subject: ``predicate``, ``object``) and
    ``incoming`` (it is the object: ``subject``, ``predicate``), by predicate (``rdf:type``
    first) then by the other term, cut to ``limit`` from ``offset``, with ``asserted`` false
    for an inferred triple, and their totals. Terms are N-Triples text; a term the graph has
    never seen has none. Only the page's terms are written out and flagged."""
    terms = view.terms
    t = terms.get(term)
    out: list[tuple[int, list[int]]] = []
    into: list[tuple[int, list[int]]] = []
    if t is not None:
        segments = view.triples.segments
        rdf_type = terms.get(RDF_TYPE)
        subject = terms.kind(t) != LITERAL
        for p in sorted(segments, key=lambda p: (p != rdf_type, n3(terms.term(p)))):
            seg = segments[p]
            if subject and (objects := seg.objects(t)):
                out.append((p, _by_text(view, objects)))
            if subjects := seg.subjects(t):
                into.append((p, _by_text(view, subjects)))
    segs, name, at = view.triples.segments, terms.term, -1 if t is None else t
    return {
        "version": view.version,
        "term": n3(term),
        "label": None if t is None else _label(view, t),
        "outgoing": [
            {
                "predicate": n3(name(p)),
                "object": n3(name(o)),
                "asserted": segs[p].is_asserted(at, o),
            }
            for p, o in _window(out, offset, limit)
        ],
        "incoming": [
            {
                "subject": n3(name(s)),
                "predicate": n3(name(p)),
                "asserted": segs[p].is_asserted(s, at),
            }
            for p, s in _window(into, offset, limit)
        ],
        "outgoing_total": sum(len(ids) for _, ids in out),
        "incoming_total": sum(len(ids) for _, ids in into),
        "offset": offset,
    }


def _by_text(view: GraphView, ids: list[int]) -> list[int]:
    """Term ids in the order of their N-Triples text."""
    name = view.terms.term
    return sorted(ids, key=lambda i: n3(name(i)))


def _window(groups: list[tuple[int, list[int]]], offset: int, limit: int) -> list[tuple[int, int]]:
    """Items ``offset`` to ``offset + limit`` of the groups laid end to end."""
    found: list[tuple[int, int]] = []
    for p, ids in groups:
        if offset >= len(ids):
            offset -= len(ids)
            continue
        taken = ids[offset : offset + limit - len(found)]
        found.extend((p, i) for i in taken)
        offset = 0
        if len(found) >= limit:
            break
    return found
