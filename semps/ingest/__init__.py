"""Ingest: turn bytes into the one event model, and subscription texts into query models.

Public surface:

- :class:`Event`, :class:`Literal`: the event model every matcher reads (re-exported from the
  ground floor, :mod:`semps.event` and :mod:`semps.terms`).
- :func:`semps.ingest.rdf.read_event`: bytes in any supported RDF syntax -> :class:`Event`.
- :func:`semps.ingest.json_event.read_json_event`: a JSON event -> :class:`Event`.
- :mod:`semps.ingest.sparql`: the SPARQL-like subscription language.
"""

from semps.event import Event
from semps.terms import XSD, Literal, is_blank, is_literal

__all__ = ["XSD", "Event", "Literal", "is_blank", "is_literal"]
