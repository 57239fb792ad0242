"""Phase 2: the seed's core-count-adaptive partition of the verification work.

With ``PRCNum`` cores: one core scans the candidate list from the head; an odd ``PRCNum``
splits the list into ``PRCNum`` parts, one per core; an even ``PRCNum`` splits it into
``PRCNum / 2`` parts, each scanned from both ends by two cores until they meet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Scan:
    """One worker's share: scan ``[start, stop)`` of the list, from the head or the tail.

    Two scans of one part (``forward`` and ``backward``) claim items from a shared cursor
    pair until they meet, so together they cover the part exactly once.
    """

    worker: int
    part: int
    start: int
    stop: int
    direction: Literal["forward", "backward"]


def plan_partitions(n: int, prc_num: int) -> list[Scan]:
    """The scans of ``prc_num`` workers over a list of ``n`` items.

    Example:
        >>> [(s.worker, s.part, s.direction) for s in plan_partitions(10, 4)]
        [(0, 0, 'forward'), (1, 0, 'backward'), (2, 1, 'forward'), (3, 1, 'backward')]
        >>> [(s.start, s.stop) for s in plan_partitions(10, 4)]
        [(0, 5), (0, 5), (5, 10), (5, 10)]
        >>> [(s.start, s.stop) for s in plan_partitions(10, 3)]
        [(0, 3), (3, 6), (6, 10)]
    """
    if prc_num < 1:
        msg = f"PRCNum must be at least 1, not {prc_num}"
        raise ValueError(msg)
    if prc_num == 1:
        return [Scan(0, 0, 0, n, "forward")]
    parts = prc_num if prc_num % 2 else prc_num // 2
    bounds = [n * i // parts for i in range(parts + 1)]
    scans = []
    for part in range(parts):
        start, stop = bounds[part], bounds[part + 1]
        if prc_num % 2:
            scans.append(Scan(part, part, start, stop, "forward"))
        else:
            scans.append(Scan(2 * part, part, start, stop, "forward"))
            scans.append(Scan(2 * part + 1, part, start, stop, "backward"))
    return scans
