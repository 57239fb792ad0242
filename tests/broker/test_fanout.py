"""The in-memory fan-out and the stream that follows it: store pages first, then memory,
back to the store on overflow, gaps or a plain wake-up; never a gap nor a duplicate."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from semps.api.streams import PAGE, Streams
from semps.broker.fanout import Fanout, Listener
from semps.broker.sqlite_store import SQLiteStore
from semps.errors import TooManyRequests


def _note(sub: str, seq: int) -> tuple[str, int, str]:
    return (sub, seq, json.dumps({"subscription": sub, "id": seq}))


def test_a_listener_overflows_into_stale() -> None:
    async def run() -> None:
        listener = Listener("s", capacity=3)
        listener.stale = False
        for seq in range(1, 4):
            listener.put(seq, "{}")
        assert not listener.stale and [s for s, _ in listener.take()] == [1, 2, 3]
        for seq in range(4, 9):
            listener.put(seq, "{}")
        assert listener.stale  # the 4th put overflowed: emptied, read the store instead
        assert [s for s, _ in listener.take()] == [8]
        assert not await listener.wait(0.01)

    asyncio.run(run())


def test_a_listener_overflows_on_the_text_it_holds_too() -> None:
    async def run() -> None:
        listener = Listener("s", capacity=100, chars=10)
        listener.stale = False
        listener.put(1, "12345")
        listener.put(2, "12345")  # 10 characters: full, not over
        assert not listener.stale and [s for s, _ in listener.take()] == [1, 2]
        listener.put(3, "12345")
        listener.put(4, "123456")  # 11: over, so emptied
        assert listener.stale and listener.take() == []
        listener.put(5, "1234567890")  # the count starts again after an overflow or a take
        assert [s for s, _ in listener.take()] == [5]

    asyncio.run(run())


def test_a_commit_of_a_worker_batch_stays_in_memory() -> None:
    """A subscription every event matches gets a worker batch's notifications (256) in one
    commit, often two batches': its stream must not go back to the store for them."""

    async def run() -> None:
        fanout = Fanout()
        listener = fanout.listen("s")
        listener.stale = False
        fanout.publish([_note("s", seq) for seq in range(1, 513)])
        assert not listener.stale
        assert [seq for seq, _ in listener.take()] == list(range(1, 513))

    asyncio.run(run())


def test_publish_from_another_thread_hops_onto_the_loop() -> None:
    async def run() -> list[tuple[int, str]]:
        fanout = Fanout()
        listener = fanout.listen("s")
        thread = threading.Thread(target=fanout.publish, args=([_note("s", 1)],))
        thread.start()
        thread.join()
        assert await listener.wait(5)
        fanout.unlisten(listener)
        assert fanout.streams("s") == 0
        return listener.take()

    assert [seq for seq, _ in asyncio.run(run())] == [1]


def test_publish_and_wake_without_listeners_do_nothing() -> None:
    fanout = Fanout()
    fanout.publish([_note("s", 1)])
    fanout.wake()


class _Log:
    """A store with a log of notifications, committed as a publisher would."""

    def __init__(self, path: Path) -> None:
        self.store = SQLiteStore(path)
        self.seq: dict[str, int] = {}

    def commit(self, sub: str, count: int) -> list[tuple[str, int, str]]:
        notes = []
        for _ in range(count):
            self.seq[sub] = self.seq.get(sub, 0) + 1
            self.store.add_notifications(
                f"ev-{sub}-{self.seq[sub]}", [(sub, {"subscription": sub})]
            )
            notes.append(_note(sub, self.seq[sub]))
        return notes


def _follow(streams: Streams, sub: str, after: int, want: int) -> asyncio.Task[list[int]]:
    async def read() -> list[int]:
        got: list[int] = []
        pages = streams.follow(sub, after, idle=0.05)
        async for page in pages:
            got += [json.loads(text)["id"] for _, text in page]
            assert [seq for seq, _ in page] == [json.loads(t)["id"] for _, t in page]
            if len(got) >= want:
                break
        await pages.aclose()
        return got

    return asyncio.create_task(read())


@pytest.mark.parametrize("mode", ["publish", "wake", "overflow"])
def test_a_stream_replays_then_follows_without_gaps_or_duplicates(
    tmp_path: Path, mode: str
) -> None:
    log = _Log(tmp_path / "semps.sqlite3")
    log.commit("s", PAGE + 50)  # more than a page is stored before the stream opens

    async def run() -> list[int]:
        fanout = Fanout(capacity=4)
        streams = Streams(log.store, fanout)
        reader = _follow(streams, "s", 10, PAGE + 50 - 10 + 30)
        for _ in range(10):
            notes = log.commit("s", 3) + log.commit("other", 1)
            if mode == "publish":
                fanout.publish(notes)
            elif mode == "wake":
                fanout.wake()
            else:  # a burst bigger than the inbox, then a lost note: both send it back
                fanout.publish(notes * 3)
            await asyncio.sleep(0.01)
        return await asyncio.wait_for(reader, 20)

    assert asyncio.run(run()) == list(range(11, PAGE + 50 + 30 + 1))


def test_once_stops_at_the_end_of_the_store(tmp_path: Path) -> None:
    log = _Log(tmp_path / "semps.sqlite3")
    log.commit("s", 5)

    async def run() -> list[list[int]]:
        streams = Streams(log.store, Fanout())
        return [[seq for seq, _ in page] async for page in streams.follow("s", 2, once=True)]

    assert asyncio.run(run()) == [[3, 4, 5]]


def test_leases_count_streams_per_subscriber(tmp_path: Path) -> None:
    streams = Streams(SQLiteStore(tmp_path / "semps.sqlite3"), Fanout(), max_streams=2)
    first, second = streams.lease("alice"), streams.lease("alice")
    streams.lease("bob")
    with pytest.raises(TooManyRequests) as refused:
        streams.lease("alice")
    assert str(refused.value) == "alice already has 2 open streams, the limit (--max-streams)"
    first.release()
    first.release()  # idempotent
    assert streams.open_streams("alice") == 1
    streams.lease("alice")
    second.release()
    assert streams.open_streams("alice") == 1
