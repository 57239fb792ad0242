"""Bad input over HTTP, in process: each case is a clear 4xx with the error code and a
message that says what is wrong (the same application ``semps serve`` runs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from inprocess import InProcess

from semps.cli.demo import demo_dir

EVENT = (demo_dir() / "events" / "e1-new-chair.rdf").read_bytes()
RDFXML = {"Content-Type": "application/rdf+xml"}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    service = InProcess(Path(tmp_path_factory.mktemp("inputs")) / "data", max_body=1_000_000)
    ontology = (demo_dir() / "univ-bench.owl").read_bytes()
    assert service.request("PUT", "/ontology", "admin", content=ontology).status_code == 200
    yield service
    service.close()


@pytest.mark.parametrize(
    ("role", "method", "path", "body", "headers", "status", "error", "detail"),
    [
        (
            "publisher",
            "post",
            "/events",
            b"<rdf:RDF",
            RDFXML,
            400,
            "bad_event",
            "1:1: malformed XML",
        ),
        (
            "publisher",
            "post",
            "/events",
            b'<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>',
            RDFXML,
            400,
            "hostile_input",
            "external entity 'x' refused",
        ),
        (
            "publisher",
            "post",
            "/events",
            b"a,b",
            {"Content-Type": "text/csv"},
            415,
            "unsupported_media_type",
            "unsupported media type 'text/csv'",
        ),
        (
            "publisher",
            "post",
            "/events",
            b"<a> <b> .",
            {"Content-Type": "text/turtle"},
            400,
            "bad_event",
            "1:",
        ),
        (
            "publisher",
            "post",
            "/events",
            b" " * 1_000_001,
            RDFXML,
            413,
            "too_large",
            "exceeds the limit",
        ),
        (
            "subscriber",
            "post",
            "/subscriptions",
            b"SELECT ?x WHERE {\n ?x ub:p 1 }",
            {},
            400,
            "syntax_error",
            "2:5: unknown prefix 'ub'",
        ),
        (
            "subscriber",
            "post",
            "/subscriptions",
            b"SELECT * { SERVICE <http://x> { ?s <http://p> ?o } }",
            {},
            422,
            "unsupported_query",
            "SERVICE is not supported",
        ),
        (
            "subscriber",
            "post",
            "/subscriptions?kind=semntic",
            b"SELECT * { ?s <http://p> ?o }",
            {},
            400,
            "unknown_kind",
            "Did you mean 'semantic'?",
        ),
        ("subscriber", "post", "/events", EVENT, RDFXML, 403, "forbidden", "needs publisher"),
        ("publisher", "put", "/ontology", b"<rdf:RDF/>", RDFXML, 403, "forbidden", "needs admin"),
        (
            "subscriber",
            "get",
            "/subscriptions/nope",
            None,
            {},
            404,
            "not_found",
            "no subscription 'nope'",
        ),
        (None, "get", "/subscriptions", None, {}, 401, "unauthorized", "missing bearer token"),
    ],
)
def test_bad_input_is_a_clear_4xx(
    api: InProcess,
    role: str | None,
    method: str,
    path: str,
    body: bytes | None,
    headers: dict[str, str],
    status: int,
    error: str,
    detail: str,
) -> None:
    response = api.request(method.upper(), path, role, content=body, headers=headers)
    assert response.status_code == status, response.text
    assert response.json()["error"] == error
    assert detail in response.json()["detail"]
