"""The required part of a subscription's algebra: what the counter filter can index.

A subscription beyond basic graph patterns can only have a solution over an event when
every pattern of one of its *alternatives* has a matching pair in the event: a UNION
gives one alternative per branch; a Join, the combinations of its sides'; OPTIONAL,
MINUS, FILTER and BIND keep the alternatives of what they apply to (an OPTIONAL part
never prunes); VALUES requires nothing. In a basic graph pattern every triple pattern with
a constant predicate is required, and a property path contributes what any of its
matches must use: a link, each step of a sequence (the first anchored at the path's
subject, the last at its object), ``p+``'s first and last steps; ``p*``, ``p?``,
alternatives and negated property sets require nothing (a zero-length path needs no
triple). A variable predicate with a constant subject or object requires a triple of any
property with that end (:data:`ANY_PROPERTY`, which the index matches against every pair of
the event); the other patterns of its group anchor it too.

An alternative with no pattern makes the subscription a candidate of every event (``ASK
{ FILTER(...) }``, ``{ ?s ?p ?o }``).
"""

from __future__ import annotations

from semps.ingest.sparql import algebra as alg
from semps.ingest.sparql.model import PatternTerm, TriplePattern, Var
from semps.matcher.semantic.codes import ANY_PROPERTY, STAR
from semps.matcher.semantic.compiled import Pattern

#: Alternatives kept per subscription; past it, the patterns every alternative requires.
MAX_ALTERNATIVES = 16

Alternative = tuple[Pattern, ...]


def alternatives(node: alg.Node) -> tuple[Alternative, ...]:
    """The alternatives of required patterns (at most :data:`MAX_ALTERNATIVES`).

    Example:
        >>> from semps.ingest.sparql import parse_query
        >>> q = parse_query(
        ...     "PREFIX : <http://e/> SELECT * { { ?x :p ?y } UNION { ?x :q 1 } "
        ...     "OPTIONAL { ?x :r ?z } }"
        ... )
        >>> [[(p.prop, p.key) for p in alt] for alt in alternatives(q.algebra)]
        [[('http://e/p', ('*', '*'))], [('http://e/q', ('*', Literal('1', 'http://www.w3.org/2001/XMLSchema#integer')))]]
    """
    kind = type(node)
    if kind is alg.BGP:
        found: dict[Pattern, None] = {}
        for t in node.triples:  # type: ignore[union-attr]
            for p in _required(t):
                found.setdefault(p)
        return (tuple(found),)
    if kind is alg.Join:
        left, right = alternatives(node.left), alternatives(node.right)  # type: ignore[union-attr]
        combos = [_merge(a, b) for a in left for b in right]
        return _capped(combos)
    if kind is alg.Union:
        return _capped([*alternatives(node.left), *alternatives(node.right)])  # type: ignore[union-attr]
    if kind in (alg.LeftJoin, alg.Minus):
        return alternatives(node.left)  # type: ignore[union-attr]
    if kind in (alg.Filter, alg.Extend):
        return alternatives(node.inner)  # type: ignore[union-attr]
    return ((),)  # VALUES


def _merge(a: Alternative, b: Alternative) -> Alternative:
    return tuple(dict.fromkeys((*a, *b)))


def _capped(found: list[Alternative]) -> tuple[Alternative, ...]:
    unique = list(dict.fromkeys(found))
    if len(unique) <= MAX_ALTERNATIVES:
        return tuple(unique)
    common = set(unique[0]).intersection(*unique[1:])
    return (tuple(p for p in unique[0] if p in common),)


def _required(t: TriplePattern | alg.PathPattern) -> list[Pattern]:
    if type(t) is alg.PathPattern:
        return _path_anchors(t.path, _const(t.s), _const(t.o))
    if type(t.p) is Var:  # type: ignore[union-attr]
        s, o = _const(t.s), _const(t.o)
        return [] if s is None and o is None else [_pattern(ANY_PROPERTY, s, o)]
    return [_pattern(t.p, _const(t.s), _const(t.o))]  # type: ignore[arg-type,union-attr]


def _path_anchors(path: alg.Path, s: PatternTerm | None, o: PatternTerm | None) -> list[Pattern]:
    kind = path[0]
    if kind == "link":
        return [_pattern(path[1], s, o)]
    if kind == "inv":
        return _path_anchors(path[1], o, s)
    if kind == "seq":
        items = path[1]
        last = len(items) - 1
        out = []
        for i, item in enumerate(items):
            out.extend(_path_anchors(item, s if i == 0 else None, o if i == last else None))
        return out
    if kind == "plus":
        first = _path_anchors(path[1], s, None)
        return first + _path_anchors(path[1], None, o) if o is not None else first
    return []


def _const(term: PatternTerm) -> PatternTerm | None:
    return None if type(term) is Var else term


def _pattern(prop: str, s: PatternTerm | None, o: PatternTerm | None) -> Pattern:
    return Pattern(prop, (STAR if s is None else s, STAR if o is None else o), None, None)  # type: ignore[arg-type]
