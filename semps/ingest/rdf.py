"""Read RDF documents into the event model: one document, one :class:`~semps.event.Event`.

The parsing itself (media types, hostile-input screening, limits: ``read_triples``,
``media_type_for``, ``SUPPORTED_MEDIA_TYPES``) is :mod:`semps.documents`, which the ontology
reads its files through too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from os import PathLike
from pathlib import PurePath
from typing import Unpack

from semps.documents import ReadOptions, errors_as, read_triples
from semps.errors import IngestError
from semps.event import Event

__all__ = ["default_base", "read_event", "read_events"]


def default_base(event_id: str) -> str:
    """The base IRI used when none is given: ``urn:semps:event:<id>/``."""
    return f"urn:semps:event:{event_id}/"


def read_event(
    data: bytes, *, event_id: str, base: str | None = None, **options: Unpack[ReadOptions]
) -> Event:
    """Parse ``data`` into an :class:`Event` with id ``event_id``.

    Relative IRIs resolve against ``base``, by default :func:`default_base` of the id (LUBM
    documents say ``rdf:about=""``). ``options`` (media type, file name, size and nesting
    limits) and errors as in :func:`semps.documents.read_triples`.
    """
    triples = read_triples(data, base=base or default_base(event_id), **options)
    return Event(event_id, triples)


def read_events(files: Sequence[str | PathLike[str]], base: str | None) -> Iterator[Event]:
    """Read each file into an event whose id is the file's stem; an unreadable file stops
    with its name in the error."""
    for path in files:
        names = PurePath(path)  # names only: reading through Path costs more than open()
        shown = os.fspath(path)
        with errors_as(IngestError, read=shown, parse=f"{shown}:"):
            with open(path, "rb") as f:
                data = f.read()
            event = read_event(data, event_id=names.stem, filename=names.name, base=base)
        yield event
