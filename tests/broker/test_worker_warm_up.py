"""A matching worker loads each matcher's compiled kernels before its first event, untimed:
a kernel compiled inside an event's time budget would overrun it, and the watchdog would
restart the worker, which would compile again (seen: 214 restarts in 11 minutes)."""

from __future__ import annotations

import pytest

from semps.broker.worker import Worker
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.values import Subscription


def test_warming_up_asks_each_matcher_with_subscriptions_to_warm_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(SemanticMatcher, "warm", lambda self: calls.append(type(self).__name__))
    worker = Worker()
    worker.matcher("semantic")  # no subscription yet: nothing to warm
    worker.warm_up()
    assert calls == []
    text = 'SELECT ?x { ?x <http://ex/s> ?t FILTER(contains(?t, "oak")) }'
    worker.matcher("semantic").add(Subscription("s", "semantic", text))
    worker.warm_up()
    worker.warm_up()
    assert calls == ["SemanticMatcher"]


class _Pipe:
    """The worker's end of its pipe, in memory: the broker's requests queued, the
    worker's replies and its warm-ups recorded in order."""

    def __init__(self, requests: list[tuple[object, ...]], log: list[str]) -> None:
        self.requests, self.log = requests, log

    def recv(self) -> tuple[object, ...]:
        if not self.requests:
            raise EOFError
        request = self.requests.pop(0)
        self.log.append(f"recv {request[0]}")
        return request

    def send(self, reply: tuple[object, ...]) -> None:
        self.log.append(f"send {reply[0]}")

    def poll(self, timeout: float = 0) -> bool:
        return bool(self.requests)


@pytest.mark.parametrize("pending", [False, True])
def test_a_worker_idle_after_a_change_warms_up_before_its_next_request(
    monkeypatch: pytest.MonkeyPatch, pending: bool
) -> None:
    import multiprocessing

    from semps import pool
    from semps.broker import worker as module

    log: list[str] = []
    monkeypatch.setattr(Worker, "warm_up", lambda self: log.append("warm"))
    sub = Subscription("s", "semantic", "SELECT ?x { ?x <http://ex/p> ?y }")
    requests: list[tuple[object, ...]] = [("add", sub, None)]
    if pending:  # a second change already waits: warm up after it, once idle
        requests.append(("remove", "s"))
    progress = pool.Progress(multiprocessing.get_context("spawn"))
    handler = Worker(module.DEFAULT_LIMITS, progress)  # what a worker process serves
    pool.serve(_Pipe(requests, log), handler)  # type: ignore[arg-type]
    if pending:
        assert log == ["recv add", "send ok", "recv remove", "send ok", "warm"]
    else:
        assert log == ["recv add", "send ok", "warm"]
    assert progress.read()[0] == module.IDLE


def test_a_worker_with_a_graph_readies_graph_matching_before_its_first_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The semantic matcher's state for matching against a graph is built from every
    subscription on first use (2.4 s at 10k subscriptions): a worker builds it when the graph
    arrives, or when a matcher is made beside a graph, not inside an event's time."""
    from semps.graph.graph import KnowledgeGraph
    from semps.terms import RDF_TYPE

    readied: list[int] = []
    original = SemanticMatcher.graph_matching

    def graph_matching(self: SemanticMatcher) -> object:
        readied.append(len(self))
        return original(self)

    monkeypatch.setattr(SemanticMatcher, "graph_matching", graph_matching)
    text = "SELECT ?x { ?x a <http://ex/Sensor> ; <http://ex/reads> ?v }"
    change = KnowledgeGraph().plan_insert([("http://ex/s1", RDF_TYPE, "http://ex/Sensor")])
    worker = Worker()
    worker.matcher("semantic").add(Subscription("s", "semantic", text))
    assert readied == []  # no graph: nothing to ready
    worker.graph_apply(change, None)
    assert readied[:1] == [1]
    other = Worker()
    other.graph_apply(change, None)
    other.matcher("semantic")
    assert readied[1:2] == [0]


def test_a_worker_idle_after_a_bulk_registration_rebuilds_the_content_index_before_an_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bulk registration leaves the content index to be rebuilt (and HCEM's cell bitsets,
    which one event at a time reads, built again): 4 s at 1M subscriptions. A worker does
    it when idle, so that the next event does not pay for it."""
    from semps.event import Event
    from semps.matcher.base import MatchContext
    from semps.matcher.content.cells import CellBitsets

    built: list[int] = []
    original = CellBitsets.__init__

    def counting(self: CellBitsets, *args: object, **kwargs: object) -> None:
        built.append(1)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(CellBitsets, "__init__", counting)
    worker = Worker()
    worker.add(Subscription("first", "content", "a9 >= 1"), None)
    worker.idle()  # warmed up: a made-up event has been matched once
    subs = [Subscription(f"c{i}", "content", f"a1 >= {i % 97} and a2 <= 50") for i in range(3000)]
    assert worker.add_many(subs) == [None] * len(subs)
    built.clear()
    worker.idle()
    assert built, "the idle worker built the cell bitsets"
    built.clear()
    event = Event("e1", values={"a1": 40.0, "a2": 3.0})
    found = worker.matcher("content").match(MatchContext(event))
    assert len(found) == sum(1 for i in range(3000) if 40 >= i % 97)
    assert built == [], "the event found the index built"
