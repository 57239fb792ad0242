"""Remake the console's screenshots in docs/images/ (PNG) from a real service.

Starts ``semps serve`` on a free port with a fresh data folder, loads the brick-a workload's
Brick ontology, registers its first subscriptions as a subscriber, publishes its events as a
publisher (in a loop, while the dashboard is on show), and drives Debian's headless chromium
through the console:

    .venv/bin/python scripts/console_screenshots.py [--out docs/images]

Writes console-dashboard.png, console-ontology-search.png, console-subscriptions.png,
console-notifications.png, console-notifications-all.png (all the subscriber's
subscriptions over one stream), console-explain-match.png and console-explain-non-match.png
(one Brick event explained against a subscription it matches, and pasted into the explain
form of one it does not match); then, on
a second service holding brick-kg-a's building model as its knowledge graph,
console-graph.png. ``--only graph`` (or ``--only notifications-all``) makes that one alone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait

ROOT = Path(__file__).resolve().parent.parent
BRICK_A = ROOT.parent / "shared" / "workloads" / "brick-a"
BRICK_KG = ROOT.parent / "shared" / "workloads" / "brick-kg-a"
SITE = "http://example.org/site/hq#"
SUFFIX_TYPES = {".ttl": "text/turtle", ".rdf": "application/rdf+xml"}
#: Subscriptions registered (the first ones of brick-a, by file name).
SUBSCRIPTIONS = 12


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _semps(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "semps", *args], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


class Semps:
    """``semps serve`` in a subprocess on a fresh data folder, with a token per role."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="semps-shots-"))
        data = str(self.folder / "data")
        self.tokens = {
            role: _semps("token", "create", "--role", role, "--data-dir", data)
            for role in ("admin", "publisher", "subscriber")
        }
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        log = (self.folder / "serve.log").open("wb")
        command = [sys.executable, "-m", "semps", "serve", "--port", str(port), "--data-dir", data]
        self.proc = subprocess.Popen(command, stdout=log, stderr=log)
        for _ in range(300):
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise SystemExit(f"semps serve did not start: see {self.folder / 'serve.log'}")

    def client(self, role: str) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[role]}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)
        shutil.rmtree(self.folder, ignore_errors=True)


def prepare(service: Semps) -> list[str]:
    """Brick loaded, subscriptions registered; returns their ids."""
    with service.client("admin") as admin:
        ontology = (BRICK_A / "ontology.owl").read_bytes()
        headers = {"Content-Type": "application/rdf+xml"}
        admin.put("/ontology", content=ontology, headers=headers).raise_for_status()
    ids = []
    with service.client("subscriber") as subscriber:
        for rq in sorted((BRICK_A / "subscriptions").glob("*.rq"))[:SUBSCRIPTIONS]:
            answer = subscriber.post(
                "/subscriptions",
                params={"name": rq.stem.split("-", 1)[1]},
                content=rq.read_bytes(),
                headers={"Content-Type": "application/sparql-query"},
            )
            answer.raise_for_status()
            ids.append(answer.json()["id"])
    return ids


def publish_for(service: Semps, seconds: float, pause: float) -> None:
    """Publish brick-a's events round and round for ``seconds``."""
    events = sorted(p for p in (BRICK_A / "events").iterdir() if p.suffix in SUFFIX_TYPES)
    deadline = time.monotonic() + seconds
    with service.client("publisher") as publisher:
        while time.monotonic() < deadline:
            for path in events:
                headers = {"Content-Type": SUFFIX_TYPES[path.suffix]}
                publisher.post("/events", content=path.read_bytes(), headers=headers)
                time.sleep(pause)
                if time.monotonic() >= deadline:
                    return


def browser() -> WebDriver:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,900"):
        options.add_argument(flag)
    options.add_argument("--force-device-scale-factor=1")
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


def wait(driver: WebDriver, condition: Callable[[WebDriver], Any], seconds: float = 30) -> Any:
    return WebDriverWait(driver, seconds).until(condition)


def log_in(driver: WebDriver, url: str, token: str) -> None:
    driver.get(url + "/console/")
    driver.execute_script("sessionStorage.clear()")
    driver.get(url + "/console/")
    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "#login-form button").click()
    wait(driver, lambda d: d.find_element(By.ID, "app").is_displayed())


def tab(driver: WebDriver, name: str) -> None:
    driver.find_element(By.CSS_SELECTOR, f'nav .tab[data-tab="{name}"]').click()
    wait(driver, lambda d: d.find_element(By.ID, name).is_displayed())


def shoot(driver: WebDriver, out: Path, name: str) -> None:
    driver.execute_script("document.activeElement && document.activeElement.blur()")
    time.sleep(0.3)  # let the last redraw settle before the picture
    path = out / f"console-{name}.png"
    driver.save_screenshot(str(path))
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


def dashboard(driver: WebDriver, service: Semps, out: Path) -> None:
    log_in(driver, service.url, service.tokens["admin"])
    tab(driver, "dashboard")
    feeder = threading.Thread(target=publish_for, args=(service, 40.0, 0.02), daemon=True)
    feeder.start()
    time.sleep(30)  # a few readings at the 2 s poll, with events flowing
    shoot(driver, out, "dashboard")
    feeder.join()


def ontology_search(driver: WebDriver, service: Semps, out: Path) -> None:
    tab(driver, "ontology")
    box = driver.find_element(By.ID, "onto-search")
    box.send_keys("brick:AHU")
    hits = '#search-results [data-tree="classes"] li button.link'
    first = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, hits))[0]
    first.click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".entity.found"))
    driver.execute_script("window.scrollTo(0, 0)")
    shoot(driver, out, "ontology-search")


def declare(driver: WebDriver, prefix: str, namespace: str) -> None:
    """One of the user's own prefixes, declared in the Prefixes tab."""
    tab(driver, "prefixes")
    driver.find_element(By.ID, "prefix-name").send_keys(prefix)
    driver.find_element(By.ID, "prefix-namespace").send_keys(namespace)
    driver.find_element(By.CSS_SELECTOR, "#prefix-form button[type=submit]").click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'tr[data-prefix="{prefix}"]'))


def subscriptions(driver: WebDriver, service: Semps, out: Path, ids: list[str]) -> None:
    log_in(driver, service.url, service.tokens["subscriber"])
    declare(driver, "ebu3b", "http://ucsd.edu/building/ontology/ebu3b#")
    tab(driver, "subscriptions")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#sub-rows tr"))
    driver.execute_script("document.getElementById('sub-table').scrollIntoView()")
    shoot(driver, out, "subscriptions")
    tab(driver, "notifications")
    busiest = max(ids, key=lambda i: _matches(service, i))
    Select(driver.find_element(By.ID, "watch-sub")).select_by_value(busiest)
    driver.find_element(By.CSS_SELECTOR, "#watch-form button[type=submit]").click()
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#note-list > li")) >= 3)
    shoot(driver, out, "notifications")
    notifications_all(driver, service, out)


#: Subscriptions the picture of all the subscriber's notifications shows at least among
#: the newest ones.
SHOWN_SUBSCRIPTIONS, NEWEST = 3, 8


def notifications_all(driver: WebDriver, service: Semps, out: Path) -> None:
    """The Notifications tab watching all the subscriber's subscriptions (the subscriber
    still logged in; "all my subscriptions" is the menu's choice for one who owns many)
    while events are published, so the newest notifications are of several of them."""
    Select(driver.find_element(By.ID, "watch-sub")).select_by_value("*")
    driver.find_element(By.CSS_SELECTOR, "#watch-form button[type=submit]").click()
    wait(
        driver,
        lambda d: d.find_element(By.ID, "watch-state").text == "watching all my subscriptions",
    )
    publish_for(service, 3.0, 0.02)

    def subscriptions_shown(d: WebDriver) -> bool:
        notes = d.find_elements(By.CSS_SELECTOR, "#note-list > li")[:NEWEST]
        return len({li.get_attribute("data-sub") for li in notes}) >= SHOWN_SUBSCRIPTIONS

    wait(driver, subscriptions_shown)
    driver.execute_script("window.scrollTo(0, 0)")
    shoot(driver, out, "notifications-all")


#: The event explained, and the subscriptions (by file stem) it matches and does not.
EXPLAINED = "example-last-known-value.rdf"
EXPLAIN_MATCH, EXPLAIN_NON_MATCH = "c01-temperature-sensors", "a03-any-hot-zone"


def explanations(driver: WebDriver, service: Semps, out: Path, ids: list[str]) -> None:
    """The explain view (the subscriber still logged in) of a match, from the stored event's
    address, and of a non-match, the same event pasted into the form the subscription's
    Explain button opens (a non-match sends no notification to follow)."""
    stems = [p.stem for p in sorted((BRICK_A / "subscriptions").glob("*.rq"))[:SUBSCRIPTIONS]]
    by_stem = dict(zip(stems, ids, strict=True))
    document = (BRICK_A / "events" / EXPLAINED).read_bytes()
    with service.client("publisher") as publisher:
        headers = {"Content-Type": SUFFIX_TYPES[".rdf"]}
        answer = publisher.post("/events", content=document, headers=headers)
    event_id = answer.raise_for_status().json()["id"]
    driver.get(f"{service.url}/console/#explain/{by_stem[EXPLAIN_MATCH]}/{event_id}")
    wait(driver, lambda d: " matches " in d.find_element(By.ID, "view-body").text)
    shoot(driver, out, "explain-match")
    tab(driver, "subscriptions")
    row = f'#sub-rows tr[data-id="{by_stem[EXPLAIN_NON_MATCH]}"] button.explain'
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, row))[0].click()
    wait(driver, lambda d: d.find_element(By.ID, "explain-form").is_displayed())
    Select(driver.find_element(By.ID, "explain-type")).select_by_visible_text(SUFFIX_TYPES[".rdf"])
    driver.execute_script(
        "const area = document.getElementById('explain-body');"
        "area.value = arguments[0]; area.rows = 12;",
        document.decode("utf-8"),
    )
    driver.find_element(By.CSS_SELECTOR, "#explain-form button[type=submit]").click()
    wait(driver, lambda d: " does not match " in d.find_element(By.ID, "view-body").text)
    shoot(driver, out, "explain-non-match")


def graph(driver: WebDriver, out: Path) -> None:
    """The Graph tab on brick-kg-a's model: AHU 1's triples, the inferred ones marked."""
    service = Semps()
    try:
        with service.client("admin") as admin:
            headers = {"Content-Type": "application/rdf+xml"}
            ontology = (BRICK_KG / "ontology.owl").read_bytes()
            admin.put("/ontology", content=ontology, headers=headers).raise_for_status()
            model = (BRICK_KG / "graph" / "site.ttl").read_bytes()
            headers = {"Content-Type": "text/turtle"}
            admin.put("/graph", content=model, headers=headers).raise_for_status()
        log_in(driver, service.url, service.tokens["publisher"])
        declare(driver, "site", SITE)
        tab(driver, "graph")
        driver.find_element(By.ID, "graph-search").send_keys("site:B1-AHU-1")
        ahu = f'#graph-rows tr[data-iri="{SITE}B1-AHU-1"]:first-child a'
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ahu))[0].click()
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#graph-resource tr.inferred"))
        driver.execute_script("window.scrollTo(0, 0)")
        shoot(driver, out, "graph")
    finally:
        service.stop()


def only_notifications_all(driver: WebDriver, out: Path) -> None:
    """console-notifications-all.png alone, on a service of its own."""
    service = Semps()
    try:
        prepare(service)
        log_in(driver, service.url, service.tokens["subscriber"])
        tab(driver, "notifications")
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#watch-sub option"))
        notifications_all(driver, service, out)
    finally:
        service.stop()


def _matches(service: Semps, sub_id: str) -> int:
    with service.client("admin") as admin:
        return int(admin.get(f"/subscriptions/{sub_id}").json()["matches"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument(
        "--only", choices=["graph", "notifications-all"], help="make this screenshot alone"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TZ", "UTC")
    driver = browser()
    try:
        if args.only == "notifications-all":
            only_notifications_all(driver, args.out)
        elif args.only is None:
            service = Semps()
            try:
                ids = prepare(service)
                dashboard(driver, service, args.out)
                ontology_search(driver, service, args.out)
                subscriptions(driver, service, args.out, ids)
                explanations(driver, service, args.out, ids)
            finally:
                service.stop()
        if args.only in (None, "graph"):
            graph(driver, args.out)
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
