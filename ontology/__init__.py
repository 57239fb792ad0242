"""The ontology: an owlready2 World persisted in SQLite, and its derived expansion tables.

- :class:`~semps.ontology.expansion.Expansion`: an immutable, picklable snapshot of the rule
  tables (property and class expansion, inverses, symmetric, ...) that ingest and the
  matchers read. An empty ``Expansion()`` means "no ontology".
- :class:`~semps.ontology.store.OntologyStore`: load, edit and persist the ontology; its
  ``expansion()`` is rebuilt after each edit so the edit takes effect for the next event.
"""

from semps.ontology.expansion import Expansion

__all__ = ["Expansion"]
