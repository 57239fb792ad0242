"""The client's value objects: what the HTTP API answers, typed.

Each is a frozen dataclass built by a ``from_json`` class method that checks the shape it is
given and raises :class:`~semps.errors.ClientError` on a body that is not the API's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from semps._types import Term
from semps.errors import ClientError, SempsError
from semps.terms import parse_n3

__all__ = [
    "DeadLetter",
    "GraphEdit",
    "GraphInfo",
    "NewToken",
    "Notification",
    "Published",
    "Subscription",
    "Token",
]


def _field(doc: Mapping[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    value = doc.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        msg = f"the server's {what} has no valid {key!r}: {dict(doc)!r:.200}"
        raise ClientError(msg)
    return value


def _object(doc: object, what: str) -> Mapping[str, Any]:
    if not isinstance(doc, Mapping):
        msg = f"expected a JSON object for the {what}, got {doc!r:.200}"
        raise ClientError(msg)
    return doc


def _optional_str(value: object) -> str | None:
    return None if value is None else str(value)


def _optional_number(value: object, kind: type[int] | type[float]) -> Any:
    """``value`` as ``kind`` when it is a JSON number, else ``None``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return kind(value)
    return None


@dataclass(frozen=True)
class Subscription:
    """A registered subscription: the handle the other calls take (or its ``id``).

    ``status`` is ``"active"`` or ``"suspended"`` (then ``reason`` says why); ``matches``
    counts its notifications so far and ``last_match`` is the Unix time of the latest
    (``None``: none, or a server that does not say); ``secret`` is the webhook's HMAC key,
    known only in the answer to a subscribe with a callback.
    """

    id: str
    kind: str = "semantic"
    text: str = ""
    name: str | None = None
    owner: str | None = None
    status: str = "active"
    reason: str | None = None
    matches: int = 0
    last_match: float | None = None
    secret: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.id:
            msg = "a subscription needs an id"
            raise ClientError(msg)

    @classmethod
    def from_json(cls, doc: object) -> Subscription:
        """A subscription from ``GET /subscriptions/{id}`` (or one item of the list)."""
        body = _object(doc, "subscription")
        return cls(
            id=_field(body, "id", str, "subscription"),
            kind=str(body.get("kind", "semantic")),
            text=str(body.get("text", "")),
            name=_optional_str(body.get("name")),
            owner=_optional_str(body.get("owner")),
            status=str(body.get("status", "active")),
            reason=_optional_str(body.get("reason")),
            matches=_optional_number(body.get("matches"), int) or 0,
            last_match=_optional_number(body.get("last_match"), float),
        )


@dataclass(frozen=True)
class Notification:
    """One notification of one subscription.

    Attributes:
        subscription: the subscription's id.
        event: the id of the event that matched.
        seq: its position in the subscription's stream (1, 2, ...: the SSE ``id``).
        solutions: the variable bindings, each term as the server wrote it (``<iri>``,
            ``"literal"``); empty for ASK and for content or region matches.
        count: how many solutions there were (capped at the server's ``max_count``).
        count_truncated: the count was capped.
        solutions_truncated: solutions were left out to bound the notification's size.
        detail: the matcher's extra detail (composite and content matches), if any.
        time: when the server made it (Unix time; ``None`` from a server that does not
            say).
        graph_version: set when a change of the knowledge graph made it (an update, a
            load, a retained event): the graph's version after the change; ``solutions``
            and ``count`` are then the solutions the change added (``count`` may be 0).
        removed, removed_count, removed_truncated: the solutions a change of the graph
            removed from the subscription's answers, as ``solutions`` (empty for events).
    """

    subscription: str
    event: str
    seq: int
    solutions: tuple[Mapping[str, str], ...] = ()
    count: int = 0
    count_truncated: bool = False
    solutions_truncated: bool = False
    detail: Mapping[str, Any] | None = None
    time: float | None = None
    graph_version: int | None = None
    removed: tuple[Mapping[str, str], ...] = ()
    removed_count: int = 0
    removed_truncated: bool = False

    def __post_init__(self) -> None:
        if self.seq < 1:
            msg = f"a notification's seq starts at 1, not {self.seq}"
            raise ClientError(msg)

    def bindings(self) -> list[dict[str, Term]]:
        """The solutions as terms of the Python API (:mod:`semps.terms`): IRIs and blank
        nodes as ``str``, literals as :class:`~semps.terms.Literal`, as ``Match.solutions``
        gives them in process.

        Raises:
            ClientError: a term the server wrote is not one N-Triples term.

        Example:
            >>> n = Notification("s1", "e1", 1, ({"x": "<http://ex/a>", "n": '"2"@en'},))
            >>> n.bindings()
            [{'x': 'http://ex/a', 'n': Literal('2', lang='en')}]
        """
        return self._terms(self.solutions)

    def removed_bindings(self) -> list[dict[str, Term]]:
        """The removed solutions as terms of the Python API (as :meth:`bindings`)."""
        return self._terms(self.removed)

    def _terms(self, rows: tuple[Mapping[str, str], ...]) -> list[dict[str, Term]]:
        try:
            return [{k: parse_n3(v) for k, v in s.items()} for s in rows]
        except ValueError as exc:
            msg = f"notification {self.subscription}/{self.seq}: {exc}"
            raise ClientError(msg) from exc

    @classmethod
    def from_json(cls, doc: object, seq: int | None = None) -> Notification:
        """A notification from its JSON payload; ``seq`` (the SSE id) when the payload has
        no ``id`` of its own."""
        body = _object(doc, "notification")
        if seq is None:
            seq = _field(body, "id", int, "notification")
        solutions = _rows(body, "solutions")
        removed = _rows(body, "removed")
        detail = body.get("detail")
        return cls(
            subscription=_field(body, "subscription", str, "notification"),
            event=_field(body, "event", str, "notification"),
            seq=seq,
            solutions=solutions,
            count=int(body.get("count", len(solutions))),
            count_truncated=bool(body.get("count_truncated", False)),
            solutions_truncated=bool(body.get("solutions_truncated", False)),
            detail=MappingProxyType(dict(detail)) if isinstance(detail, dict) else None,
            time=_optional_number(body.get("time"), float),
            graph_version=_optional_number(body.get("graph_version"), int),
            removed=removed,
            removed_count=int(body.get("removed_count", len(removed))),
            removed_truncated=bool(body.get("removed_truncated", False)),
        )


def _rows(body: Mapping[str, object], key: str) -> tuple[Mapping[str, str], ...]:
    """A notification's list of solutions under ``key`` (none when absent)."""
    rows = body.get(key) or []
    if not isinstance(rows, list) or not all(isinstance(s, dict) for s in rows):
        msg = f"the notification's {key} are not a list of objects: {rows!r:.200}"
        raise ClientError(msg)
    return tuple(MappingProxyType({str(k): str(v) for k, v in s.items()}) for s in rows)


@dataclass(frozen=True)
class GraphEdit:
    """What an edit of the knowledge graph did, answered once it and its notifications
    committed: the graph's version after it, the asserted triples inserted and deleted,
    the inferred triples the closure gained and lost, the notifications it made."""

    version: int
    inserted: int = 0
    deleted: int = 0
    inferred_added: int = 0
    inferred_removed: int = 0
    notified: int = 0

    @classmethod
    def from_json(cls, doc: object) -> GraphEdit:
        body = _object(doc, "graph edit")
        counts = {k: body.get(k, 0) for k in _EDIT_COUNTS}
        if not all(isinstance(v, int) for v in counts.values()):
            msg = f"the graph edit's counts are not integers: {body!r:.200}"
            raise ClientError(msg)
        return cls(_field(body, "version", int, "graph edit"), **counts)


_EDIT_COUNTS = ("inserted", "deleted", "inferred_added", "inferred_removed", "notified")


@dataclass(frozen=True)
class GraphInfo:
    """The knowledge graph's version and sizes: triples in the closure (asserted and
    inferred), asserted triples, distinct terms."""

    version: int
    triples: int
    asserted: int
    terms: int

    @classmethod
    def from_json(cls, doc: object) -> GraphInfo:
        body = _object(doc, "graph info")
        fields = ("version", "triples", "asserted", "terms")
        return cls(*(_field(body, k, int, "graph info") for k in fields))


@dataclass(frozen=True)
class Published:
    """A published event: its id and how many notifications it caused."""

    id: str
    matched: int

    @classmethod
    def from_json(cls, doc: object) -> Published:
        body = _object(doc, "publish answer")
        return cls(
            _field(body, "id", str, "publish answer"),
            _field(body, "matched", int, "publish answer"),
        )


#: One item of a batch's answer: the published event, or the error that refused it (not raised).
BatchItem = Published | SempsError
#: One subscription of ``subscribe_many``: registered, or refused with its error.
BatchSubscription = Subscription | SempsError


@dataclass(frozen=True)
class Token:
    """A bearer token as the admin API lists it (never its secret): times are Unix times,
    ``expires`` ``None`` for never, ``revoked`` ``None`` while it is not."""

    id: str
    role: str
    subject: str | None = None
    created: float | None = None
    expires: float | None = None
    revoked: float | None = None

    @classmethod
    def from_json(cls, doc: object) -> Token:
        body = _object(doc, "token")
        return cls(
            id=str(_field(body, "id", (str, int), "token")),
            role=_field(body, "role", str, "token"),
            subject=_optional_str(body.get("subject")),
            created=_number(body.get("created")),
            expires=_number(body.get("expires")),
            revoked=_number(body.get("revoked")),
        )


@dataclass(frozen=True)
class NewToken:
    """A token just created: ``secret`` is the bearer value, shown this once."""

    token: Token
    secret: str = field(repr=False)

    @property
    def id(self) -> str:
        """The token's id (what :meth:`Client.revoke_token` takes)."""
        return self.token.id

    @classmethod
    def from_json(cls, doc: object) -> NewToken:
        body = _object(doc, "new token")
        secret = body.get("token")
        if not isinstance(secret, str) or not secret:
            msg = "the server's answer to POST /tokens carries no token"
            raise ClientError(msg)
        return cls(Token.from_json(body), secret)


@dataclass(frozen=True)
class DeadLetter:
    """A webhook notification whose delivery gave up (admin): which subscription and seq,
    the callback URL, the last error and how many attempts were made."""

    id: int
    subscription: str
    seq: int
    url: str = ""
    error: str = ""
    attempts: int = 0

    @classmethod
    def from_json(cls, doc: object) -> DeadLetter:
        body = _object(doc, "dead letter")
        return cls(
            id=_field(body, "id", int, "dead letter"),
            subscription=_field(body, "subscription", str, "dead letter"),
            seq=_field(body, "seq", int, "dead letter"),
            url=str(body.get("url", "")),
            error=str(body.get("error", "")),
            attempts=int(body.get("attempts", 0)),
        )


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None
