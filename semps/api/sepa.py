"""The SPARQL 1.1 Subscribe protocol's messages (SEPA's, over WebSocket): requests read and
checked, answers written. No I/O here; the route is :mod:`semps.api.routes.sepa`.

Requests (text frames, JSON)::

    {"subscribe": {"sparql": "SELECT ...", "alias": "A", "authorization": "Bearer T",
                   "default-graph-uri": "...", "named-graph-uri": "..."}}
    {"unsubscribe": {"spuid": "S", "authorization": "Bearer T"}}

Answers::

    {"notification": {"spuid": "S", "alias": "A", "sequence": 0,
                      "addedResults": <SPARQL 1.1 JSON results>, "removedResults": ...}}
    {"unsubscribed": {"spuid": "S"}}
    {"error": "invalid_request", "status_code": 400, "error_description": "...", "alias": "A"}

The first notification of a subscription (``sequence`` 0) answers the subscribe request;
each later one (``sequence`` = the semps notification's seq) carries the solutions an event
or a knowledge-graph change added and, for a change, those it removed.

Example:
    >>> parse_request('{"unsubscribe": {"spuid": "sub-1"}}')
    Unsubscribe(spuid='sub-1', authorization=None)
    >>> term("<http://ex.org/a>")
    {'type': 'uri', 'value': 'http://ex.org/a'}
    >>> term('"chat"@fr')
    {'type': 'literal', 'value': 'chat', 'xml:lang': 'fr'}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from semps._types import Term
from semps.errors import SempsError
from semps.graph.query import Answers
from semps.terms import XSD_STRING, Literal, parse_n3

__all__ = [
    "Subscribe",
    "Unsubscribe",
    "answer_results",
    "error",
    "first_notification",
    "json_term",
    "notification",
    "parse_request",
    "results",
    "term",
    "unsubscribed",
]

_MEMBERS = {"sparql", "alias", "authorization", "default-graph-uri", "named-graph-uri"}


@dataclass(frozen=True, slots=True)
class Subscribe:
    """A subscribe request: the SPARQL query, the client's alias, its bearer token."""

    sparql: str
    alias: str | None = None
    authorization: str | None = None


@dataclass(frozen=True, slots=True)
class Unsubscribe:
    """An unsubscribe request: the subscription (its SPUID, a semps subscription id)."""

    spuid: str
    authorization: str | None = None


def _string(body: Mapping[str, Any], name: str, *, required: bool = False) -> str | None:
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        msg = f"{name!r} must be a {'non-empty ' if required else ''}string"
        raise SempsError(msg)
    return value


def parse_request(text: str) -> Subscribe | Unsubscribe:
    """One request frame.

    Raises:
        SempsError: not JSON, not one of the two requests, or a member of the wrong type
            (a graph URI: semps subscriptions match events, not named graphs).
    """
    try:
        request = json.loads(text)
    except ValueError as exc:
        msg = f"not JSON: {exc}"
        raise SempsError(msg) from exc
    if not isinstance(request, dict) or len(request) != 1:
        msg = 'a request is one JSON object: {"subscribe": {...}} or {"unsubscribe": {...}}'
        raise SempsError(msg)
    ((kind, body),) = request.items()
    if kind not in ("subscribe", "unsubscribe") or not isinstance(body, dict):
        msg = f"unknown request {kind!r} (subscribe or unsubscribe, each with an object)"
        raise SempsError(msg)
    if kind == "unsubscribe":
        spuid = _string(body, "spuid", required=True)
        return Unsubscribe(str(spuid), _string(body, "authorization"))
    unknown = set(body) - _MEMBERS
    if unknown:
        msg = f"unknown member(s) {', '.join(sorted(unknown))} of subscribe"
        raise SempsError(msg)
    for graph in ("default-graph-uri", "named-graph-uri"):
        if body.get(graph):
            msg = f"{graph!r} is not supported: a subscription matches each event's triples"
            raise SempsError(msg)
    return Subscribe(
        str(_string(body, "sparql", required=True)),
        _string(body, "alias"),
        _string(body, "authorization"),
    )


def term(text: str) -> dict[str, str]:
    """A solution's term (N-Triples syntax, as semps' notifications carry it) in the SPARQL
    1.1 JSON results format."""
    return json_term(parse_n3(text))


def json_term(value: Term) -> dict[str, str]:
    """A term in the SPARQL 1.1 JSON results format."""
    if isinstance(value, Literal):
        out = {"type": "literal", "value": value.lexical}
        if value.lang:
            out["xml:lang"] = value.lang
        elif value.datatype != XSD_STRING:
            out["datatype"] = value.datatype
        return out
    if value.startswith("_:"):
        return {"type": "bnode", "value": value[2:]}
    return {"type": "uri", "value": value}


def results(variables: Iterable[str], solutions: Iterable[Mapping[str, str]]) -> dict[str, Any]:
    """SPARQL 1.1 JSON results of ``solutions`` (variable -> N-Triples term; an unbound
    variable is left out of its binding, as the format says)."""
    return {
        "head": {"vars": list(variables)},
        "results": {
            "bindings": [{name: term(value) for name, value in s.items()} for s in solutions]
        },
    }


def answer_results(answers: Answers) -> dict[str, Any]:
    """A query's answers as SPARQL 1.1 JSON results: ``head.vars`` and ``results.bindings``
    for a SELECT, ``boolean`` for an ASK."""
    if answers.ask:
        return {"head": {}, "boolean": answers.boolean}
    return {
        "head": {"vars": list(answers.variables)},
        "results": {
            "bindings": [{n: json_term(t) for n, t in row.items()} for row in answers.rows]
        },
    }


def _notification(
    spuid: str, alias: str | None, sequence: int, added: dict[str, Any], removed: dict[str, Any]
) -> str:
    body: dict[str, Any] = {"spuid": spuid}
    if alias is not None:
        body["alias"] = alias
    body.update(sequence=sequence, addedResults=added, removedResults=removed)
    return json.dumps({"notification": body}, separators=(",", ":"))


def first_notification(
    spuid: str, alias: str | None, variables: Iterable[str], current: Answers
) -> str:
    """The answer to a subscribe request: sequence 0 with the current answers (an ASK's:
    one empty binding when true, as its later notifications carry it)."""
    names = list(variables)
    added = {
        "head": {"vars": names},
        "results": {
            "bindings": [{n: json_term(t) for n, t in row.items()} for row in current.rows]
        },
    }
    return _notification(spuid, alias, 0, added, results(names, []))


def notification(alias: str | None, variables: Iterable[str], note: Mapping[str, Any]) -> str:
    """A semps notification (its JSON) as a SEPA notification: its ``solutions`` added, its
    ``removed`` (a knowledge-graph change's) removed, its seq the sequence."""
    names = list(variables)
    added = results(names, note.get("solutions") or [])
    removed = results(names, note.get("removed") or [])
    return _notification(str(note["subscription"]), alias, int(note["id"]), added, removed)


def unsubscribed(spuid: str) -> str:
    return json.dumps({"unsubscribed": {"spuid": spuid}})


def error(status: int, code: str, description: str, alias: str | None = None) -> str:
    """An error answer (``error``, ``status_code``, ``error_description``; RFC 6749's
    shape, as SEPA's)."""
    body: dict[str, Any] = {"error": code, "status_code": status, "error_description": description}
    if alias is not None:
        body["alias"] = alias
    return json.dumps(body)
