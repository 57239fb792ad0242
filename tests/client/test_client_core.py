"""The client's request-building and answer-reading core, with in-memory transports (no
server): errors mapped back to the API's classes, pagination, SSE resume without loss or
duplicates, bounded retries, and what each input form sends."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import rdflib
from hypothesis import given, settings
from hypothesis import strategies as st

from semps.client import AsyncClient, Client, Retry, _stream
from semps.client._errors import error_from
from semps.client._inputs import document, query
from semps.client._stream import SSEDecoder, StreamPosition
from semps.errors import (
    AuthError,
    ClientError,
    EventLimitExceeded,
    GraphLimitExceeded,
    NotFound,
    OntologyLimitExceeded,
    PermissionDenied,
    SempsError,
    SubscriptionLimitExceeded,
    SubscriptionSyntaxError,
    TooManyRequests,
    UnsupportedMediaType,
    UnsupportedQueryError,
)

URL = "http://semps.test"
NO_WAIT = Retry(attempts=3, backoff=0)


def _client(handler: Callable[[httpx.Request], httpx.Response], **options: object) -> Client:
    return Client(URL, "t0k", transport=httpx.MockTransport(handler), **options)  # type: ignore[arg-type]


def _answer(status: int, body: object) -> Callable[[httpx.Request], httpx.Response]:
    return lambda request: httpx.Response(status, json=body)


# -- errors ----------------------------------------------------------------------------------


def _api_status_table() -> list[tuple[type[Exception], int, str]]:
    try:
        from semps.api.errors import STATUS
    except ImportError:  # before the routers, the table lived in app.py
        from semps.api.app import STATUS  # type: ignore[attr-defined,no-redef]
    return STATUS


@pytest.mark.parametrize(
    ("cls", "status", "code"), _api_status_table(), ids=lambda x: getattr(x, "__name__", str(x))
)
def test_every_error_the_api_answers_comes_back_as_the_class_it_raised(
    cls: type[Exception], status: int, code: str
) -> None:
    topics = {
        EventLimitExceeded: "event",
        SubscriptionLimitExceeded: "subscription",
        OntologyLimitExceeded: "ontology",
        GraphLimitExceeded: "graph",
    }
    topic = topics.get(cls, "")
    body = json.dumps({"error": code, "detail": "what went wrong"}).encode()
    exc = error_from(status, body, topic)
    assert type(exc) is _most_general_with_code(cls, code)
    assert str(exc) == "what went wrong"


def _most_general_with_code(cls: type[Exception], code: str) -> type[Exception]:
    """The class the client rebuilds for ``code``: the API's table lists the most specific
    first, and a code shared by subclasses (``bad_event`` for every ingest error) comes back
    as the class named for it."""
    table = _api_status_table()
    named = [kind for kind, _, name in table if name == code]
    if code == "limit_exceeded":
        return cls
    return next(k for k in named if all(issubclass(n, k) for n in named))


def test_a_syntax_error_keeps_its_position_and_message() -> None:
    body = {"error": "syntax_error", "detail": "2:14: expected '}'", "line": 2, "column": 14}
    with _client(_answer(400, body)) as client, pytest.raises(SubscriptionSyntaxError) as info:
        client.subscribe("SELECT ?x WHERE {\n ?x a <urn:C> ")
    assert (str(info.value), info.value.line, info.value.column) == ("2:14: expected '}'", 2, 14)


def test_an_unsupported_construct_is_named() -> None:
    body = {
        "error": "unsupported_query",
        "detail": "OPTIONAL is not supported",
        "construct": "OPTIONAL",
    }
    with _client(_answer(422, body)) as client, pytest.raises(UnsupportedQueryError) as info:
        client.subscribe("SELECT ...")
    assert info.value.construct == "OPTIONAL"


@pytest.mark.parametrize(
    ("call", "cls"),
    [
        (lambda c: c.publish(b"x"), EventLimitExceeded),
        (lambda c: c.subscribe("SELECT"), SubscriptionLimitExceeded),
    ],
)
def test_limit_exceeded_is_the_event_or_subscription_class_by_request(
    call: Callable[[Client], object], cls: type[Exception]
) -> None:
    body = {"error": "limit_exceeded", "detail": "over the limit of 64 (max_patterns)"}
    with _client(_answer(422, body)) as client, pytest.raises(cls, match="max_patterns"):
        call(client)


@pytest.mark.parametrize(
    ("status", "body", "cls"),
    [
        (404, {"detail": "Not Found"}, NotFound),  # FastAPI's own shape
        (401, b"", AuthError),
        (403, "nope", PermissionDenied),
        (415, {"error": "something_new", "detail": "?"}, UnsupportedMediaType),
        (429, {"error": "too_many_requests", "detail": "3 open streams"}, TooManyRequests),
        (422, {"error": "invalid_request", "detail": "after: not an integer"}, SempsError),
    ],
)
def test_unknown_codes_and_other_bodies_fall_back_on_the_status(
    status: int, body: object, cls: type[Exception]
) -> None:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    assert type(error_from(status, content)) is cls


def test_a_server_failure_and_a_network_failure_are_client_errors() -> None:
    with _client(lambda r: httpx.Response(500, text="Internal Server Error")) as client:
        with pytest.raises(ClientError, match=r"the server failed \(500\)") as info:
            client.health()
        assert info.value.status == 500

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with (
        _client(refuse) as client,
        pytest.raises(ClientError, match="GET http://semps.test/health failed"),
    ):
        client.health()


def test_a_missing_token_api_is_said_plainly_but_a_missing_token_is_not_found() -> None:
    with _client(_answer(404, {"error": "not_found", "detail": "no route /tokens"})) as client:
        with pytest.raises(ClientError, match="does not offer the token API"):
            list(client.tokens())
    with _client(_answer(404, {"error": "not_found", "detail": "no token 'tk-9'"})) as client:
        with pytest.raises(NotFound, match="no token 'tk-9'"):
            client.revoke_token("tk-9")


def test_suspend_reads_the_subscription_it_suspended_or_says_the_server_cannot() -> None:
    def server(request: httpx.Request) -> httpx.Response:
        assert (request.method, request.url.path) == ("POST", "/subscriptions/s1/suspend")
        assert request.url.params["reason"] == "noisy"
        body = {"id": "s1", "kind": "semantic", "status": "suspended", "reason": "noisy"}
        return httpx.Response(200, json=body)

    with _client(server) as client:
        assert client.suspend("s1", "noisy").status == "suspended"
    with _client(_answer(404, {"error": "not_found", "detail": "no route /x"})) as client:
        with pytest.raises(ClientError, match="does not offer suspending subscriptions"):
            client.suspend("s1")
    with _client(_answer(404, {"error": "not_found", "detail": "no subscription 's1'"})) as c:
        with pytest.raises(NotFound, match="no subscription 's1'"):
            c.suspend("s1")


def test_ids_that_would_address_another_resource_are_refused() -> None:
    with _client(_answer(200, {})) as client, pytest.raises(ClientError, match="not an id"):
        client.subscription("../tokens")


# -- pagination ------------------------------------------------------------------------------


def _paged(items: list[str], size: int) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        start = int(request.url.params.get("cursor", "0"))
        page = [{"id": i} for i in items[start : start + size]]
        more = start + size < len(items)
        return httpx.Response(
            200, json={"items": page, "next": str(start + size) if more else None}
        )

    return handler


def test_lists_follow_the_cursor_to_the_last_page_and_read_plain_lists_too() -> None:
    ids = [f"sub-{i}" for i in range(7)]
    with _client(_paged(ids, 3)) as client:
        assert [s.id for s in client.subscriptions()] == ids
    with _client(_answer(200, [{"id": i} for i in ids])) as client:
        assert [s.id for s in client.subscriptions()] == ids


def test_a_cursor_that_repeats_stops_the_listing() -> None:
    with _client(_answer(200, {"items": [{"id": "s"}], "next": "same"})) as client:
        with pytest.raises(ClientError, match="repeated the cursor 'same'"):
            list(client.subscriptions())


# -- notification streams --------------------------------------------------------------------


def _frame(seq: int, event: str = "ev") -> str:
    note = {"subscription": "s1", "event": f"{event}-{seq}", "count": 1, "id": seq,
            "solutions": [{"x": f"<urn:x{seq}>"}]}  # fmt: skip
    return f"id: {seq}\nevent: notification\ndata: {json.dumps(note)}\n\n"


class FlakyStream:
    """A server whose stream drops after each scripted page; it resends from the position
    the client asks for, with one notification the client already has (as a server that
    cannot tell what arrived would)."""

    def __init__(self, pages: list[list[int]]) -> None:
        self.pages = pages
        self.asked: list[str | None] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.asked.append(request.headers.get("last-event-id"))
        if not self.pages:  # a server that answers and closes at once
            return httpx.Response(200, text="")
        seqs = self.pages.pop(0)
        body = ": keep-alive\n\n" + "".join(_frame(s) for s in seqs)
        return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})


def test_a_stream_resumes_by_last_event_id_without_loss_or_duplicates() -> None:
    server = FlakyStream([[1, 2], [2, 3, 4], [4, 5]])
    with _client(server, retry=NO_WAIT) as client:
        stream = client.notifications("s1")
        got = [next(stream) for _ in range(5)]
    assert [n.seq for n in got] == [1, 2, 3, 4, 5]
    assert [n.event for n in got] == [f"ev-{i}" for i in range(1, 6)]
    assert got[2].solutions == ({"x": "<urn:x3>"},)
    assert server.asked == ["0", "2", "4"]


def test_keep_alives_keep_a_quiet_stream_going_across_more_drops_than_its_retries() -> None:
    server = FlakyStream([[], [], [], [], [], [1]])
    with _client(server, retry=NO_WAIT) as client:
        assert next(client.notifications("s1")).seq == 1
    assert len(server.asked) == 6 > NO_WAIT.attempts


def test_a_stream_gives_up_after_its_retries() -> None:
    server = FlakyStream([[1]])
    with _client(server, retry=NO_WAIT) as client:
        stream = client.notifications("s1", after=0)
        assert next(stream).seq == 1
        with pytest.raises(ClientError, match=r"after 3 reconnections .* resume with after=1"):
            next(stream)
    assert server.asked == ["0", "1", "1", "1"]  # the first connection and 3 more


def test_a_refused_stream_raises_the_servers_error_at_once() -> None:
    body = {"error": "not_found", "detail": "no subscription 's1'"}
    with _client(_answer(404, body), retry=NO_WAIT) as client:
        with pytest.raises(NotFound, match="no subscription 's1'"):
            next(client.notifications("s1"))


def test_the_async_client_resumes_the_same_way() -> None:
    server = FlakyStream([[1, 2], [2, 3]])

    async def read() -> list[int]:
        transport = httpx.MockTransport(server)
        async with AsyncClient(URL, "t0k", transport=transport, retry=NO_WAIT) as client:
            stream = client.notifications("s1")
            return [(await stream.__anext__()).seq for _ in range(3)]

    assert asyncio.run(read()) == [1, 2, 3]
    assert server.asked == ["0", "2"]


def test_sse_decoding_follows_the_event_stream_rules() -> None:
    decoder = SSEDecoder()
    lines = ["id: 7", "event: notification", "data: {", 'data: "a": 1}', "", ": comment", ""]
    events = [e for e in map(decoder.feed, lines) if e is not None]
    assert [(e.id, e.event, e.data) for e in events] == [("7", "notification", '{\n"a": 1}')]


# -- inputs ----------------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path


@pytest.mark.parametrize(
    ("name", "media_type"),
    [
        ("e.rdf", "application/rdf+xml"),
        ("e.owl", "application/rdf+xml"),
        ("e.ttl", "text/turtle"),
        ("e.nt", "application/n-triples"),
        ("e.jsonld", "application/ld+json"),
        ("e.json", "application/json"),
    ],
)
def test_a_files_suffix_picks_its_media_type(files: Path, name: str, media_type: str) -> None:
    (files / name).write_bytes(b"...")
    assert document(files / name) == (b"...", media_type)


def test_an_unknown_suffix_and_a_missing_file_are_refused(files: Path) -> None:
    (files / "e.png").write_bytes(b"...")
    with pytest.raises(UnsupportedMediaType, match="no RDF reader for file suffix '.png'"):
        document(files / "e.png")
    with pytest.raises(ClientError, match="cannot read"):
        document(files / "gone.rdf")


def test_a_graph_is_sent_as_ntriples_that_read_back_to_the_same_graph() -> None:
    graph = rdflib.Graph()
    graph.add((rdflib.URIRef("urn:a"), rdflib.RDF.type, rdflib.URIRef("urn:C")))
    graph.add((rdflib.URIRef("urn:a"), rdflib.URIRef("urn:p"), rdflib.Literal("é", lang="fr")))
    graph.add((rdflib.URIRef("urn:a"), rdflib.URIRef("urn:q"), rdflib.BNode()))
    body, media_type = document(graph)
    assert media_type == "application/n-triples"
    assert rdflib.Graph().parse(data=body, format="nt").isomorphic(graph)


@pytest.mark.parametrize(
    ("source", "kind", "media_type"),
    [
        ("SELECT ?x WHERE { ?x a <urn:C> }", "semantic", "application/sparql-query"),
        ("a1 >= 3 and a2 = 4", "content", "text/plain"),
        ('  {"constraints": []}', "content", "application/json"),
        ({"region": {"x": [0, 1]}}, "symmetric", "application/json"),
    ],
)
def test_a_subscription_is_sent_with_the_media_type_of_its_form(
    source: object, kind: str, media_type: str
) -> None:
    assert query(source, kind)[1] == media_type  # type: ignore[arg-type]


def test_a_connection_that_stayed_open_long_enough_starts_the_retry_count_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [0.0]
    monkeypatch.setattr(_stream.time, "monotonic", lambda: clock[0])
    pos, retry = StreamPosition(), Retry(attempts=1, backoff=0)
    for _ in range(5):  # five drops, each after HEALTHY seconds open: never given up
        pos.connected()
        clock[0] += _stream.HEALTHY
        assert pos.failed(retry, "ws://x", "dropped") == 0
    pos.connected()  # the last drop was the first of a new count: one more at once is too many
    with pytest.raises(ClientError, match="after 1 reconnections"):
        pos.failed(retry, "ws://x", "dropped at once")


@settings(max_examples=60, deadline=None)
@given(
    total=st.integers(min_value=1, max_value=30),
    plan=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 6)), min_size=1, max_size=40),
)
def test_any_pattern_of_drops_and_resends_yields_each_notification_once_in_order(
    total: int, plan: list[tuple[int, int]]
) -> None:
    """The server answers each connection with a few notifications it already sent (up to
    ``back`` before the position asked for) and ``ahead`` new ones, then drops it."""
    steps = iter(plan)

    def server(request: httpx.Request) -> httpx.Response:
        asked = int(request.headers["last-event-id"])
        back, ahead = next(steps, (0, 1))
        seqs = range(max(1, asked + 1 - back), min(total, asked + ahead) + 1)
        return httpx.Response(200, text=": keep-alive\n\n" + "".join(_frame(s) for s in seqs))

    with _client(server, retry=NO_WAIT) as client:
        stream = client.notifications("s1")
        assert [next(stream).seq for _ in range(total)] == list(range(1, total + 1))


@pytest.mark.parametrize(
    "data",
    [
        "not json",
        '{"event": "e", "id": 1}',
        '{"subscription": "s1", "event": "e", "solutions": "x"}',
    ],
)
def test_a_notification_that_is_not_the_apis_is_a_client_error(data: str) -> None:
    frame = f"id: 1\nevent: notification\ndata: {data}\n\n"
    with _client(lambda r: httpx.Response(200, text=frame), retry=NO_WAIT) as client:
        with pytest.raises(ClientError):
            next(client.notifications("s1"))
