"""Expansion: the ontology's derived rule tables at one version (immutable, picklable).

PLACEHOLDER CONTRACT (the ontology work fills in the tables and the closure):

- ``expand_property(p)`` -> ``((p2, inverted), ...)``: every property a ``p`` triple implies,
  with ``inverted`` true when the implied triple runs object -> subject. Always contains
  ``(p, False)``.
- ``expand_class(c)`` -> frozenset of ``c``, its equivalents and all its ancestors.
- ``close(triples)`` -> the triples closed under the ontology's rules (OWL 2 RL for
  subPropertyOf, equivalentProperty, subClassOf, equivalentClass, inverseOf,
  SymmetricProperty, and whatever more the tables support), originals included,
  duplicates removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from semps._types import Triple


@dataclass(frozen=True)
class Expansion:
    """Rule tables derived from an ontology; ``Expansion()`` is the empty ontology."""

    version: int = 0
    properties: dict[str, tuple[tuple[str, bool], ...]] = field(default_factory=dict)
    classes: dict[str, frozenset[str]] = field(default_factory=dict)

    def expand_property(self, prop: str) -> tuple[tuple[str, bool], ...]:
        """Every property a ``prop`` triple implies, with its direction."""
        return self.properties.get(prop) or ((prop, False),)

    def expand_class(self, cls: str) -> frozenset[str]:
        """``cls``, its equivalent classes and all its ancestors."""
        return self.classes.get(cls) or frozenset((cls,))

    def close(self, triples: Iterable[Triple]) -> list[Triple]:
        """The triples closed under the ontology (originals first, no duplicates)."""
        return list(dict.fromkeys(triples))
