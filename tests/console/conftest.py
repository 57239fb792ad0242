"""Fixtures of the console tests: one real ``semps serve`` per module and one headless
chromium per test process, and a fresh console page (logged out, nothing in session storage)
per test; or a console on a service of the test's own (``fresh``: it has nothing yet, and
the test may restart it)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from console.browser import ConsolePage, profile_dir, start_chromium
from selenium.webdriver.remote.webdriver import WebDriver
from semps_test_support import Server


@pytest.fixture(scope="session")
def driver() -> Iterator[WebDriver]:
    """One browser for every console test in this process: each module's server is another
    origin (its own session storage), each test opens the console afresh, and the test that
    reads the browser's log drops what came before."""
    profile = profile_dir()
    browser = start_chromium(profile)
    yield browser
    browser.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(driver: WebDriver, server: Server) -> ConsolePage:
    console = ConsolePage(driver, server.url)
    console.open()
    return console


@pytest.fixture
def fresh(driver: WebDriver, tmp_path: Path) -> Iterator[tuple[ConsolePage, Server]]:
    """A console on a service of this test's own, with nothing yet."""
    srv = Server(tmp_path / "data")
    console = ConsolePage(driver, srv.url)
    console.open()
    yield console, srv
    srv.stop()
