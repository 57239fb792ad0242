"""Shared fixtures: where the shared workloads are, and a plain `semps serve`."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from pathlib import Path

import pytest
from semps_test_support import WORKLOADS, Server


@pytest.fixture(scope="session")
def workloads() -> Path:
    """``../shared/workloads`` beside the repository (as in CI)."""
    if not WORKLOADS.is_dir():
        pytest.fail(f"shared workloads not found at {WORKLOADS}")
    return WORKLOADS


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A real ``semps serve`` on a fresh data directory, one per test module, with the default
    limits and no ontology (a module that needs more defines its own ``server``)."""
    with Server(tmp_path_factory.mktemp("server") / "data") as srv:
        yield srv


def _rank(item: pytest.Item) -> int:
    """Where a test file's tests start in the run (lower first): the standalone cluster's,
    then those sharing the worker's Spark session, then those whose commands start Spark of
    their own, then the rest."""
    if item.get_closest_marker("cluster"):
        return 0
    if "spark" in getattr(item, "fixturenames", ()):
        return 1
    return 2 if item.get_closest_marker("spark") else 3


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files that run longest go to the two workers first (scripts/test runs each file on
    one worker, in this order): started last, one is the whole run's tail while the other
    worker has nothing left. A file keeps its tests together, in their order; the rest keep
    the collection's order."""
    files = [list(tests) for _, tests in groupby(items, key=lambda item: item.path)]
    files.sort(key=lambda tests: min(map(_rank, tests)))
    items[:] = [item for tests in files for item in tests]


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
