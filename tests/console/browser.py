"""Headless Debian chromium driven by selenium, and a page object for the console.

The browser is the distribution's (``/usr/bin/chromium`` and ``/usr/bin/chromedriver``,
installed by ``scripts/bootstrap``): nothing is downloaded at run time. A machine without
them fails these tests with a message saying so; they are never skipped.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait
from semps_test_support import PATIENCE

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1000",
)
#: Seconds a condition may take to show in the page (a bound on waiting, not a speed claim).
WAIT = PATIENCE  # a loaded machine draws slowly; this only ends a broken run

#: What a lookup may meet while a list is redrawn: tried again, not a failure.
REDRAWN = (StaleElementReferenceException, NoSuchElementException, AssertionError)

T = TypeVar("T")


def start_chromium(profile: Path) -> WebDriver:
    """A headless chromium with a fresh profile in ``profile``."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.fail(
            f"browser tests need {' and '.join(missing)}: run scripts/bootstrap "
            "(apt-get install chromium chromium-driver)",
            pytrace=False,
        )
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))


class ConsolePage:
    """The console as a user sees it: log in, pick a tab, fill forms, read what is shown."""

    def __init__(self, driver: WebDriver, url: str) -> None:
        self.driver, self.url = driver, url

    # -- waiting and finding ---------------------------------------------------------------

    def until(self, condition: Callable[[WebDriver], T | None], what: str) -> T:
        """Wait for ``condition`` to give something truthy; fail with ``what`` if it never
        does (the page's current text is in the message)."""
        try:
            wait = WebDriverWait(self.driver, WAIT, ignored_exceptions=REDRAWN)
            return wait.until(lambda d: condition(d) or None)
        except Exception:
            body = self.driver.find_element(By.TAG_NAME, "body").text
            pytest.fail(f"never saw {what}; the page shows:\n{body}")

    def css(self, selector: str) -> WebElement:
        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def all(self, selector: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def text(self, selector: str) -> str:
        return self.css(selector).text

    def wait_text(self, selector: str, wanted: str) -> str:
        """Wait until the element's text contains ``wanted``; returns the whole text."""

        def shown(_: WebDriver) -> str | None:
            text = self.text(selector)
            return text if wanted in text else None

        return self.until(shown, f"{wanted!r} in {selector}")

    def type_into(self, selector: str, text: str) -> None:
        """Set a field's value as typing would (through a script: send_keys is slow on
        long texts and reinterprets some characters)."""
        field = self.css(selector)
        self.driver.execute_script(
            "arguments[0].value = arguments[1];"
            "arguments[0].dispatchEvent(new Event('input', {bubbles: true}));",
            field,
            text,
        )

    def choose(self, selector: str, value: str) -> None:
        Select(self.css(selector)).select_by_visible_text(value)

    # -- pages -----------------------------------------------------------------------------

    def open(self) -> None:
        """Load the console with no token in the tab."""
        self.driver.get(self.url + "/console/")
        self.driver.execute_script("sessionStorage.clear()")
        self.driver.get(self.url + "/console/")
        self.until(lambda d: self.css("#login").is_displayed(), "the login form")

    def log_in(self, token: str) -> None:
        self.open()
        self.css("#token").send_keys(token)
        self.css("#login-form button").click()
        self.until(lambda d: self.css("#app").is_displayed(), "the console after logging in")

    def tab(self, name: str) -> None:
        self.css(f'nav .tab[data-tab="{name}"]').click()
        self.until(lambda d: self.css(f"#{name}").is_displayed(), f"the {name} panel")

    def tabs(self) -> list[str]:
        """The tabs offered (shown) to the user logged in."""
        return [t.get_attribute("data-tab") or "" for t in self.all("nav .tab") if t.is_displayed()]

    def flash(self, panel: str) -> str:
        """The status line of a panel."""
        return self.text(f"#{panel} .flash")

    def wait_flash(self, panel: str, wanted: str) -> str:
        return self.wait_text(f"#{panel} .flash", wanted)

    def tree_row(self, tree: str, *path: str) -> WebElement:
        """The row of the last IRI of ``path`` in a tree (``class`` or ``property``),
        expanding each IRI before it (the tree draws only what is expanded)."""
        selector = f"#{tree}-tree ul.tree"
        for i, iri in enumerate(path):
            selector += f' > li[data-iri="{iri}"]'
            row = self.until(lambda d, sel=selector: self.css(sel), f"{iri} in the {tree} tree")
            if i == len(path) - 1:
                return row
            toggle = row.find_element(By.CSS_SELECTOR, ":scope > .entity > .toggle")
            if toggle.get_attribute("aria-expanded") != "true":
                toggle.click()
            selector += " > ul"
        raise AssertionError("an empty path")

    def subscription_row(self, sub_id: str) -> WebElement:
        """The subscription's row, once the list shows it (the list is redrawn after a
        registration answers, so a row read at once may not be there yet)."""

        def row(_: WebDriver) -> WebElement | None:
            found = [r for r in self.all("#sub-rows tr") if r.get_attribute("data-id") == sub_id]
            return found[0] if found else None

        return self.until(row, f"the row of {sub_id} in the subscriptions list")

    def click_in_row(self, sub_id: str, button: str) -> None:
        """Click a button of a subscription's row (found again if the list is redrawn)."""

        def clicked(_: WebDriver) -> bool:
            row = self.subscription_row(sub_id)
            row.find_element(By.CSS_SELECTOR, f"button.{button}").click()
            return True

        self.until(clicked, f"the {button} button of {sub_id}")

    def register(self, text: str, *, kind: str = "semantic", name: str = "") -> str:
        """Register through the editor; returns the new id shown."""
        self.tab("subscriptions")
        self.choose("#sub-kind", kind)
        self.type_into("#sub-name", name)
        self.type_into("#sub-text", text)
        self.css("#sub-form button[type=submit]").click()
        shown = self.wait_text("#sub-check", "Registered as ")
        return shown.split("Registered as ", 1)[1].strip()

    def publish(self, media_type: str, body: str) -> str:
        """Publish through the form; returns the result line."""
        self.tab("publish")
        self.choose("#publish-type", media_type)
        self.type_into("#publish-body", body)
        self.driver.execute_script("document.getElementById('publish-result').textContent = ''")
        self.css("#publish-form button[type=submit]").click()
        return self.until(lambda d: self.text("#publish-result"), "the publish result")

    def watch(self, sub_id: str) -> None:
        self.tab("notifications")
        self.until(
            lambda d: any(
                o.get_attribute("value") == sub_id for o in self.all("#watch-sub option")
            ),
            f"{sub_id} in the watch menu",
        )
        Select(self.css("#watch-sub")).select_by_value(sub_id)
        self.css("#watch-form button[type=submit]").click()
        self.wait_text("#watch-state", f"watching {sub_id}")

    def notifications(self) -> list[str]:
        """The notifications shown, newest first (switching to their tab), each as one line
        of text with its terms written in full (the page shows CURIEs, the full term in
        their tooltip)."""
        if not self.css("#notifications").is_displayed():
            self.tab("notifications")
        written: list[str] = self.driver.execute_script(
            "return [...document.querySelectorAll('#note-list > li')].map((li) => {"
            "  const copy = li.cloneNode(true);"
            "  for (const t of copy.querySelectorAll('.term[title]')) t.textContent = t.title;"
            "  return copy.textContent; });"
        )
        return written


def profile_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="semps-chromium-"))
