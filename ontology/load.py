"""Read an ontology file straight into rule tables (no store): what the CLI and Spark use."""

from __future__ import annotations

from pathlib import Path

from semps._types import Term, Triple
from semps.errors import IngestError, OntologyError
from semps.ingest.rdf import read_triples
from semps.ontology.compile import compile_axioms
from semps.ontology.expansion import Expansion

#: Ontologies may be big (they are not events): allow up to 512 MiB.
MAX_ONTOLOGY_BYTES = 512 * 1024 * 1024


def ontology_triples(
    source: str | Path | bytes, *, media_type: str | None = None, name: str = "ontology"
) -> tuple[Triple, ...]:
    """The triples of an ontology file (blank nodes prefixed ``_:o.`` so they never meet an
    event's blank nodes)."""
    try:
        if isinstance(source, bytes):
            data, filename = source, None
        else:
            path = Path(source)
            data, filename = path.read_bytes(), path.name
        triples = read_triples(
            data,
            media_type=media_type,
            filename=filename,
            base=f"urn:semps:ontology:{name}",
            max_bytes=MAX_ONTOLOGY_BYTES,
        )
    except OSError as exc:
        msg = f"cannot read ontology {source!s}: {exc.strerror or exc}"
        raise OntologyError(msg) from exc
    except IngestError as exc:
        msg = f"cannot parse ontology {filename or 'document'}: {exc}"
        raise OntologyError(msg) from exc
    return tuple((_rename(s), p, _rename(o)) for s, p, o in triples)  # type: ignore[misc]


def _rename(term: Term) -> Term:
    if type(term) is str and term.startswith("_:"):
        return "_:o." + term[2:]
    return term


def load_expansion(source: str | Path | bytes, *, media_type: str | None = None) -> Expansion:
    """Compile an ontology file (RDF/XML, Turtle, ... by suffix) into an :class:`Expansion`.

    Raises:
        OntologyError: the file cannot be read or parsed.
    """
    return compile_axioms(ontology_triples(source, media_type=media_type))
