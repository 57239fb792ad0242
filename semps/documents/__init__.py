"""RDF documents -> triples, bounded and screened: the one parsing function below both the
event path (:mod:`semps.ingest`) and the ontology (:mod:`semps.ontology`).

Part of the ground floor: imports nothing of semps but the other ground-floor modules.
"""

from semps.documents.triples import (
    DEFAULT_MAX_BYTES,
    JSON_LD,
    N_TRIPLES,
    RDF_XML,
    SUPPORTED_MEDIA_TYPES,
    TURTLE,
    ReadOptions,
    errors_as,
    media_type_for,
    read_triples,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "JSON_LD",
    "N_TRIPLES",
    "RDF_XML",
    "SUPPORTED_MEDIA_TYPES",
    "TURTLE",
    "ReadOptions",
    "errors_as",
    "media_type_for",
    "read_triples",
]
