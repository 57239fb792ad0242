"""Progress bars for long work, on stderr and only when stderr is a terminal.

Loading 100k semantic subscriptions takes seconds (1M content subscriptions, tens of
seconds) before the first answer: a user at a terminal sees what is being done and how far
it is. Piped or redirected, a command writes nothing extra (its stdout is its answers, at
any rate).

    >>> with progress(10, "thing", "counting") as tick:  # not a terminal here: no bar
    ...     tick(10)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["MIN_TOTAL", "progress"]

#: Fewer items than this get no bar (it would only flash).
MIN_TOTAL = 20


def _nothing(n: int = 1) -> None:
    """The tick of no bar."""


@contextmanager
def progress(
    total: int, unit: str, what: str, *, in_bytes: bool = False
) -> Iterator[Callable[[int], object]]:
    """A bar of ``total`` ``unit``s labelled ``what`` on a terminal's stderr (``in_bytes``:
    ``total`` is bytes, shown as KB/MB); yields ``tick(n)``, which moves it on ``n``. Not a
    terminal, or under :data:`MIN_TOTAL`: ``tick`` does nothing."""
    if total < MIN_TOTAL or not sys.stderr.isatty():
        yield _nothing
        return
    from tqdm import tqdm

    # No monitor thread: `semps match` forks its workers after loading, and forks only
    # while it runs one thread (else it spawns them, and they parse every subscription).
    tqdm.monitor_interval = 0
    bar = tqdm(
        total=total,
        unit="B" if in_bytes else unit,
        unit_scale=in_bytes,
        unit_divisor=1024 if in_bytes else 1000,
        desc=what,
        file=sys.stderr,
        dynamic_ncols=True,
    )
    try:
        yield bar.update
    finally:
        bar.close()
