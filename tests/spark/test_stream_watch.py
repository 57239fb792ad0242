"""Subscriptions watched by a stream: versions named by content, reloads only on change,
and a bad change refused while the previous version stays in force (no Spark needed)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from semps.cli.spark_stream import load_stream_subscriptions
from semps.errors import SempsError, SubscriptionError
from semps.matcher.values import Subscription
from semps.spark.sinks import OutboxSink, _chunks
from semps.spark.watch import SubscriptionWatch, Version

GOOD = "SELECT ?x WHERE { ?x a <http://ex.org/A> }"


def folder(tmp_path: Path, **subs: str) -> Path:
    path = tmp_path / "subs"
    path.mkdir(exist_ok=True)
    for name, text in subs.items():
        (path / f"{name}.rq").write_text(text)
    return path


def test_a_version_is_named_by_its_content_not_its_order() -> None:
    a = Subscription("a", "semantic", GOOD)
    b = Subscription("b", "semantic", GOOD)
    assert Version.of([a, b]).token == Version.of([b, a]).token
    assert Version.of([a]).token != Version.of([a, b]).token
    edited = Subscription("a", "semantic", GOOD.replace("A", "B"))
    assert Version.of([edited, b]).token != Version.of([a, b]).token


def test_additions_and_removals_make_a_new_version(tmp_path: Path) -> None:
    path = folder(tmp_path, a=GOOD, b=GOOD)
    warnings: list[str] = []
    watch = SubscriptionWatch(path, load_stream_subscriptions, warnings.append, rescan=0)
    assert [s.id for s in watch.version.subscriptions] == ["a", "b"]
    assert watch.poll() is None  # nothing changed
    (path / "b.rq").unlink()
    (path / "c.rq").write_text(GOOD)
    changed = watch.poll()
    assert changed is not None
    assert [s.id for s in changed.subscriptions] == ["a", "c"]
    assert watch.poll() is None
    assert warnings == []


def test_a_bad_change_keeps_the_previous_version_and_is_retried(tmp_path: Path) -> None:
    path = folder(tmp_path, a=GOOD)
    warnings: list[str] = []
    watch = SubscriptionWatch(path, load_stream_subscriptions, warnings.append, rescan=0)
    before = watch.version
    (path / "bad.rq").write_text("SELECT ?x WHERE { ?x a ")
    assert watch.poll() is None
    assert watch.version == before
    assert len(warnings) == 1 and "subscription 'bad'" in warnings[0]
    (path / "bad.rq").write_text(GOOD)  # fixed: the next poll takes it
    changed = watch.poll()
    assert changed is not None and [s.id for s in changed.subscriptions] == ["a", "bad"]


def test_edits_in_place_are_seen_by_the_background_rescan(tmp_path: Path) -> None:
    path = folder(tmp_path, a=GOOD)
    watch = SubscriptionWatch(path, load_stream_subscriptions, print, rescan=0.05)
    (path / "a.rq").write_text(GOOD.replace("A", "Bee"))  # in place: the folder's time stays
    deadline = time.monotonic() + 30
    while not watch._edited.is_set():
        assert time.monotonic() < deadline, "the rescan never saw the edit"
        time.sleep(0.01)
    changed = watch.poll()
    assert changed is not None and "Bee" in changed.subscriptions[0].text
    (path / "b.rq").write_text(GOOD)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1))
    changed = watch.poll()  # a new file changes the folder's own time: seen at once
    assert changed is not None and [s.id for s in changed.subscriptions] == ["a", "b"]


def test_a_bad_subscription_at_start_is_an_error_naming_it(tmp_path: Path) -> None:
    path = folder(tmp_path, a=GOOD, broken="SELECT WHERE {")
    with pytest.raises(SubscriptionError, match="subscription 'broken'"):
        SubscriptionWatch(path, load_stream_subscriptions, print)
    with pytest.raises(SempsError, match="subscriptions not found"):
        SubscriptionWatch(tmp_path / "nowhere", load_stream_subscriptions, print)


def test_json_lines_subscriptions_are_watched_too(tmp_path: Path) -> None:
    path = tmp_path / "subs.jsonl"
    hot = '{"id": "hot", "constraints": [{"attr": "t", "op": ">=", "value": 30}]}\n'
    path.write_text(hot)
    watch = SubscriptionWatch(path, load_stream_subscriptions, print, rescan=0)
    assert [(s.id, s.kind) for s in watch.version.subscriptions] == [("hot", "content")]
    path.write_text(
        hot + '{"id": "cold", "constraints": [{"attr": "t", "op": "<=", "value": 0}]}\n'
    )
    changed = watch.poll()
    assert changed is not None and [s.id for s in changed.subscriptions] == ["cold", "hot"]


def test_outbox_requests_are_bounded_in_events_and_bytes() -> None:
    docs = [(f"e{i}", "text/turtle", b"x" * 1000) for i in range(600)]
    chunks = list(_chunks(iter(docs)))
    assert [len(c) for c in chunks] == [256, 256, 88]
    big = [("big", "text/turtle", b"x" * (5 * 1024 * 1024)), ("small", "text/turtle", b"x")]
    assert [len(c) for c in _chunks(iter(big))] == [1, 1]


def test_an_outbox_needs_an_http_url(tmp_path: Path) -> None:
    with pytest.raises(SempsError, match="--outbox must be an http"):
        OutboxSink("ftp://host", tmp_path / "markers")
