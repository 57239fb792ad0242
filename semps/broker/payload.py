"""The notification's wire form: a match (or a verdict shared by several subscriptions)
rendered as the notification's JSON text, without its closing brace (the *payload head*;
the store appends ``,"id":<seq>,"time":<t>}`` once it has numbered it, see
:class:`~semps.broker.contracts.EventRecord`).

The usual notification is ``{"subscription", "event", "count", "solutions"}``, each
solution's terms in N-Triples; a count over ``limits.max_count`` is reported as that with
``"count_truncated": true``, solutions that would take the notification past
``limits.max_notification_bytes`` are left out from the end with
``"solutions_truncated": true``, and a match's detail follows as ``"detail"``.

A change of the knowledge graph (an update, a load, an ontology edit, a retained event)
notifies ``{"subscription", "event", "graph_version", "count", "solutions",
"removed_count", "removed"}`` (:func:`change_heads`): ``count`` and ``solutions`` are the
solutions the change added (``count`` may be 0 when it only removed some), ``removed_count``
and ``removed`` those it removed; each list is bounded as above
(``"solutions_truncated"``, ``"removed_truncated"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson

from semps._types import Term
from semps.limits import DEFAULT_LIMITS, Limits
from semps.matcher.values import ChangeMatch, Match, Verdict
from semps.terms import n3

__all__ = ["change_head", "change_heads", "payload_head", "verdict_heads"]


def _dumps(value: object) -> str:
    """Compact JSON (orjson: several times faster than ``json`` for the payloads)."""
    return orjson.dumps(value).decode()


def payload_head(match: Match, limits: Limits = DEFAULT_LIMITS) -> str:
    """The notification of ``match`` as JSON without its closing brace.

    A count over ``limits.max_count`` is reported as that and ``"count_truncated": true``;
    solutions that would take the notification past ``limits.max_notification_bytes`` are
    left out from the end, with ``"solutions_truncated": true``.
    """
    tail = _tail(match.count, match.solutions, not match.detail, limits)
    usual = _usual_head(match.subscription, _dumps(match.event), tail, limits)
    if usual is not None:
        return usual
    solutions = match.solutions[: limits.max_solutions]
    rendered = _rendered(solutions)
    count = match.count
    head = {
        "subscription": match.subscription,
        "event": match.event,
        "count": min(count, limits.max_count),
    }
    if count > limits.max_count:
        head["count_truncated"] = True
    head["solutions"] = rendered
    if match.detail:
        head["detail"] = dict(match.detail)
    whole = _dumps(head)  # everything fits
    if len(whole) + 64 <= limits.max_notification_bytes:
        return whole[:-1]
    del head["solutions"]
    head.pop("detail", None)
    tail = f',"detail":{_dumps(dict(match.detail))}' if match.detail else ""
    text = _dumps(head)[:-1]
    budget = limits.max_notification_bytes - len(text) - len(tail) - 64
    parts: list[str] = []
    for solution in solutions:
        part = _dumps({k: n3(v) for k, v in solution.items()})
        budget -= len(part) + 1
        if budget < 0:
            tail = ',"solutions_truncated":true' + tail
            break
        parts.append(part)
    return f'{text},"solutions":[{",".join(parts)}]{tail}'


def verdict_heads(
    found: Sequence[tuple[str, Verdict]], event_id: str, limits: Limits = DEFAULT_LIMITS
) -> list[tuple[str, str]]:
    """``(subscription id, payload head)`` of each ``(id, verdict)`` matched by event
    ``event_id``: :func:`payload_head` of its match, with each verdict's solutions
    rendered once for all the subscriptions that share it (subscriptions of one shape)."""
    event = _dumps(event_id)
    tails: dict[int, str | None] = {}  # by verdict: what follows the ids, or None: no fast path
    out: list[tuple[str, str]] = []
    for sub_id, verdict in found:
        key = id(verdict)
        tail = tails.get(key, _UNSEEN)
        if tail is _UNSEEN:
            plain = not verdict.truncated and not verdict.detail
            tail = tails[key] = _tail(verdict.count, verdict.solutions, plain, limits)
        head = _usual_head(sub_id, event, tail, limits)
        if head is None:
            head = payload_head(verdict.match(sub_id, event_id), limits)
        out.append((sub_id, head))
    return out


def change_head(found: ChangeMatch, event_id: str, limits: Limits = DEFAULT_LIMITS) -> str:
    """The notification of one subscription's answers changed by a graph change, as JSON
    without its closing brace (see the module docstring).

    Example:
        >>> from semps.matcher.values import ChangeMatch
        >>> change = ChangeMatch("s1", 4, 0, (), 1, ({"x": "http://ex/a"},))
        >>> change_head(change, "graph-4") + "}"
        '{"subscription":"s1","event":"graph-4","graph_version":4,"count":0,"solutions":[],"removed_count":1,"removed":[{"x":"<http://ex/a>"}]}'
    """
    head: dict[str, object] = {
        "subscription": found.subscription,
        "event": event_id,
        "graph_version": found.version,
    }
    tail: dict[str, object] = {}
    budget = limits.max_notification_bytes - 64 - len(_dumps(dict(found.detail or {})))
    budget -= len(_dumps(head)) + 80
    for name, count, solutions in (
        ("", found.count, found.solutions),
        ("removed", found.removed_count, found.removed),
    ):
        count_key, list_key = ("count", "solutions") if not name else ("removed_count", "removed")
        head[count_key] = min(count, limits.max_count)
        if count > limits.max_count:
            head[f"{count_key}_truncated"] = True
        kept: list[dict[str, str]] = []
        for row in _rendered(solutions[: limits.max_solutions]):
            budget -= len(_dumps(row)) + 1
            if budget < 0:
                tail[f"{list_key}_truncated"] = True
                break
            kept.append(row)
        head[list_key] = kept
    head.update(tail)
    if found.detail:
        head["detail"] = dict(found.detail)
    return _dumps(head)[:-1]


def change_heads(
    found: Sequence[ChangeMatch], event_id: str, limits: Limits = DEFAULT_LIMITS
) -> list[tuple[str, str]]:
    """``(subscription id, payload head)`` of each subscription a graph change changed."""
    return [(c.subscription, change_head(c, event_id, limits)) for c in found]


#: A verdict not rendered yet (:func:`verdict_heads`).
_UNSEEN = "\x00unseen"


def _tail(
    count: int, solutions: Sequence[Mapping[str, Term]], plain: bool, limits: Limits
) -> str | None:
    """``,"count":...,"solutions":[...]`` of the usual notification: a ``plain`` match
    (no detail) whose count is within ``limits.max_count``; else ``None``."""
    if not plain or count > limits.max_count:
        return None
    rendered = _rendered(solutions[: limits.max_solutions])
    return f',"count":{count},"solutions":{_dumps(rendered)}'


def _usual_head(sub_id: str, event: str, tail: str | None, limits: Limits) -> str | None:
    """The usual notification in one piece (``event``: the event id as JSON), or ``None``
    when there is no ``tail`` or it would not fit in ``limits.max_notification_bytes``."""
    if tail is None:
        return None
    head = f'{{"subscription":{_dumps(sub_id)},"event":{event}{tail}'
    return head if len(head) + 65 <= limits.max_notification_bytes else None


def _rendered(solutions: Sequence[Mapping[str, Term]]) -> list[dict[str, str]]:
    """Solutions with their terms in N-Triples (IRIs in ``<>``, blank nodes as they are)."""
    out: list[dict[str, str]] = []
    for solution in solutions:  # (loops: cheaper than comprehensions for one or two)
        row = {}
        for name, value in solution.items():
            if type(value) is not str:
                row[name] = n3(value)
            elif value[:2] == "_:":
                row[name] = value
            else:
                row[name] = "<" + value + ">"
        out.append(row)
    return out
