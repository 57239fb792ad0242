"""Running a SPARQL 1.1 Update request on the knowledge graph.

Each operation's WHERE clause is evaluated over the graph's **asserted** triples (SPARQL
1.1 Update works on the graph store's triples; what the ontology infers from them is not
there to delete), as the earlier operations of the request left them; the templates are
instantiated per solution (an unbound variable or an ill-formed triple leaves that triple
out, a template blank node is fresh per solution); deletions apply before insertions. The
operations' net effect becomes one edit (:func:`~semps.graph.edit.plan_edit`, or a
replacement after ``CLEAR``): the request is atomic, all or nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from semps._types import Term, Triple
from semps.errors import GraphLimitExceeded
from semps.graph.change import GraphChange
from semps.graph.edit import plan_edit, plan_load
from semps.graph.formats import fresh_prefix
from semps.graph.pairs import GraphPairs
from semps.graph.view import GraphView
from semps.ingest.sparql.evaluate import Evaluator, OutOfBudget, plan
from semps.ingest.sparql.model import PatternTerm, TriplePattern, Var
from semps.ingest.sparql.update import Operation, parse_update
from semps.limits import DEFAULT_LIMITS, Limits
from semps.terms import Literal


class _Pending:
    """The asserted triples as the request's operations so far leave them: the view's,
    without ``minus``, with ``plus`` (or none of the view's after a CLEAR)."""

    def __init__(self, view: GraphView, limits: Limits) -> None:
        self.view = view
        self.limits = limits
        self.plus: dict[Triple, None] = {}
        self.minus: dict[Triple, None] = {}
        self.cleared = False

    def _asserted(self, t: Triple) -> bool:
        if self.cleared:
            return False
        terms = self.view.terms
        s, p, o = terms.get(t[0]), terms.get(t[1]), terms.get(t[2])
        return None not in (s, p, o) and self.view.triples.is_asserted(p, s, o)  # type: ignore[arg-type]

    def insert(self, triples: Iterable[Triple]) -> None:
        for t in triples:
            if t in self.minus:
                del self.minus[t]
            elif not self._asserted(t):
                self.plus[t] = None
        self._check()

    def delete(self, triples: Iterable[Triple]) -> None:
        for t in triples:
            if t in self.plus:
                del self.plus[t]
            elif self._asserted(t):
                self.minus[t] = None
        self._check()

    def clear(self) -> None:
        self.cleared, self.plus, self.minus = True, {}, {}

    def _check(self) -> None:
        size = len(self.plus) + len(self.minus)
        if size > self.limits.max_update_triples:
            limit = self.limits.max_update_triples
            msg = f"the update inserts or deletes more than {limit} triples (max_update_triples)"
            raise GraphLimitExceeded(msg)

    def pairs(self) -> GraphPairs:
        if self.cleared:
            return GraphPairs(GraphView(), plus=self.plus)
        return GraphPairs(self.view, asserted_only=True, plus=self.plus, minus=self.minus)


def _value(term: PatternTerm, solution: Mapping[str, Term], fresh: dict[str, str]) -> Term | None:
    if type(term) is not Var:
        return term  # type: ignore[return-value]
    if term.name.startswith("_"):  # a template's blank node
        found = fresh.get(term.name)
        if found is None:
            found = fresh[term.name] = f"{fresh['']}{len(fresh)}"
        return found
    return solution.get(term.name)


def instantiate(
    templates: Sequence[TriplePattern], solutions: Iterable[Mapping[str, Term]]
) -> list[Triple]:
    """The templates' triples for each solution (fresh blank nodes per solution; a triple
    with an unbound variable, a literal subject or a non-IRI predicate left out)."""
    out: list[Triple] = []
    prefix = fresh_prefix()
    for k, solution in enumerate(solutions):
        fresh = {"": f"{prefix}{k}."}
        for t in templates:
            s, p, o = (
                _value(t.s, solution, fresh),
                _value(t.p, solution, fresh),
                _value(t.o, solution, fresh),
            )
            if s is None or p is None or o is None:
                continue
            if isinstance(s, Literal) or isinstance(p, Literal) or p.startswith("_:"):
                continue
            out.append((s, p, o))
    return out


def _solutions(op: Operation, pending: _Pending, limits: Limits) -> list[dict[str, Term]]:
    """The WHERE clause's solutions, visiting at most ``max_update_rows`` rows."""
    assert op.where is not None
    rows = limits.max_update_rows
    evaluator = Evaluator(pending.pairs(), rows)
    try:
        return evaluator.solutions(plan(op.where), {})
    except OutOfBudget:
        msg = (
            f"the WHERE clause of {op.kind} visits more than {rows} rows of the graph "
            "(max_update_rows)"
        )
        raise GraphLimitExceeded(msg) from None


def plan_update(
    view: GraphView, text: str, *, base: str | None = None, limits: Limits = DEFAULT_LIMITS
) -> GraphChange:
    """The change a SPARQL 1.1 Update request makes (see the module docstring).

    Raises:
        UpdateSyntaxError: the text does not parse (``line:col:``).
        UnsupportedUpdateError: LOAD, SERVICE, named graphs.
        GraphLimitExceeded: the text, its triples, its WHERE clause's work or its closure
            change passes a limit.
        GraphError: an inserted triple is an axiom or ``owl:sameAs``.

    Example:
        >>> g = GraphView()
        >>> c = plan_update(g, "INSERT DATA { <http://ex/a> <http://ex/p> 1 }")
        >>> c.summary()["inserted"], c.note
        (1, 'INSERT DATA')
    """
    update = parse_update(text, base=base, limits=limits)
    pending = _Pending(view, limits)
    for op in update.operations:
        if op.kind == "CLEAR":
            pending.clear()
        elif op.kind == "INSERT DATA":
            pending.insert(instantiate(op.insert, [{}]))
        elif op.kind == "DELETE DATA":
            pending.delete(instantiate(op.delete, [{}]))
        else:
            solutions = _solutions(op, pending, limits)
            pending.delete(instantiate(op.delete, solutions))
            pending.insert(instantiate(op.insert, solutions))
    note = " ; ".join(dict.fromkeys(op.kind for op in update.operations))
    if pending.cleared:
        return plan_load(view, list(pending.plus), replace=True, limits=limits, note=note)
    return plan_edit(view, list(pending.plus), list(pending.minus), limits=limits, note=note)
