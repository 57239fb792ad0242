"""The budget of an ontology edit: what the ontology may hold and what compiling it may cost.

An edit is checked *before* it is applied (:class:`~semps.ontology.store.OntologyStore`
compiles the ontology it would make and applies it only if that succeeds), and the store
refuses at start-up an ontology that breaks these limits (``semps ontology reset`` repairs
the data directory). Every limit is one of :class:`~semps.limits.Limits`:

- ``max_ontology_triples``: triples the ontology holds;
- ``max_hierarchy_depth``: the longest ``subClassOf`` (or ``subPropertyOf``) chain, a cycle
  counting once;
- ``max_ontology_rules``: entries of the compiled tables (a class's ancestors count one
  each), counted while they are made, so an ontology over it is stopped early;
- ``ontology_timeout``: seconds the compiler may run; past it the edit is cut off.

Each refusal is an :class:`~semps.errors.OntologyLimitExceeded` naming its limit.

Example:
    >>> meter = Meter(OntologyBudget(max_rules=3))
    >>> meter.rules(3)
    >>> try:
    ...     meter.rules(1)
    ... except OntologyLimitExceeded as exc:
    ...     print(exc)
    the ontology compiles to more than the limit of 3 rule entries (max_ontology_rules)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from semps.errors import OntologyLimitExceeded, limit_exceeded
from semps.limits import Limits

__all__ = ["UNBOUNDED", "Meter", "OntologyBudget"]

#: Work units between two looks at the clock (a unit is a set insertion or a lookup).
_CLOCK_EVERY = 1 << 16


@dataclass(frozen=True, slots=True)
class OntologyBudget:
    """The limits one compilation runs under (``0``: no bound on that one)."""

    max_triples: int = 0
    max_depth: int = 0
    max_rules: int = 0
    timeout: float = 0.0

    @classmethod
    def of(cls, limits: Limits) -> OntologyBudget:
        """The budget ``limits`` give."""
        return cls(
            limits.max_ontology_triples,
            limits.max_hierarchy_depth,
            limits.max_ontology_rules,
            limits.ontology_timeout,
        )

    def check_triples(self, count: int) -> None:
        """Refuse an ontology of more than ``max_triples`` triples.

        Raises:
            OntologyLimitExceeded: it has more.
        """
        said = f"the ontology would hold {count} triples"
        _refuse_over(count, self.max_triples, said, "max_ontology_triples")

    def check_depth(self, depth: int, what: str, deepest: str) -> None:
        """Refuse a ``what`` hierarchy (``class``, ``property``) deeper than ``max_depth``.

        Raises:
            OntologyLimitExceeded: it is deeper.
        """
        said = f"the {what} hierarchy is {depth} levels deep (below {deepest})"
        _refuse_over(depth, self.max_depth, said, "max_hierarchy_depth", unit=" levels")


def _refuse_over(value: int, bound: int, said: str, name: str, *, unit: str = "") -> None:
    """Refuse ``value`` (what ``said`` tells) over ``bound`` (``0``: no bound), the limit
    ``name`` counted in ``unit``."""
    if bound and value > bound:
        raise limit_exceeded(OntologyLimitExceeded, said, name, over=f"{bound}{unit}")


#: No bound at all (compiling a file the caller trusts, tests).
UNBOUNDED = OntologyBudget()


class Meter:
    """Counts a compilation's output and work against its budget; raises as soon as either
    is spent, so an ontology over the limits costs no more than the limits."""

    def __init__(self, budget: OntologyBudget = UNBOUNDED) -> None:
        self.budget = budget
        self.made = 0
        self._work = 0
        self._started = time.monotonic()
        self.tick()  # even a tiny compilation looks at the clock once

    def timer(self) -> Meter:
        """A meter on this one's clock and time limit that counts no rule entries: for work
        whose output the caller counts itself (a kept closure's, whose tables are counted
        as they are read)."""
        made = Meter(replace(self.budget, max_rules=0))
        made._started = self._started
        return made

    def rules(self, count: int) -> None:
        """Count ``count`` entries of the compiled tables.

        Raises:
            OntologyLimitExceeded: past ``max_rules``.
        """
        self.made += count
        limit = self.budget.max_rules
        if limit and self.made > limit:
            said = f"the ontology compiles to more than the limit of {limit} rule entries"
            raise limit_exceeded(OntologyLimitExceeded, said, "max_ontology_rules")
        self.work(count)

    def work(self, units: int) -> None:
        """Count ``units`` of work; every so often, look at the clock.

        Raises:
            OntologyLimitExceeded: the compilation has run past ``timeout``.
        """
        self._work += units
        if self._work >= _CLOCK_EVERY:
            self._work = 0
            self.tick()

    def tick(self) -> None:
        """Look at the clock now.

        Raises:
            OntologyLimitExceeded: the compilation has run past ``timeout``.
        """
        timeout = self.budget.timeout
        if timeout and time.monotonic() - self._started > timeout:
            said = f"compiling the ontology took more than {timeout:g} s; the edit was cut off"
            raise limit_exceeded(OntologyLimitExceeded, said, "ontology_timeout")
