"""The attribute view of an event: attribute -> the set of values content matching sees.

- A JSON event's ``values`` are attributes with one value each.
- An RDF event's literal-valued properties are attributes named by the property IRI, after
  the event is closed under the ontology (PartA): a subscription on a
  super-property sees a sub-property's literal, as everywhere else in semps. A property may
  have several literals (several triples); the view keeps them all, and a constraint holds
  when some value satisfies it (see :mod:`semps.matcher.content.constraints`).
- Literals with a numeric XSD datatype become numbers (ill-formed ones, and NaN, stay
  strings); every other literal is its lexical form, a string.
"""

from __future__ import annotations

import math

from semps._types import Value
from semps.event import Event
from semps.matcher.base import MatchContext
from semps.terms import XSD, XSD_DECIMAL, XSD_FLOAT_TYPES, XSD_INTEGER_TYPES, Literal  # noqa: F401  (XSD: doctests)

__all__ = ["AttributeView", "attribute_view", "literal_value"]

#: Attribute -> its distinct values, in first-seen order.
AttributeView = dict[str, tuple[Value, ...]]

_INTEGER_TYPES = XSD_INTEGER_TYPES
_DECIMAL_TYPES = XSD_FLOAT_TYPES | {XSD_DECIMAL}


def literal_value(literal: Literal) -> Value:
    """The value content matching sees for an RDF literal.

    Example:
        >>> literal_value(Literal("42", XSD + "integer"))
        42
        >>> literal_value(Literal("4.5e1", XSD + "double"))
        45.0
        >>> literal_value(Literal("red", lang="en")), literal_value(Literal("x", XSD + "integer"))
        ('red', 'x')
    """
    lexical: str = literal[0]
    datatype: str = literal[1]
    try:
        if datatype in _INTEGER_TYPES:
            return int(lexical.strip())
        if datatype in _DECIMAL_TYPES:
            number = float(lexical.strip())
            return lexical if math.isnan(number) else number
    except ValueError:
        pass
    return lexical


def attribute_view(event: Event, context: MatchContext | None = None) -> AttributeView:
    """The attribute view of ``event`` (JSON values plus ontology-expanded RDF literals).

    Example:
        >>> from semps.terms import Literal
        >>> e = Event("e", values={"a0": 0.5},
        ...           triples=(("_:x", "http://ex/price", Literal("3", XSD + "integer")),
        ...                    ("_:y", "http://ex/price", Literal("4", XSD + "integer"))))
        >>> attribute_view(e)
        {'a0': (0.5,), 'http://ex/price': (3, 4)}
    """
    view: dict[str, dict[Value, None]] = {}
    for name, value in event.values.items():
        view.setdefault(name, {})[value] = None
    if event.triples:
        parts = (context if context is not None else MatchContext(event)).parts
        for prop, pairs in parts.part_a.items():
            for _subject, obj in pairs:
                if type(obj) is Literal:
                    value = literal_value(obj)
                    # 1 and 1.0 are one value, and so are "1" and "1" from two nodes.
                    view.setdefault(prop, {})[value] = None
    return {name: tuple(values) for name, values in view.items()}
