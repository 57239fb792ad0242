"""The warning for a job that waits for resources, on a scripted status tracker (the
real-cluster case, a worker too small for the request, is in test_spark_cluster.py)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from semps.spark.waiting import ResourceWatch, waiting_message


@dataclass
class Stage:
    numActiveTasks: int  # noqa: N815  (PySpark's SparkStageInfo field names)
    numCompletedTasks: int  # noqa: N815


class Tracker:
    def __init__(self, stages: dict[int, Stage]) -> None:
        self.stages = stages

    def getActiveStageIds(self) -> list[int]:  # noqa: N802
        return list(self.stages)

    def getStageInfo(self, stage: int) -> Stage | None:  # noqa: N802
        return self.stages.get(stage)


class Context:
    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    def statusTracker(self) -> Tracker:  # noqa: N802
        return self.tracker


def watch(stages: dict[int, Stage], polls: int) -> list[str]:
    """The warnings given over ``polls`` polls of a tracker showing ``stages``."""
    said: list[str] = []
    seen = threading.Semaphore(0)
    tracker = Tracker(stages)
    original = tracker.getActiveStageIds

    def counted() -> list[int]:
        seen.release()
        return original()

    tracker.getActiveStageIds = counted  # type: ignore[method-assign]
    with ResourceWatch(Context(tracker), patience=0.001, poll=0.001, warn=said.append):  # type: ignore[arg-type]
        for _ in range(polls):
            seen.acquire()
    return said


def test_a_stage_with_no_task_run_is_reported_once() -> None:
    said = watch({3: Stage(0, 0)}, polls=20)
    assert len(said) == 1
    assert said[0].startswith("semps: warning: Spark has run no task for ")
    assert "spark.executor.memory" in said[0]


def test_running_or_idle_jobs_are_not_reported() -> None:
    assert watch({3: Stage(2, 0)}, polls=20) == []
    assert watch({3: Stage(0, 5)}, polls=20) == []
    assert watch({}, polls=20) == []


def test_the_message_names_the_wait_and_what_to_compare() -> None:
    text = waiting_message(31.4)
    assert "no task for 31 s and no executor has registered" in text
    assert "spark.cores.max" in text
