"""The W3C SPARQL test suites (sparql10 = DAWG data-r2, sparql11), black box through the path
``semps match`` takes: the data file is one event, the query one subscription, the ontology
empty (a match iff the expected result has a row, ASK: true; the solutions are the rows).
Entailment tests read the data as the ontology and as the event.

Each test ends in one of:

- **passed**: the answers are the W3C answers exactly (solution multisets under W3C term
  equality, blank nodes up to renaming); a positive syntax test parses; a negative one is
  refused.
- **refused**: the query uses a construct outside the subscription language
  (:data:`OUTSIDE`): refused with the construct named, as it must be.
- **pending** (xfail): refused naming a construct that is *in* the language but not built
  yet (:data:`IN_LANGUAGE`). As constructs land, these turn into tests that must pass.
- **known gap** (xfail): :data:`KNOWN_GAPS`, in the language but failing today, each with
  what is missing (a known gap that passes fails, until it leaves the list).
- **excluded** (skip): :data:`EXCLUDED`, each with its reason.

Anything else fails. ``python tests/conformance/test_w3c_sparql.py`` prints the counts.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from semps_test_support import WORKLOADS
from w3c_sparql_manifest import W3CTest, load_tests, read_result, same_solutions

from semps.documents import read_triples
from semps.errors import SubscriptionError, SubscriptionSyntaxError, UnsupportedQueryError
from semps.event import Event
from semps.matcher.base import MatchContext
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.values import Subscription
from semps.ontology import Expansion, compile_axioms, ontology_triples

SUITE = WORKLOADS / "w3c-sparql" / "sparql"
TESTS = load_tests(SUITE)

#: Constructs outside the subscription language: refusing them (naming them) is a pass.
OUTSIDE = frozenset(
    {
        "GRAPH",
        "FROM",
        "SERVICE",
        "aggregate",
        "GROUP BY",
        "HAVING",
        "sub-query",
        "LIMIT",
        "OFFSET",
        "CONSTRUCT",
        "DESCRIBE",
        "SPARQL Update",
    }
)
#: Refusals of extension functions (``<iri>(...)`` other than XSD casts) and of REGEX
#: features RE2 cannot run in linear time are by design too.
OUTSIDE_PREFIXES = ("the function <", "regex ")

#: Constructs in the (widened) language: a refusal naming one is pending work (xfail).
IN_LANGUAGE = frozenset(
    {
        "OPTIONAL",
        "UNION",
        "MINUS",
        "EXISTS",
        "NOT EXISTS",
        "EXISTS inside an expression",
        "NOT EXISTS inside an expression",
        "BIND",
        "VALUES",
        "nested group pattern",
        "property path",
        "variable predicate",
        "SELECT expression",
        "RDF collection",
    }
)

#: Entailment regimes semps implements (by OWL 2 RL rules over event + ontology).
REGIMES = frozenset({"RDFS", "OWL-RDF-Based"})

#: Tests not run, each with its reason.
EXCLUDED: dict[str, str] = {
    # Not approved by the DAWG; its approved twin dawg-optional-filter-005-simplified passes.
    # The two expect different answers to one query (whether {{ }} is simplified before
    # the FILTER is scoped), so no engine passes both.
    "sparql10/optional-filter/dawg-optional-filter-005-not-simplified": (
        "unapproved twin of dawg-optional-filter-005-simplified (contradicts it)"
    ),
}

#: Tests that fail today, each with what is missing: they xfail, and pass -> fail until the
#: entry is removed (so the list cannot go stale).
KNOWN_GAPS: dict[str, str] = {}


def _reason(test: W3CTest) -> str | None:
    """Why a test is not run (``None``: it runs)."""
    if test.id in EXCLUDED:
        return EXCLUDED[test.id]
    if test.kind == "other":
        return "a result-format test (CSV/TSV serialisation): semps does not write SPARQL results"
    if test.query is None:
        return "the subset in ../shared/workloads does not hold the query"
    if test.kind in ("evaluation", "entailment") and test.result is None:
        return "the subset does not hold the expected result"
    if test.result is not None and test.result.suffix in (".tsv", ".csv"):
        return "the expected result is CSV/TSV (tests of that result format)"
    if test.kind == "entailment" and not REGIMES & set(test.regimes):
        return f"entailment regime {'/'.join(test.regimes)}: semps closes under OWL 2 RL only"
    return None


#: Outcome per test id, for the summary (see conftest.py).
OUTCOMES: dict[str, tuple[str, str]] = {}


def _refusal(test: W3CTest, exc: UnsupportedQueryError) -> str:
    construct = exc.construct
    assert construct, f"refused without naming the construct: {exc}"
    assert construct in str(exc), f"the message does not name {construct!r}: {exc}"
    if construct in OUTSIDE or construct.startswith(OUTSIDE_PREFIXES):
        return "refused"
    if construct in IN_LANGUAGE or construct.startswith("the function "):
        return "pending"
    pytest.fail(f"refused naming {construct!r}, neither in nor outside the language: {exc}")


def _refused_outside(test: W3CTest) -> bool:
    """True when the query is refused naming a construct outside the language."""
    try:
        _matcher(test)
    except UnsupportedQueryError as exc:
        return exc.construct in OUTSIDE or exc.construct.startswith(OUTSIDE_PREFIXES)
    except SubscriptionError:
        return False
    return False


def _subscription(test: W3CTest) -> Subscription:
    assert test.query is not None
    text = test.query.read_text(encoding="utf-8")
    # The query's own address is its base (as the data files'): relative IRIs resolve.
    base = test.address(test.query, SUITE)
    return Subscription("q", "semantic", f"BASE <{base}> {text}")


def _matcher(test: W3CTest) -> SemanticMatcher:
    matcher = SemanticMatcher(solution_limit=1_000_000)
    matcher.add(_subscription(test))
    return matcher


def _event(test: W3CTest) -> Event:
    triples = []
    for path in test.data:
        triples.extend(
            read_triples(path.read_bytes(), filename=path.name, base=test.address(path, SUITE))
        )
    return Event(test.id, tuple(triples))


def _ontology(test: W3CTest) -> Expansion:
    triples = []
    for path in test.data:
        triples.extend(ontology_triples(path, name=path.stem))
    return compile_axioms(triples)


def _run(test: W3CTest) -> str:
    """Run one test; returns its outcome (``passed``, ``refused``, ``pending``) or fails."""
    if test.kind == "negative-syntax":
        with pytest.raises(SubscriptionError):
            _matcher(test)
        return "passed"
    try:
        matcher = _matcher(test)
    except UnsupportedQueryError as exc:
        return _refusal(test, exc)
    except SubscriptionSyntaxError as exc:
        pytest.fail(f"refused as a syntax error: {exc}")
    if test.kind == "positive-syntax":
        return "passed"
    assert test.result is not None
    event = _event(test)
    expansion = _ontology(test) if test.kind == "entailment" else Expansion()
    matches = matcher.match(MatchContext(event, expansion))
    expected = read_result(test.result, test.address(test.result, SUITE))
    if isinstance(expected, bool):
        assert bool(matches) == expected
        return "passed"
    ours = [dict(s) for s in matches[0].solutions] if matches else []
    assert same_solutions(ours, expected, lax=test.lax), (
        f"\nsemps ({len(ours)}): {sorted(map(str, ours))}\nW3C ({len(expected)}): "
        f"{sorted(map(str, expected))}"
    )
    return "passed"


@pytest.mark.parametrize("test", TESTS, ids=[t.id for t in TESTS])
def test_w3c_sparql(test: W3CTest) -> None:
    reason = _reason(test)
    if reason is not None:
        if test.query is not None and _refused_outside(test):
            # no expected result in the subset, but the query is outside the language
            OUTCOMES[test.id] = (test.kind, "refused")
            return
        OUTCOMES[test.id] = (test.kind, "excluded")
        pytest.skip(reason)
    OUTCOMES[test.id] = (test.kind, "failed")
    gap = KNOWN_GAPS.get(test.id)
    if gap is None:
        outcome = _run(test)
    else:
        try:
            outcome = _run(test)
        except (AssertionError, pytest.fail.Exception, SubscriptionError):
            OUTCOMES[test.id] = (test.kind, "known gap")
            pytest.xfail(f"known gap: {gap}")
        pytest.fail(f"passes now: remove it from KNOWN_GAPS ({gap})")
    OUTCOMES[test.id] = (test.kind, outcome)
    if outcome == "pending":
        pytest.xfail("refused naming a construct of the language not built yet")


def test_the_suite_is_all_there() -> None:
    kinds = Counter(t.kind for t in TESTS)
    assert kinds == {
        "evaluation": 515,
        "entailment": 70,
        "positive-syntax": 215,
        "negative-syntax": 90,
        "other": 3,
    }


def summary() -> str:
    """Outcome counts per kind of test, for the terminal summary."""
    counts = Counter(OUTCOMES.values())
    lines = []
    for kind in ("evaluation", "entailment", "positive-syntax", "negative-syntax"):
        cells = [
            f"{o} {counts[(kind, o)]}"
            for o in ("passed", "refused", "pending", "known gap", "failed", "excluded")
        ]
        lines.append(f"{kind:16} " + ", ".join(cells))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(pytest.main([str(Path(__file__)), "-q", "-p", "no:cacheprovider"]))
