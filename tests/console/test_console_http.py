"""The console over plain HTTP (a real server): public pages under a strict
Content-Security-Policy, helpers that need a token, and a syntax check that registers
nothing."""

from __future__ import annotations

from html.parser import HTMLParser

import httpx
import pytest
from semps_test_support import Server

from semps.api.console.router import MAX_PAGE, STATIC

pytestmark = pytest.mark.server
SPARQL = {"Content-Type": "application/sparql-query"}
NT = "application/n-triples"
BAD_QUERY = "SELECT ?x WHERE {\n  ?x a <http://ex/Student> .\n  FILTER(?x = )\n}"


class _Scripts(HTMLParser):
    """Every <script> of a page and every on* attribute (inline code)."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.handlers: list[str] = []
        self.inline_text = ""
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        if tag == "script":
            self.scripts.append(dict(attrs))
            self._in_script = True
        if tag == "style" or any(name == "style" for name, _ in attrs):
            self.handlers.append("style")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = self._in_script and tag != "script"

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.inline_text += data.strip()


def test_the_pages_are_public_and_sent_under_a_strict_content_security_policy(
    server: Server,
) -> None:
    for path in ["/console/", *(f"/console/static/{p.name}" for p in sorted(STATIC.iterdir()))]:
        response = httpx.get(server.url + path)
        assert response.status_code == 200, path
        policy = response.headers["content-security-policy"]
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        assert directives["default-src"] == "'none'"
        assert directives["script-src"] == "'self'"
        assert directives["frame-ancestors"] == "'none'"
        assert "unsafe" not in policy
        assert response.headers["x-content-type-options"] == "nosniff"


def test_the_page_has_no_inline_script_style_or_event_handler(server: Server) -> None:
    page = _Scripts()
    page.feed(httpx.get(server.url + "/console/").text)
    assert page.scripts == [{"type": "module", "src": "static/main.js"}]
    assert page.inline_text == ""
    assert page.handlers == []


def test_every_file_is_served_with_its_media_type_and_nothing_else_is(server: Server) -> None:
    kinds = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}
    for path in STATIC.iterdir():
        response = httpx.get(f"{server.url}/console/static/{path.name}")
        assert response.content == path.read_bytes()
        if path.suffix in kinds:
            assert response.headers["content-type"].startswith(kinds[path.suffix])
    for name in ["..%2Fapp.py", "missing.js", "%2e%2e%2frouter.py", "__init__.py"]:
        assert httpx.get(f"{server.url}/console/static/{name}").status_code == 404, name
    root = httpx.get(server.url + "/console")
    assert (root.status_code, root.headers["location"]) == (308, "/console/")


def test_the_helpers_need_a_token_and_say_who_it_belongs_to(server: Server) -> None:
    for method, path in [
        ("GET", "/console/api/whoami"),
        ("GET", "/console/api/ontology-summary"),
        ("GET", "/console/api/ontology-tree"),
        ("GET", "/console/api/ontology-search?q=x"),
        ("GET", "/console/api/ontology-axioms"),
        ("POST", "/console/api/check"),
    ]:
        response = httpx.request(method, server.url + path)
        assert response.status_code == 401, path
        assert response.json()["error"] == "unauthorized"
    with server.client("subscriber") as sub:
        who = sub.get("/console/api/whoami").json()
    assert who["role"] == "subscriber"
    assert who["subject"].startswith("subscriber")


def test_the_check_reports_where_the_parser_stopped_and_registers_nothing(
    server: Server,
) -> None:
    with server.client("subscriber") as sub:
        before = sub.get("/subscriptions").json()
        found = sub.post("/console/api/check", content=BAD_QUERY).json()
        good = sub.post("/console/api/check", content=BAD_QUERY.replace("= )", "= ?x)"))
        unknown = sub.post("/console/api/check?kind=semntic", content="{}")
        absurd = sub.post("/console/api/check", params={"kind": "k" * 1_000}, content="{}")
        after = sub.get("/subscriptions").json()
    line, column = 3, BAD_QUERY.splitlines()[2].index(")") + 1
    assert found["ok"] is False
    assert (found["line"], found["column"]) == (line, column)
    assert found["error"] == "SubscriptionSyntaxError"
    assert good.json() == {"ok": True}
    assert unknown.status_code == 400
    assert "Did you mean 'semantic'?" in unknown.json()["detail"]
    assert absurd.status_code == 422
    assert before == after


def test_the_check_runs_each_kinds_own_parser(server: Server) -> None:
    with server.client("subscriber") as sub:
        content = sub.post("/console/api/check?kind=content", content="a3 between 1 or 2").json()
        region = sub.post("/console/api/check?kind=symmetric", content='{"region": 3}').json()
    assert (content["ok"], content["line"], content["column"]) == (False, 1, 14)
    assert region["ok"] is False


def test_the_check_is_bounded_by_the_query_size_limit(server: Server) -> None:
    with server.client("subscriber") as sub:
        huge = sub.post("/console/api/check", content="#" * (64 * 1024 + 1)).json()
        past_the_reader = sub.post("/console/api/check", content=b"#" * (256 * 1024 + 2))
    assert huge["ok"] is False
    assert "max_query_bytes" in huge["detail"]
    assert past_the_reader.status_code == 413


def test_the_ontology_helpers_answer_bounded_pages_and_refuse_what_is_out_of_bounds(
    server: Server,
) -> None:
    triples = "".join(
        f"<http://ex/C{i}> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <http://ex/Top> .\n"
        for i in range(MAX_PAGE + 20)
    )
    with server.client("admin") as admin:
        loaded = admin.post("/ontology", content=triples, headers={"Content-Type": NT})
        assert loaded.status_code == 200, loaded.text
    with server.client("subscriber") as sub:
        top = {"tree": "classes", "parent": "http://ex/Top", "limit": MAX_PAGE}
        page = sub.get("/console/api/ontology-tree", params=top).json()
        rest = sub.get("/console/api/ontology-tree", params={**top, "offset": MAX_PAGE}).json()
        found = sub.get("/console/api/ontology-search", params={"q": "ex/c1", "limit": 5}).json()
        summary = sub.get("/console/api/ontology-summary").json()
        refused = [
            sub.get("/console/api/ontology-tree", params={"limit": MAX_PAGE + 1}),
            sub.get("/console/api/ontology-tree", params={"tree": "individuals"}),
            sub.get("/console/api/ontology-search", params={"q": ""}),
            sub.get("/console/api/ontology-search", params={"q": "x" * 2049}),
            sub.get("/console/api/ontology-axioms", params={"offset": -1}),
        ]
    assert (page["total"], len(page["items"]), len(rest["items"])) == (
        MAX_PAGE + 21 - 1,
        MAX_PAGE,
        20,
    )
    brute = sum("ex/c1" in f"http://ex/C{i}".lower() for i in range(MAX_PAGE + 20))
    assert len(found["items"]) == 5 and found["total"] == brute
    assert all(item["path"] == ["http://ex/Top"] for item in found["items"])
    assert summary["classes"] == MAX_PAGE + 21
    assert [r.status_code for r in refused] == [422] * 5
    assert all(r.json()["error"] == "invalid_request" for r in refused)
