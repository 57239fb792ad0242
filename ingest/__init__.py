"""Ingest: turn bytes into the one event model, and subscription texts into query models.

Public surface:

- :class:`Event`, :class:`Literal`: the event model every matcher reads.
- :func:`semps.ingest.rdf.read_event`: bytes in any supported RDF syntax -> :class:`Event`.
- :func:`semps.ingest.partab.to_partab`: an event -> PartA/PartB (seed 001).
- :mod:`semps.ingest.sparql`: the SPARQL-like subscription language.
"""

from semps.ingest.event import Event
from semps.ingest.terms import XSD, Literal, is_blank, is_literal

__all__ = ["XSD", "Event", "Literal", "is_blank", "is_literal"]
