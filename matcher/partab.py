"""PartA / PartB: the structure of an event, after ontology expansion.

- **PartA** (``HMProp``): property IRI -> ``VCNPN``, the node pairs ``(subject, object)`` of
  every triple with that property (``rdf:type`` excluded). The seed writes a node pair as the
  node-pair name ``"<subject label>-<object label>"``; we keep the pair as a tuple (labels may
  contain ``-``) and :func:`npn` renders the name.
- **PartB** (``HMResourceType``): node -> the list of its type IRIs (a node may have several).

Each property is expanded through the ontology while converting: the property, its
equivalents and all its ancestors (and inverses, symmetric properties, ...) all enter PartA,
because the conversion reads the event closed under the ontology
(:meth:`semps.ontology.expansion.Expansion.close`).
"""

from __future__ import annotations

from dataclasses import dataclass

from semps._types import Term
from semps.event import Event
from semps.limits import DEFAULT_LIMITS, Limits
from semps.ontology.expansion import Expansion
from semps.terms import RDF_TYPE, n3


@dataclass(frozen=True, slots=True)
class EventParts:
    """An event as PartA (property -> node pairs) and PartB (node -> types), and
    ``pairs``: every property's node pairs, ``rdf:type`` included (PartA with PartB's
    ``(node, type)`` pairs), what the matcher probes; made in the same pass."""

    event_id: str
    part_a: dict[str, list[tuple[str, Term]]]
    part_b: dict[str, list[str]]
    pairs: dict[str, list[tuple[str, Term]]]


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
    triples = (expansion or Expansion()).close(event.triples, limits=limits)
    part_a: dict[str, list[tuple[str, Term]]] = {}
    part_b: dict[str, list[str]] = {}
    pairs: dict[str, list[tuple[str, Term]]] = {}
    for s, p, o in triples:
        if p == RDF_TYPE and type(o) is str:
            part_b.setdefault(s, []).append(o)
        else:
            part_a.setdefault(p, []).append((s, o))
        pairs.setdefault(p, []).append((s, o))
    return EventParts(event.id, part_a, part_b, pairs)


def npn(subject: str, obj: Term) -> str:
    """The seed's node-pair name ``"<subject label>-<object label>"`` (N-Triples labels)."""
    return f"{n3(subject)}-{n3(obj)}"
