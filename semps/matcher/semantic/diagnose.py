"""Why a subscription has no solution over an event's closure: the step that dropped it.

Walks the subscription's algebra the way its solutions are built and stops at the first
part that gives none: in a basic graph pattern the first pattern (in the order the
subscription wrote them) with no triple is named, else the patterns are joined one by one
(as written, each next one sharing a variable with those before when one does) and the
first that agrees with none of the rows before it is named, with the triples nearest to it
(same predicate, other class; same class, other property); a FILTER is named when the rows
before it exist and it rejects every one, with the values it saw; a MINUS when it removed
every solution. The counter filter's verdict (its seed's phase 1: each pattern needs a node
pair) is stated first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from semps._types import Term, Triple
from semps.ingest.sparql import algebra as alg
from semps.ingest.sparql.evaluate import Evaluator, Solution
from semps.ingest.sparql.model import TriplePattern, Var
from semps.matcher.explanation import Reason
from semps.matcher.semantic.derive import Facts
from semps.terms import RDF_TYPE, n3

#: Candidates listed per kind; rows a pattern-by-pattern join keeps at most.
NEAREST = 5
ROWS = 100_000


def pattern_text(p: TriplePattern | alg.PathPattern) -> str:
    """A triple pattern as the subscription would write it (full IRIs)."""
    if isinstance(p, alg.PathPattern):
        return f"{_term(p.s)} (path) {_term(p.o)}"
    return f"{_term(p.s)} {_term(p.p)} {_term(p.o)}"


def _term(t: Any) -> str:
    return str(t) if type(t) is Var else n3(t)


def _triple(t: Triple) -> str:
    return f"{n3(t[0])} {n3(t[1])} {n3(t[2])}"


def filter_text(ast: Any) -> str:
    """A FILTER expression's AST (:mod:`semps.ingest.sparql.filters`) as text."""
    kind = ast[0]
    if kind == "var":
        return f"?{ast[1]}"
    if kind == "term":
        return n3(ast[1])
    if kind in ("or", "and"):
        joiner = " || " if kind == "or" else " && "
        return "(" + joiner.join(filter_text(a) for a in ast[1]) + ")"
    if kind == "not":
        return f"!{filter_text(ast[1])}"
    if kind == "cmp":
        return f"{filter_text(ast[2])} {ast[1]} {filter_text(ast[3])}"
    if kind == "in":
        items = ", ".join(filter_text(a) for a in ast[3])
        return f"{filter_text(ast[2])} {'NOT IN' if ast[1] else 'IN'} ({items})"
    if kind == "arith":
        rest = " ".join(f"{op} {filter_text(e)}" for op, e in ast[2])
        return f"({filter_text(ast[1])} {rest})"
    if kind in ("neg", "pos"):
        return ("-" if kind == "neg" else "+") + filter_text(ast[1])
    if kind == "call":
        name = ast[1] if ":" not in ast[1] else f"<{ast[1]}>"
        return f"{name}({', '.join(filter_text(a) for a in ast[2])})"
    return repr(ast)


def _expr_text(f: Any) -> str:
    if type(f) is alg.Exists:
        return ("NOT EXISTS" if f.negated else "EXISTS") + " { ... }"
    ast = getattr(f, "ast", None)
    if ast is None and type(f) is alg.WithExists:
        ast = getattr(f.expr, "ast", None)
    return filter_text(ast) if ast is not None else repr(f)


class Diagnosis:
    """The reasons one subscription has no solution over one closure."""

    def __init__(
        self,
        facts: Facts,
        evaluator: Evaluator,
        ancestors: Callable[[str], frozenset[str]] = frozenset,
    ) -> None:
        self.facts = facts
        self.ev = evaluator
        #: A class's ancestors (and itself): the classes nearest an unmet type come first.
        self.ancestors = ancestors
        self.classes: dict[str, set[str]] = {}  # variable -> classes the query asks of it

    def run(self, where: alg.Node) -> list[Reason]:
        """Why ``where`` gives no solution (its first failing part, then inside it)."""
        _collect_classes(where, self.classes)
        return self._why(where)

    def _why(self, node: alg.Node) -> list[Reason]:
        kind = type(node)
        if kind is alg.BGP:
            return self._bgp(node.triples)  # type: ignore[union-attr]
        if kind is alg.Filter:
            inner = self.ev.solutions(node.inner, {})  # type: ignore[union-attr]
            if not inner:
                return self._why(node.inner)  # type: ignore[union-attr]
            return self._filters(node.filters, inner)  # type: ignore[union-attr]
        if kind is alg.Join:
            for side in (node.left, node.right):  # type: ignore[union-attr]
                if not self.ev.solutions(side, {}):
                    return self._why(side)
            msg = "each part has solutions, but none agree on their shared variables"
            return [Reason("join", msg)]
        if kind is alg.LeftJoin:
            return self._why(node.left)  # type: ignore[union-attr]
        if kind is alg.Union:
            out = [Reason("union", "neither alternative of the UNION has a solution")]
            return out + self._why(node.left) + self._why(node.right)  # type: ignore[union-attr]
        if kind is alg.Minus:
            left = self.ev.solutions(node.left, {})  # type: ignore[union-attr]
            if not left:
                return self._why(node.left)  # type: ignore[union-attr]
            return [Reason("minus", f"MINUS removed every one of its {len(left)} solution(s)")]
        if kind is alg.Extend:
            return self._why(node.inner)  # type: ignore[union-attr]
        if kind is alg.Values:
            return [Reason("values", "no VALUES row agrees with the rest of the pattern")]
        return [Reason("pattern", "no solution")]

    # -- basic graph patterns ----------------------------------------------------------------

    def _alone(self, p: TriplePattern | alg.PathPattern) -> list[Solution]:
        """The pattern's solutions on its own."""
        if isinstance(p, alg.PathPattern):
            return self.ev.solutions(alg.BGP((p,)), {})
        found = []
        for t in self._matching(p):
            self.ev.tick()  # (the evaluator's budget bounds the whole diagnosis)
            bound = _bind(p, t)
            if bound is not None:
                found.append(bound)
        return found

    def _bgp(self, patterns: tuple[TriplePattern | alg.PathPattern, ...]) -> list[Reason]:
        alone = [self._alone(p) for p in patterns]
        seen: set[str] = set()
        for number, (p, found) in enumerate(zip(patterns, alone, strict=True), start=1):
            typed_before = _type_of_bound(p, [dict.fromkeys(seen, "")])
            if not found and not typed_before:  # no triple at all: said first
                return [self._missing(number, p, [])]
            seen |= p.variables()
        rows: list[Solution] = [{}]
        before: list[int] = []  # the patterns joined so far, by number
        for i in _connected_order(patterns):
            p, found, number = patterns[i], alone[i], i + 1
            if not found:
                return [self._missing(number, p, rows)]
            joined = _join(rows, found, self.ev.tick)
            if not joined and _type_of_bound(p, rows):
                assert isinstance(p, TriplePattern)
                msg = (
                    f"pattern {number} `{pattern_text(p)}`: the nodes {_listed(before)} "
                    f"bind to {p.s} are not of class {_term(p.o)} (type constraint unmet)"
                )
                return [Reason("type", msg, tuple(self._other_classes(p, rows)))]
            if not joined:
                shared = sorted(set().union(*(r.keys() for r in rows[:1])) & p.variables())
                names = ", ".join(f"?{v}" for v in shared)
                msg = (
                    f"pattern {number} `{pattern_text(p)}` has {len(found)} match(es) on its "
                    f"own, none agreeing with {_listed(before)} on {names}"
                )
                nearest = [("this pattern alone", _binding_text(b)) for b in found[:NEAREST]]
                nearest += [("patterns before", _binding_text(r)) for r in rows[:NEAREST]]
                return [Reason("join", msg, tuple(nearest))]
            rows = joined
            before.append(number)
        return [Reason("pattern", "every pattern matched (the failure is elsewhere)")]

    def _matching(self, p: TriplePattern) -> Iterable[Triple]:
        facts = self.facts
        s, o = p.s, p.o
        if not isinstance(s, Var):
            return [(str(s), q, x) for q, x in facts.out.get(str(s), ())]
        if not isinstance(o, Var):
            return [(x, q, o) for x, q in facts.into.get(o, ())]
        if not isinstance(p.p, Var):
            return facts.by_p.get(str(p.p), ())
        return facts.all

    def _missing(
        self, number: int, p: TriplePattern | alg.PathPattern, rows: list[Solution]
    ) -> Reason:
        where = f"pattern {number} `{pattern_text(p)}`"
        if isinstance(p, alg.PathPattern):
            return Reason("pattern", f"{where}: no path in the event's closure")
        if p.p == RDF_TYPE and type(p.o) is not Var:
            msg = f"{where}: no node of class {_term(p.o)} (type constraint unmet)"
            return Reason("type", msg, tuple(self._other_classes(p, rows)))
        msg = f"{where}: no triple matches it"
        return Reason("pattern", msg, tuple(self._nearest(p)))

    def _other_classes(self, p: TriplePattern, rows: list[Solution]) -> list[tuple[str, str]]:
        """Type triples of the nodes the pattern's subject could be (its bindings so far),
        else any: same predicate, other class."""
        facts = self.facts
        nodes: list[str] = []
        if type(p.s) is Var and rows and p.s.name in rows[0]:
            nodes = list(dict.fromkeys(str(r[p.s.name]) for r in rows if p.s.name in r))
        elif type(p.s) is not Var:
            nodes = [str(p.s)]
        found: list[Triple] = [(n, RDF_TYPE, c) for n in nodes for c in facts.types(n)]
        if not nodes:
            found = list(facts.by_p.get(RDF_TYPE, ()))
        wanted = self.ancestors(str(p.o))

        def nearness(t: Triple) -> tuple[bool, int, bool, Triple]:
            # a class above the one asked for, the most specific first; then named ones
            cls = str(t[2])
            return (cls not in wanted, -len(self.ancestors(cls)), cls.startswith("_:"), t)

        found.sort(key=nearness)
        return [("same predicate, other class", _triple(t)) for t in found[:NEAREST]]

    def _nearest(self, p: TriplePattern) -> list[tuple[str, str]]:
        facts = self.facts
        out: list[tuple[str, str]] = []
        classes = self.classes.get(p.s.name, set()) if type(p.s) is Var else set()
        if type(p.p) is not Var:
            same_p = sorted(facts.by_p.get(str(p.p), ()))
            for t in same_p[:NEAREST]:
                types = sorted(facts.types(t[0]))
                # (its subject lacks a class the subscription asks of the pattern's subject)
                kind = "other class" if classes - set(types) else "other node"
                shown = "".join(f" ; a {n3(c)}" for c in types[:3])
                out.append((f"same predicate, {kind}", f"{_triple(t)}{shown}"))
        for cls in sorted(classes):
            members = [s for s, _, o in facts.by_p.get(RDF_TYPE, ()) if o == cls]
            near = sorted(
                (s, q, o) for s in members for q, o in facts.out.get(s, ()) if q != RDF_TYPE
            )
            out += [("same class, other property", _triple(t)) for t in near[:NEAREST]]
        return out

    # -- filters -----------------------------------------------------------------------------

    def _filters(self, filters: tuple[Any, ...], rows: list[Solution]) -> list[Reason]:
        for f in filters:
            passing = [r for r in rows if self.ev.passes((f,), r)]
            if passing:
                rows = passing
                continue
            names = sorted(f.variables()) if hasattr(f, "variables") else []
            values = [
                ("values", ", ".join(f"?{v} = {n3(r[v]) if v in r else 'unbound'}" for v in names))
                for r in rows[:NEAREST]
            ]
            msg = (
                f"FILTER {_expr_text(f)} is false (or an error) on every one of the "
                f"{len(rows)} row(s) the patterns give"
            )
            return [Reason("filter", msg, tuple(values))]
        return [Reason("filter", "each FILTER passes some row, but no row passes them all")]


def _connected_order(patterns: tuple[TriplePattern | alg.PathPattern, ...]) -> list[int]:
    """The patterns' positions in the order the diagnosis joins them: as written, except
    that each next one shares a variable with those joined when one does (LUBM's query 9
    writes its three type patterns first: joined as written, a cross product past the
    budget)."""
    left = list(range(len(patterns)))
    bound: set[str] = set()
    order = []
    while left:
        pick = next((i for i in left if patterns[i].variables() & bound), left[0])
        left.remove(pick)
        order.append(pick)
        bound |= patterns[pick].variables()
    return order


def _listed(numbers: list[int]) -> str:
    """``pattern 1``, ``patterns 1-3`` (in order from the first), else ``patterns 1, 4, 2``."""
    if len(numbers) == 1:
        return f"pattern {numbers[0]}"
    if numbers == list(range(1, len(numbers) + 1)):
        return f"patterns 1-{len(numbers)}"
    return "patterns " + ", ".join(map(str, numbers))


def _bind(p: TriplePattern, t: Triple) -> Solution | None:
    out: Solution = {}
    for term, value in zip((p.s, p.p, p.o), t, strict=True):
        if type(term) is Var:
            if out.get(term.name, value) != value:
                return None
            out[term.name] = value
        elif term != value:
            return None
    return out


def _join(left: list[Solution], right: list[Solution], tick: Callable[[], None]) -> list[Solution]:
    out: list[Solution] = []
    for a in left:
        for b in right:
            tick()
            if all(a[k] == v for k, v in b.items() if k in a):
                out.append({**a, **b})
                if len(out) >= ROWS:
                    return out
    return out


def _binding_text(b: Mapping[str, Term]) -> str:
    return ", ".join(f"?{k} = {n3(v)}" for k, v in b.items())


def _collect_classes(node: Any, out: dict[str, set[str]]) -> None:
    if type(node) is alg.BGP:
        for p in node.triples:
            if isinstance(p, TriplePattern) and p.p == RDF_TYPE and type(p.s) is Var:
                if type(p.o) is not Var:
                    out.setdefault(p.s.name, set()).add(str(p.o))
        return
    names = ("inner", "left", "right") if type(node) is not alg.Minus else ("left",)
    for name in names:
        child = getattr(node, name, None)
        if child is not None:
            _collect_classes(child, out)


def _type_of_bound(p: TriplePattern | alg.PathPattern, rows: list[Solution]) -> bool:
    """Whether ``p`` is ``?v a C`` with ``?v`` bound by the patterns before it."""
    return (
        isinstance(p, TriplePattern)
        and p.p == RDF_TYPE
        and type(p.s) is Var
        and type(p.o) is not Var
        and bool(rows)
        and p.s.name in rows[0]
    )
