"""Evaluation of SPARQL algebra (SPARQL 1.1 section 18.5) over a graph of node pairs.

The graph is anything with the :class:`Pairs` shape: an event closed under the ontology
(the matcher's :class:`~semps.matcher.semantic.index.EventPairs`: PartA and PartB's type
pairs), the knowledge graph's closure or its asserted triples (:mod:`semps.graph.pairs`,
what a SPARQL Update's WHERE clause reads). So a property path such as ``brick:feeds+``
follows ``feeds`` edges that exist only through the closure (an inverse ``isFedBy``, a
sub-property), exactly as a basic graph pattern sees them.

Solutions are dicts (variable -> term); an unbound variable is absent. Multisets are
lists: Join, LeftJoin (OPTIONAL, with its filters), Union, Minus, Filter, Extend (BIND,
``SELECT (expr AS ?v)``) and Values follow the specification; EXISTS substitutes the
solution's bindings into its pattern (the pattern is evaluated from them).

**Paths.** A link, its inverse, a sequence and an alternative keep multiplicities (they are
joins and unions); ``p*``, ``p+`` and ``p?`` give distinct pairs, ``p*`` and ``p?`` include
the zero-length path of every node of the graph (every subject and object), or of a
constant end even if the graph does not hold it. ``p+`` from a bound end is a breadth-first
search that visits each node once: O(n + m) over a graph of n nodes and m triples; with
both ends unbound, one search per node: O(n (n + m)).

**Work budget.** Every row a step produces (a triple matched, a path edge followed, a pair
of solutions joined) costs one unit of the verification budget
(:data:`~semps.matcher.semantic.verify.DEFAULT_STEP_BUDGET`, a million). Past it the
evaluation stops and the subscription does not match the event (evaluation is breadth
first: it holds no solution of the whole pattern before it ends). So an event of n triples
costs at most polynomial work in n, and never more than the budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, cast

from semps._types import Term
from semps.ingest.sparql import algebra as alg
from semps.ingest.sparql.filters import EvalError
from semps.ingest.sparql.model import PatternTerm, TriplePattern, Var
from semps.ingest.sparql.plan import plan as plan  # re-exported for the evaluator's callers
from semps.terms import XSD, Literal

Solution = dict[str, Term]
Pair = tuple[Term, Term]

#: The node-pair key of a pattern with both ends variables (the index's ``(*, *)``).
_ANY = ("*", "*")


class PairIndex(Protocol):
    """One property's pairs by one of their ends."""

    def get(self, node: Term, default: list[tuple[str, Term]], /) -> list[tuple[str, Term]]:
        """The pairs with ``node`` at that end (``default`` when none)."""
        ...


class Pairs(Protocol):
    """A graph as the evaluator reads it: each property's ``(subject, object)`` pairs
    (``by_prop``: iterable, ``in``, ``get`` and ``values``), the pairs of one property by
    subject (``index(p, ("*", "*"), 0)``) or object (position 1), and a cache the evaluator
    keeps path pairs and pattern solutions in while the graph does not change."""

    @property
    def by_prop(self) -> Mapping[str, list[tuple[str, Term]]]:
        """Property -> its pairs."""
        ...

    @property
    def path_cache(self) -> dict[Any, Any]:
        """The evaluator's cache for this graph."""
        ...

    def index(self, prop: str, key: Any, position: int) -> PairIndex:
        """``prop``'s pairs by subject (0) or object (1)."""
        ...


_HELD = ("rows held",)  # the path cache's count of the rows it holds
#: Rows (solutions, path pairs) one event's cache holds at most, over all subscriptions.
CACHE_ROWS = 2_000_000
_TRUE, _FALSE = Literal("true", XSD + "boolean"), Literal("false", XSD + "boolean")
_NODES: tuple[alg.Path, None, None] = (("nodes",), None, None)  # the path cache's node list
_EXPRESSION_ERRORS = (EvalError, ArithmeticError, ValueError, TypeError, OverflowError)


class OutOfBudget(Exception):
    """The evaluation used up its work budget."""


def term_value(expr: Any, bindings: Mapping[str, Term]) -> Term | None:
    """An expression's value on a solution (``Expression.value``), ``None`` for an
    evaluation error (BIND and ``SELECT (expr AS ?v)`` leave the variable unbound)."""
    try:
        return expr.value(bindings)  # type: ignore[no-any-return]
    except _EXPRESSION_ERRORS:
        return None


class Evaluator:
    """Evaluates algebra trees over one graph of pairs within a work budget."""

    def __init__(self, pairs: Pairs, budget: int) -> None:
        self.pairs = pairs
        self.by_prop = pairs.by_prop
        self.budget = budget
        self.cache: dict[Any, Any] = pairs.path_cache

    def keep(self, key: object, rows: list[Any]) -> list[Any]:
        """Cache ``rows`` for the event, while the event's cache holds fewer than
        :data:`CACHE_ROWS` rows (each subscription's work is bounded by its budget, the
        memory the event keeps for all of them by this)."""
        held = self.cache.get(_HELD, 0) + len(rows)
        if held <= CACHE_ROWS:
            self.cache[key] = rows
            self.cache[_HELD] = held
        return rows

    def tick(self, n: int = 1) -> None:
        self.budget -= n
        if self.budget < 0:
            raise OutOfBudget

    # -- the algebra -----------------------------------------------------------------------

    def solutions(self, node: alg.Node, seed: Solution) -> list[Solution]:
        """The node's solutions, each extending ``seed`` (EXISTS's substitution)."""
        kind = type(node)
        if kind is alg.BGP:
            if seed:
                return self.bgp(node.triples, seed)  # type: ignore[union-attr]
            found = self.cache.get(node)
            if found is None:  # shared by the subscriptions of the event (never mutated)
                found = self.keep(node, self.bgp(node.triples, seed))  # type: ignore[union-attr]
            else:
                self.tick()
            return found
        if kind is alg.Join:
            return self.join(self.solutions(node.left, seed), self.solutions(node.right, seed))  # type: ignore[union-attr]
        if kind is alg.LeftJoin:
            left = self.solutions(node.left, seed)  # type: ignore[union-attr]
            if not left:  # OPTIONAL keeps left solutions only: no right side to read
                return []
            return self.left_join(node.filters, left, self.solutions(node.right, seed))  # type: ignore[union-attr]
        if kind is alg.Union:
            return self.solutions(node.left, seed) + self.solutions(node.right, seed)  # type: ignore[union-attr]
        if kind is alg.Minus:
            left = self.solutions(node.left, seed)  # type: ignore[union-attr]
            if not left:  # likewise MINUS
                return []
            return self.minus(left, self.solutions(node.right, seed))  # type: ignore[union-attr]
        if kind is alg.Filter:
            inner = self.solutions(node.inner, seed)  # type: ignore[union-attr]
            return [s for s in inner if self.passes(node.filters, s)]  # type: ignore[union-attr]
        if kind is alg.Extend:
            return self.extend(node, seed)  # type: ignore[arg-type]
        return self.values(node, seed)  # type: ignore[arg-type]

    def passes(self, filters: Iterable[Any], solution: Solution) -> bool:
        """True when every filter holds on the solution."""
        for f in filters:
            self.tick()
            if type(f) is alg.Exists:
                found = bool(self.solutions(f.pattern, solution))
                if found == f.negated:
                    return False
            elif type(f) is alg.WithExists:
                if not f.expr.evaluate(self.with_exists(f, solution)):
                    return False
            elif not f.evaluate(solution):
                return False
        return True

    def with_exists(self, expr: alg.WithExists, solution: Solution) -> Solution:
        """The solution with each EXISTS of the expression bound to its answer."""
        answers = dict(solution)
        for name, exists in expr.exists:
            found = bool(self.solutions(exists.pattern, solution)) != exists.negated
            answers[name] = _TRUE if found else _FALSE
        return answers

    def join(self, left: list[Solution], right: list[Solution]) -> list[Solution]:
        """Every compatible pair merged: hashed on the variables both sides always bind."""
        if not left or not right:
            return []
        shared = _certain(left, right)
        buckets = _buckets(right, shared) if shared else {}
        out = []
        for a in left:
            candidates = buckets.get(tuple(a[v] for v in shared), ()) if shared else right
            for b in candidates:
                self.tick()
                if compatible(a, b):
                    out.append({**a, **b})
        return out

    def left_join(
        self, filters: tuple[Any, ...], left: list[Solution], right: list[Solution]
    ) -> list[Solution]:
        """Each left solution merged with every compatible right one that passes
        ``filters``, or alone when none does (OPTIONAL)."""
        shared = _certain(left, right)
        buckets = _buckets(right, shared) if shared else {}
        out = []
        for a in left:
            extended = False
            for b in buckets.get(tuple(a[v] for v in shared), ()) if shared else right:
                self.tick()
                if compatible(a, b):
                    merged = {**a, **b}
                    if self.passes(filters, merged):
                        out.append(merged)
                        extended = True
            if not extended:
                out.append(a)
        return out

    def minus(self, left: list[Solution], right: list[Solution]) -> list[Solution]:
        """The left solutions compatible with no right one that shares a variable (MINUS)."""
        out = []
        for a in left:
            removed = False
            for b in right:
                self.tick()
                if compatible(a, b) and not a.keys().isdisjoint(b):
                    removed = True
                    break
            if not removed:
                out.append(a)
        return out

    def extend(self, node: alg.Extend, seed: Solution) -> list[Solution]:
        out = []
        for s in self.solutions(node.inner, seed):
            self.tick()
            expr = node.expr
            if type(expr) is alg.WithExists:
                value = term_value(expr.expr, self.with_exists(expr, s))
            else:
                value = term_value(expr, s)
            if value is not None:
                s = {**s, node.var: value}
            out.append(s)
        return out

    def values(self, node: alg.Values, seed: Solution) -> list[Solution]:
        out = []
        for row in node.rows:
            self.tick()
            s = dict(seed)
            for name, term in zip(node.variables, row, strict=True):
                if term is None:
                    continue
                if s.setdefault(name, term) != term:
                    break
            else:
                out.append(s)
        return out

    # -- basic graph patterns ----------------------------------------------------------------

    def bgp(
        self, triples: tuple[TriplePattern | alg.PathPattern, ...], seed: Solution
    ) -> list[Solution]:
        """The patterns matched one at a time from ``seed``, in their order (which
        :func:`plan` chose: the most bound first)."""
        found = [dict(seed)]
        for pattern in triples:
            out: list[Solution] = []
            for s in found:
                out.extend(self.match(pattern, s))
            found = out
            if not found:
                break
        return found

    def match(self, pattern: TriplePattern | alg.PathPattern, s: Solution) -> list[Solution]:
        """The solution extended by each way the pattern matches the graph."""
        subject, obj = _value(pattern.s, s), _value(pattern.o, s)
        if type(pattern) is TriplePattern and type(pattern.p) is str:
            return self.match_link(pattern, s, subject, obj)
        if type(pattern) is alg.PathPattern:
            rows: Iterable[tuple[Term, Term | None, Term]] = (
                (a, None, b) for a, b in self.path(pattern.path, subject, obj)
            )
        else:
            rows = self.triples(subject, _value(pattern.p, s), obj)  # type: ignore[union-attr]
        out = []
        p_term = None if type(pattern) is alg.PathPattern else pattern.p  # type: ignore[union-attr]
        for a, p, b in rows:
            self.tick()
            new = dict(s)
            if _bind(new, pattern.s, a) and _bind(new, p_term, p) and _bind(new, pattern.o, b):
                out.append(new)
        return out

    def match_link(
        self, pattern: TriplePattern, s: Solution, subject: Term | None, obj: Term | None
    ) -> list[Solution]:
        """:meth:`match` for a triple pattern with a constant predicate (the common case)."""
        rows = self.link(pattern.p, subject, obj)  # type: ignore[arg-type]
        self.tick(len(rows))
        return bind_link(pattern, s, subject, obj, rows)

    def triples(
        self, s: Term | None, p: Term | None, o: Term | None
    ) -> Iterable[tuple[Term, Term, Term]]:
        """The graph's triples matching the bound positions (``None`` is unbound)."""
        props: Iterable[str] = (
            self.by_prop if p is None else (cast(str, p),) if p in self.by_prop else ()
        )
        for prop in props:
            for a, b in self.link(prop, s, o):
                yield a, prop, b

    def link(self, prop: str, s: Term | None, o: Term | None) -> list[tuple[str, Term]]:
        """One property's pairs with the bound ends."""
        pairs = self.pairs
        if s is not None:
            rows = pairs.index(prop, _ANY, 0).get(s, [])
            return [r for r in rows if r[1] == o] if o is not None else rows
        if o is not None:
            return pairs.index(prop, _ANY, 1).get(o, [])
        return self.by_prop.get(prop, [])

    # -- property paths ---------------------------------------------------------------------

    def path(self, path: alg.Path, s: Term | None, o: Term | None) -> list[Pair]:
        """The (subject, object) pairs the path connects, with the bound ends; cached per
        event (every subscription with the same path shares it)."""
        key = (path, s, o)
        found = self.cache.get(key)
        if found is None:
            found = self.keep(key, self._path(path, s, o))
        else:
            self.tick()
        return found

    def _path(self, path: alg.Path, s: Term | None, o: Term | None) -> list[Pair]:
        kind = path[0]
        if kind == "link":
            rows = self.link(path[1], s, o)
            self.tick(len(rows))
            return rows  # type: ignore[return-value]
        if kind == "inv":
            return [(b, a) for a, b in self.path(path[1], o, s)]
        if kind == "alt":
            return [pair for item in path[1] for pair in self.path(item, s, o)]
        if kind == "seq":
            return self.sequence(path[1], s, o)
        if kind == "nps":
            return self.negated(path[1], path[2], s, o)
        if kind == "opt":
            return list(dict.fromkeys([*self.zero(s, o), *self.path(path[1], s, o)]))
        return self.closure(path[1], s, o, zero=kind == "star")

    def sequence(self, items: tuple[alg.Path, ...], s: Term | None, o: Term | None) -> list[Pair]:
        first = items[0]
        rest = items[1] if len(items) == 2 else ("seq", items[1:])
        out: list[Pair] = []
        if s is None and o is not None:  # from the bound end
            for m, b in self.path(rest, None, o):
                out.extend((a, b) for a, _ in self.path(first, None, m))
        else:
            for a, m in self.path(first, s, None):
                out.extend((a, b) for _, b in self.path(rest, m, o))
        self.tick(len(out))
        return out

    def negated(
        self, forward: tuple[str, ...], inverse: tuple[str, ...], s: Term | None, o: Term | None
    ) -> list[Pair]:
        """``!(a|^b)``: the pairs linked by a property outside the set, once each (the
        predicate is not part of the solution); ``!(a|^b)`` is ``!a | ^!b``."""
        out: list[Pair] = []
        if forward or not inverse:
            found: dict[Pair, None] = {}
            for prop in self.by_prop:
                if prop not in forward:
                    found.update(dict.fromkeys(self.link(prop, s, o)))
            out.extend(found)
        if inverse:
            found = {}
            for prop in self.by_prop:
                if prop not in inverse:
                    found.update(dict.fromkeys((b, a) for a, b in self.link(prop, o, s)))
            out.extend(found)
        self.tick(len(out))
        return out

    def zero(self, s: Term | None, o: Term | None) -> list[Pair]:
        """Zero-length paths: a bound end to itself, or every node of the graph."""
        if s is not None and o is not None:
            return [(s, s)] if s == o else []
        if s is not None or o is not None:
            node = s if s is not None else o
            return [(node, node)]  # type: ignore[list-item]
        return [(n, n) for n in self.nodes()]

    def nodes(self) -> list[Term]:
        """Every subject and object of the graph, once."""
        found = self.pairs.path_cache.get(_NODES)
        if found is None:
            seen: dict[Term, None] = {}
            for rows in self.by_prop.values():
                self.tick(len(rows))
                for a, b in rows:
                    seen[a] = None
                    seen[b] = None
            found = [(n, n) for n in seen]
            self.pairs.path_cache[_NODES] = found
        return [n for n, _ in found]

    def closure(self, inner: alg.Path, s: Term | None, o: Term | None, zero: bool) -> list[Pair]:
        """``inner*`` (``zero``) or ``inner+``: distinct pairs, one search per start."""
        if s is not None:
            return [(s, b) for b in self.reach(inner, s, zero) if o is None or b == o]
        if o is not None:
            return [(a, o) for a in self.reach(("inv", inner), o, zero)]
        out: list[Pair] = []
        for n in self.nodes():
            out.extend((n, b) for b in self.reach(inner, n, zero))
        return out

    def reach(self, inner: alg.Path, start: Term, zero: bool) -> list[Term]:
        """The nodes reached from ``start`` by one or more ``inner`` steps (and ``start``
        itself with ``zero``): a search expanding each node once."""
        found: dict[Term, None] = {start: None} if zero else {}
        expanded = {start}
        stack = [start]
        while stack:
            node = stack.pop()
            for _, m in self.path(inner, node, None):
                self.tick()
                found.setdefault(m, None)
                if m not in expanded:
                    expanded.add(m)
                    stack.append(m)
        return list(found)


def _certain(left: list[Solution], right: list[Solution]) -> tuple[str, ...]:
    """The variables every solution of both sides binds (what a hash join keys on)."""
    if not left or not right:
        return ()
    found = set(left[0]).intersection(*left[1:], *right)
    return tuple(sorted(found))


def _buckets(
    rows: list[Solution], shared: tuple[str, ...]
) -> dict[tuple[Term, ...], list[Solution]]:
    found: dict[tuple[Term, ...], list[Solution]] = {}
    for r in rows:
        found.setdefault(tuple(r[v] for v in shared), []).append(r)
    return found


def compatible(a: Mapping[str, Term], b: Mapping[str, Term]) -> bool:
    """Whether two solutions agree on the variables both bind."""
    if len(b) < len(a):
        a, b = b, a
    for v, t in a.items():
        u = b.get(v)
        if u is not None and u != t:
            return False
    return True


def bind_link(
    pattern: TriplePattern,
    s: Solution,
    subject: Term | None,
    obj: Term | None,
    rows: Iterable[tuple[Term, Term]],
) -> list[Solution]:
    """The solution ``s`` extended by each of a triple pattern's ``rows`` (its property's
    pairs with the bound ends ``subject`` and ``obj``, ``None`` where unbound)."""
    s_new = pattern.s.name if subject is None else None  # type: ignore[union-attr]
    o_new = pattern.o.name if obj is None else None  # type: ignore[union-attr]
    if s_new is not None and s_new == o_new:
        return [{**s, s_new: a} for a, b in rows if a == b]
    if s_new is not None and o_new is not None:
        return [{**s, s_new: a, o_new: b} for a, b in rows]
    if s_new is not None:
        return [{**s, s_new: a} for a, _ in rows]
    if o_new is not None:
        return [{**s, o_new: b} for _, b in rows]
    return [dict(s) for _ in rows]


def _value(term: PatternTerm | None, s: Solution) -> Term | None:
    if type(term) is Var:
        return s.get(term.name)
    return term  # type: ignore[return-value]


def _bind(s: Solution, term: PatternTerm | None, value: Term | None) -> bool:
    """Bind a variable position to ``value`` (False when it is bound to another term)."""
    if type(term) is not Var or value is None:
        return True
    return s.setdefault(term.name, value) == value
