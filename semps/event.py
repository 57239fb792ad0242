"""The one event model: every matcher, the broker, the CLI and Spark read :class:`Event`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from semps._types import Triple, Value


def _frozen(mapping: Mapping[str, object] | None) -> Mapping[str, object]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, slots=True)
class Event:
    """A published event.

    An RDF event carries ``triples``; a content event carries attribute
    ``values``; a symmetric publication carries ``regions`` (closed intervals per attribute).
    One event may carry several of these; every matcher reads the view it needs.

    Attributes:
        id: the event id (a file stem, or assigned by the broker).
        triples: the RDF graph as (subject, predicate, object) triples, in document order,
            without duplicates.
        values: attribute -> number or string (content events).
        regions: attribute -> (low, high), low <= high (symmetric publications).
        time: event time in seconds (composite windows); ``None`` means "arrival time".

    Example:
        >>> e = Event("e1", values={"a0": 0.31})
        >>> e.values["a0"]
        0.31
    """

    id: str
    triples: tuple[Triple, ...] = ()
    values: Mapping[str, Value] = field(default_factory=dict)
    regions: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    time: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            msg = f"an event id must be a non-empty string, not {self.id!r}"
            raise ValueError(msg)
        object.__setattr__(self, "triples", tuple(self.triples))
        object.__setattr__(self, "values", _frozen(self.values))
        for name, (low, high) in self.regions.items():
            if low > high:
                msg = f"region {name!r} of event {self.id!r} has low {low} > high {high}"
                raise ValueError(msg)
        object.__setattr__(self, "regions", _frozen(self.regions))

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # MappingProxyType does not pickle; rebuild from plain dicts (Spark, multiprocessing).
        return (
            Event,
            (self.id, self.triples, dict(self.values), dict(self.regions), self.time),
        )
