"""The composite-event language: ``create event NAME = EXPR [within T];``.

EXPR is one of ``A and B``, ``A or B``, ``A then B``, ``all B in A, C``,
``N times B in A, C``, ``no B in A, C`` (keywords case-insensitive; names are letters,
digits, ``_`` and ``-``). A name not defined as a composite is a primitive event.
A definition may use only composites defined before it (so cycles cannot form), may not
name the same event twice, and may not redefine a name or define a name already used as a
primitive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from semps.errors import CompositeDefinitionError

BINARY = ("and", "or", "then")
#: The largest count of ``N times`` (the detector keeps counts as 64-bit integers).
MAX_TIMES = 2**31 - 1
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_TOKEN = re.compile(
    r"\s+|--[^\n]*|(?P<num>\d+(?:\.\d+)?)(?P<unit>ms|s|m|h)?\b|(?P<name>[A-Za-z0-9_-]+)|(?P<op>[=;,])"
)


@dataclass(frozen=True, slots=True)
class Definition:
    """One composite: its operator and operands (by name), and an optional window."""

    name: str
    op: str
    operands: tuple[str, ...]  # binary: (left, right); ternary: (open A, monitored B, close C)
    n: int = 0  # for "times"
    within: float | None = None
    line: int = 0
    column: int = 0


def _tokens(text: str) -> list[tuple[str, str, int, int]]:
    out = []
    pos, line, start = 0, 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise CompositeDefinitionError(
                f"unexpected character {text[pos]!r}", line=line, column=pos - start + 1
            )
        col = pos - start + 1
        if m.group("num") is not None:
            out.append(("num", m.group(0), line, col))
        elif m.group("name") is not None:
            out.append(("name", m.group("name"), line, col))
        elif m.group("op") is not None:
            out.append(("op", m.group("op"), line, col))
        for _ in range(m.group(0).count("\n")):
            line += 1
            start = pos + m.group(0).rfind("\n") + 1
        pos = m.end()
    out.append(("eof", "", line, pos - start + 1))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str, int, int]:
        return self.toks[self.i]

    def take(
        self, kind: str, value: str | None = None, what: str = ""
    ) -> tuple[str, str, int, int]:
        tok = self.toks[self.i]
        ok = tok[0] == kind and (value is None or tok[1].lower() == value)
        if not ok:
            found = "end of input" if tok[0] == "eof" else repr(tok[1])
            raise CompositeDefinitionError(
                f"expected {what or value or kind} but found {found}", line=tok[2], column=tok[3]
            )
        self.i += 1
        return tok

    def statements(self) -> list[Definition]:
        out = []
        while self.peek()[0] != "eof":
            out.append(self.statement())
        return out

    def statement(self) -> Definition:
        first = self.take("name", "create", "'create event'")
        self.take("name", "event")
        name = self.take("name", what="an event name")[1]
        self.take("op", "=", "'='")
        tok = self.peek()
        if tok[0] == "num" or (tok[0] == "name" and tok[1].lower() in ("all", "no")):
            op, operands, n = self.ternary()
        else:
            left = self.take("name", what="an event name")[1]
            op_tok = self.take("name", what="'and', 'or' or 'then'")
            op = op_tok[1].lower()
            if op not in BINARY:
                raise CompositeDefinitionError(
                    f"unknown operator {op_tok[1]!r} (use and, or, then, all, times, no)",
                    line=op_tok[2],
                    column=op_tok[3],
                )
            operands, n = (left, self.take("name", what="an event name")[1]), 0
        within = None
        if self.peek()[0] == "name" and self.peek()[1].lower() == "within":
            self.i += 1
            num = self.take("num", what="a duration such as 30s")
            m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h)?", num[1])
            assert m is not None
            within = float(m.group(1)) * _UNITS[m.group(2) or "s"]
        self.take("op", ";", "';'")
        return Definition(name, op, operands, n, within, first[2], first[3])

    def ternary(self) -> tuple[str, tuple[str, ...], int]:
        tok = self.peek()
        n = 0
        if tok[0] == "num":
            self.i += 1
            if not tok[1].isdigit():
                raise CompositeDefinitionError(
                    f"expected a whole number but found {tok[1]!r}", line=tok[2], column=tok[3]
                )
            digits = tok[1].lstrip("0") or "0"
            if len(digits) > 10 or int(digits) > MAX_TIMES:
                shown = tok[1] if len(tok[1]) <= 24 else tok[1][:24] + "..."
                raise CompositeDefinitionError(
                    f"{shown} times is more than the largest count, {MAX_TIMES}",
                    line=tok[2],
                    column=tok[3],
                )
            n = int(digits)
            self.take("name", "times")
            op = "times"
        else:
            op = self.take("name")[1].lower()
        b = self.take("name", what="an event name")[1]
        self.take("name", "in")
        a = self.take("name", what="an event name")[1]
        self.take("op", ",", "','")
        c = self.take("name", what="an event name")[1]
        return op, (a, b, c), n


def parse_statements(text: str) -> list[Definition]:
    """The definitions ``text`` states, read (syntax only: see :func:`parse_definitions`).

    Raises:
        CompositeDefinitionError: the text does not parse (line and column).
    """
    return _Parser(text).statements()


def parse_definitions(
    text: str | list[Definition],
    defined: set[str] | None = None,
    primitives: set[str] | None = None,
) -> list[Definition]:
    """Parse and check definitions, given the composites and primitives already known
    (``text`` may be what :func:`parse_statements` read of it).

    Example:
        >>> text = "create event x = a then b; create event y = 2 times x in c, d within 30s;"
        >>> [d.op for d in parse_definitions(text)]
        ['then', 'times']
    """
    known = set(defined or ())
    used = set(primitives or ())
    out = []
    statements = parse_statements(text) if isinstance(text, str) else text
    for d in statements:
        where = {"line": d.line, "column": d.column}
        if d.name in known:
            raise CompositeDefinitionError(f"event {d.name!r} is already defined", **where)
        if d.name in d.operands:
            raise CompositeDefinitionError(
                f"event {d.name!r} would form a cycle (it uses itself)", **where
            )
        if d.name in used:
            raise CompositeDefinitionError(
                f"event {d.name!r} is already used as a primitive event; define it before using it",
                **where,
            )
        if len(set(d.operands)) != len(d.operands):
            raise CompositeDefinitionError(
                f"definition of {d.name!r} names the same event twice", **where
            )
        used.update(o for o in d.operands if o not in known)
        known.add(d.name)
        out.append(d)
    return out
