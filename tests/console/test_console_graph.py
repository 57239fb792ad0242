"""The console's Graph tab on a real ``semps serve`` holding brick-kg-a's building model
under its Brick ontology, in headless chromium: the graph's sizes, its subjects in pages and
searched, a resource's triples with the inferred ones marked, the update form offered only to
those who may edit (its errors said once, with line and column), and change notifications
with what they added and removed, their IRIs leading to the graph browser.

What the page shows is checked against the API's answers (``/graph/info``,
``/graph/resources``, ``/graph/resource``), which tests/api/test_api_graph_browse.py checks
against rdflib.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from console.browser import ConsolePage
from semps_test_support import WORKLOADS, Server

pytestmark = [pytest.mark.browser, pytest.mark.server]

CASE = WORKLOADS / "brick-kg-a"
SITE = "http://example.org/site/hq#"
PROBE = "http://example.org/console-probe"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
#: Subjects the console asks for per page (graph.js PAGE).
PAGE = 100


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A service taking brick-kg-a's Brick ontology (2.3 MB) in one body."""
    with Server(tmp_path_factory.mktemp("console-graph") / "data", max_body=8_000_000) as srv:
        yield srv


@pytest.fixture(scope="module")
def kg(server: Server) -> Iterator[Server]:
    server.put("admin", "/ontology", CASE / "ontology.owl")
    server.put("admin", "/graph", CASE / "graph" / "site.ttl")
    yield server


def _info(server: Server) -> dict[str, int]:
    with server.client("subscriber") as sub:
        found: dict[str, int] = sub.get("/graph/info").json()
    return found


def _declare_site(page: ConsolePage) -> None:
    page.tab("prefixes")
    page.type_into("#prefix-name", "site")
    page.type_into("#prefix-namespace", SITE)
    page.css("#prefix-form button[type=submit]").click()
    page.until(lambda d: "site" in page.text("#prefix-rows"), "the site prefix declared")


def test_the_graph_tab_shows_its_sizes_and_pages_its_subjects(
    page: ConsolePage, kg: Server
) -> None:
    page.log_in(kg.tokens["subscriber"])
    assert "graph" in page.tabs()
    page.tab("graph")
    info = _info(kg)
    sizes = page.wait_text("#graph-sizes", f"{info['asserted']:,} asserted")
    assert f"{info['triples']:,} triples" in sizes
    assert page.text("#graph-version") == str(info["version"])
    with kg.client("subscriber") as sub:
        first = sub.get("/graph/resources", params={"limit": PAGE}).json()
    total = first["total"]
    assert total > PAGE  # the model has more subjects than a page
    page.wait_text("#graph-range", f"1–{PAGE} of {total:,}")
    shown = [r.get_attribute("data-iri") for r in page.all("#graph-rows tr")]
    assert shown == [i["iri"] for i in first["items"]]
    page.css("#graph-next").click()
    page.wait_text("#graph-range", f"{PAGE + 1}–")
    assert (page.all("#graph-rows tr")[0].get_attribute("data-iri") or "") > first["next"]
    page.css("#graph-prev").click()
    page.wait_text("#graph-range", f"1–{PAGE} of")
    assert not page.css("#graph-update-form").is_displayed()  # a subscriber reads only


def test_a_search_by_curie_or_label_narrows_the_subjects(page: ConsolePage, kg: Server) -> None:
    page.log_in(kg.tokens["subscriber"])
    _declare_site(page)
    page.tab("graph")
    page.type_into("#graph-search", "site:B1-AHU-1")
    with kg.client("subscriber") as sub:
        wanted = sub.get("/graph/resources", params={"q": SITE + "B1-AHU-1"}).json()
    page.wait_text("#graph-range", f"of {wanted['total']:,}")
    rows = [r.get_attribute("data-iri") for r in page.all("#graph-rows tr")]
    assert rows == [i["iri"] for i in wanted["items"]]
    assert all(SITE + "B1-AHU-1" in (iri or "") for iri in rows)
    assert "site:B1-AHU-1" in page.text("#graph-rows")  # names as CURIEs
    page.type_into("#graph-search", "zz-no-such-label")
    page.wait_text("#graph-rows", "No subject's IRI or label holds")


def test_a_resource_shows_its_asserted_and_inferred_triples(page: ConsolePage, kg: Server) -> None:
    ahu = SITE + "B1-AHU-1"
    with kg.client("subscriber") as sub:
        doc = sub.get("/graph/resource", params={"iri": ahu, "limit": 200}).json()
    page.log_in(kg.tokens["subscriber"])
    page.driver.get(f"{kg.url}/console/#graph/{quote(ahu, safe='')}")
    page.until(lambda d: page.all("#graph-resource table.outgoing tr.asserted"), "AHU's triples")
    for kind in ("outgoing", "incoming"):
        rows = page.all(f"#graph-resource table.{kind} tbody tr")
        flags = [r.get_attribute("class") == "asserted" for r in rows]
        assert flags == [t["asserted"] for t in doc[kind]]
    inferred = page.all("#graph-resource tr.inferred")
    assert inferred and all("inferred" in r.text for r in inferred)
    # an object links to its own resource
    link = page.css("#graph-resource table.incoming a.graph-link")
    target = link.get_attribute("title") or link.text
    link.click()
    page.until(lambda d: page.text("#graph-resource h3") != "site:B1-AHU-1", "the next resource")
    assert page.css("#graph-resource h3 .iri").get_attribute("title") in target


def test_the_update_form_declares_the_prefixes_an_update_uses(
    page: ConsolePage, kg: Server
) -> None:
    page.log_in(kg.tokens["publisher"])
    _declare_site(page)
    page.tab("graph")
    update = 'INSERT DATA { site:B1-Named rdfs:label "named" ; brick:feeds site:B1-VAV-1 }'
    page.type_into("#graph-update", update)
    page.css("#graph-update-prefixes").click()
    brick = "https://brickschema.org/schema/Brick#"
    rdfs = "http://www.w3.org/2000/01/rdf-schema#"
    assert page.css("#graph-update").get_attribute("value") == (
        f"PREFIX brick: <{brick}>\nPREFIX rdfs: <{rdfs}>\nPREFIX site: <{SITE}>\n{update}"
    )
    before = _info(kg)["version"]
    page.css("#graph-update-form button[type=submit]").click()
    page.wait_text("#graph-update-result", f"Done: version {before + 1}, 2 inserted")


def test_the_update_form_runs_an_update_and_says_an_error_once(
    page: ConsolePage, kg: Server
) -> None:
    page.log_in(kg.tokens["publisher"])
    page.tab("graph")
    assert page.css("#graph-update-form").is_displayed()
    page.type_into("#graph-update", "INSERT DATA {\n  <http://example.org/a> <http://x/p> }")
    page.css("#graph-update-form button[type=submit]").click()
    said = page.wait_text("#graph-update-result", "Not applied: line 2, column")
    assert said.count("line") == 1 and not re.search(r"\d+:\d+:", said)
    before = _info(kg)["version"]
    label = "Probe added from the console"
    page.type_into(
        "#graph-update",
        f'INSERT DATA {{ <{SITE}B1-Probe> <{RDFS_LABEL}> "{label}" }}',
    )
    page.css("#graph-update-form button[type=submit]").click()
    page.wait_text("#graph-update-result", f"Done: version {before + 1}, 1 inserted")
    page.wait_text("#graph-version", str(before + 1))
    page.type_into("#graph-search", "probe added")
    page.until(
        lambda d: (
            [r.get_attribute("data-iri") for r in page.all("#graph-rows tr")] == [SITE + "B1-Probe"]
        ),
        "the new subject found by its label",
    )


def test_a_change_notification_shows_what_it_added_and_removed(
    page: ConsolePage, kg: Server
) -> None:
    with kg.client("subscriber") as sub:
        made = sub.post("/subscriptions", content=f"SELECT ?x ?v WHERE {{ ?x <{PROBE}> ?v }}")
        assert made.status_code == 201, made.text
        sub_id = made.json()["id"]
    page.log_in(kg.tokens["subscriber"])
    page.watch(sub_id)
    edits = [
        f"INSERT DATA {{ <{SITE}B1-AHU-1> <{PROBE}> 1 }}",
        f"DELETE DATA {{ <{SITE}B1-AHU-1> <{PROBE}> 1 }} ;"
        f" INSERT DATA {{ <{SITE}B1-AHU-1> <{PROBE}> 2 }}",
    ]
    with kg.client("publisher") as pub:
        pub.timeout = httpx.Timeout(600)  # a loaded machine's first change waits for workers
        for text in edits:
            done = pub.post(
                "/graph", content=text, headers={"Content-Type": "application/sparql-update"}
            )
            assert done.status_code == 200, done.text
        version = done.json()["version"]
    page.until(lambda d: len(page.all("#note-list > li")) == 2, "both change notifications")
    newest = page.css("#note-list > li")
    assert f"graph version {version}" in newest.text
    assert "+1 solution" in newest.text and "−1 removed" in newest.text
    added = newest.find_element("css selector", ".solution.added").text
    removed = newest.find_element("css selector", ".solution.removed").text
    assert added.startswith("+ ") and '"2"' in added
    assert removed.startswith("− ") and '"1"' in removed
    link = newest.find_element("css selector", ".solution.added a.graph-link")
    assert (link.get_attribute("href") or "").endswith(
        "#graph/" + quote(SITE + "B1-AHU-1", safe="")
    )
    link.click()
    page.until(lambda d: page.css("#graph").is_displayed(), "the graph tab")
    page.until(
        lambda d: page.css("#graph-resource h3 .iri").get_attribute("title") == SITE + "B1-AHU-1",
        "the AHU in the graph browser",
    )
    page.until(lambda d: PROBE in page.css("#graph-resource").get_attribute("innerHTML"), "probe")
