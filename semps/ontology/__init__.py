"""The ontology: an owlready2 World persisted in SQLite, and its derived expansion tables.

- :class:`Expansion`: an immutable, picklable snapshot of the rule tables (property and
  class expansion, inverses, symmetric and transitive properties, domains, ranges,
  restrictions) that ingest and the matchers read; ``Expansion()`` means "no ontology".
- :func:`load_expansion`: compile an ontology file directly (CLI, Spark); it refuses a
  document describing individuals, which :func:`load_ontology` hands back for the
  knowledge graph (:mod:`semps.ontology.split`).
- :class:`OntologyStore` (``semps.ontology.store``): load, edit and persist the ontology;
  its ``expansion()`` is rebuilt after each edit, so an edit takes effect for the next event.
"""

from semps.ontology.compile import compile_axioms
from semps.ontology.expansion import Expansion
from semps.ontology.load import load_expansion, load_ontology, ontology_triples

__all__ = ["Expansion", "compile_axioms", "load_expansion", "load_ontology", "ontology_triples"]
