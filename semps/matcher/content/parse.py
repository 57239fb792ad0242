"""Read content subscriptions: the JSON form (a contract) and the text form for humans.

JSON::

    {"id": "s1", "constraints": [{"attr": "a3", "op": "between", "low": 0.1, "high": 0.6},
                                 {"attr": "a7", "op": ">=", "value": 0.3},
                                 {"attr": "a1", "op": "=", "value": 5}]}

(``id`` may be left out where the caller assigns one, as the broker does; ``interface`` is
optional.) Text::

    a3 between 0.1 and 0.6 and a7 >= 0.3 and a1 = 5 and colour = "red"

Attribute names are identifiers (letters, digits, ``_ . : -``) or ``<IRI>`` (RDF properties);
strings are double-quoted with JSON escapes; ``and``/``between`` are case-insensitive.
Syntax errors carry line and column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NoReturn

from semps._types import Value
from semps.errors import SubscriptionError, SubscriptionSyntaxError
from semps.ingest.json_event import refuse_json_constant
from semps.matcher.content.constraints import OPS, Constraint, ContentSubscription

__all__ = ["decode_json", "parse_constraints", "parse_subscription", "subscription_from_json"]

_TOKEN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<iri><[^<>\s"{}|^`\\]*>)
      | (?P<op>>=|<=|=)
      | (?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
      | (?P<string>"(?:\\.|[^"\\\n])*")
      | (?P<name>[A-Za-z_][A-Za-z0-9_.:\-]*)
    """,
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # iri, op, number, string, name, end
    text: str
    offset: int


def parse_subscription(
    text: str, *, sub_id: str | None = None, interface: str | None = None
) -> ContentSubscription:
    """Parse a subscription in the JSON form (text starting with ``{``) or the text form.

    Args:
        text: the subscription.
        sub_id: its id; overrides the JSON ``id`` (required for the text form).
        interface: its interface; overrides the JSON ``interface``.

    Raises:
        SubscriptionSyntaxError: malformed JSON or text (with line and column).
        SubscriptionError: well-formed but not a valid subscription.

    Example:
        >>> s = parse_subscription('a3 between 0.1 and 0.6 and a1 = "red"', sub_id="s1")
        >>> [c.text() for c in s.constraints]
        ['a3 between 0.1 and 0.6', 'a1 = "red"']
        >>> parse_subscription("a3 between 1 or 2", sub_id="s1")
        Traceback (most recent call last):
        ...
        semps.errors.SubscriptionSyntaxError: 1:14: expected and but found 'or'
    """
    if text.lstrip().startswith("{"):
        return subscription_from_json(decode_json(text), sub_id=sub_id, interface=interface)
    if sub_id is None:
        msg = "a subscription in the text form needs an id from its caller"
        raise SubscriptionError(msg)
    return ContentSubscription(sub_id, parse_constraints(text), interface)


def decode_json(text: str) -> object:
    """Decode a subscription's JSON text (no ``NaN``/``Infinity``).

    Raises:
        SubscriptionSyntaxError: the text is not JSON (with the line and column).

    Example:
        >>> decode_json('{"id": "s1"}')
        {'id': 's1'}
        >>> decode_json('{"id": NaN}')
        Traceback (most recent call last):
        ...
        semps.errors.SubscriptionSyntaxError: invalid JSON: NaN is not a JSON number
    """
    try:
        return json.loads(text, parse_constant=refuse_json_constant)
    except json.JSONDecodeError as exc:
        msg = f"invalid JSON: {exc.msg}"
        raise SubscriptionSyntaxError(msg, line=exc.lineno, column=exc.colno) from exc
    except (ValueError, RecursionError) as exc:
        raise SubscriptionSyntaxError(f"invalid JSON: {exc}") from exc


def subscription_from_json(
    doc: object, *, sub_id: str | None = None, interface: str | None = None
) -> ContentSubscription:
    """Build a subscription from decoded JSON (see the module doc); raises SubscriptionError.

    Example:
        >>> subscription_from_json({"id": "s1", "constraints": [{"attr": "a", "op": "<="}]})
        Traceback (most recent call last):
        ...
        semps.errors.SubscriptionError: constraints[0]: "<=" needs "value"
    """
    if not isinstance(doc, dict):
        raise SubscriptionError("a JSON subscription must be an object")
    unknown = [k for k in doc if k not in ("id", "constraints", "interface")]
    if unknown:
        msg = f"unknown key {unknown[0]!r} (expected id, constraints, interface)"
        raise SubscriptionError(msg)
    if sub_id is None:
        sub_id = doc.get("id")
        if not isinstance(sub_id, str) or not sub_id:
            raise SubscriptionError('a JSON subscription needs a non-empty string "id"')
    if interface is None:
        interface = doc.get("interface")
        if interface is not None and not isinstance(interface, str):
            raise SubscriptionError('"interface" must be a string')
    items = doc.get("constraints")
    if not isinstance(items, list):
        raise SubscriptionError('a JSON subscription needs "constraints": [...]')
    constraints = []
    for i, item in enumerate(items):
        try:
            constraints.append(_constraint_from_json(item))
        except SubscriptionError as exc:
            raise SubscriptionError(f"constraints[{i}]: {exc.detail}") from exc
    return ContentSubscription(sub_id, tuple(constraints), interface)


def _constraint_from_json(item: object) -> Constraint:
    if not isinstance(item, dict):
        raise SubscriptionError("a constraint must be an object")
    op = item.get("op")
    if not isinstance(op, str) or op not in OPS:
        msg = f'"op" must be one of {", ".join(OPS)}, not {json.dumps(op)[:40]}'
        raise SubscriptionError(msg)
    wanted = ("attr", "op", "low", "high") if op == "between" else ("attr", "op", "value")
    for key in wanted:
        if key not in item:
            raise SubscriptionError(f'"{op}" needs "{key}"')
    extra = [k for k in item if k not in wanted]
    if extra:
        raise SubscriptionError(f'"{op}" does not take {extra[0]!r}')
    if not isinstance(item["attr"], str):
        raise SubscriptionError('"attr" must be a string')
    if op == "between":
        return Constraint(item["attr"], op, low=item["low"], high=item["high"])
    return Constraint(item["attr"], op, item["value"])


def parse_constraints(text: str) -> tuple[Constraint, ...]:
    """Parse the text form: ``constraint (and constraint)*``.

    Example:
        >>> [c.text() for c in parse_constraints("a7 >= 0.3 and <http://ex/p> = 5")]
        ['a7 >= 0.3', '<http://ex/p> = 5']
    """
    tokens = _Tokens(text)
    constraints = [_constraint(tokens)]
    while tokens.peek().kind != "end":
        tokens.keyword("and", "and or the end of the subscription")
        constraints.append(_constraint(tokens))
    return tuple(constraints)


def _constraint(tokens: _Tokens) -> Constraint:
    first = tokens.next()
    if first.kind == "name":
        attr = first.text
    elif first.kind == "iri":
        attr = first.text[1:-1]
    else:
        tokens.fail(first, "an attribute name")
    op_token = tokens.next()
    try:
        if op_token.kind == "op":
            return Constraint(attr, op_token.text, tokens.value())
        if op_token.kind == "name" and op_token.text.lower() == "between":
            low = tokens.number()
            tokens.keyword("and", "and")
            return Constraint(attr, "between", low=low, high=tokens.number())
    except SubscriptionSyntaxError:
        raise
    except SubscriptionError as exc:
        line, column = tokens.where(first.offset)
        raise SubscriptionError(exc.detail, line=line, column=column) from exc
    tokens.fail(op_token, ">=, <=, = or between")


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        self._iter = self._scan()
        self._peeked: _Token | None = None

    def _scan(self) -> Iterator[_Token]:
        pos = 0
        while pos < len(self.text):
            m = _TOKEN.match(self.text, pos)
            if m is None:
                line, column = self.where(pos)
                msg = f"unexpected character {self.text[pos]!r}"
                raise SubscriptionSyntaxError(msg, line=line, column=column)
            kind = m.lastgroup or ""
            if kind != "ws":
                yield _Token(kind, m.group(), pos)
            pos = m.end()
        yield _Token("end", "", len(self.text))

    def peek(self) -> _Token:
        if self._peeked is None:
            self._peeked = next(self._iter)
        return self._peeked

    def next(self) -> _Token:
        token = self.peek()
        self._peeked = None
        return token

    def keyword(self, word: str, expected: str) -> None:
        token = self.next()
        if token.kind != "name" or token.text.lower() != word:
            self.fail(token, expected)

    def number(self) -> float | int:
        token = self.next()
        if token.kind != "number":
            self.fail(token, "a number")
        return self._number(token)

    def _number(self, token: _Token) -> float | int:
        try:
            return _number(token.text)
        except ValueError:  # more digits than Python converts
            self.fail(token, "a number of at most 4300 digits")

    def value(self) -> Value:
        token = self.next()
        if token.kind == "number":
            return self._number(token)
        if token.kind == "string":
            try:
                return str(json.loads(token.text))
            except ValueError:
                self.fail(token, "a string with valid escapes")
        self.fail(token, "a number or a double-quoted string")

    def where(self, offset: int) -> tuple[int, int]:
        line = self.text.count("\n", 0, offset) + 1
        return line, offset - (self.text.rfind("\n", 0, offset) + 1) + 1

    def fail(self, token: _Token, expected: str) -> NoReturn:
        found = "the end" if token.kind == "end" else repr(token.text[:40])
        line, column = self.where(token.offset)
        msg = f"expected {expected} but found {found}"
        raise SubscriptionSyntaxError(msg, line=line, column=column)


def _number(text: str) -> float | int:
    if any(ch in text for ch in ".eE"):
        return float(text)
    return int(text)
