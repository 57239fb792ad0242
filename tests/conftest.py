"""Shared fixtures: where the shared workloads are."""

from __future__ import annotations

from pathlib import Path

import pytest
from semps_test_support import WORKLOADS


@pytest.fixture(scope="session")
def workloads() -> Path:
    """``../shared/workloads`` beside the repository (as in CI)."""
    if not WORKLOADS.is_dir():
        pytest.fail(f"shared workloads not found at {WORKLOADS}")
    return WORKLOADS
