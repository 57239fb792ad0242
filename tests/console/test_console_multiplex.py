"""The notifications panel's "all my subscriptions", in a real headless chromium against a
real ``semps serve``: one multiplexed stream (``GET /notifications``) showing every
notification with its subscription, the default for a user who owns more than one, resumed
after the service restarts from the last cursor it gave (no notification shown twice), and
the single-subscription Watch beside it.

What the page shows is checked against the HTTP API (each subscription's own stored stream,
an independent reading of the same server).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from console.browser import ConsolePage
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select
from semps_test_support import Server

from semps.api.positions import decode_positions
from semps.broker.at_rest import SecretBox

pytestmark = [pytest.mark.browser, pytest.mark.server]
EX = "http://multiplex.example/"
ALL = "*"  # the menu's value for all the user's subscriptions
ALL_LABEL = "all my subscriptions"

#: Records the address of every fetch() the page makes (the panel reads its streams with
#: fetch(): EventSource cannot send the token), so a test sees where a stream resumed from.
RECORD_FETCHES = (
    "window.fetched = [];"
    "const original = window.fetch;"
    "window.fetch = (input, init) => { window.fetched.push(String(input));"
    "  return original(input, init); };"
)


def _register(server: Server, token: str, cls: str, name: str) -> str:
    with httpx.Client(base_url=server.url, timeout=None) as client:
        answer = client.post(
            "/subscriptions",
            params={"name": name},
            content=f"PREFIX ex: <{EX}>\nSELECT ?x WHERE {{ ?x a ex:{cls} }}",
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/sparql-query",
            },
        )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["id"])


def _publish(server: Server, subject: str, cls: str) -> None:
    with server.client("publisher") as publisher:
        answer = publisher.post(
            "/events",
            content=f"<{EX}{subject}> a <{EX}{cls}> .",
            headers={"Content-Type": "text/turtle"},
        )
    assert answer.status_code == 202, answer.text
    assert answer.json()["matched"] >= 1


def _iso(seconds: float) -> str:
    """A Unix time as JavaScript's Date.toISOString() writes it (milliseconds, UTC)."""
    when = datetime.fromtimestamp(round(seconds * 1000) / 1000, tz=UTC)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _stored(server: Server, sub_id: str) -> set[tuple[str, str, str]]:
    """A subscription's stored notifications as (subscription, seq, time) read from its
    own stream."""
    with server.client("admin") as admin:
        stream = admin.get(f"/subscriptions/{sub_id}/notifications", params={"once": "true"})
    docs = [json.loads(line[6:]) for line in stream.text.splitlines() if line[:6] == "data: "]
    return {(sub_id, str(doc["id"]), _iso(doc["time"])) for doc in docs}


def _shown(page: ConsolePage) -> list[tuple[str, str, str]]:
    """The notifications on the page, newest first, as (subscription, seq, time)."""
    return [
        (
            li.get_attribute("data-sub") or "",
            li.get_attribute("data-seq") or "",
            li.find_element(By.CSS_SELECTOR, ".note-head time").get_attribute("datetime") or "",
        )
        for li in page.all("#note-list > li")
    ]


def _two_subscriptions(
    page: ConsolePage, server: Server, subject: str, *classes: str, publish: bool = True
) -> tuple[str, ...]:
    """``subject``'s subscriptions to each of ``classes`` (named after them), an event
    matching each (unless not ``publish``), and ``subject`` logged in with the watch menu
    loaded; returns the ids."""
    token = server._token("subscriber", subject)
    subs = tuple(_register(server, token, cls, cls.lower()) for cls in classes)
    for cls in classes if publish else ():
        _publish(server, f"{cls.lower()}1", cls)
    page.log_in(token)
    _menu_loaded(page, *subs)
    return subs


def _menu_loaded(page: ConsolePage, *sub_ids: str) -> Select:
    page.tab("notifications")
    page.until(
        lambda d: {*sub_ids} <= {o.get_attribute("value") for o in page.all("#watch-sub option")},
        f"{sub_ids} in the watch menu",
    )
    return Select(page.css("#watch-sub"))


def _watch_all(page: ConsolePage) -> None:
    Select(page.css("#watch-sub")).select_by_value(ALL)
    page.css("#watch-form button[type=submit]").click()
    page.wait_text("#watch-state", f"watching {ALL_LABEL}")


def test_all_my_subscriptions_is_the_default_and_names_each_notifications_subscription(
    page: ConsolePage, server: Server
) -> None:
    north, south = _two_subscriptions(page, server, "north-and-south", "North", "South")
    menu = Select(page.css("#watch-sub"))
    assert menu.first_selected_option.get_attribute("value") == ALL  # two: all is the default
    assert menu.first_selected_option.text == ALL_LABEL
    page.css("#watch-form button[type=submit]").click()
    page.wait_text("#watch-state", f"watching {ALL_LABEL}")
    page.until(lambda d: len(_shown(page)) == 2, "both subscriptions' notifications")
    assert set(_shown(page)) == _stored(server, north) | _stored(server, south)
    labels = {li.get_attribute("data-sub"): li.text for li in page.all("#note-list > li")}
    assert f"{north} (north)" in labels[north] and f"{south} (south)" in labels[south]
    assert f"{EX}south1" in "".join(n for n in page.notifications() if south in n)

    _publish(server, "north2", "North")  # live, after the stored ones
    page.until(lambda d: len(_shown(page)) == 3, "the live notification")
    assert _shown(page)[0][:2] == (north, "2")  # newest first
    assert set(_shown(page)) == _stored(server, north) | _stored(server, south)


def test_one_subscription_is_still_watched_alone(page: ConsolePage, server: Server) -> None:
    east, _ = _two_subscriptions(page, server, "east-and-west", "East", "West")
    page.watch(east)
    _publish(server, "east2", "East")
    page.until(lambda d: len(_shown(page)) == 2, "east's two notifications")
    assert [seq for _, seq, _ in _shown(page)] == ["2", "1"]
    assert all(sub == "" for sub, _, _ in _shown(page))  # one subscription: no label
    written = page.notifications()
    assert f"{EX}east2" in written[0] and f"{EX}east1" in written[1]
    assert not any(f"{EX}west1" in n for n in written)


def test_the_default_is_the_subscription_itself_when_the_user_owns_one(
    page: ConsolePage, server: Server
) -> None:
    token = server._token("subscriber", "only-one")
    only = _register(server, token, "Only", "only")
    page.log_in(token)
    assert _menu_loaded(page, only).first_selected_option.get_attribute("value") == only
    admin = server._token("admin", "admin-owning-none")  # lists the others', owns none
    page.log_in(admin)
    menu = _menu_loaded(page, only)
    assert menu.first_selected_option.get_attribute("value") != ALL
    assert ALL_LABEL in [o.text for o in menu.options]


def test_a_reconnect_resumes_from_the_last_cursor_and_shows_nothing_twice(
    fresh: tuple[ConsolePage, Server],
) -> None:
    page, server = fresh  # a service of its own: the test restarts it
    driver = page.driver
    north, south = _two_subscriptions(page, server, "restarted", "North", "South")
    driver.execute_script(RECORD_FETCHES)
    _watch_all(page)
    page.until(lambda d: len(_shown(page)) == 2, "both stored notifications")

    server.restart()  # the stream breaks; the panel reconnects to the same address

    def resumed(_: WebDriver) -> str | None:
        fetched: list[str] = driver.execute_script("return window.fetched")
        cursors = [
            parse_qs(urlsplit(url).query)["cursor"][0]
            for url in fetched
            if urlsplit(url).path == "/notifications" and "cursor=" in url
        ]
        watching = page.text("#watch-state") == f"watching {ALL_LABEL}"
        return cursors[-1] if cursors and watching else None

    cursor = page.until(resumed, "the stream resumed from a cursor")
    key = SecretBox.from_dir(server.data_dir).derive("stream cursors")
    assert decode_positions(cursor, key, "restarted") == {north: 1, south: 1}  # all shown
    _publish(server, "south2", "South")
    page.until(lambda d: len(_shown(page)) == 3, "the notification after the restart")
    assert _shown(page)[0][:2] == (south, "2")
    assert set(_shown(page)) == _stored(server, north) | _stored(server, south)
    assert len(_shown(page)) == 3  # none twice


def test_all_my_subscriptions_says_when_nothing_came_yet_and_when_the_token_is_revoked(
    page: ConsolePage, server: Server
) -> None:
    up, _ = _two_subscriptions(page, server, "revoked", "Up", "Down", publish=False)
    _watch_all(page)
    assert "No notification of your subscriptions yet." in page.text("#note-empty")
    _publish(server, "up1", "Up")
    page.until(
        lambda d: _shown(page) and not page.css("#note-empty").is_displayed(), "the notification"
    )
    with server.client("admin") as admin:
        tokens = admin.get("/tokens").json()
        token_id = next(t["id"] for t in tokens if t["subject"] == "revoked")
        admin.delete(f"/tokens/{token_id}").raise_for_status()
    said = "stream ended: unknown, expired or revoked bearer token"
    page.wait_text("#watch-state", said)
    assert [sub for sub, _, _ in _shown(page)] == [up]  # the end is not a notification
