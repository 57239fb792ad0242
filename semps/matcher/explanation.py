"""Why a subscription matched an event, or why it did not: the values an explanation is
made of (the :meth:`~semps.matcher.base.Matcher.explain` contract), and their plain-text
and JSON forms.

A match lists each solution with the triples it used, each marked by where it came from:
the event (``event``), the knowledge graph (``graph``) or inference (``inferred``); every
inferred triple has a :class:`Derivation`: the OWL 2 RL rule, the triples it read and the
ontology's axioms behind it. A non-match lists :class:`Reason` s, first the step that
dropped the subscription (the counter filter, a pattern with no triple, a FILTER, a type
constraint), each with what the event held nearest to what was asked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal as TypingLiteral

from semps._types import Term, Triple
from semps.terms import n3

__all__ = [
    "Derivation",
    "Explanation",
    "Reason",
    "SolutionUse",
    "TripleUse",
    "render_text",
    "term_json",
    "to_json",
]

Source = TypingLiteral["event", "graph", "inferred"]


@dataclass(frozen=True, slots=True)
class TripleUse:
    """One triple a solution used, and where it came from."""

    triple: Triple
    source: Source


@dataclass(frozen=True, slots=True)
class Derivation:
    """How an inferred triple follows: ``rule`` (OWL 2 RL's name, ``cax-sco`` say) applied
    to ``premises`` (triples of the event, the graph or inferred before) under ``axioms``
    (the ontology's triples it reads; empty when the rule needs none)."""

    triple: Triple
    rule: str
    premises: tuple[Triple, ...]
    axioms: tuple[Triple, ...] = ()


@dataclass(frozen=True, slots=True)
class SolutionUse:
    """One solution: its (projected) bindings and the triples its patterns matched."""

    bindings: Mapping[str, Term]
    triples: tuple[TripleUse, ...]


@dataclass(frozen=True, slots=True)
class Reason:
    """One step of a non-match: ``step`` names it (``counter filter``, ``pattern``,
    ``type``, ``filter``, ``join``, ``minus``, ``graph``, ``budget``), ``message`` says it
    in a sentence, and ``nearest`` lists what the event held closest to what was asked
    (``(what, triple)``: ``same predicate, other class``, ``same class, other property``,
    ``values``)."""

    step: str
    message: str
    nearest: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why ``subscription`` matched ``event`` or not.

    ``count`` is the number of solutions (with a knowledge graph: the solutions the event
    adds to the graph's), as the matcher counts them; ``solutions`` the first of them with
    the triples they used; ``derivations`` how each inferred triple they used (and each
    inferred premise of those) follows; ``reasons`` why there was no match.
    """

    subscription: str
    event: str
    matched: bool
    count: int
    solutions: tuple[SolutionUse, ...] = ()
    derivations: tuple[Derivation, ...] = ()
    reasons: tuple[Reason, ...] = ()
    notes: tuple[str, ...] = field(default=())


#: Prefixes every explanation's text may use.
COMMON_PREFIXES = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
}
_PREFIX = re.compile(r"PREFIX\s+([A-Za-z][\w.-]*)?:\s*<([^>\s]*)>", re.IGNORECASE)


def prefixes_of(text: str) -> dict[str, str]:
    """The common prefixes and those a subscription's text declares (its own win).

    Example:
        >>> prefixes_of("PREFIX ex: <http://ex/> SELECT * { ?x a ex:C }")["ex"]
        'http://ex/'
    """
    found = dict(COMMON_PREFIXES)
    found.update({name or "": iri for name, iri in _PREFIX.findall(text)})
    return found


def compact(term: Term, prefixes: Mapping[str, str]) -> str:
    """A term in N-Triples form, an IRI shortened to ``prefix:local`` where a prefix fits.

    Example:
        >>> compact("http://ex/a", {"ex": "http://ex/"}), compact("http://ex/a/b", {})
        ('ex:a', '<http://ex/a/b>')
    """
    if type(term) is str and not term.startswith("_:"):
        best = max(
            ((name, iri) for name, iri in prefixes.items() if iri and term.startswith(iri)),
            key=lambda item: len(item[1]),
            default=None,
        )
        if best is not None:
            local = term[len(best[1]) :]
            if _LOCAL.fullmatch(local):
                return f"{best[0]}:{local}"
    return n3(term)


_LOCAL = re.compile(r"[\w][\w.-]*(?<!\.)|")


def term_json(term: Term) -> str:
    """A term as JSON carries it: its N-Triples form (``<iri>``, ``_:b``, ``"1"^^<...>``)."""
    return n3(term)


def _triple_text(t: Triple) -> str:
    return f"{n3(t[0])} {n3(t[1])} {n3(t[2])} ."


def to_json(x: Explanation) -> dict[str, object]:
    """The explanation as a JSON object (terms in N-Triples form).

    Example:
        >>> x = Explanation("s1", "e1", False, 0, reasons=(Reason("pattern", "no triple"),))
        >>> to_json(x)["reasons"]
        [{'step': 'pattern', 'message': 'no triple', 'nearest': []}]
    """
    return {
        "subscription": x.subscription,
        "event": x.event,
        "matched": x.matched,
        "count": x.count,
        "solutions": [
            {
                "bindings": {k: term_json(v) for k, v in s.bindings.items()},
                "triples": [
                    {"triple": _triple_text(u.triple), "source": u.source} for u in s.triples
                ],
            }
            for s in x.solutions
        ],
        "derivations": [
            {
                "triple": _triple_text(d.triple),
                "rule": d.rule,
                "premises": [_triple_text(p) for p in d.premises],
                "axioms": [_triple_text(a) for a in d.axioms],
            }
            for d in x.derivations
        ],
        "reasons": [
            {
                "step": r.step,
                "message": r.message,
                "nearest": [{"kind": k, "text": t} for k, t in r.nearest],
            }
            for r in x.reasons
        ],
        "notes": list(x.notes),
    }


def render_text(x: Explanation, prefixes: Mapping[str, str] | None = None) -> str:
    """The explanation in plain text, for a terminal (what ``semps explain`` prints).

    Example:
        >>> print(render_text(Explanation("s1", "e1", False, 0,
        ...     reasons=(Reason("pattern", "no triple matches ?x <http://ex/p> ?y"),))))
        s1 does not match e1
          pattern: no triple matches ?x <http://ex/p> ?y

    ``prefixes`` (with rdf, rdfs, owl and xsd) shorten IRIs, in the messages too
    (:func:`prefixes_of` reads a subscription's).
    """
    names = {**COMMON_PREFIXES, **prefixes} if prefixes is not None else {}

    def term(t: Term) -> str:
        return compact(t, names)

    def triple(t: Triple) -> str:
        return f"{term(t[0])} {term(t[1])} {term(t[2])} ."

    lines: list[str] = []
    if x.matched:
        lines.append(f"{x.subscription} matches {x.event}: {x.count} solution(s)")
    else:
        lines.append(f"{x.subscription} does not match {x.event}")
    for number, sol in enumerate(x.solutions, start=1):
        bound = ", ".join(f"?{k} = {term(v)}" for k, v in sol.bindings.items()) or "(no bindings)"
        lines.append(f"  solution {number}: {bound}")
        lines.extend(f"    [{u.source}] {triple(u.triple)}" for u in sol.triples)
    if x.derivations:
        lines.append("  inferred:")
        for d in x.derivations:
            lines.append(f"    {triple(d.triple)}  by {d.rule}")
            lines.extend(f"      from {triple(p)}" for p in d.premises)
            lines.extend(f"      axiom {triple(a)}" for a in d.axioms)
            if not d.axioms and d.rule in _CHAINED:
                lines.append("      axiom (no single chain: the schema rules between restrictions)")
    for r in x.reasons:
        lines.append(f"  {r.step}: {r.message}")
        lines.extend(f"    {kind}: {text}" for kind, text in r.nearest)
    lines.extend(f"  note: {n}" for n in x.notes)
    text = "\n".join(lines)
    if not names:
        return text
    return _IRI.sub(lambda m: compact(m.group(1), names), text)  # (in messages too)


_CHAINED = frozenset({"cax-sco", "cax-eqc", "prp-spo1", "prp-eqp", "prp-inv", "prp-symp"})
_IRI = re.compile(r"<([^<>\s\"]+)>")
