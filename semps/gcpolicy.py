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

What is frozen is freed by reference counting when dropped, unless it is cyclic: the
long-lived state a worker drops makes no cyclic garbage (subscriptions registered and
removed, an ontology snapshot replaced: checked by tests). As a safety net, a full
collection runs when the frozen objects have grown ``growth`` (4) times since the last one:
a handful in a worker's life, as it grows. A full collection walks every object alive,
about 1 s at 100k subscriptions: it must never run per batch (a first version of this
schedule ran one after each new ontology, and the first event after 100k registrations
waited 1.6 s for it; ``bench/service.py --subs 100000``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: The collector's thresholds in processes that serve or match events: they allocate many
#: short-lived objects and few cycles, so collect seldom (set by ``semps serve``, the
#: broker's workers and the service benchmark's in-process ceiling).
SERVING_THRESHOLDS = (50_000, 20, 100)


class BatchCollector:
    """The collector's schedule for one process's batches (see the module docstring)."""

    def __init__(self, slack: int = 10_000, growth: float = 4.0) -> None:
        self.slack = slack
        self.growth = growth
        self._base: int | None = None  # frozen objects after the last full collection
        self._frozen = 0  # frozen objects now, as counted (see :meth:`batch`)

    @contextmanager
    def batch(self, before_full: Callable[[], None] | None = None) -> Iterator[None]:
        """Around one batch: when more than ``slack`` objects were made since the last
        collection, the youngest generation collected and everything alive frozen (then a
        full collection when the frozen objects have grown ``growth`` times since the
        last, ``before_full`` called first: a broker worker tells its watchdog the pause
        is not matching); no collection until the batch ends.

        The frozen objects are counted once (``gc.get_freeze_count`` walks every one of
        them: 0.6 s for 5M objects, and a worker holding a knowledge graph's replica holds
        millions), then grown by what each freeze adds: the older generations after the
        young collection, which hold only what survived since the last freeze. Frozen
        objects freed since are still counted, so a full collection comes no later than by
        an exact count."""
        if gc.get_count()[0] > self.slack:
            gc.collect(0)
            if self._base is None:
                gc.freeze()
                self._base = self._frozen = gc.get_freeze_count()
            else:
                self._frozen += len(gc.get_objects(1)) + len(gc.get_objects(2))
                gc.freeze()
            if self._frozen > self.growth * self._base + self.slack:
                if before_full is not None:
                    before_full()
                gc.unfreeze()
                gc.collect()
                gc.freeze()
                self._base = self._frozen = gc.get_freeze_count()
        with paused_gc():
            yield

    def frozen(self, count: int) -> None:
        """The caller froze everything alive, about ``count`` objects (``gc.get_count()``
        before it, the collector paused while they were made): the base the next full
        collection is measured from, so that the first batch does not count them (a walk
        of every frozen object: seconds for a million subscriptions' index)."""
        self._base = self._frozen = count


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off meanwhile (and back on after, if it was): for work
    that makes many objects and no cycles, such as building an index, whose collections
    would only rescan what is kept (halving the registration rate)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
