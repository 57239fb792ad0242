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


def _hypothesis_outside_the_checkout() -> None:
    """Hypothesis keeps its example database in the user's cache, not in the work tree."""
    import os

    from hypothesis import settings
    from hypothesis.database import DirectoryBasedExampleDatabase

    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    database = DirectoryBasedExampleDatabase(str(cache / "semps" / "hypothesis"))
    settings.register_profile("semps", database=database)
    settings.load_profile("semps")


_hypothesis_outside_the_checkout()
