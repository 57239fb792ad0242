"""Queries in flight: how many each principal has running, at most a limit.

The knowledge graph's reads (:class:`~semps.broker.graphs.GraphDesk`) count each query
while its work runs; one more than ``max_queries_in_flight`` is refused with
:class:`~semps.errors.QueriesInFlight` (429) rather than queued.
"""

from __future__ import annotations

from semps.errors import QueriesInFlight

__all__ = ["InFlight"]


class InFlight:
    """Queries running, by principal, each principal at most ``limit`` (not thread-safe:
    taken and given on the event loop)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held: dict[str, int] = {}

    def take(self, who: str | None) -> None:
        """Count one more query of ``who`` in flight (``None``: not counted).

        Raises:
            QueriesInFlight: ``who`` has ``limit`` running already.
        """
        if who is None:
            return
        held = self._held.get(who, 0)
        if held >= self.limit:
            msg = (
                f"{who} already has {held} queries running, the limit "
                "(max_queries_in_flight); retry once one is answered"
            )
            raise QueriesInFlight(msg)
        self._held[who] = held + 1

    def give(self, who: str | None) -> None:
        """One query of ``who`` ended."""
        if who is None:
            return
        held = self._held.get(who, 0) - 1
        if held > 0:
            self._held[who] = held
        else:
            self._held.pop(who, None)
