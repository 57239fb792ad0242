"""Content subscriptions: conjunctions of constraints on attributes.

A :class:`Constraint` says ``attr >= v``, ``attr <= v``, ``attr = v`` or
``attr between low and high`` (closed intervals). Numbers compare as IEEE doubles (``5``
equals ``5.0``); strings support equality only. A :class:`ContentSubscription` is the
conjunction of its constraints.

Semantics (the brute-force oracle in :mod:`semps.matcher.content.brute` states them in code):

- An event offers, per attribute, a *set* of values (one for a JSON event; an RDF event may
  have several literals for one property).
- A subscription matches when, for every attribute it constrains, **some single value** of
  that attribute satisfies **all** of the subscription's constraints on that attribute
  (existential, as ``?e :a ?v . FILTER(...)`` in SPARQL). So ``a >= 0.3 and a <= 0.6`` means
  exactly ``a between 0.3 and 0.6``.
- A constraint on an attribute the event lacks is not satisfied.
- A number never equals a string, and a string never satisfies ``>=``/``<=``/``between``.

Constraints on one attribute must be able to hold together: ``a >= 0.7 and a <= 0.3``,
``a = "x" and a = "y"`` or ``a = "x" and a >= 1`` are refused when the subscription is built.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from semps._types import Value
from semps.errors import SubscriptionError
from semps.ingest.json_event import is_json_number
from semps.matcher.values import check_subscription_id

__all__ = [
    "OPS",
    "as_float",
    "Condition",
    "Constraint",
    "ContentSubscription",
    "conditions_of",
    "holds_all",
]

#: The constraint operators.
OPS = (">=", "<=", "=", "between")

#: What a subscription asks of one attribute once its constraints are merged: a closed
#: numeric interval ``(low, high)`` (``-inf``/``inf`` when open) or one string.
Condition = tuple[float, float] | str


@dataclass(frozen=True, slots=True)
class Constraint:
    """One constraint: ``attr op value`` or ``attr between low and high``.

    Attributes:
        attr: the attribute name (a JSON key, or a property IRI for RDF events).
        op: one of :data:`OPS`.
        value: the operand of ``>=``, ``<=`` and ``=`` (a finite number, or a string for ``=``).
        low: the lower bound of ``between`` (inclusive).
        high: the upper bound of ``between`` (inclusive).

    Example:
        >>> c = Constraint("a3", "between", low=0.1, high=0.6)
        >>> c.holds(0.6), c.holds(0.61), c.holds("0.3")
        (True, False, False)
        >>> Constraint("a1", ">=", "red")
        Traceback (most recent call last):
        ...
        semps.errors.SubscriptionError: a1 >= "red": strings support only =
    """

    attr: str
    op: str
    value: Value | None = None
    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.attr, str) or not self.attr:
            msg = f"a constraint needs a non-empty attribute name, not {self.attr!r}"
            raise SubscriptionError(msg)
        if self.op not in OPS:
            msg = f"unknown operator {self.op!r} (expected one of {', '.join(OPS)})"
            raise SubscriptionError(msg)
        if self.op == "between":
            self._check_between()
        else:
            self._check_value()

    def _check_between(self) -> None:
        if self.value is not None:
            msg = f"{self.attr} between: takes low and high, not a value"
            raise SubscriptionError(msg)
        if not (is_json_number(self.low) and is_json_number(self.high)):
            msg = f"{self.attr} between: low and high must be finite numbers"
            raise SubscriptionError(msg)
        assert self.low is not None and self.high is not None
        if self.low > self.high:
            msg = f"{self.text()}: low is greater than high"
            raise SubscriptionError(msg)

    def _check_value(self) -> None:
        if self.low is not None or self.high is not None:
            msg = f"{self.attr} {self.op}: takes a value, not low and high"
            raise SubscriptionError(msg)
        if isinstance(self.value, str):
            if self.op != "=":
                msg = f"{self.text()}: strings support only ="
                raise SubscriptionError(msg)
        elif not is_json_number(self.value):
            msg = f"{self.attr} {self.op}: the value must be a finite number or a string"
            raise SubscriptionError(msg)

    @property
    def condition(self) -> Condition:
        """The constraint as a closed interval, or the string it must equal."""
        if self.op == "between":
            return (float(self.low), float(self.high))  # type: ignore[arg-type]
        if isinstance(self.value, str):
            return self.value
        v = float(self.value)  # type: ignore[arg-type]
        if self.op == ">=":
            return (v, math.inf)
        if self.op == "<=":
            return (-math.inf, v)
        return (v, v)

    def holds(self, value: Value) -> bool:
        """Does one attribute value satisfy this constraint?"""
        cond = self.condition
        if isinstance(cond, str):
            return isinstance(value, str) and value == cond
        if isinstance(value, str) or isinstance(value, bool):
            return False
        return cond[0] <= as_float(value) <= cond[1]

    def text(self) -> str:
        """The constraint in the text form (``a3 between 0.1 and 0.6``, ``a1 = "red"``)."""
        attr = self.attr if _plain_name(self.attr) else f"<{self.attr}>"
        if self.op == "between":
            return f"{attr} between {_num(self.low)} and {_num(self.high)}"
        shown = json.dumps(self.value) if isinstance(self.value, str) else _num(self.value)
        return f"{attr} {self.op} {shown}"

    def to_json(self) -> dict[str, object]:
        """The constraint in the JSON form."""
        if self.op == "between":
            return {"attr": self.attr, "op": "between", "low": self.low, "high": self.high}
        return {"attr": self.attr, "op": self.op, "value": self.value}


@dataclass(frozen=True, slots=True)
class ContentSubscription:
    """A content subscription: the conjunction of ``constraints``.

    Attributes:
        id: the subscription id.
        constraints: at least one constraint; several on one attribute must be satisfiable
            together (see the module doc).
        interface: the delivery direction it belongs to (the predicate table's interface list; the
            broker uses the subscriber), or ``None`` for its own.

    Example:
        >>> s = ContentSubscription("s1", (Constraint("a", ">=", 0.3), Constraint("a", "<=", 0.6)))
        >>> s.conditions()
        {'a': (0.3, 0.6)}
        >>> s.text()
        'a >= 0.3 and a <= 0.6'
    """

    id: str
    constraints: tuple[Constraint, ...]
    interface: str | None = None

    def __post_init__(self) -> None:
        check_subscription_id(self.id)
        object.__setattr__(self, "constraints", tuple(self.constraints))
        if not self.constraints:
            msg = f"subscription {self.id!r} has no constraints (it needs at least one)"
            raise SubscriptionError(msg)
        conditions_of(self.constraints)  # raises when some attribute cannot be satisfied

    def conditions(self) -> dict[str, Condition]:
        """Attribute -> the merged condition of its constraints, in first-mention order."""
        return conditions_of(self.constraints)

    def text(self) -> str:
        """The subscription in the text form."""
        return " and ".join(c.text() for c in self.constraints)

    def to_json(self) -> dict[str, object]:
        """The subscription in the JSON form."""
        out: dict[str, object] = {
            "id": self.id,
            "constraints": [c.to_json() for c in self.constraints],
        }
        if self.interface is not None:
            out["interface"] = self.interface
        return out


def conditions_of(constraints: Iterable[Constraint]) -> dict[str, Condition]:
    """Merge constraints per attribute (interval intersection, equal strings).

    Raises:
        SubscriptionError: the constraints on some attribute can never hold together.

    Example:
        >>> conditions_of([Constraint("a", ">=", 2), Constraint("a", "between", low=0, high=5)])
        {'a': (2.0, 5.0)}
    """
    merged: dict[str, Condition] = {}
    for c in constraints:
        cond = c.condition
        old = merged.get(c.attr)
        if old is None:
            merged[c.attr] = cond
            continue
        if isinstance(old, str) or isinstance(cond, str):
            if old == cond:
                continue
            msg = f"the constraints on {c.attr!r} can never hold together ({c.text()})"
            raise SubscriptionError(msg)
        low, high = max(old[0], cond[0]), min(old[1], cond[1])
        if low > high:
            msg = f"the constraints on {c.attr!r} can never hold together ({c.text()})"
            raise SubscriptionError(msg)
        merged[c.attr] = (low, high)
    return merged


def holds_all(conditions: Mapping[str, Condition], view: Mapping[str, Iterable[Value]]) -> bool:
    """Do merged conditions hold for an attribute view (some value per attribute)?"""
    for attr, cond in conditions.items():
        values = view.get(attr, ())
        if isinstance(cond, str):
            if not any(isinstance(v, str) and v == cond for v in values):
                return False
        elif not any(
            not isinstance(v, str | bool) and cond[0] <= as_float(v) <= cond[1] for v in values
        ):
            return False
    return True


def as_float(value: float | int) -> float:
    """A number as an IEEE double (integers beyond the double range become infinite)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _plain_name(attr: str) -> bool:
    return (
        (attr[0].isalpha() or attr[0] == "_")
        and all(ch.isalnum() or ch in "_.-:" for ch in attr)
        and attr.lower() not in ("and", "between")
    )


def _num(value: object) -> str:
    return repr(value)
