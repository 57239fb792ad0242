"""The SPARQL 1.1 built-in functions and casts compute what Oxigraph (an engine that passes
the W3C suites) computes: the same term, or both an error (an unbound ``SELECT`` column).
Numbers and booleans compare by datatype and value (lexical forms of computed values are not
pinned down by the W3C results either)."""

from __future__ import annotations

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semps.ingest.sparql import parse_query
from semps.ingest.sparql._values import typed
from semps.ingest.sparql.filters import EvalError, Expression
from semps.terms import RDF_LANGSTRING, XSD, XSD_STRING, Literal

VALUES = [
    '"abc"',
    '"ABC"@en',
    '"a b/c?é"',
    '""',
    '"12"',
    '"1e3"',
    '"true"',
    '"banana"^^xsd:string',
    "1",
    "-2",
    "2.5",
    "-2.5",
    "0.5",
    '"1.5"^^xsd:double',
    '"3"^^xsd:float',
    '"x"^^xsd:integer',
    '"2020-01-02T03:04:05.5-05:00"^^xsd:dateTime',
    '"2020-01-02T03:04:05Z"^^xsd:dateTime',
    '"2021-12-31T23:59:59"^^xsd:dateTime',
    "true",
    "<http://ex/a>",
]
ONE = [
    "STR({})",
    "LANG({})",
    "DATATYPE({})",
    "STRLEN({})",
    "UCASE({})",
    "LCASE({})",
    "ENCODE_FOR_URI({})",
    "SUBSTR({}, 2)",
    "SUBSTR({}, 0, 2)",
    "MD5({})",
    "SHA1({})",
    "SHA256({})",
    "SHA512({})",
    "ABS({})",
    "CEIL({})",
    "FLOOR({})",
    "ROUND({})",
    "-({})",
    "YEAR({})",
    "MONTH({})",
    "DAY({})",
    "HOURS({})",
    "MINUTES({})",
    "SECONDS({})",
    "TIMEZONE({})",
    "TZ({})",
    "isNUMERIC({})",
    "isLITERAL({})",
    "isIRI({})",
    'STRLANG({}, "en")',
    "STRDT({}, <http://ex/dt>)",
    'REPLACE({}, "[ab]", "<$0>")',
    'REPLACE({}, "(b)", "[$1]", "i")',
    'REGEX({}, "^a", "i")',
    'LANGMATCHES(LANG({}), "en")',
    "xsd:integer({})",
    "xsd:decimal({})",
    "xsd:double({})",
    "xsd:float({})",
    "xsd:boolean({})",
    "xsd:dateTime({})",
    "IF({}, 1, 2)",
    "COALESCE(?unbound, {})",
]
TWO = [
    "CONCAT({}, {})",
    "CONTAINS({}, {})",
    "STRSTARTS({}, {})",
    "STRENDS({}, {})",
    "STRBEFORE({}, {})",
    "STRAFTER({}, {})",
    "sameTerm({}, {})",
    "({} + {})",
    "({} - {})",
    "({} * {})",
    "({} / {})",
    "({} = {})",
    "({} != {})",
    "({} < {})",
    "({} >= {})",
    "({} IN (1, {}))",
    "({} NOT IN (<http://ex/a>, {}))",
]
PREFIX = f"PREFIX xsd: <{XSD}> "


def _oxigraph(expr: str) -> ox.NamedNode | ox.Literal | ox.BlankNode | None:
    query = f"{PREFIX}SELECT ({expr} AS ?v) WHERE {{}}"
    (row,) = list(ox.Store().query(query))  # type: ignore[arg-type]
    return row["v"]  # type: ignore[no-any-return]


def _ours(expr: str) -> object:
    (f,) = parse_query(f"{PREFIX}SELECT * WHERE {{ FILTER({expr}) }}").algebra.filters  # type: ignore[union-attr]
    try:
        return Expression(f.ast).value({})
    except EvalError:
        return None


def _key(term: object) -> object:
    """Our term, or Oxigraph's as ours, compared the way the W3C results allow."""
    if isinstance(term, ox.Literal):
        if term.language:
            term = Literal(term.value, RDF_LANGSTRING, term.language)
        else:
            term = Literal(term.value, term.datatype.value)
    elif isinstance(term, ox.NamedNode):
        term = term.value
    if isinstance(term, Literal):
        kind, value = typed(term)
        if kind in ("num", "bool"):
            return (term.datatype, value)
        if term.datatype == XSD + "dayTimeDuration":
            return term
    return term


#: Where Oxigraph departs from SPARQL 1.1 (semps follows the specification; these inputs
#: are kept out of the comparison, and the cases below pin semps down):
#: - it rewrites literals of the query into canonical forms (STR("1.5e0"^^xsd:double) is
#:   "1.5", "010"^^xsd:int becomes "10"^^xsd:integer, "0"^^xsd:boolean "false");
#: - SUBSTR takes integers only (XPath's fn:substring rounds doubles);
#: - casts from strings do not collapse whitespace (xsd:integer(" 7 ") is 7 in XPath);
#: - the effective boolean value of an ill-typed number is an error (SPARQL: false);
#: - it subtracts dateTimes into durations (not in SPARQL 1.1's operator table).
_DEPARTURES = ('IF("x"^^xsd:integer', '^^xsd:dateTime - "')


def _agree(expr: str) -> None:
    if any(d in expr for d in _DEPARTURES):
        return
    theirs, ours = _oxigraph(expr), _ours(expr)
    if theirs is None or ours is None:
        assert theirs is ours, (expr, ours, theirs)
        return
    assert _key(ours) == _key(theirs), (expr, ours, theirs)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ONE), st.sampled_from(VALUES))
def test_one_argument_functions_compute_what_oxigraph_computes(form: str, value: str) -> None:
    _agree(form.format(value))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TWO), st.sampled_from(VALUES), st.sampled_from(VALUES))
def test_two_argument_functions_compute_what_oxigraph_computes(form: str, a: str, b: str) -> None:
    # Oxigraph orders language-tagged strings and a term against itself whatever its
    # datatype (an ill-typed literal too), and does not order booleans; SPARQL 1.1 has
    # errors there, and op:boolean-less-than.
    ordering = form in ("({} < {})", "({} >= {})")
    if ordering and ("@" in a + b or a == b):
        return
    _agree(form.format(a, b))


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ('"1999-12-31T24:00:00"^^xsd:dateTime = "2000-01-01T00:00:00"^^xsd:dateTime', True),
        ('xsd:float("1") + xsd:float("2")', Literal("3.0E0", XSD + "float")),
        ("1 / 2", Literal("0.5", XSD + "decimal")),
        ('CONCAT("a"@en, "b"@en)', Literal("ab", RDF_LANGSTRING, "en")),
        ('CONCAT("a"@en, "b")', Literal("ab", XSD_STRING)),
        ('STRBEFORE("abc"@en, "z")', Literal("", XSD_STRING)),
        ('SUBSTR("12345", 1.5, 2.6)', Literal("234", XSD_STRING)),
        ('xsd:integer(" 7 ")', Literal("7", XSD + "integer")),
        ('IF("x"^^xsd:integer, 1, 2)', Literal("2", XSD + "integer")),
        ('STR("1.5e0"^^xsd:double)', Literal("1.5e0", XSD_STRING)),
        ('DATATYPE("010"^^xsd:int)', XSD + "int"),
        ('xsd:string("0"^^xsd:boolean)', Literal("false", XSD_STRING)),
    ],
)
def test_w3c_cases(expr: str, expected: object) -> None:
    value = _ours(expr)
    if expected is True:
        assert value == Literal("true", XSD + "boolean")
    else:
        assert value == expected


def test_a_string_a_function_builds_is_bounded() -> None:
    """REPLACE's output is checked as it grows (a long template times many matches would
    otherwise build gigabytes), CONCAT's when built: past MAX_STRING, an error."""
    from semps.ingest.sparql._functions import MAX_STRING

    long = "x" * (MAX_STRING // 4)
    bindings = {"s": Literal(long)}
    grow = parse_query(
        f'{PREFIX}SELECT * {{ FILTER(STRLEN(REPLACE(?s, "x", "xxxxxxxxxxxxxxxx")) > 0) }}'
    )
    (f,) = grow.algebra.filters  # type: ignore[union-attr]
    with pytest.raises(EvalError):
        Expression(f.ast).value(bindings)
    (g,) = parse_query(
        f'{PREFIX}SELECT * {{ FILTER(CONCAT(?s, ?s, ?s, ?s, ?s) != "") }}'
    ).algebra.filters  # type: ignore[union-attr]
    with pytest.raises(EvalError):
        Expression(g.ast).value(bindings)
    (h,) = parse_query(f'{PREFIX}SELECT * {{ FILTER(CONCAT(?s, "a") != "") }}').algebra.filters  # type: ignore[union-attr]
    assert Expression(h.ast).value(bindings) == Literal("true", XSD + "boolean")
