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


def _hypothesis_in_the_checkout() -> None:
    """Hypothesis keeps its example database in this checkout (``.hypothesis/``, ignored by
    git): an example found here is replayed here, never in another checkout on the machine,
    so what one found cannot make another's run pass or fail."""
    from hypothesis import settings
    from hypothesis.database import DirectoryBasedExampleDatabase

    root = Path(__file__).resolve().parents[1]
    database = DirectoryBasedExampleDatabase(str(root / ".hypothesis" / "examples"))
    settings.register_profile("semps", database=database)
    settings.load_profile("semps")


_hypothesis_in_the_checkout()
