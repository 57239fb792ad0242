"""When the cyclic garbage collector runs in processes that match events in batches.

Matching allocates many small objects per event (closed triples, binding tables, matches)
that live until the batch ends. Left to its thresholds, the collector runs every few
thousand allocations *during* a batch and walks every object still alive each time: the
batch's own events, and every subscription added since the last freeze. In a broker worker
at 10k subscriptions that was 18% of its CPU (py-spy: ``gc_collect_main``).

:class:`BatchCollector` instead collects *between* batches, when little but the index is
alive, freezes what survives (the index, kept out of every later collection), and keeps the
collector off during a batch. Small batches run on until they have made ``slack`` objects.
A batch's cyclic garbage (matching makes a little) waits for the next collection: one
batch, or ``slack`` objects, at most. Registering and removing subscriptions make no cyclic
garbage (checked by a test), so frozen objects need no collection; :meth:`thaw` returns
them to the collector when long-lived state is replaced (a new ontology).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


class BatchCollector:
    """The collector's schedule for one process's batches (see the module docstring)."""

    def __init__(self, slack: int = 10_000) -> None:
        self.slack = slack

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Around one batch: a collection first when more than ``slack`` objects were
        made since the last, what survives frozen, and no collection until it ends."""
        if gc.get_count()[0] > self.slack:
            gc.collect()
            gc.freeze()
        enabled = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            if enabled:
                gc.enable()

    def thaw(self) -> None:
        """Frozen objects back under the collector (their next collection walks them)."""
        gc.unfreeze()
