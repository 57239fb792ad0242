"""semps: a semantic RDF publish/subscribe platform.

Publishers post events as RDF graphs, subscribers register SPARQL-like graph patterns, an
ontology lets inexact vocabulary match, and a broker matches every event against every
subscription through one merged subscription index.

The architecture is visible from the subpackages:

- :mod:`semps.ingest`   bytes -> one event model (RDF/XML, Turtle, N-Triples, JSON-LD, JSON);
  subscription texts -> query models.
- :mod:`semps.ontology` the owlready2-backed ontology and its derived expansion tables.
- :mod:`semps.matcher`  the :class:`~semps.matcher.Matcher` contract, the plugin registry and
  the semantic, content, symmetric and composite matchers.
- :mod:`semps.broker`   the broker: one event path, the persistent store, delivery.
- :mod:`semps.api`      the FastAPI service over the broker.
- :mod:`semps.spark`    bulk matching and placement on Apache Spark.
- :mod:`semps.client`   a typed Python client of the HTTP API, synchronous and asyncio.
"""

from semps.errors import SempsError

__version__ = "0.1.0"

__all__ = ["SempsError", "__version__"]
