"""The W3C SPARQL suites' outcome counts, printed after the run."""

from __future__ import annotations

import sys

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    module = sys.modules.get("test_w3c_sparql")
    if module is None or not getattr(module, "OUTCOMES", None):
        return
    terminalreporter.section("W3C SPARQL conformance")
    terminalreporter.write_line(module.summary())
