"""PartA / PartB: the structure of an event, after ontology expansion.

- **PartA** (``HMProp``): property IRI -> ``VCNPN``, the node pairs ``(subject, object)`` of
  every triple with that property (``rdf:type`` excluded). The seed writes a node pair as the
  node-pair name ``"<subject label>-<object label>"``; we keep the pair as a tuple (labels may
  contain ``-``) and :func:`npn` renders the name.
- **PartB** (``HMResourceType``): node -> the list of its type IRIs (a node may have several).

The conversion keeps one dictionary, every property's pairs with ``rdf:type``'s among them
(what the matcher probes); PartA and PartB are made from it when first read.

Each property is expanded through the ontology while converting: the property, its
equivalents and all its ancestors (and inverses, symmetric properties, ...) all enter PartA,
because the conversion reads the event closed under the ontology
(:func:`semps.ontology.closure.close`).
"""

from __future__ import annotations

from semps._types import Term
from semps.event import Event
from semps.limits import DEFAULT_LIMITS, Limits
from semps.ontology.closure import close
from semps.ontology.expansion import Expansion
from semps.terms import RDF_TYPE, n3


class EventParts:
    """An event as ``pairs``: every property's node pairs, ``rdf:type`` included (what the
    matcher probes), and the seed's views of it, made from ``pairs`` when first read:
    PartA (property -> node pairs, ``rdf:type`` to a node excluded) and PartB (node ->
    types)."""

    __slots__ = ("event_id", "pairs", "_part_a", "_part_b")

    def __init__(self, event_id: str, pairs: dict[str, list[tuple[str, Term]]]) -> None:
        self.event_id = event_id
        self.pairs = pairs
        self._part_a: dict[str, list[tuple[str, Term]]] | None = None
        self._part_b: dict[str, list[str]] = {}

    @property
    def part_a(self) -> dict[str, list[tuple[str, Term]]]:
        if self._part_a is None:
            self._split()
        return self._part_a  # type: ignore[return-value]

    @property
    def part_b(self) -> dict[str, list[str]]:
        if self._part_a is None:
            self._split()
        return self._part_b

    def _split(self) -> None:
        part_a: dict[str, list[tuple[str, Term]]] = {}
        part_b: dict[str, list[str]] = {}
        for p, rows in self.pairs.items():
            if p != RDF_TYPE:
                part_a[p] = list(rows)
                continue
            for s, o in rows:
                if type(o) is str:
                    part_b.setdefault(s, []).append(o)
                else:
                    part_a.setdefault(p, []).append((s, o))
        self._part_a, self._part_b = part_a, part_b

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EventParts):
            return NotImplemented
        return (self.event_id, self.pairs) == (other.event_id, other.pairs)

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> tuple[str, dict[str, list[tuple[str, Term]]]]:
        return (self.event_id, self.pairs)

    def __setstate__(self, state: tuple[str, dict[str, list[tuple[str, Term]]]]) -> None:
        self.__init__(*state)  # type: ignore[misc]


def to_partab(
    event: Event, expansion: Expansion | None = None, *, limits: Limits = DEFAULT_LIMITS
) -> EventParts:
    """Convert ``event`` to PartA/PartB, closed under ``expansion``.

    Raises:
        EventLimitExceeded: the closed event passes ``limits.max_closure_triples``.

    Example:
        >>> e = Event("e", triples=(("_:a", "http://ex/p", "http://ex/b"),
        ...                         ("_:a", RDF_TYPE, "http://ex/C")))
        >>> parts = to_partab(e)
        >>> parts.part_a, parts.part_b
        ({'http://ex/p': [('_:a', 'http://ex/b')]}, {'_:a': ['http://ex/C']})
    """
    triples = close(expansion or Expansion(), event.triples, limits=limits)
    pairs: dict[str, list[tuple[str, Term]]] = {}
    get = pairs.get
    for s, p, o in triples:
        rows = get(p)
        if rows is None:
            pairs[p] = [(s, o)]
        else:
            rows.append((s, o))
    return EventParts(event.id, pairs)


def npn(subject: str, obj: Term) -> str:
    """The seed's node-pair name ``"<subject label>-<object label>"`` (N-Triples labels)."""
    return f"{n3(subject)}-{n3(obj)}"
