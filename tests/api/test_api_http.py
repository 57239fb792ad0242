"""The HTTP surface of the service, in process (no server): one error shape for every 4xx and
5xx, 415 on every body endpoint, the OpenAPI document (bearer scheme, error statuses), the
offline /docs, cursor pagination, the admin token API and /metrics."""

from __future__ import annotations

import base64
import json
import logging
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from inprocess import InProcess

from semps.api.pagination import MAX_LIMIT
from semps.broker.contracts import Webhook

MAX_BODY = 4096
METRICS_TOKEN = "metrics-only-secret"
QUERY = "SELECT ?x WHERE { ?x a <http://ex.org/C%d> }"
TURTLE = "text/turtle"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    service = InProcess(
        Path(tmp_path_factory.mktemp("api")) / "data",
        max_body=MAX_BODY,
        metrics_token=METRICS_TOKEN,
    )
    yield service
    service.close()


def assert_error(response: object, status: int, code: str) -> dict[str, object]:
    """The response is ``status`` with the one error shape and ``code``."""
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    assert response.headers["content-type"] == "application/json"  # type: ignore[attr-defined]
    body = response.json()  # type: ignore[attr-defined]
    assert body["error"] == code and isinstance(body["detail"], str) and body["detail"]
    return dict(body)


# -- one error shape ---------------------------------------------------------------------------


def test_an_unknown_route_is_a_404_in_the_error_shape(api: InProcess) -> None:
    body = assert_error(api.request("GET", "/no/such/route", "admin"), 404, "not_found")
    assert body["detail"] == "no route /no/such/route"


def test_a_wrong_method_is_a_405_with_allow(api: InProcess) -> None:
    response = api.request("PATCH", "/subscriptions", "admin")
    assert_error(response, 405, "method_not_allowed")
    assert set(response.headers["allow"].replace(" ", "").split(",")) == {"GET", "POST"}


@pytest.mark.parametrize("query", ["limit=abc", "limit=0", f"limit={MAX_LIMIT + 1}"])
def test_a_bad_parameter_is_a_422_in_the_error_shape(api: InProcess, query: str) -> None:
    body = assert_error(
        api.request("GET", f"/subscriptions?{query}", "admin"), 422, "invalid_request"
    )
    assert "query.limit" in str(body["detail"])


def test_a_bad_position_is_a_400_in_the_error_shape(api: InProcess) -> None:
    sub_id = subscribe(api, "subscriber", QUERY % 0)
    response = api.request("GET", f"/subscriptions/{sub_id}/notifications?after=abc", "subscriber")
    body = assert_error(response, 400, "bad_request")
    assert body["detail"] == "after must be ASCII digits for a number below 2**63, not 'abc'"


def test_missing_and_insufficient_tokens(api: InProcess) -> None:
    response = api.request("GET", "/subscriptions")
    assert_error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"
    assert_error(api.request("GET", "/subscriptions", token="not-a-token"), 401, "unauthorized")
    assert_error(api.request("GET", "/deadletters", "publisher"), 403, "forbidden")


def test_a_body_over_the_limit_is_a_413(api: InProcess) -> None:
    big = "#" * (MAX_BODY + 1)
    assert_error(api.request("POST", "/subscriptions", "subscriber", content=big), 413, "too_large")
    assert_error(api.request("POST", "/events", "publisher", content=big), 413, "too_large")


def test_too_many_streams_is_a_429(api: InProcess) -> None:
    token = api.token("subscriber", "streamer")
    sub_id = subscribe(api, "subscriber", QUERY % 1, token=token)
    streams = api.app.state.context.streams
    leases = [streams.lease("streamer") for _ in range(streams.max_streams)]
    try:
        response = api.request("GET", f"/subscriptions/{sub_id}/notifications", token=token)
        assert_error(response, 429, "too_many_requests")
    finally:
        for lease in leases:
            lease.release()


def test_an_unexpected_exception_is_a_logged_500_without_internals(
    api: InProcess, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object) -> bytes:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(api.broker.ontology, "export", broken)
    with caplog.at_level(logging.ERROR, logger="semps.api"):
        response = api.request("GET", "/ontology", "admin")
    body = assert_error(response, 500, "internal_error")
    assert "secret internals" not in response.text and "Traceback" not in response.text
    assert body == {"error": "internal_error", "detail": "internal server error"}
    assert any("secret internals" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


# -- media types ---------------------------------------------------------------------------------

PNG = {"Content-Type": "image/png"}


@pytest.mark.parametrize(
    ("endpoint", "role"),
    [
        ("PUT /ontology", "admin"),
        ("POST /ontology", "admin"),
        ("POST /ontology/axioms", "admin"),
        ("DELETE /ontology/axioms", "admin"),
        ("POST /ontology/classes", "admin"),
        ("POST /ontology/properties", "admin"),
        ("POST /events", "publisher"),
        ("POST /events/batch", "publisher"),
        ("POST /subscriptions", "subscriber"),
        ("POST /subscriptions?kind=content", "subscriber"),
        ("POST /tokens", "admin"),
    ],
)
def test_every_body_endpoint_refuses_an_unknown_media_type(
    api: InProcess, endpoint: str, role: str
) -> None:
    method, path = endpoint.split(" ")
    response = api.request(method, path, role, content=b"\x89PNG", headers=PNG)
    body = assert_error(response, 415, "unsupported_media_type")
    assert "image/png" in str(body["detail"])


def test_a_replaced_subscription_refuses_an_unknown_media_type(api: InProcess) -> None:
    sub_id = subscribe(api, "subscriber", QUERY % 2)
    response = api.request(
        "PUT", f"/subscriptions/{sub_id}", "subscriber", content=b"x", headers=PNG
    )
    assert_error(response, 415, "unsupported_media_type")


@pytest.mark.parametrize(
    ("path", "media_type", "hint"),
    [
        ("/subscriptions", "application/json", "kind=content"),
        ("/subscriptions?kind=content", "application/sparql-query", "kind=semantic"),
    ],
    ids=["sparql-sent-as-json", "sparql-sent-to-a-json-kind"],
)
def test_a_query_in_another_kinds_media_type_is_a_415_naming_that_kind(
    api: InProcess, path: str, media_type: str, hint: str
) -> None:
    response = api.request(
        "POST", path, "subscriber", content=QUERY % 3, headers={"Content-Type": media_type}
    )
    body = assert_error(response, 415, "unsupported_media_type")
    assert hint in str(body["detail"])


def test_json_constraints_without_kind_content_get_a_hint(api: InProcess) -> None:
    constraints = '{"constraints": [{"attr": "price", "op": "<=", "value": 10}]}'
    response = api.request("POST", "/subscriptions", "subscriber", content=constraints)
    assert response.status_code in (400, 422)
    assert "kind=content" in response.json()["detail"]


def test_each_kind_takes_its_own_media_type(api: InProcess) -> None:
    sparql = {"Content-Type": "application/sparql-query; charset=utf-8"}
    created = api.request("POST", "/subscriptions", "subscriber", content=QUERY % 5, headers=sparql)
    assert created.status_code == 201, created.text
    constraints = '{"constraints": [{"attr": "price", "op": "<=", "value": 10}]}'
    json_type = {"Content-Type": "application/json"}
    created = api.request(
        "POST", "/subscriptions?kind=content", "subscriber", content=constraints, headers=json_type
    )
    assert created.status_code == 201, created.text


# -- OpenAPI and /docs --------------------------------------------------------------------------

# /health, and the Solid description resource and subscription services (discovery comes
# before any token)
PUBLIC = {
    ("/health", "get"),
    ("/.well-known/solid", "get"),
    ("/solid/subscription/{kind}", "get"),
}


def operations(doc: dict[str, object]) -> Iterator[tuple[str, str, dict[str, object]]]:
    for path, item in doc["paths"].items():  # type: ignore[attr-defined]
        for method, operation in item.items():
            yield path, method, operation


def test_the_openapi_document_is_public(api: InProcess) -> None:
    assert api.request("GET", "/openapi.json").status_code == 200


def test_every_protected_operation_declares_the_bearer_scheme(api: InProcess) -> None:
    doc = api.request("GET", "/openapi.json").json()
    scheme = doc["components"]["securitySchemes"]["HTTPBearer"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
    for path, method, operation in operations(doc):
        if (path, method) in PUBLIC:
            assert "security" not in operation
        else:
            assert operation["security"] == [{"HTTPBearer": []}], (path, method)
            assert "401" in operation["responses"], (path, method)


def test_every_operation_declares_its_error_statuses_with_the_error_model(api: InProcess) -> None:
    doc = api.request("GET", "/openapi.json").json()
    error_ref = {"$ref": "#/components/schemas/ErrorBody"}
    for path, method, operation in operations(doc):
        statuses = operation["responses"]
        for status, response in statuses.items():
            if status.startswith(("4", "5")):
                assert response["content"]["application/json"]["schema"] == error_ref
        if "requestBody" in operation:
            assert {"413", "415"} <= set(statuses), (path, method)
        if "{" in path:
            assert "404" in statuses, (path, method)
        if any(p["in"] == "query" for p in operation.get("parameters", [])):
            assert "422" in statuses or "400" in statuses, (path, method)
    notifications = doc["paths"]["/subscriptions/{sub_id}/notifications"]["get"]
    assert "429" in notifications["responses"]


def test_every_body_schema_the_document_names_is_in_it(api: InProcess) -> None:
    text = api.request("GET", "/openapi.json").text
    schemas = api.request("GET", "/openapi.json").json()["components"]["schemas"]
    for name in re.findall(r'"#/components/schemas/([^"]+)"', text):
        assert name in schemas


def test_docs_work_offline_from_the_packages_assets(api: InProcess) -> None:
    page = api.request("GET", "/docs")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert not re.search(r"https?://", page.text)  # no CDN, no other host
    links = re.findall(r'(?:src|href|url)\s*[=:]\s*["\']([^"\']+)["\']', page.text)
    assert links and all(link.startswith("/") and not link.startswith("//") for link in links)
    for link in links:
        asset = api.request("GET", link)
        assert asset.status_code == 200 and asset.content, link


# -- activity ----------------------------------------------------------------------------------


def test_a_subscription_says_how_often_it_matched_and_when_last(api: InProcess) -> None:
    token = api.token("subscriber", "counted")
    sub_id = subscribe(api, "subscriber", QUERY % 901, token=token)
    quiet = subscribe(api, "subscriber", QUERY % 902, token=token)
    event = "<http://ex.org/a> a <http://ex.org/C901> ."
    before = time.time()
    for _ in range(3):
        published = api.request(
            "POST", "/events", "publisher", content=event, headers={"Content-Type": TURTLE}
        )
        assert published.json()["matched"] == 1
    after = time.time()
    one = api.request("GET", f"/subscriptions/{sub_id}", token=token).json()
    listed = {s["id"]: s for s in api.request("GET", "/subscriptions", token=token).json()["items"]}
    stream = api.request("GET", f"/subscriptions/{sub_id}/notifications?once=true", token=token)
    times = [
        json.loads(line[6:])["time"] for line in stream.text.splitlines() if line[:6] == "data: "
    ]
    assert len(times) == 3 and times == sorted(times)
    assert before - 0.001 <= times[0] and times[-1] <= after + 0.001
    assert (one["matches"], one["last_match"]) == (3, times[-1])
    assert (listed[sub_id]["matches"], listed[sub_id]["last_match"]) == (3, times[-1])
    assert (listed[quiet]["matches"], listed[quiet]["last_match"]) == (0, None)


# -- pagination -------------------------------------------------------------------------------


def subscribe(api: InProcess, role: str, text: str, token: str | None = None) -> str:
    created = api.request("POST", "/subscriptions", role, token=token, content=text)
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def pages(api: InProcess, path: str, token: str, limit: int) -> list[list[dict[str, object]]]:
    out, cursor = [], None
    while True:
        params: dict[str, object] = {"limit": limit}
        if cursor is not None:
            params["cursor"] = cursor
        body = api.request("GET", path, token=token, params=params).json()
        out.append(body["items"])
        cursor = body["next"]
        if cursor is None:
            return out


def test_subscriptions_come_in_pages_that_cover_each_once(api: InProcess) -> None:
    token = api.token("subscriber", "pager")
    created = [subscribe(api, "", QUERY % (100 + i), token=token) for i in range(7)]
    got = pages(api, "/subscriptions", token, limit=3)
    assert [len(p) for p in got] == [3, 3, 1]
    assert [s["id"] for p in got for s in p] == created


def test_an_exact_last_page_says_there_is_no_next(api: InProcess) -> None:
    token = api.token("subscriber", "exact")
    created = [subscribe(api, "", QUERY % (200 + i), token=token) for i in range(4)]
    got = pages(api, "/subscriptions", token, limit=2)
    assert [s["id"] for p in got for s in p] == created and [len(p) for p in got] == [2, 2]
    assert pages(api, "/subscriptions", api.token("subscriber", "nobody"), 5) == [[]]


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage!",
        "%%%",
        base64.urlsafe_b64encode(b"deadletters:3").decode(),  # another list's cursor
        base64.urlsafe_b64encode(b"subscriptions:").decode(),
        "A" * 600,
        base64.urlsafe_b64encode(b"subscriptions:sub-1").decode(),  # forged: no HMAC
        base64.urlsafe_b64encode(b"x" * 12 + b"subscriptions:sub-1").decode(),  # a made-up one
    ],
)
def test_a_cursor_not_handed_out_is_a_400_or_422(api: InProcess, cursor: str) -> None:
    response = api.request("GET", "/subscriptions", "admin", params={"cursor": cursor})
    assert response.status_code in (400, 422)
    assert set(response.json()) >= {"error", "detail"}


def test_a_cursor_altered_by_one_character_is_a_400(api: InProcess) -> None:
    """The README promises it: a cursor the service did not hand out is a 400 (it is signed
    with a key of the data directory)."""
    token = api.token("subscriber", "paging-forger")
    for i in range(3):
        subscribe(api, "", QUERY % (400 + i), token=token)
    reply = api.request("GET", "/subscriptions", "", params={"limit": 1}, token=token)
    cursor = reply.json()["next"]
    assert (
        api.request("GET", "/subscriptions", "", params={"cursor": cursor}, token=token).status_code
        == 200
    )
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    raw[-1] ^= 1  # point after another subscription
    forged = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    reply = api.request("GET", "/subscriptions", "", params={"cursor": forged}, token=token)
    assert (reply.status_code, reply.json()["error"]) == (400, "bad_request")
    assert reply.json()["detail"].endswith("pass the 'next' value of the previous page")


def test_dead_letters_come_in_pages(api: InProcess) -> None:
    sub_id = subscribe(api, "subscriber", QUERY % 300)
    store = api.broker.store
    before = len(store.dead_letters())
    hook = Webhook(sub_id, "https://hooks.example/x", "k", 0)
    for seq in range(1, 6):
        store.add_dead_letter(hook, seq, "connection refused", 5)
    got = pages(api, "/deadletters", api.tokens["admin"], limit=2)
    letters = [d for p in got for d in p]
    assert [d["id"] for d in letters] == [d.id for d in store.dead_letters()]
    assert [d["seq"] for d in letters[before:]] == [1, 2, 3, 4, 5]
    garbage = api.request("GET", "/deadletters", "admin", params={"cursor": "nope"})
    assert_error(garbage, 400, "bad_request")


# -- the token API -------------------------------------------------------------------------------


def test_an_admin_creates_lists_and_revokes_tokens(api: InProcess) -> None:
    created = api.request("POST", "/tokens", "admin", json={"role": "subscriber"})
    assert created.status_code == 201, created.text
    new = created.json()
    assert new["role"] == "subscriber" and new["expires"] is None and new["revoked"] is None
    assert api.request("GET", "/subscriptions", token=new["token"]).status_code == 200
    listed = api.request("GET", "/tokens", "admin")
    assert new["token"] not in listed.text
    (row,) = [t for t in listed.json() if t["id"] == new["id"]]
    assert set(row) == {"id", "role", "subject", "created", "expires", "revoked"}
    assert api.request("DELETE", f"/tokens/{new['id']}", "admin").status_code == 204
    assert_error(api.request("GET", "/subscriptions", token=new["token"]), 401, "unauthorized")
    (row,) = [t for t in api.request("GET", "/tokens", "admin").json() if t["id"] == new["id"]]
    assert row["revoked"] is not None


def test_a_token_may_expire(api: InProcess) -> None:
    created = api.request(
        "POST", "/tokens", "admin", json={"role": "publisher", "expires_in": "30d"}
    )
    new = created.json()
    assert abs(new["expires"] - new["created"] - 30 * 86400) < 60


@pytest.mark.parametrize(
    "body",
    [
        {"role": "root"},
        {"role": "publisher", "expires_in": "soon"},
        {"role": "admin", "expires_in": -5},
        {"role": "admin", "expires_in": 10**400},
        {"role": "admin", "expires_in": "9" * 60 + "d"},
        {"role": "admin", "expires_in": "1" * 100},
        {"role": "admin", "expires_in": 1.5},
        {},
    ],
)
def test_a_bad_token_request_is_a_400(api: InProcess, body: dict[str, object]) -> None:
    assert_error(api.request("POST", "/tokens", "admin", json=body), 400, "bad_request")


def test_only_an_admin_manages_tokens(api: InProcess) -> None:
    assert_error(api.request("GET", "/tokens", "subscriber"), 403, "forbidden")
    assert_error(
        api.request("POST", "/tokens", "publisher", json={"role": "admin"}), 403, "forbidden"
    )
    assert_error(api.request("DELETE", "/tokens/tok-nope", "admin"), 404, "not_found")


# -- /metrics ------------------------------------------------------------------------------------


def sample(text: str, name: str) -> int:
    """The value of one sample line (0 when absent)."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[-1]))
    return 0


def test_the_metrics_token_reads_metrics_and_nothing_else(api: InProcess) -> None:
    assert api.request("GET", "/metrics", token=METRICS_TOKEN).status_code == 200
    assert api.request("GET", "/metrics", "publisher").status_code == 200
    assert_error(api.request("GET", "/metrics"), 401, "unauthorized")
    assert_error(api.request("GET", "/subscriptions", token=METRICS_TOKEN), 401, "unauthorized")


def test_metrics_count_errors_by_status_and_rejections(api: InProcess) -> None:
    before = api.request("GET", "/metrics", token=METRICS_TOKEN).text
    for _ in range(2):
        api.request("GET", "/nowhere", "admin")
    api.request("PUT", "/ontology", "admin", content=b"x", headers=PNG)
    api.request("GET", "/subscriptions")  # 401
    after = api.request("GET", "/metrics", token=METRICS_TOKEN).text
    for name, added in [
        ('semps_http_errors_total{status="404"}', 2),
        ('semps_http_errors_total{status="415"}', 1),
        ('semps_http_errors_total{status="401"}', 1),
        ("semps_requests_rejected_total", 2),
    ]:
        assert sample(after, name) - sample(before, name) == added, name


def test_metrics_show_open_streams_and_queue_depths(api: InProcess) -> None:
    streams = api.app.state.context.streams
    lease = streams.lease("gauge-reader")
    try:
        text = api.request("GET", "/metrics", token=METRICS_TOKEN).text
    finally:
        lease.release()
    assert sample(text, "semps_open_streams") == 1
    for gauge in ("semps_queue_depth", "semps_webhook_backlog", "semps_dead_letters"):
        assert f"# TYPE {gauge} gauge" in text


# -- suspend and resume ----------------------------------------------------------------------


def test_an_admin_suspends_and_resumes_a_subscription(api: InProcess) -> None:
    token = api.token("subscriber", "suspendee")
    constraints = '{"constraints": [{"attr": "audit_price", "op": "<=", "value": 10}]}'
    created = api.request("POST", "/subscriptions?kind=content", token=token, content=constraints)
    sub_id = created.json()["id"]
    event = {"values": {"audit_price": 5}}

    def matched() -> int:
        response = api.request("POST", "/events", "publisher", json=event)
        assert response.status_code == 202, response.text
        return int(response.json()["matched"])

    assert matched() == 1
    suspended = api.request("POST", f"/subscriptions/{sub_id}/suspend?reason=audit", "admin")
    assert suspended.status_code == 200, suspended.text
    assert suspended.json()["status"] == "suspended" and suspended.json()["reason"] == "audit"
    seen = api.request("GET", f"/subscriptions/{sub_id}", token=token).json()
    assert (seen["status"], seen["reason"]) == ("suspended", "audit")
    assert matched() == 0
    assert api.request("POST", f"/subscriptions/{sub_id}/resume", "admin").json()["status"] == (
        "active"
    )
    assert matched() == 1
    assert_error(
        api.request("POST", f"/subscriptions/{sub_id}/suspend", token=token), 403, "forbidden"
    )
    assert_error(api.request("POST", "/subscriptions/sub-none/suspend", "admin"), 404, "not_found")
