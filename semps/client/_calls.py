"""Every API operation as a :class:`~semps.client._core.Call`: the one place that knows the
HTTP API's paths, parameters and answer shapes."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypedDict

from semps.client import _models as m
from semps.client._core import Call, Page, Reply, page_of, path_id
from semps.client._errors import error_from_body
from semps.client._inputs import (
    JSON,
    QuerySource,
    RDFSource,
    batch_item,
    document,
    kind_of,
    media_type_hint,
    query,
)
from semps.errors import ClientError

__all__ = [
    "BatchSource",
    "ReplaceOptions",
    "SubscribeOptions",
    "SubscriptionRef",
    "add_axiom",
    "batch_chunks",
    "batch_entry",
    "clear_graph",
    "console_suspend",
    "create_token",
    "dead_letters",
    "delete",
    "get",
    "get_graph",
    "get_ontology",
    "graph_info",
    "health",
    "load_graph",
    "load_ontology",
    "metrics",
    "publish",
    "publish_batch",
    "remove_axiom",
    "replay",
    "resume",
    "revoke_token",
    "sub_id",
    "subscribe",
    "subscribe_batch",
    "subscriptions",
    "suspend",
    "tokens",
    "update_graph",
]

#: A subscription or its id.
SubscriptionRef = m.Subscription | str


class ReplaceOptions(TypedDict, total=False):
    """How a subscription's text is read: the keyword arguments of :func:`subscribe` that
    replacing one accepts too."""

    kind: str | None
    name: str | None
    media_type: str | None


class SubscribeOptions(ReplaceOptions, total=False):
    """The keyword arguments of :func:`subscribe` (and of the clients' ``subscribe``)."""

    callback: str | None
    options: Mapping[str, str | int] | None


_TOKENS = "the token API (GET/POST /tokens, DELETE /tokens/{id})"


def sub_id(ref: SubscriptionRef) -> str:
    """The id of a subscription handle or id, checked as one path segment."""
    return path_id(ref.id if isinstance(ref, m.Subscription) else ref)


def _version(reply: Reply) -> int:
    body = reply.json()
    version = body.get("version") if isinstance(body, dict) else None
    if not isinstance(version, int):
        msg = f'expected {{"version": N}}, got {reply.text()[:200]!r}'
        raise ClientError(msg, status=reply.status)
    return version


def _json_body(doc: Mapping[str, Any]) -> tuple[bytes, dict[str, str]]:
    return json.dumps(doc).encode(), {"Content-Type": JSON}


def _given(**params: str | int | None) -> dict[str, str]:
    """The query parameters a caller gave (``None``: not given), as text."""
    return {name: str(value) for name, value in params.items() if value is not None}


def _pages(cursor: str | None, limit: int | None) -> dict[str, str]:
    return _given(cursor=cursor, limit=limit)


# -- subscriptions ---------------------------------------------------------------------------


def subscribe(
    source: QuerySource,
    *,
    kind: str | None = None,
    name: str | None = None,
    callback: str | None = None,
    media_type: str | None = None,
    options: Mapping[str, str | int] | None = None,
    sub: str | None = None,
) -> Call[m.Subscription]:
    """``POST /subscriptions`` (or ``PUT /subscriptions/{sub}`` to replace ``sub``)."""
    kind = kind or kind_of(source)
    body, content_type = query(source, kind, media_type)
    params = {"kind": kind, **{k: str(v) for k, v in (options or {}).items()}}
    params.update(_given(name=name, callback=callback))
    text = body.decode("utf-8", "replace")

    def parse(reply: Reply) -> m.Subscription:
        doc = reply.json()
        if not isinstance(doc, dict) or not isinstance(doc.get("id"), str):
            msg = f'expected {{"id": ...}}, got {reply.text()[:200]!r}'
            raise ClientError(msg, status=reply.status)
        secret = doc.get("secret")
        return m.Subscription(
            doc["id"], kind, text, name, secret=secret if isinstance(secret, str) else None
        )

    method, path = ("POST", "/subscriptions") if sub is None else ("PUT", f"/subscriptions/{sub}")
    headers = {"Content-Type": content_type}
    return Call(method, path, parse, params, headers, body, topic="subscription")


#: One subscription of a batch: its text, a ``.rq`` file (named after its stem), or
#: (text, name).
BatchSource = str | os.PathLike[str] | tuple[str, str | None]


def batch_entry(source: BatchSource) -> tuple[str, str | None]:
    """(text, name) of one subscription of a batch."""
    if isinstance(source, tuple):
        return source
    if isinstance(source, os.PathLike):
        return query(source, "semantic")[0].decode("utf-8", "replace"), Path(source).stem
    return source, None


def batch_chunks(
    sources: Iterable[BatchSource], size: int
) -> Iterator[list[tuple[str, str | None]]]:
    """The sources' (text, name) entries, ``size`` at a time (one request each)."""
    if size < 1:
        msg = f"a batch carries at least one subscription, not {size}"
        raise ClientError(msg)
    entries: list[tuple[str, str | None]] = []
    for source in sources:
        entries.append(batch_entry(source))
        if len(entries) == size:
            yield entries
            entries = []
    if entries:
        yield entries


def subscribe_batch(
    entries: list[tuple[str, str | None]], kind: str = "semantic"
) -> Call[list[m.BatchSubscription]]:
    """``POST /subscriptions/batch`` of (text, name) entries, as JSON lines; each entry's
    outcome in order, a refused one as its exception."""
    lines = [json.dumps({"text": t} if n is None else {"text": t, "name": n}) for t, n in entries]

    def parse(reply: Reply) -> list[m.BatchSubscription]:
        results = _batch_results(reply, "subscriptions", len(entries))
        out: list[m.BatchSubscription] = []
        for (text, name), result in zip(entries, results, strict=True):
            if isinstance(result, dict) and isinstance(result.get("id"), str):
                out.append(m.Subscription(result["id"], kind, text, name))
            elif isinstance(result, dict):
                out.append(error_from_body(400, result, "subscription"))
            else:
                msg = f"expected an id or an error, got {result!r}"
                raise ClientError(msg, status=reply.status)
        return out

    body = ("\n".join(lines) + "\n").encode()
    headers = {"Content-Type": "application/x-ndjson"}
    return Call(
        "POST",
        "/subscriptions/batch",
        parse,
        {"kind": kind},
        headers,
        body,
        topic="subscription",
        feature="registering subscriptions in bulk (POST /subscriptions/batch)",
    )


def subscriptions(
    cursor: str | None = None, limit: int | None = None
) -> Call[Page[m.Subscription]]:
    """``GET /subscriptions``: one page."""
    return Call("GET", "/subscriptions", page_of(m.Subscription.from_json), _pages(cursor, limit))


def get(ref: SubscriptionRef) -> Call[m.Subscription]:
    """``GET /subscriptions/{id}``."""
    return Call(
        "GET", f"/subscriptions/{sub_id(ref)}", lambda r: m.Subscription.from_json(r.json())
    )


def delete(ref: SubscriptionRef) -> Call[None]:
    """``DELETE /subscriptions/{id}``."""
    return Call("DELETE", f"/subscriptions/{sub_id(ref)}", lambda r: None)


def resume(ref: SubscriptionRef) -> Call[m.Subscription]:
    """``POST /subscriptions/{id}/resume`` (admin)."""
    path = f"/subscriptions/{sub_id(ref)}/resume"
    return Call("POST", path, lambda r: m.Subscription.from_json(r.json()))


def suspend(ref: SubscriptionRef, reason: str | None = None) -> Call[m.Subscription]:
    """``POST /subscriptions/{id}/suspend`` (admin), on servers that offer it."""
    path = f"/subscriptions/{sub_id(ref)}/suspend"
    params = {} if reason is None else {"reason": reason}
    return Call(
        "POST",
        path,
        lambda r: m.Subscription.from_json(r.json()),
        params,
        feature="suspending subscriptions (POST /subscriptions/{id}/suspend)",
    )


def console_suspend(ref: SubscriptionRef, reason: str | None = None) -> Call[None]:
    """The web console's ``POST /console/api/subscriptions/{id}/suspend`` (admin): the
    same, for servers whose API has no suspend route of its own."""
    path = f"/console/api/subscriptions/{sub_id(ref)}/suspend"
    params = {} if reason is None else {"reason": reason}
    feature = "suspending subscriptions (neither the API nor the console has a suspend route)"
    return Call("POST", path, lambda r: None, params, feature=feature)


# -- events ----------------------------------------------------------------------------------


def publish(
    source: RDFSource, media_type: str | None = None, *, retain: bool = False
) -> Call[m.Published]:
    """``POST /events`` (``?retain=true``: the event's triples stay in the knowledge graph)."""
    body, content_type = document(source, media_type)
    headers = {"Content-Type": content_type}
    parse = lambda r: m.Published.from_json(r.json())  # noqa: E731
    hint = media_type_hint(source, media_type)
    params = {"retain": "true"} if retain else {}
    return Call("POST", "/events", parse, params, headers, body, topic="event", hint=hint)


def publish_batch(
    sources: Iterable[RDFSource | tuple[RDFSource, str]],
) -> Call[list[m.BatchItem]]:
    """``POST /events/batch``; an item is a source or (source, media type)."""
    items = [batch_item(*s) if isinstance(s, tuple) else batch_item(s) for s in sources]

    def parse(reply: Reply) -> list[m.BatchItem]:
        return [_batch_result(x) for x in _batch_results(reply, "events", len(items))]

    body, headers = _json_body({"events": items})
    return Call("POST", "/events/batch", parse, {}, headers, body, topic="event")


def _batch_results(reply: Reply, key: str, count: int) -> list[Any]:
    """The ``count`` results of a batch answer, ``{key: [...]}``, one per item sent."""
    doc = reply.json()
    results = doc.get(key) if isinstance(doc, dict) else None
    if not isinstance(results, list) or len(results) != count:
        msg = f'expected {count} results in {{"{key}": [...]}}, got {reply.text()[:200]!r}'
        raise ClientError(msg, status=reply.status)
    return results


def _batch_result(doc: object) -> m.BatchItem:
    if isinstance(doc, dict) and "error" in doc:
        return error_from_body(400, doc, "event")
    return m.Published.from_json(doc)


# -- ontology --------------------------------------------------------------------------------


def get_ontology(syntax: str = "rdfxml") -> Call[str]:
    """``GET /ontology`` as RDF/XML (``"rdfxml"``) or Turtle (``"turtle"``)."""
    if syntax not in ("rdfxml", "turtle"):
        msg = f"the ontology is served as 'rdfxml' or 'turtle', not {syntax!r}"
        raise ClientError(msg)
    accept = "text/turtle" if syntax == "turtle" else "application/rdf+xml"
    return Call("GET", "/ontology", Reply.text, headers={"Accept": accept})


def load_ontology(source: RDFSource, *, replace: bool, media_type: str | None = None) -> Call[int]:
    """``PUT /ontology`` (replace) or ``POST /ontology`` (merge); the new version."""
    body, content_type = document(source, media_type)
    method = "PUT" if replace else "POST"
    headers = {"Content-Type": content_type}
    hint = media_type_hint(source, media_type)
    return Call(method, "/ontology", _version, {}, headers, body, topic="ontology", hint=hint)


def _axiom(method: str, kind: str, subject: str, obj: str) -> Call[int]:
    body, headers = _json_body({"kind": kind, "subject": subject, "object": obj})
    return Call(method, "/ontology/axioms", _version, {}, headers, body, topic="ontology")


def add_axiom(kind: str, subject: str, obj: str) -> Call[int]:
    """``POST /ontology/axioms``."""
    return _axiom("POST", kind, subject, obj)


def remove_axiom(kind: str, subject: str, obj: str) -> Call[int]:
    """``DELETE /ontology/axioms``."""
    return _axiom("DELETE", kind, subject, obj)


# -- knowledge graph -------------------------------------------------------------------------

#: What ``/graph`` reads text and bytes sent without a media type as.
GRAPH_DEFAULT_TYPE = "text/turtle"
#: A SPARQL 1.1 Update's media type.
SPARQL_UPDATE = "application/sparql-update"


def _edit(reply: Reply) -> m.GraphEdit:
    return m.GraphEdit.from_json(reply.json())


def get_graph(media_type: str = GRAPH_DEFAULT_TYPE, *, closure: bool = False) -> Call[str]:
    """``GET /graph`` in ``media_type`` (Turtle, N-Triples, RDF/XML or JSON-LD);
    ``closure``: the inferred triples too."""
    params = {"closure": "true"} if closure else {}
    return Call("GET", "/graph", Reply.text, params, {"Accept": media_type}, topic="graph")


def graph_info() -> Call[m.GraphInfo]:
    """``GET /graph/info``."""
    return Call("GET", "/graph/info", lambda r: m.GraphInfo.from_json(r.json()))


def load_graph(
    source: RDFSource, *, replace: bool, media_type: str | None = None
) -> Call[m.GraphEdit]:
    """``PUT /graph`` (replace) or ``POST /graph`` (merge); text and bytes without a
    ``media_type`` are sent as Turtle, as the server reads them."""
    if media_type is None and isinstance(source, str | bytes):
        media_type = GRAPH_DEFAULT_TYPE
    body, content_type = document(source, media_type)
    method = "PUT" if replace else "POST"
    headers = {"Content-Type": content_type}
    return Call(method, "/graph", _edit, {}, headers, body, topic="graph")


def update_graph(update: str) -> Call[m.GraphEdit]:
    """``POST /graph`` with a SPARQL 1.1 Update."""
    headers = {"Content-Type": SPARQL_UPDATE}
    return Call("POST", "/graph", _edit, {}, headers, update.encode(), topic="graph")


def clear_graph() -> Call[m.GraphEdit]:
    """``DELETE /graph``: every triple removed."""
    return Call("DELETE", "/graph", _edit, topic="graph")


# -- tokens, dead letters, health ------------------------------------------------------------


def tokens(cursor: str | None = None, limit: int | None = None) -> Call[Page[m.Token]]:
    """``GET /tokens``: one page."""
    return Call(
        "GET", "/tokens", page_of(m.Token.from_json), _pages(cursor, limit), feature=_TOKENS
    )


def create_token(
    role: str, expires_in: int | str | None = None, subject: str | None = None
) -> Call[m.NewToken]:
    """``POST /tokens``."""
    doc: dict[str, object] = {"role": role}
    if expires_in is not None:
        doc["expires_in"] = expires_in
    if subject is not None:
        doc["subject"] = subject
    body, headers = _json_body(doc)
    parse = lambda r: m.NewToken.from_json(r.json())  # noqa: E731
    return Call("POST", "/tokens", parse, {}, headers, body, topic="token", feature=_TOKENS)


def revoke_token(token: m.Token | m.NewToken | str) -> Call[None]:
    """``DELETE /tokens/{id}``."""
    ident = path_id(token if isinstance(token, str) else token.id)
    return Call("DELETE", f"/tokens/{ident}", lambda r: None, topic="token")


def dead_letters(cursor: str | None = None, limit: int | None = None) -> Call[Page[m.DeadLetter]]:
    """``GET /deadletters``: one page."""
    return Call("GET", "/deadletters", page_of(m.DeadLetter.from_json), _pages(cursor, limit))


def replay(letter: m.DeadLetter | int) -> Call[str | None]:
    """``POST /deadletters/{id}/replay``: ``None`` when delivered, else the error."""
    ident = letter.id if isinstance(letter, m.DeadLetter) else int(letter)

    def parse(reply: Reply) -> str | None:
        doc = reply.json()
        if isinstance(doc, dict) and doc.get("delivered") is True:
            return None
        return str(doc.get("error") if isinstance(doc, dict) else doc)

    return Call("POST", f"/deadletters/{ident}/replay", parse)


def health() -> Call[dict[str, Any]]:
    """``GET /health``."""

    def parse(reply: Reply) -> dict[str, Any]:
        doc = reply.json()
        if not isinstance(doc, dict):
            msg = f"expected a JSON object from /health, got {reply.text()[:200]!r}"
            raise ClientError(msg, status=reply.status)
        return doc

    return Call("GET", "/health", parse)


def metrics(token: str | None = None) -> Call[str]:
    """``GET /metrics``: Prometheus text; ``token`` is a metrics-only token (the server's
    ``--metrics-token``) used instead of the client's."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return Call("GET", "/metrics", Reply.text, headers=headers)
