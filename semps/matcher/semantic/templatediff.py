"""The change of a template's solutions (:mod:`.graphtemplate`), restricted to the
parameter values its subscriptions use.

A template's parameters are variables where its subscriptions have constants: evaluated
as they are, ``?s a ?class`` would give every class of a sensor, and ``?room brick:isPartOf
?floor`` every floor. :class:`TemplateDiffer` is a :class:`~.graphdiff.Differ` that drops a
solution as soon as one of its patterns binds a parameter to a value no subscription of
the template has (its *domain*). Dropping those is exact: they reach no subscription. The
unseeded evaluations the differ keeps per graph version are not restricted, so they stay
valid when subscriptions come and go.
"""

from __future__ import annotations

from collections.abc import Container, Mapping

from semps._types import Term
from semps.matcher.semantic.graphdiff import Atom, ChangePairs, Differ, Rows, Sol

__all__ = ["TemplateDiffer"]


class TemplateDiffer(Differ):
    """A :class:`~.graphdiff.Differ` whose patterns' rows keep only the parameter values
    of ``domains`` (parameter name -> the values its subscriptions use)."""

    def __init__(
        self,
        change: ChangePairs,
        budget: int,
        cache: dict[object, object] | None,
        domains: Mapping[str, Container[Term]],
    ) -> None:
        super().__init__(change, budget, cache)
        self.domains = domains
        self._binds: dict[Atom, tuple[tuple[str, Container[Term]], ...]] = {}

    def _params(self, atom: Atom) -> tuple[tuple[str, Container[Term]], ...]:
        found = self._binds.get(atom)
        if found is None:
            domains = self.domains
            found = self._binds[atom] = tuple(
                (name, domains[name]) for name in atom.variables() if name in domains
            )
        return found

    def restrict(self, atom: Atom, rows: Rows) -> Rows:
        for name, domain in self._params(atom):
            rows = [r for r in rows if r[name] in domain]
        return rows

    def atom_diff(self, atom: Atom) -> tuple[Rows, Rows]:
        gained, lost = super().atom_diff(atom)
        return self.restrict(atom, gained), self.restrict(atom, lost)

    def seeded(self, atoms: tuple[Atom, ...], seed: Sol, side: int) -> Rows:
        rows = super().seeded(atoms, seed, side)
        for atom in atoms:
            rows = self.restrict(atom, rows)
        return rows
