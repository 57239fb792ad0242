"""Bearer-token guesses, counted and limited by client address.

Every refused token is logged (logger ``semps.auth``) with the client's address and a
fingerprint of what was sent (never the token). An address that sent :data:`MAX_GUESSES`
bad tokens within :data:`WINDOW` seconds is refused (429, ``Retry-After``) for any token
that has not authenticated recently, until its guesses age out of the window: a guesser
learns nothing more, and a client behind the same address that holds a good token (one that
authenticated in the last :data:`REMEMBER` seconds) keeps working.

Example:
    >>> g = Guesses(max_guesses=2, window=60.0)
    >>> g.refused("10.0.0.1", "nope", now=0.0), g.refused("10.0.0.1", "nope2", now=1.0)
    (False, True)
    >>> g.blocked("10.0.0.1", "nope3", now=2.0), g.blocked("10.0.0.2", "x", now=2.0)
    (True, False)
    >>> g.blocked("10.0.0.1", "nope3", now=62.0)
    False
"""

from __future__ import annotations

import hashlib
import logging
from collections import deque

__all__ = ["MAX_GUESSES", "REMEMBER", "WINDOW", "Guesses", "fingerprint"]

log = logging.getLogger("semps.auth")

#: Bad tokens one address may send within :data:`WINDOW` seconds.
MAX_GUESSES = 20
WINDOW = 60.0
#: Seconds a token that authenticated is remembered as good (it passes a block).
REMEMBER = 3600.0
#: Addresses and good tokens remembered at most (past it, the oldest are forgotten).
_MAX_TRACKED = 10_000


def fingerprint(token: str) -> str:
    """Eight hex digits of the token's SHA-256: tells two guesses apart, reveals nothing."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:8]


class Guesses:
    """Bad tokens by client address (not thread-safe by design: called on the event loop,
    and a lost count under a race costs nothing)."""

    def __init__(self, max_guesses: int = MAX_GUESSES, window: float = WINDOW) -> None:
        self.max_guesses, self.window = max_guesses, window
        self._bad: dict[str, deque[float]] = {}
        self._good: dict[str, float] = {}  # token fingerprint -> when it last authenticated
        self._told: dict[str, float] = {}  # address -> when its block was last logged

    def _recent(self, address: str, now: float) -> deque[float]:
        times = self._bad.get(address)
        if times is None:
            return deque()
        while times and now - times[0] > self.window:
            times.popleft()
        if not times:
            del self._bad[address]
        return times

    def blocked(self, address: str | None, token: str, *, now: float) -> bool:
        """Whether ``address`` is refused for ``token`` without looking it up."""
        if address is None or len(self._recent(address, now)) < self.max_guesses:
            return False
        seen = self._good.get(fingerprint(token))
        if seen is not None and now - seen <= REMEMBER:
            return False
        if now - self._told.get(address, -self.window) >= self.window:
            self._told[address] = now
            log.warning(
                "refusing bearer tokens from %s for up to %g s: %d bad tokens in %g s",
                address,
                self.window,
                len(self._bad.get(address, ())),
                self.window,
            )
        return True

    def refused(self, address: str | None, token: str, *, now: float) -> bool:
        """Count and log a bad token; whether ``address`` is now over the limit."""
        where = address or "an unknown address"
        key = address or "?"
        times = self._recent(key, now)
        times.append(now)
        self._bad[key] = times
        if len(self._bad) > _MAX_TRACKED:
            self._bad.pop(next(iter(self._bad)))
        log.warning(
            "refused a bearer token from %s (fingerprint %s): %d bad in the last %g s",
            where,
            fingerprint(token),
            len(times),
            self.window,
        )
        return len(times) >= self.max_guesses

    def accepted(self, token: str, *, now: float) -> None:
        """Remember ``token`` as good (it passes a block on its address)."""
        self._good[fingerprint(token)] = now
        if len(self._good) > _MAX_TRACKED:
            self._good.pop(next(iter(self._good)))
