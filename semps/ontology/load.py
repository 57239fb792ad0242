"""Read an ontology file straight into rule tables (no store): what the CLI and Spark use."""

from __future__ import annotations

from pathlib import Path

from semps._types import Term, Triple
from semps.documents import errors_as, read_triples
from semps.errors import OntologyError
from semps.limits import DEFAULT_LIMITS, Limits
from semps.ontology.compile import compile_axioms
from semps.ontology.expansion import Expansion
from semps.ontology.split import Split, split
from semps.terms import n3

#: Ontologies may be big (they are not events): allow up to 512 MiB.
MAX_ONTOLOGY_BYTES = 512 * 1024 * 1024


def ontology_triples(
    source: str | Path | bytes,
    *,
    media_type: str | None = None,
    name: str = "ontology",
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[Triple, ...]:
    """The triples of an ontology file (blank nodes prefixed ``_:o.`` so they never meet an
    event's blank nodes).

    The bytes pass the same screen as an event's (hostile DTDs, nesting deeper than
    ``limits.max_document_depth``); only the size bound is larger
    (:data:`MAX_ONTOLOGY_BYTES`).
    """
    if isinstance(source, bytes):
        filename, shown = None, "document"
    else:
        filename, shown = Path(source).name, str(source)
    parse = f"cannot parse ontology {filename or 'document'}: "
    with errors_as(OntologyError, read=f"cannot read ontology {shown}", parse=parse):
        data = source if isinstance(source, bytes) else Path(source).read_bytes()
        triples = read_triples(
            data,
            media_type=media_type,
            filename=filename,
            base=f"urn:semps:ontology:{name}",
            max_bytes=MAX_ONTOLOGY_BYTES,
            limits=limits,
        )
    return tuple((_rename(s), p, _rename(o)) for s, p, o in triples)  # type: ignore[misc]


def _rename(term: Term) -> Term:
    if type(term) is str and term.startswith("_:"):
        return "_:o." + term[2:]
    return term


def refuse_facts(found: Split, name: str) -> None:
    """Refuse an ontology document that describes individuals, saying where they belong.

    Raises:
        OntologyError: ``found`` has facts.
    """
    if not found.facts:
        return
    s, p, o = found.facts[0]
    msg = (
        f"{name} holds {len(found.facts)} triples about individuals (the first: {n3(s)} "
        f"{n3(p)} {n3(o)}): they are facts, not axioms, and belong in the knowledge graph "
        "(semps match --graph, semps graph load, PUT /graph), not the ontology"
    )
    raise OntologyError(msg)


def load_ontology(
    source: str | Path | bytes,
    *,
    media_type: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[Expansion, tuple[Triple, ...]]:
    """Compile an ontology document's axioms, and return its facts (triples about
    individuals, :func:`~semps.ontology.split.split`) for the knowledge graph.

    Raises:
        OntologyError: the file cannot be read, is refused by the screen, or does not parse.
    """
    found = split(ontology_triples(source, media_type=media_type, limits=limits))
    return compile_axioms(found.axioms), found.facts


def load_expansion(
    source: str | Path | bytes,
    *,
    media_type: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Expansion:
    """Compile an ontology file (RDF/XML, Turtle, ... by suffix) into an :class:`Expansion`.

    Raises:
        OntologyError: the file cannot be read, is refused by the screen, or does not parse,
            or it describes individuals (:func:`refuse_facts`: they are never dropped in
            silence; :func:`load_ontology` gives them back).
    """
    found = split(ontology_triples(source, media_type=media_type, limits=limits))
    refuse_facts(found, str(source) if not isinstance(source, bytes) else "the ontology")
    return compile_axioms(found.axioms)
