"""The web console in a real headless chromium against a real ``semps serve``: log in,
register through the syntax-checked editor, publish through the form, watch notifications
arrive live, edit the ontology and see matching follow, suspend, resume and delete, and
hostile text shown as text.

What the page shows is checked against the HTTP API (an independent reading of the same
server), and positions of syntax errors against the text itself.
"""

from __future__ import annotations

import json

import httpx
import pytest
import rdflib
from console.browser import ConsolePage
from selenium.webdriver.common.by import By
from semps_test_support import Server

pytestmark = [pytest.mark.browser, pytest.mark.server]
EX = "http://console.example/"
TTL = "text/turtle"


def _query(cls: str, extra: str = "") -> str:
    return f"PREFIX ex: <{EX}>\nSELECT ?x WHERE {{\n  ?x a ex:{cls} .{extra}\n}}"


def _event(subject: str, cls: str, more: str = "") -> str:
    return f"@prefix ex: <{EX}> .\nex:{subject} a ex:{cls} {more}."


def _listed(server: Server) -> list[dict[str, str]]:
    with server.client("admin") as admin:
        answer = admin.get("/subscriptions", params={"limit": 1000}).json()
    return answer["items"] if isinstance(answer, dict) else answer


def _solutions(server: Server, sub_id: str) -> list[dict[str, str]]:
    """The solutions of a subscription's stored notifications, as the API streams them."""
    with server.client("admin") as admin:
        stream = admin.get(f"/subscriptions/{sub_id}/notifications", params={"once": "true"})
    lines = [line[6:] for line in stream.text.splitlines() if line.startswith("data: ")]
    return [s for line in lines for s in json.loads(line)["solutions"]]


def _api_status(server: Server, sub_id: str) -> int | str:
    with server.client("admin") as admin:
        response = admin.get(f"/subscriptions/{sub_id}")
    return response.json()["status"] if response.status_code == 200 else response.status_code


def test_a_bad_token_is_refused_and_a_good_one_shows_its_role(
    page: ConsolePage, server: Server
) -> None:
    page.css("#token").send_keys("not-a-token")
    page.css("#login-form button").click()
    said = httpx.get(server.url + "/console/api/whoami", headers={"Authorization": "Bearer x"})
    assert page.wait_text("#login-error", "refused") == f"Log-in refused: {said.json()['detail']}"
    assert not page.css("#app").is_displayed()
    page.log_in(server.tokens["subscriber"])
    assert page.text("#who").endswith("(subscriber)")
    page.css("#logout").click()
    page.until(lambda d: page.css("#login").is_displayed(), "the login form again")
    assert page.driver.execute_script("return sessionStorage.length") == 0


def test_the_editor_points_at_a_syntax_error_and_registers_nothing(
    page: ConsolePage, server: Server
) -> None:
    page.log_in(server.tokens["admin"])
    page.tab("subscriptions")
    bad = _query("Student", "\n  FILTER(?x = )")
    page.type_into("#sub-text", bad)
    page.css("#sub-form button[type=submit]").click()
    column = bad.splitlines()[3].index(")") + 1
    shown = page.wait_text("#sub-check", f"line 4, column {column}:")
    message, source, caret = shown.splitlines()
    assert source.strip() == "FILTER(?x = )"
    assert len(caret) == column and caret.endswith("^")
    assert "registered" not in shown.lower()
    assert bad not in [s["text"] for s in _listed(server)]
    page.type_into("#sub-text", _query("Student"))
    page.css("#sub-check-button").click()
    page.wait_text("#sub-check", "OK: a valid semantic subscription")


def test_a_subscription_registered_in_the_editor_is_notified_live_of_a_published_event(
    page: ConsolePage, server: Server
) -> None:
    page.log_in(server.tokens["admin"])
    sub_id = page.register(_query("Student"), name="students")
    with server.client("admin") as admin:
        stored = admin.get(f"/subscriptions/{sub_id}").json()
    assert (stored["name"], stored["text"]) == ("students", _query("Student"))
    assert "students" in page.subscription_row(sub_id).text
    page.watch(sub_id)
    result = page.publish(TTL, _event("alice", "Student"))
    assert "matched 1 subscription" in result
    page.tab("notifications")
    note = page.until(lambda d: page.notifications(), "a notification")[0]
    assert EX + "alice" in note
    result = page.publish(TTL, _event("bob", "Student"))
    page.until(lambda d: len(page.notifications()) == 2, "the second notification")
    assert EX + "bob" in page.notifications()[0]


def test_an_axiom_added_in_the_editor_shows_in_the_tree_and_changes_matching(
    page: ConsolePage, server: Server
) -> None:
    page.log_in(server.tokens["admin"])
    sub_id = page.register(_query("Person"))
    assert "matched 0" in page.publish(TTL, _event("erin", "Employee"))
    page.tab("ontology")
    page.type_into("#axiom-subject", EX + "Employee")
    page.choose("#axiom-kind", "subClassOf")
    page.type_into("#axiom-object", EX + "Person")
    page.css("#axiom-form button[type=submit]").click()
    page.wait_flash("ontology", "Added")
    page.tree_row("class", EX + "Person", EX + "Employee")
    page.watch(sub_id)
    assert "matched 1" in page.publish(TTL, _event("carol", "Employee"))
    page.tab("notifications")
    assert EX + "carol" in page.until(lambda d: page.notifications(), "a notification")[0]

    page.tab("ontology")
    page.type_into("#axiom-filter", EX + "Employee")

    def remove(_: object) -> bool | None:
        """Click the axiom row's remove button, found afresh on each try: the filter redraws
        the rows, and a row found before a redraw is stale (a loaded machine redraws late)."""
        for r in page.all("#axiom-rows tr"):
            if r.find_elements(By.CSS_SELECTOR, f'.iri[title="{EX}Employee"]'):
                r.find_element(By.CSS_SELECTOR, ".remove-axiom").click()
                return True
        return None

    page.until(remove, "the axiom's row")
    page.wait_flash("ontology", "Removed")
    nested = f'#class-tree li[data-iri="{EX}Person"] > ul > li[data-iri="{EX}Employee"]'
    page.until(lambda d: not page.all(nested), "Employee no longer under Person")
    assert "matched 0" in page.publish(TTL, _event("dave", "Employee"))


def test_an_uploaded_file_is_merged_into_the_ontology(
    page: ConsolePage, server: Server, tmp_path
) -> None:
    upload = tmp_path / "fleet.ttl"
    upload.write_text(
        f"@prefix ex: <{EX}> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "ex:Truck a owl:Class ; rdfs:subClassOf ex:Vehicle .\n"
        "ex:drives a owl:ObjectProperty ; rdfs:subPropertyOf ex:uses .\n"
    )
    page.log_in(server.tokens["admin"])
    page.tab("ontology")
    page.css("#upload-file").send_keys(str(upload))
    page.choose("#upload-mode", "merge into the ontology")
    page.css("#upload-form button[type=submit]").click()
    page.wait_flash("ontology", "Uploaded fleet.ttl as text/turtle")
    page.tree_row("class", EX + "Vehicle", EX + "Truck")
    page.tree_row("property", EX + "uses", EX + "drives")
    with server.client("admin") as admin:
        exported = admin.get("/ontology", headers={"Accept": "text/turtle"}).text
    graph = rdflib.Graph().parse(data=exported, format="turtle")
    truck, vehicle = rdflib.URIRef(EX + "Truck"), rdflib.URIRef(EX + "Vehicle")
    truck_is_a_vehicle = (truck, rdflib.RDFS.subClassOf, vehicle)
    assert truck_is_a_vehicle in graph


def test_an_admin_suspends_resumes_and_deletes_from_the_list(
    page: ConsolePage, server: Server
) -> None:
    page.log_in(server.tokens["admin"])
    sub_id = page.register(_query("Robot"))
    page.click_in_row(sub_id, "suspend")
    page.until(lambda d: "suspended" in page.subscription_row(sub_id).text, "suspended")
    assert _api_status(server, sub_id) == "suspended"
    assert "matched 0" in page.publish(TTL, _event("r2", "Robot"))
    page.tab("subscriptions")
    page.click_in_row(sub_id, "resume")
    page.until(lambda d: "active" in page.subscription_row(sub_id).text, "active again")
    assert _api_status(server, sub_id) == "active"
    assert "matched 1" in page.publish(TTL, _event("r3", "Robot"))
    page.tab("subscriptions")
    page.click_in_row(sub_id, "delete")
    page.until(
        lambda d: all(r.get_attribute("data-id") != sub_id for r in page.all("#sub-rows tr")),
        "the row gone",
    )
    assert _api_status(server, sub_id) == 404


def test_a_subscriber_gets_no_suspend_button_and_no_ontology_edit_forms(
    page: ConsolePage, server: Server
) -> None:
    page.log_in(server.tokens["subscriber"])
    sub_id = page.register(_query("Cat"))
    row = page.subscription_row(sub_id)
    assert row.find_elements(By.CSS_SELECTOR, "button.suspend") == []
    assert row.find_elements(By.CSS_SELECTOR, "button.delete") != []
    page.tab("ontology")
    assert not page.css("#axiom-form").is_displayed()
    assert not page.css("#upload-form").is_displayed()
    assert page.all("#axiom-rows .remove-axiom") == []


HOSTILE = '<img src="x" onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'


def test_hostile_names_literals_and_labels_render_as_text(
    page: ConsolePage, server: Server
) -> None:
    label = (
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        f'<{EX}Evil> a owl:Class ; rdfs:label """{HOSTILE}""" .'
    )
    with server.client("admin") as admin:
        merged = admin.post("/ontology", content=label, headers={"Content-Type": TTL})
    assert merged.status_code == 200
    page.log_in(server.tokens["admin"])
    title = page.driver.title
    query = f"PREFIX ex: <{EX}>\nSELECT ?x ?what WHERE {{ ?x a ex:Evil ; ex:says ?what }}"
    sub_id = page.register(query, name=HOSTILE)
    page.watch(sub_id)
    literal = HOSTILE.replace('"', '\\"')
    assert "matched 1" in page.publish(TTL, _event("mallory", "Evil", f'; ex:says "{literal}" '))
    note = page.until(lambda d: page.notifications(), "the notification")[0]
    assert f"?what = {_solutions(server, sub_id)[0]['what']}" in note
    assert "<script>document.title=" in note
    page.tab("subscriptions")
    name = page.until(  # read again if the list is redrawn meanwhile
        lambda d: page.subscription_row(sub_id).find_element(By.CSS_SELECTOR, ".name").text,
        "the subscription's row",
    )
    assert name == HOSTILE
    page.tab("ontology")
    assert HOSTILE in page.tree_row("class", EX + "Evil").text
    # Nothing became markup: the only image is the header's logo, the only script ours.
    images = page.driver.find_elements(By.TAG_NAME, "img")
    assert [i.get_attribute("src") for i in images] == [server.url + "/console/static/logo.svg"]
    scripts = page.driver.find_elements(By.TAG_NAME, "script")
    assert [s.get_attribute("src") for s in scripts] == [server.url + "/console/static/main.js"]
    assert page.driver.title == title != "pwned"


def test_the_console_runs_under_its_policy_without_a_violation_or_a_script_error(
    page: ConsolePage, server: Server
) -> None:
    page.driver.get_log("browser")  # drop what earlier tests left
    page.log_in(server.tokens["admin"])
    for tab in ("dashboard", "ontology", "subscriptions", "notifications", "publish", "prefixes"):
        page.tab(tab)
    page.register(_query("Plant"))
    assert "matched 1" in page.publish(TTL, _event("fern", "Plant"))
    problems = [
        entry["message"]
        for entry in page.driver.get_log("browser")
        if entry["level"] == "SEVERE" or "Content Security Policy" in entry["message"]
    ]
    assert problems == []
