"""The console as an operator lives in it, in a real headless chromium against a real
``semps serve``: each role offered what it may do, CURIEs in forms, labels searched, status
lines that stay on their panel, notifications with their time, subscriptions with their
matches, the dashboard reading /metrics, errors said once, the event and explain links, and
a fresh service's empty states.

What the page shows is checked against the HTTP API (an independent reading of the same
server); the dashboard's reading of the metrics against one written here from the
Prometheus text format's definition.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime

import httpx
import pytest
import rdflib
from console.browser import ConsolePage
from selenium.webdriver.common.by import By
from semps_test_support import Server

from semps.cli.demo import demo_dir

pytestmark = [pytest.mark.browser, pytest.mark.server]
EX = "http://operator.example/"
ZZ = "http://zz.example/vocab#"
TTL = {"Content-Type": "text/turtle"}
ALL_TABS = [
    "dashboard",
    "ontology",
    "graph",
    "subscriptions",
    "notifications",
    "publish",
    "prefixes",
]


def _query(cls: str) -> str:
    return f"PREFIX ex: <{EX}>\nSELECT ?x WHERE {{ ?x a ex:{cls} }}"


def _publish(server: Server, subject: str, cls: str) -> dict[str, object]:
    with server.client("publisher") as publisher:
        answer = publisher.post("/events", content=f"<{EX}{subject}> a <{EX}{cls}> .", headers=TTL)
    assert answer.status_code == 202, answer.text
    return dict(answer.json())


def _subscribed_and_published(
    page: ConsolePage, server: Server, wanted: str, event: tuple[str, str]
) -> tuple[str, str]:
    """Logged in as the admin: a subscription to the class ``wanted`` registered, and the
    event ``(subject, class)`` published; their ids."""
    page.log_in(server.tokens["admin"])
    sub_id = page.register(_query(wanted))
    return sub_id, str(_publish(server, *event)["id"])


def _iso(seconds: float) -> str:
    """A Unix time as JavaScript's Date.toISOString() writes it (milliseconds, UTC)."""
    when = datetime.fromtimestamp(round(seconds * 1000) / 1000, tz=UTC)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _stored_times(server: Server, sub_id: str) -> list[float]:
    with server.client("admin") as admin:
        stream = admin.get(f"/subscriptions/{sub_id}/notifications", params={"once": "true"})
    return [
        json.loads(line[6:])["time"] for line in stream.text.splitlines() if line[:6] == "data: "
    ]


def _export(server: Server) -> rdflib.Graph:
    with server.client("admin") as admin:
        text = admin.get("/ontology", headers={"Accept": "text/turtle"}).text
    return rdflib.Graph().parse(data=text, format="turtle")


def test_each_role_is_offered_only_what_it_may_do(page: ConsolePage, server: Server) -> None:
    offered = {
        "admin": ALL_TABS,
        "publisher": ["dashboard", "ontology", "graph", "publish", "prefixes"],
        "subscriber": [
            "dashboard",
            "ontology",
            "graph",
            "subscriptions",
            "notifications",
            "prefixes",
        ],
    }
    for role, tabs in offered.items():
        page.log_in(server.tokens[role])
        assert page.tabs() == tabs, role
        page.tab("ontology")
        for form in ("#axiom-form", "#upload-form"):
            assert page.css(form).is_displayed() == (role == "admin"), (role, form)
        page.tab("graph")  # publishers and admins edit the knowledge graph
        editor = page.css("#graph-update-form").is_displayed()
        assert editor == (role != "subscriber"), role
        for tab in set(ALL_TABS) - set(tabs):  # a tab not offered is not reached by its link
            page.driver.get(f"{server.url}/console/#{tab}")
            page.until(lambda d: page.css("#dashboard").is_displayed(), f"{role}: not {tab}")
            assert not page.css(f"#{tab}").is_displayed()
        if role == "publisher":  # explaining needs a subscription: not offered either
            page.driver.get(f"{server.url}/console/#explain/sub-1")
            page.until(lambda d: page.css("#dashboard").is_displayed(), "no explain form")
            assert not page.css("#explain-form").is_displayed()


def test_forms_take_curies_and_refuse_an_unknown_prefix_without_sending_anything(
    page: ConsolePage, server: Server
) -> None:
    page.log_in(server.tokens["admin"])
    page.tab("ontology")
    before = set(_export(server))
    page.type_into("#axiom-subject", "zz:Sensor")
    page.type_into("#axiom-object", "zz:Device")
    refusal = "unknown prefix 'zz:' in 'zz:Sensor': declare it under Prefixes"
    assert refusal in page.text("#axiom-subject-iri")
    page.css("#axiom-form button[type=submit]").click()
    assert page.wait_flash("ontology", "Not added").startswith(f"Not added: {refusal}")
    assert set(_export(server)) == before  # no junk class 'zz:Sensor'

    page.tab("prefixes")
    page.type_into("#prefix-name", "zz")
    page.type_into("#prefix-namespace", ZZ)
    page.css("#prefix-form button[type=submit]").click()
    page.wait_flash("prefixes", "Declared zz:")
    assert page.css('#prefix-rows tr[data-prefix="zz"] .source').text == "yours"
    page.tab("ontology")
    page.type_into("#axiom-subject", "zz:Sensor")
    page.type_into("#axiom-object", "brick:Point")  # a common prefix needs no declaring
    assert page.text("#axiom-subject-iri") == f"= {ZZ}Sensor"
    page.css("#axiom-form button[type=submit]").click()
    assert "Added zz:Sensor subClassOf brick:Point" in page.wait_flash("ontology", "Added")
    graph = _export(server)
    brick_point = rdflib.URIRef("https://brickschema.org/schema/Brick#Point")
    assert (rdflib.URIRef(ZZ + "Sensor"), rdflib.RDFS.subClassOf, brick_point) in graph
    assert not [t for t in graph.all_nodes() if str(t).startswith("zz:")]

    page.log_in(server.tokens["admin"])  # the same user again: the prefix was kept
    page.tab("prefixes")
    assert page.css('#prefix-rows tr[data-prefix="zz"]').text.startswith(f"zz: {ZZ}")


def test_search_finds_by_label_and_shows_the_hit_in_the_tree(
    page: ConsolePage, server: Server
) -> None:
    with server.client("admin") as admin:
        owl = (demo_dir() / "univ-bench.owl").read_bytes()
        merged = admin.post(
            "/ontology", content=owl, headers={"Content-Type": "application/rdf+xml"}
        )
    assert merged.status_code == 200
    ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
    page.log_in(server.tokens["subscriber"])
    page.tab("ontology")
    page.type_into("#onto-search", "administrative staff")
    hit = page.until(
        lambda d: page.css(
            f'#search-results [data-tree="classes"] li[data-iri="{ub}AdministrativeStaff"]'
        ),
        "the label's class among the hits",
    )
    assert "administrative staff worker" in hit.text
    assert hit.text.endswith(" in univ-bench:Employee")  # its path from a root
    hit.find_element(By.CSS_SELECTOR, "button.link").click()
    row = page.until(
        lambda d: page.css(f'#class-tree li[data-iri="{ub}AdministrativeStaff"] > .entity.found'),
        "the hit shown in the tree",
    )
    assert row.is_displayed()


def test_a_status_line_stays_on_its_panel(page: ConsolePage, server: Server) -> None:
    page.log_in(server.tokens["subscriber"])
    sub_id = page.register(_query("Flash"))
    page.wait_flash("subscriptions", f"Registered {sub_id}")
    for tab in ("ontology", "dashboard", "notifications", "prefixes"):
        page.tab(tab)
        assert "Registered" not in page.css("body").text, tab
    page.tab("subscriptions")
    assert page.flash("subscriptions") == ""


def test_notifications_show_their_time_and_subscriptions_their_matches(
    page: ConsolePage, server: Server
) -> None:
    page.log_in(server.tokens["admin"])
    sub_id = page.register(_query("Timed"), name="timed")
    for name in ("t1", "t2"):
        assert _publish(server, name, "Timed")["matched"] == 1
    page.watch(sub_id)
    notes = page.until(
        lambda d: len(page.all("#note-list > li")) == 2 and page.all("#note-list > li"), "both"
    )
    times = _stored_times(server, sub_id)
    shown = [
        li.find_element(By.CSS_SELECTOR, ".note-head time").get_attribute("datetime")
        for li in notes
    ]
    assert shown == [_iso(t) for t in reversed(times)]  # newest first
    page.tab("subscriptions")
    with server.client("admin") as admin:
        listed = admin.get(f"/subscriptions/{sub_id}").json()
    row = page.subscription_row(sub_id)
    assert row.find_element(By.CSS_SELECTOR, ".matches").text == str(listed["matches"]) == "2"
    last = row.find_element(By.CSS_SELECTOR, ".last time").get_attribute("datetime")
    assert last == _iso(listed["last_match"]) == _iso(times[-1])


def test_a_notifications_event_and_explain_links_open_their_views(
    page: ConsolePage, server: Server
) -> None:
    sub_id, event_id = _subscribed_and_published(page, server, "Linked", ("l1", "Linked"))
    page.watch(sub_id)
    note = page.until(lambda d: page.all("#note-list > li"), "the notification")[0]
    note.find_element(By.CSS_SELECTOR, ".event-link").click()
    page.until(lambda d: page.css("#view").is_displayed(), "the event view")
    assert page.text("#view-title") == f"Event {event_id}"
    with server.client("admin") as admin:
        stored = admin.get(f"/events/{event_id}").json()
    cells = page.until(lambda d: page.all("#view-body table.triples tbody td"), "the triples")
    assert [c.get_attribute("title") for c in cells] == stored["triples"][0]
    assert stored["triples"][0][0] == f"<{EX}l1>"
    page.driver.back()
    note = page.until(lambda d: page.all("#note-list > li"), "the notification again")[0]
    note.find_element(By.CSS_SELECTOR, ".explain-link").click()
    page.wait_text("#view-title", f"Why {sub_id} matches {event_id}, or not")
    said = page.wait_text("#view-body", f"{sub_id} matches {event_id}: 1 solution(s)")
    assert "?x = ex:l1" in said and "[event]" in said


def test_the_explain_view_says_why_a_subscription_did_not_match(
    page: ConsolePage, server: Server
) -> None:
    sub_id, event_id = _subscribed_and_published(page, server, "Wanted", ("w1", "Other"))
    page.driver.get(f"{server.url}/console/#explain/{sub_id}/{event_id}")
    said = page.wait_text("#view-body", f"{sub_id} does not match {event_id}")
    assert "no node of class ex:Wanted (type constraint unmet)" in said
    assert "same predicate, other class: ex:w1 rdf:type ex:Other" in said


def _events_in(server: Server) -> int:
    with server.client("admin") as admin:
        metrics = admin.get("/metrics").text
    return int(re.search(r"^semps_events_in_total (\d+)$", metrics, re.M)[1])  # type: ignore[index]


def test_a_subscriber_explains_a_non_match_with_an_event_pasted_in_and_its_prefixes(
    page: ConsolePage, server: Server
) -> None:
    """An event that never matched sends no notification to click: the subscription's
    Explain button takes the event itself (explained, not published), and the explanation
    writes IRIs with the user's own prefixes, as every display does."""
    site = "http://yy.example/site#"
    page.log_in(server.tokens["subscriber"])
    sub_id = page.register(_query("Pasted"))
    page.tab("prefixes")
    page.type_into("#prefix-name", "yy")
    page.type_into("#prefix-namespace", site)
    page.css("#prefix-form button[type=submit]").click()
    page.wait_flash("prefixes", "Declared yy:")
    page.tab("subscriptions")
    page.click_in_row(sub_id, "explain")
    page.wait_text("#view-title", f"Why {sub_id} matches an event, or not")
    published = _events_in(server)
    page.choose("#explain-type", "text/turtle")
    page.type_into("#explain-body", "yy:p1 a brick:Point .")  # CURIEs, as in every form
    page.css("#explain-prefixes").click()
    brick = "https://brickschema.org/schema/Brick#"
    assert page.css("#explain-body").get_attribute("value") == (
        f"@prefix brick: <{brick}> .\n@prefix yy: <{site}> .\nyy:p1 a brick:Point ."
    )
    page.css("#explain-form button[type=submit]").click()
    said = page.wait_text("#view-body", f"{sub_id} does not match posted")
    assert "no node of class ex:Pasted (type constraint unmet)" in said
    assert "same predicate, other class: yy:p1 rdf:type brick:Point" in said
    assert _events_in(server) == published  # explained, never published


def test_the_explain_form_takes_a_stored_event_s_id(page: ConsolePage, server: Server) -> None:
    sub_id, event_id = _subscribed_and_published(page, server, "Named", ("n1", "Other"))
    page.driver.get(f"{server.url}/console/#explain/{sub_id}")
    page.wait_text("#view-title", f"Why {sub_id} matches an event, or not")
    page.type_into("#explain-event", event_id)
    page.css("#explain-form button[type=submit]").click()
    page.wait_text("#view-body", f"{sub_id} does not match {event_id}")
    assert page.driver.current_url.endswith(f"#explain/{sub_id}/{event_id}")  # a link to it
    assert page.text("#view-title") == f"Why {sub_id} matches {event_id}, or not"


def test_a_syntax_error_is_said_once_with_its_position(page: ConsolePage, server: Server) -> None:
    bad = f"@prefix ex: <{EX}> .\nex:a ex:b ex:c ex:d ."
    with server.client("publisher") as publisher:
        refused = publisher.post("/events", content=bad, headers=TTL).json()
    line, column = refused["line"], refused["column"]
    message = refused["detail"].removeprefix(f"{line}:{column}: ")
    page.log_in(server.tokens["publisher"])
    shown = page.publish("text/turtle", bad)
    assert shown == f"Not published: line {line}, column {column}: {message}"
    assert shown.count(str(column)) == 1 and "Parser error" not in shown


def _histogram_quantile(q: float, buckets: list[tuple[float, float]]) -> float | None:
    """Prometheus' histogram_quantile over cumulative (bound, count) buckets, +Inf last
    (written from its documentation: linear within the bucket holding rank q * total; the
    largest finite bound when the rank falls in +Inf)."""
    total = buckets[-1][1]
    if total == 0:
        return None
    rank, lower, below = q * total, 0.0, 0.0
    for bound, cumulative in buckets:
        if cumulative >= rank:
            if math.isinf(bound):
                return lower
            return lower + (bound - lower) * (rank - below) / (cumulative - below)
        lower, below = bound, cumulative
    return lower


def test_the_dashboard_reads_rates_queue_depth_and_latency_from_the_metrics(
    page: ConsolePage, server: Server
) -> None:
    page.log_in(server.tokens["subscriber"])
    page.until(
        lambda d: int(page.css("#dashboard").get_attribute("data-samples") or 0) >= 1, "a reading"
    )
    sub_id = page.register(_query("Busy"))
    for n in range(20):
        _publish(server, f"b{n}", "Busy")
    page.tab("dashboard")

    def tile(name: str) -> str:
        return page.text(f"#dash-{name} .tile-value")

    page.until(lambda d: tile("events") not in ("–", "0.0"), "events per second above 0")
    assert float(tile("matches").replace(",", "")) > 0
    with server.client("admin") as admin:
        metrics = admin.get("/metrics").text
    published = int(re.search(r"^semps_events_in_total (\d+)$", metrics, re.M)[1])  # type: ignore[index]
    queue = re.search(r"^semps_queue_depth (\d+)$", metrics, re.M)[1]  # type: ignore[index]
    page.until(
        lambda d: (
            page.text('#dash-totals tr[data-metric="events published"] td') == f"{published:,}"
        ),
        "the total the metrics state",
    )
    assert tile("queue") == queue == "0"  # nothing more published: the queue is empty
    assert re.fullmatch(r"(> )?[\d.,]+ ms", tile("p99")), tile("p99")
    assert sub_id


def test_the_dashboards_reading_of_the_metrics_agrees_with_an_independent_one(
    page: ConsolePage, server: Server
) -> None:
    page.log_in(server.tokens["admin"])
    for n in range(5):
        _publish(server, f"q{n}", "Quantile")
    with server.client("admin") as admin:
        text = admin.get("/metrics").text
    read = page.driver.execute_async_script(
        "const [text, done] = arguments;"
        "import('/console/static/metrics.js').then((m) => {"
        "  const s = m.sampleOf(text, 0);"
        "  const q = (p) => m.quantile(p, s.buckets);"
        "  const inf = m.quantile(0.99, [{le: 0.1, count: 1}, {le: Infinity, count: 10}]);"
        "  done({events: s.counters.events_in, queue: s.gauges.queue_depth, errors: s.errors,"
        "        p50: q(0.5), p99: q(0.99), inf: inf}); });",
        text,
    )
    samples = {
        m[1]: float(m[2]) for m in re.finditer(r"^(semps_\w+(?:\{[^}]*\})?) (\S+)$", text, re.M)
    }
    buckets = sorted(
        (float(m[1]), samples[key])
        for key in samples
        if (m := re.fullmatch(r'semps_publish_latency_seconds_bucket\{le="([^"]+)"\}', key))
    )
    assert read["events"] == samples["semps_events_in_total"]
    assert read["queue"] == samples["semps_queue_depth"]
    assert read["errors"] == sum(v for k, v in samples.items() if k.startswith("semps_http_errors"))
    for q in (0.5, 0.99):
        expected = _histogram_quantile(q, buckets)
        assert read[f"p{round(q * 100)}"]["value"] == pytest.approx(expected)
    assert read["inf"] == {"value": 0.1, "above": True}


def test_a_fresh_service_says_what_is_empty_and_what_to_do(
    fresh: tuple[ConsolePage, Server],
) -> None:
    page, server = fresh
    page.log_in(server.tokens["admin"])
    page.wait_text("#dash-empty", "No event published yet.")
    page.tab("ontology")
    assert "The ontology is empty." in page.wait_text("#onto-empty", "Upload an ontology file")
    assert not page.css("#onto-browse").is_displayed()
    page.tab("subscriptions")
    page.wait_text("#sub-empty", "No subscriptions yet.")
    assert not page.css("#sub-table").is_displayed()
    page.tab("notifications")
    page.wait_text("#note-empty", "No subscription to watch.")
    assert not page.css("#watch-form").is_displayed()
    page.log_in(server.tokens["subscriber"])
    page.tab("ontology")
    page.wait_text("#onto-empty", "An admin loads one")
    assert httpx.get(server.url + "/health").json()["subscriptions"] == 0
