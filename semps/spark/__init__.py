"""The Spark pipeline: bulk matching and placement mined from history, on any master.

The same ingest and matcher code as the broker runs inside Spark's Python workers; nothing
here re-implements matching semantics.

- :mod:`.session`: the one SparkSession factory (local defaults only for local masters).
- :mod:`.package`: the zip and driver script a cluster's executors need.
- :mod:`.sources`: events from RDF files or triples tables, spread over every core.
- :mod:`.bulk`: :func:`match_events`, the bulk job (the broker's matcher in each worker):
  :mod:`.shipped_index` ships the subscriptions and builds each worker's matchers,
  :mod:`.partition` matches a task's events in batches, :mod:`.placed` against the
  partitions of a placement an event reaches.
- :mod:`.graph_join`: the opt-in GraphFrames engine (a bulk graph join picks candidate
  events for the same matcher); :mod:`.jars` provisions its jar.
- :mod:`.waiting`: a warning when a job waits for resources.
- :mod:`.placement`: frequent-itemset placement of subscriptions and events.
- :mod:`.report`: the placement report against Ferry and broadcast.

pyspark is an optional dependency (``pip install 'semps[spark]'``); importing this package
does not import it.
"""

from semps.spark.bulk import match_events
from semps.spark.placement import Placement, mine_placement
from semps.spark.session import spark_session
from semps.spark.sources import load_events

__all__ = ["Placement", "load_events", "match_events", "mine_placement", "spark_session"]
