"""A knowledge-graph change through the real pipeline (semps.broker.pipeline.Pipeline, two
worker processes): its edit is answered only once the pipeline has settled the change's
order, so the edit after it, submitted from that answer, follows it; the events submitted
around it are all matched and committed."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from semps.broker.jobs import Item, Step
from semps.broker.pipeline import Batch, Pipeline
from semps.broker.replica import GraphSource
from semps.graph.change import GraphChange
from semps.graph.view import GraphView
from semps.ontology.expansion import Expansion


class Graph:
    """The main process's graph, as the graph desk keeps it: changes applied when they
    commit, and a worker starting meanwhile reads it as committed last."""

    def __init__(self) -> None:
        self.view = GraphView(Expansion())
        self.lock = threading.Lock()

    @contextmanager
    def replica(self) -> Iterator[tuple[GraphSource | None, Expansion]]:
        with self.lock:
            yield GraphSource(self.view.version, None, self.view), self.view.expansion

    def commit(self, step: Step) -> int:
        with self.lock:
            self.view.apply(step.change)
        return 0

    def change(self, version: int) -> Step:
        """An empty change that follows the one before."""
        return Step(GraphChange(version, first_term=len(self.view.terms)), f"graph-{version}")


def test_the_next_edit_submitted_from_an_edits_answer_follows_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answers: list[tuple[int, BaseException | int]] = []
    submitted_next: list[BaseException | None] = []
    committed_events: list[str] = []
    all_done = threading.Event()
    last = 3
    graph = Graph()
    pipeline: Pipeline

    def commit(batches: list[Batch]) -> None:
        committed_events.extend(item.event_id for items, _ in batches for item in items)

    def answer(step: Step, result: BaseException | int) -> None:
        answers.append((step.version, result))
        if step.version == last:
            all_done.set()
            return
        try:  # what the graph desk does: plan and submit the next edit at once
            pipeline.submit_change(graph.change(step.version + 1))
            submitted_next.append(None)
        except ValueError as exc:
            submitted_next.append(exc)
            all_done.set()

    pipeline = Pipeline(
        load=list,
        replica=graph.replica,
        commit=commit,
        commit_change=graph.commit,
        answer_change=answer,
        on_overrun=lambda sub_id, why: None,
        workers=2,
    )
    try:
        events = [Item(f"e{i}", "text/turtle", b"<urn:a> <urn:b> <urn:c> .", 0.0) for i in range(6)]
        pipeline.submit(events[:3])
        pipeline.submit_change(graph.change(1))
        pipeline.submit(events[3:])
        assert all_done.wait(120)
    finally:
        pipeline.close()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert submitted_next == [None, None]
    assert answers == [(1, 0), (2, 0), (3, 0)]
    assert sorted(committed_events) == [f"e{i}" for i in range(6)]
