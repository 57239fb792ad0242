"""Explain one subscription against one event: its solutions with the triples they used
and how each inferred triple follows, or the step that dropped it.

The explanation is computed on its own, beside the matcher, from the same pieces: the
event closed by :func:`~semps.ontology.closure.close` (with a knowledge graph, the graph's
closure plus :func:`~semps.graph.delta.event_delta`), the subscription's algebra
(:func:`~semps.matcher.semantic.graphmatch.where_of`) evaluated by the shared SPARQL
evaluator, and the matcher's counting rules (SELECT: every solution, DISTINCT: distinct
projected rows, ASK: one; with a graph: the solutions the event adds to the graph's, as a
multiset difference). ``tests/matcher/semantic/test_explain_exact.py`` holds it to
:meth:`SemanticMatcher.match`'s verdicts on random cases.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from semps._types import Term, Triple
from semps.event import Event
from semps.graph.delta import event_delta
from semps.graph.pairs import GraphPairs
from semps.graph.view import GraphView
from semps.ingest.sparql.algebra import BGP, Exists, Filter, LeftJoin, Minus, Node
from semps.ingest.sparql.evaluate import Evaluator, OutOfBudget, Pairs, Solution, plan
from semps.ingest.sparql.model import TriplePattern, Var
from semps.ingest.sparql.parser import parse_query
from semps.limits import DEFAULT_LIMITS, Limits
from semps.matcher.explanation import Explanation, Reason, SolutionUse, Source, TripleUse
from semps.matcher.partab import EventParts
from semps.matcher.semantic.compile_query import compile_query
from semps.matcher.semantic.compiled import CompiledSubscription
from semps.matcher.semantic.derive import Axioms, Deriver, Facts
from semps.matcher.semantic.diagnose import Diagnosis, pattern_text
from semps.matcher.semantic.graphdiff import subtract
from semps.matcher.semantic.graphmatch import where_of
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.semantic.touchkeys import ANY, change_keys, touch_keys
from semps.matcher.semantic.verify import DEFAULT_STEP_BUDGET
from semps.matcher.values import Subscription
from semps.ontology.closure import close
from semps.ontology.expansion import Expansion

#: Solutions an explanation shows with their triples (its count is always the full one).
SHOWN = 10
#: Said of a non-match read without a knowledge graph whose failing pattern has nothing near
#: it in the event: the facts it needs may live in a graph that was not read.
NO_GRAPH = (
    "no knowledge graph was read, only the event's triples closed under the ontology: if "
    "what the event names is described elsewhere (a building model, say), explain against "
    "that graph"
)
Row = tuple["Term | None", ...]


@dataclass(frozen=True, slots=True)
class _Closure:
    """The closure the subscription is evaluated over, and where its triples came from."""

    pairs: Pairs
    old: Pairs | None  # the graph's alone (``None``: no graph)
    facts: Facts
    event: frozenset[Triple]
    graph: frozenset[Triple]  # the graph's asserted triples
    plus: tuple[Triple, ...]  # what the event adds to the graph's closure (graph only)

    def source(self, t: Triple) -> Source:
        if t in self.event:
            return "event"
        return "graph" if t in self.graph else "inferred"


def explain(
    subscription: Subscription,
    event: Event,
    expansion: Expansion | None = None,
    *,
    graph: GraphView | None = None,
    axioms: Iterable[Triple] = (),
    limits: Limits = DEFAULT_LIMITS,
    budget: int = DEFAULT_STEP_BUDGET,
) -> Explanation:
    """Why ``subscription`` matches ``event`` (under ``expansion``, against ``graph``), or
    why not. ``axioms``: the ontology's triples, to name the axioms behind each inference.

    Raises:
        SubscriptionError: the subscription text is invalid.
        EventLimitExceeded: the event's closure passes the limit (as when matching).

    Example:
        >>> ex = "http://ex/"
        >>> sub = Subscription("s1", "semantic", "SELECT ?x { ?x a <http://ex/B> }")
        >>> from semps.ontology.compile import compile_axioms, SUB_CLASS
        >>> rules = compile_axioms([(ex + "A", SUB_CLASS, ex + "B")])
        >>> x = explain(sub, Event("e1", triples=((ex + "a", RDF_TYPE, ex + "A"),)), rules)
        >>> x.matched, x.count, x.derivations[0].rule
        (True, 1, 'cax-sco')
    """
    expansion = expansion if expansion is not None else Expansion()
    compiled = compile_query(subscription.id, parse_query(subscription.text, limits=limits))
    where = where_of(compiled)  # as written: the diagnosis names patterns in this order
    joined = plan(where)  # in join order, as the matcher joins them
    if graph is not None and not graph.empty:
        closure = _with_graph(event, graph, limits)
    else:
        closure = _alone(event, expansion, limits)
    axiom_list = list(axioms)
    base = Explanation(subscription.id, event.id, False, 0)
    try:
        new = Evaluator(closure.pairs, budget).solutions(joined, {})
        old = Evaluator(closure.old, budget).solutions(joined, {}) if closure.old else []
    except OutOfBudget:  # no verdict: the steps that drop it, if a fresh budget finds one
        msg = f"evaluating the subscription took more than its budget of {budget} rows"
        reasons = _why_not(compiled, where, closure, [], budget, expansion)
        return _replace(base, reasons=(Reason("budget", msg), *reasons))
    count, shown = _added(compiled, new, old)
    if count:
        solutions = tuple(_use(compiled, where, s, closure) for s in shown[:SHOWN])
        used = [u.triple for s in solutions for u in s.triples if u.source == "inferred"]
        asserted = closure.event | closure.graph
        deriver = Deriver(closure.facts, asserted.__contains__, expansion, Axioms(axiom_list))
        return Explanation(
            subscription.id,
            event.id,
            True,
            count,
            solutions,
            tuple(deriver.derivations(dict.fromkeys(used))),
            notes=_notes(compiled, count, len(solutions)),
        )
    reasons = _why_not(compiled, where, closure, new, budget, expansion)
    return _replace(base, reasons=tuple(reasons), notes=_graph_note(closure, reasons))


def _replace(
    base: Explanation, reasons: tuple[Reason, ...], notes: tuple[str, ...] = ()
) -> Explanation:
    return Explanation(base.subscription, base.event, False, 0, reasons=reasons, notes=notes)


def _graph_note(closure: _Closure, reasons: list[Reason]) -> tuple[str, ...]:
    """:data:`NO_GRAPH` when no graph was read and a pattern failed with no candidate."""
    if closure.old is not None:
        return ()
    bare = any(r.step in ("pattern", "type") and not r.nearest for r in reasons)
    return (NO_GRAPH,) if bare else ()


def _notes(compiled: CompiledSubscription, count: int, shown: int) -> tuple[str, ...]:
    notes = []
    if compiled.ask:
        notes.append("ASK: one solution, the first found shown")
    elif shown < count:
        notes.append(f"{shown} of {count} solutions shown")
    return tuple(notes)


# -- the closure -----------------------------------------------------------------------------


def _pairs_of(name: str, triples: Iterable[Triple]) -> EventPairs:
    by_prop: dict[str, list[tuple[str, Term]]] = {}
    for s, p, o in dict.fromkeys(triples):
        by_prop.setdefault(p, []).append((s, o))
    return EventPairs(EventParts(name, by_prop))


def _alone(event: Event, expansion: Expansion, limits: Limits) -> _Closure:
    closed = close(expansion, event.triples, limits=limits)
    return _Closure(
        _pairs_of(event.id, closed), None, Facts(closed), frozenset(event.triples), frozenset(), ()
    )


def _with_graph(event: Event, graph: GraphView, limits: Limits) -> _Closure:
    plus = tuple(event_delta(graph, event.triples, limits=limits).term_triples())
    asserted = frozenset(graph.term_triples(asserted_only=True))
    facts = Facts([*graph.term_triples(), *plus])
    old = GraphPairs(graph)
    new = GraphPairs(graph, plus=plus, base=old)
    return _Closure(new, old, facts, frozenset(event.triples), asserted, plus)


# -- counting as the matcher counts ----------------------------------------------------------


def _added(
    compiled: CompiledSubscription, new: list[Solution], old: list[Solution]
) -> tuple[int, list[Solution]]:
    """The solution count as the matcher gives it, and full solutions to show (without a
    graph ``old`` is empty: every solution counts)."""
    if not new:
        return 0, []
    fresh = subtract(new, old)  # full solutions the event adds
    if compiled.ask:
        return (1, (fresh or new)[:1]) if not old else (0, [])
    projection = compiled.projection

    def row(s: Solution) -> Row:
        return tuple(s.get(v) for v in projection)

    if compiled.distinct:
        before = {row(s) for s in old}
        firsts: dict[Row, Solution] = {}
        for s in fresh or new:
            r = row(s)
            if r not in before and r not in firsts:
                firsts[r] = s
        return len(firsts), list(firsts.values())
    gained = Counter(row(s) for s in new)
    gained.subtract(Counter(row(s) for s in old))
    count = sum(n for n in gained.values() if n > 0)
    return count, fresh


# -- a solution's triples --------------------------------------------------------------------


def _use(
    compiled: CompiledSubscription, where: Node, s: Solution, closure: _Closure
) -> SolutionUse:
    triples: dict[Triple, None] = {}
    for p in _positive_patterns(where):
        t = _substitute(p, s)
        if t is not None and t in closure.facts.all:
            triples[t] = None
    shown = compiled.projection if not compiled.ask else ()
    bindings = {v: s[v] for v in shown if v in s}
    return SolutionUse(bindings, tuple(TripleUse(t, closure.source(t)) for t in triples))


def _positive_patterns(node: Node) -> list[TriplePattern]:
    """The triple patterns whose triples a solution is made of (not those of MINUS or
    NOT EXISTS, nor of FILTER EXISTS)."""
    out: list[TriplePattern] = []
    kind = type(node)
    if kind is BGP:
        return [p for p in node.triples if isinstance(p, TriplePattern)]  # type: ignore[union-attr]
    if kind is Minus:
        return _positive_patterns(node.left)  # type: ignore[union-attr]
    if kind in (Filter,):
        out = _positive_patterns(node.inner)  # type: ignore[union-attr]
        for f in node.filters:  # type: ignore[union-attr]
            if type(f) is Exists and not f.negated:
                out += _positive_patterns(f.pattern)
        return out
    if kind is LeftJoin:
        return _positive_patterns(node.left) + _positive_patterns(node.right)  # type: ignore[union-attr]
    for name in ("left", "right", "inner"):
        child = getattr(node, name, None)
        if child is not None:
            out += _positive_patterns(child)
    return out


def _substitute(p: TriplePattern, s: Mapping[str, Term]) -> Triple | None:
    terms: list[Term] = []
    for t in (p.s, p.p, p.o):
        if type(t) is Var:
            value = s.get(t.name)
            if value is None:
                return None
            terms.append(value)
        else:
            terms.append(t)  # type: ignore[arg-type]
    return (terms[0], terms[1], terms[2])  # type: ignore[return-value]


# -- a non-match -----------------------------------------------------------------------------


def _why_not(
    compiled: CompiledSubscription,
    where: Node,
    closure: _Closure,
    new: list[Solution],
    budget: int,
    expansion: Expansion,
) -> list[Reason]:
    reasons: list[Reason] = []
    if closure.old is not None:
        keys = touch_keys(where)
        if not closure.plus:
            return [Reason("graph", "the event adds nothing to the graph's closure")]
        if new:
            msg = (
                f"the graph alone already gives these {len(new)} solution(s); the event "
                "adds none (an event notifies the solutions it adds)"
            )
            return [Reason("graph", msg)]
        touched = change_keys(closure.plus)
        if not (keys & touched) and ANY not in keys:
            msg = (
                f"none of the {len(closure.plus)} triple(s) the event adds to the graph has a "
                "property or class the subscription names"
            )
            reasons.append(Reason("graph", msg))
    elif compiled.algebra is None:
        reasons += _counter_filter(compiled, closure.facts)
    evaluator = Evaluator(closure.pairs, budget)
    try:
        reasons += Diagnosis(closure.facts, evaluator, expansion.expand_class).run(where)
    except OutOfBudget:
        reasons.append(Reason("budget", "the diagnosis ran out of its work budget"))
    return reasons


def _counter_filter(compiled: CompiledSubscription, facts: Facts) -> list[Reason]:
    """The counter filter's verdict (phase 1 of matching): a subscription whose patterns do
    not all find a node pair in the event is dropped before verification."""
    where = where_of(compiled)
    inner = where.inner if isinstance(where, Filter) else where
    if not isinstance(inner, BGP):
        return []
    missing = []
    triples: Sequence[TriplePattern | object] = inner.triples
    for p in triples:
        if isinstance(p, TriplePattern) and not any(_fits(p, t) for t in _near(p, facts)):
            missing.append(p)
    if not missing:
        return []
    total = len(triples)
    msg = (
        f"dropped by the counter filter: {total - len(missing)} of its {total} patterns "
        f"find a node pair in the event (counter {total - len(missing)} < {total})"
    )
    nearest = tuple(("no node pair", pattern_text(p)) for p in missing)
    return [Reason("counter filter", msg, nearest)]


def _near(p: TriplePattern, facts: Facts) -> Iterable[Triple]:
    s = p.s
    if not isinstance(s, Var):
        return [(str(s), q, o) for q, o in facts.out.get(str(s), ())]
    if not isinstance(p.p, Var):
        return facts.by_p.get(str(p.p), ())
    return facts.all


def _fits(p: TriplePattern, t: Triple) -> bool:
    seen: dict[str, Term] = {}
    for term, value in zip((p.s, p.p, p.o), t, strict=True):
        if type(term) is Var:
            if seen.setdefault(term.name, value) != value:
                return False
        elif term != value:
            return False
    return True


from semps.terms import RDF_TYPE  # noqa: E402,F401  (doctest name)
