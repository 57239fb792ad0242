"""SEPA's JSAP files (JSON SPARQL Application Profiles): the named queries they hold, made
into SPARQL texts a semps subscription (or ``/query``) takes.

A JSAP is a JSON object. semps reads three of its members:

- ``namespaces``: prefix -> IRI; each becomes a ``PREFIX`` line before every query (a
  prefix the query declares itself is left to it);
- ``queries``: name -> ``{"sparql": TEXT, "forcedBindings": {VAR: {"type", "value",
  "datatype"?, "xml:lang"?}}}``; each forced binding joins the query as a
  ``VALUES`` row at the start of the WHERE clause, so the answers are those SEPA's
  substitution of the value for the variable gives (the variable bound to the value; a
  FILTER of a nested group, ``{ { ... FILTER(?v ...) } }``, does not see it). A ``uri``
  value or a ``datatype`` may be a prefixed name of ``namespaces``, or of ``rdf``,
  ``rdfs``, ``owl``, ``xsd``;
- ``updates``: read the same way, but not made into texts (an update's forced bindings
  would have to be substituted into its templates); :attr:`Jsap.updates` names them.

The rest (``host``, ``oauth``, ``sparql11protocol``, ``sparql11seprotocol``, ``graphs``,
``extended``) is connection and application detail, not read; a query's own ``graphs``
member is refused (semps keeps one graph).

Example:
    >>> jsap = read_jsap('''{"namespaces": {"ex": "http://ex.org/"}, "queries": {"T":
    ...   {"sparql": "SELECT ?t WHERE { ?r ex:t ?t }",
    ...    "forcedBindings": {"r": {"type": "uri", "value": "ex:room1"}}}}}''')
    >>> print(jsap.queries["T"])
    PREFIX ex: <http://ex.org/>
    SELECT ?t WHERE { VALUES (?r) { (<http://ex.org/room1>) } ?r ex:t ?t }
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from semps.errors import SempsError
from semps.terms import OWL, RDF, RDFS, XSD, Literal

__all__ = ["Jsap", "JsapError", "read_jsap"]

#: Prefixes a forced binding's value or datatype may use without the JSAP declaring them.
_KNOWN = {"rdf": RDF, "rdfs": RDFS, "owl": OWL, "xsd": XSD}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*|")
_IRI = re.compile(r'<[^<>"{}|^`\\\s]*>')
_DECLARED = re.compile(r"PREFIX\s+([A-Za-z][A-Za-z0-9_.-]*)?:", re.IGNORECASE)


class JsapError(SempsError):
    """A JSAP file that cannot be read, or a query of it that cannot be made into a text."""


@dataclass(frozen=True)
class Jsap:
    """A JSAP's named queries as SPARQL texts (prefixes and forced bindings applied), and
    the names of its updates."""

    queries: Mapping[str, str]
    updates: tuple[str, ...] = ()


def _object(value: object, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        msg = f"{where} must be a JSON object"
        raise JsapError(msg)
    return value


def read_jsap(text: str) -> Jsap:
    """A JSAP's named queries (see the module docstring).

    Raises:
        JsapError: not JSON, a member of the wrong shape, a forced binding without a value
            or of an unknown type, a prefix the JSAP does not declare, a query's ``graphs``.
    """
    try:
        doc = json.loads(text)
    except ValueError as exc:
        msg = f"the JSAP is not JSON: {exc}"
        raise JsapError(msg) from None
    doc = _object(doc, "a JSAP")
    namespaces = _object(doc.get("namespaces"), "namespaces")
    for prefix, iri in namespaces.items():
        if not isinstance(iri, str) or not _PREFIX.fullmatch(prefix) or ">" in iri:
            msg = f"namespace {prefix!r} must map a prefix name to an IRI"
            raise JsapError(msg)
    queries = {
        name: _query_text(name, _object(q, f"query {name!r}"), namespaces)
        for name, q in _object(doc.get("queries"), "queries").items()
    }
    return Jsap(queries, tuple(_object(doc.get("updates"), "updates")))


def _query_text(name: str, query: dict[str, Any], namespaces: Mapping[str, str]) -> str:
    sparql = query.get("sparql")
    if not isinstance(sparql, str) or not sparql.strip():
        msg = f"query {name!r} has no 'sparql' text"
        raise JsapError(msg)
    if query.get("graphs"):
        msg = f"query {name!r}: 'graphs' is not supported (semps keeps one graph)"
        raise JsapError(msg)
    declared = {m.group(1) or "" for m in _DECLARED.finditer(sparql)}
    lines = [f"PREFIX {p}: <{iri}>" for p, iri in namespaces.items() if p not in declared]
    lines.append(sparql.strip())
    bindings = _object(query.get("forcedBindings"), f"forcedBindings of {name!r}")
    if bindings:
        names, values = [], []
        for var, binding in bindings.items():
            if not _NAME.fullmatch(var):
                msg = f"query {name!r}: {var!r} is not a variable name"
                raise JsapError(msg)
            names.append(f"?{var}")
            values.append(_value(name, var, _object(binding, f"{name!r}.{var}"), namespaces))
        values_clause = f"VALUES ({' '.join(names)}) {{ ({' '.join(values)}) }}"
        at = _where_brace(lines[-1], name) + 1
        lines[-1] = f"{lines[-1][:at]} {values_clause}{lines[-1][at:]}"
    return "\n".join(lines)


def _where_brace(sparql: str, name: str) -> int:
    """Where the WHERE clause's ``{`` is: the first ``{`` outside IRIs, strings and
    comments."""
    i, n = 0, len(sparql)
    while i < n:
        c = sparql[i]
        if c == "{":
            return i
        if c == "#":
            end = sparql.find("\n", i)
            i = n if end < 0 else end
        elif c in "\"'":
            quote = c * 3 if sparql.startswith(c * 3, i) else c
            i = _string_end(sparql, i + len(quote), quote)
        elif c == "<" and (iri := _IRI.match(sparql, i)) is not None:
            i = iri.end() - 1
        i += 1
    msg = f"query {name!r} has no WHERE clause"
    raise JsapError(msg)


def _string_end(sparql: str, i: int, quote: str) -> int:
    """The index of the last character of a string whose text starts at ``i``."""
    while i < len(sparql):
        if sparql[i] == "\\":
            i += 2
        elif sparql.startswith(quote, i):
            return i + len(quote) - 1
        else:
            i += 1
    return len(sparql)


def _value(name: str, var: str, binding: dict[str, Any], namespaces: Mapping[str, str]) -> str:
    kind, value = binding.get("type"), binding.get("value")
    if not isinstance(value, str):
        msg = f"query {name!r}: the forced binding of ?{var} has no value"
        raise JsapError(msg)
    if kind == "uri":
        return f"<{_iri(value, namespaces, name)}>"
    if kind == "literal":
        datatype, lang = binding.get("datatype"), binding.get("xml:lang")
        if isinstance(lang, str) and lang:
            return Literal(value, lang=lang).n3()
        if isinstance(datatype, str) and datatype:
            return Literal(value, _iri(datatype, namespaces, name)).n3()
        return Literal(value).n3()
    msg = f"query {name!r}: the forced binding of ?{var} has type {kind!r} (uri or literal)"
    raise JsapError(msg)


def _iri(text: str, namespaces: Mapping[str, str], name: str) -> str:
    """An IRI, or a prefixed name expanded (``namespaces``, then rdf, rdfs, owl, xsd)."""
    prefix, colon, local = text.partition(":")
    if colon and not local.startswith("//") and _PREFIX.fullmatch(prefix):
        base = namespaces.get(prefix) or _KNOWN.get(prefix)
        if base is not None:
            return base + local
        if prefix not in ("http", "https", "urn", "mailto", "file", "tag"):
            msg = f"query {name!r}: unknown prefix {prefix!r} in {text!r}"
            raise JsapError(msg)
    if any(c in text for c in '<>" {}|^`\\'):
        msg = f"query {name!r}: {text!r} is not an IRI"
        raise JsapError(msg)
    return text
