"""When the cyclic garbage collector runs in processes that match events in batches.

Matching allocates many small objects per event (closed triples, binding tables, matches)
that live until the batch ends. Left to its thresholds, the collector runs every few
thousand allocations *during* a batch and walks every object still alive each time: the
batch's own events, and every subscription added since the last freeze. In a broker worker
at 10k subscriptions that was 18% of its CPU (py-spy: ``gc_collect_main``).

:class:`BatchCollector` instead collects the youngest generation *between* batches, when
little but the previous batch's leftovers is in it, freezes everything alive (the index
among it, kept out of every later collection), and keeps the collector off during a batch.
Small batches run on until they have made ``slack`` objects. A batch's cyclic garbage
(matching makes a little) is in the youngest generation, so the next collection finds it.
Older cyclic garbage (made while the collector ran between batches) would be frozen with
the rest: so whenever the frozen objects have grown ``growth`` (2) times since the last
full collection, one full collection runs (amortized: each object walked a bounded number
of times, and such garbage stays smaller than what is alive). A full collection walks
every object alive (about 1 s at 100k subscriptions): it must not run per batch.
Registering and removing subscriptions make no cyclic garbage (checked by a test);
:meth:`thaw` asks for a full collection before the next batch, when long-lived state is
replaced (a new ontology).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


class BatchCollector:
    """The collector's schedule for one process's batches (see the module docstring)."""

    def __init__(self, slack: int = 10_000, growth: float = 2.0) -> None:
        self.slack = slack
        self.growth = growth
        self._base: int | None = None  # frozen objects after the last full collection
        self._full = False

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Around one batch: when more than ``slack`` objects were made since the last
        collection, the youngest generation collected and everything alive frozen (then a
        full collection when the frozen objects have grown ``growth`` times since the last,
        or :meth:`thaw` asked for one); no collection until the batch ends."""
        if self._full or gc.get_count()[0] > self.slack:
            gc.collect(0)
            gc.freeze()
            frozen = gc.get_freeze_count()
            if self._base is None:
                self._base = frozen
            if self._full or frozen > self.growth * self._base + self.slack:
                gc.unfreeze()
                gc.collect()
                gc.freeze()
                self._base = gc.get_freeze_count()
                self._full = False
        enabled = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            if enabled:
                gc.enable()

    def thaw(self) -> None:
        """A full collection (of every object, frozen or not) before the next batch."""
        self._full = True
