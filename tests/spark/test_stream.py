"""``semps spark stream``: continuous matching on Structured Streaming, checked against the
workloads' expected answers (rdflib over the OWL 2 RL closure, an independent oracle).

- a stream killed with SIGKILL mid-stream and restarted on its checkpoint loses no answer
  and writes none twice;
- subscriptions added and removed while the query runs take effect at the next batch;
- a triples table streams through the mined placement into Parquet;
- a stream publishes to a running ``semps serve``, whose subscribers get the notifications;
- bad input is one ``semps: error:`` line and exit 2.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from semps_test_support import Server

from semps.cli.spark_stream import load_stream_subscriptions
from semps.ontology import load_expansion
from semps.spark.sinks import FileSink
from semps.spark.stream import PlacementOptions, StreamSource, start_stream
from semps.spark.watch import SubscriptionWatch

pytestmark = pytest.mark.spark


def expected(case: Path) -> dict[str, dict[str, int]]:
    """The oracle's solution counts per event (``expected.jsonl``)."""
    lines = (case / "expected.jsonl").read_text().splitlines()
    return {row["event"]: row["solutions"] for row in map(json.loads, lines)}


def jsonl_answers(output: Path) -> list[tuple[str, dict[str, int]]]:
    """Every answer line of every batch folder (hidden leftovers ignored, as readers do)."""
    found = []
    for part in sorted(output.glob("batch=*/part-*")):
        for line in part.read_text().splitlines():
            row = json.loads(line)
            assert row["matches"] == sorted(row["solutions"])
            found.append((row["event"], row["solutions"]))
    return found


def stream_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "semps", "spark", "stream", "--master", "local[2]", *args]


def test_a_killed_stream_resumes_from_its_checkpoint_exactly_once(
    workloads: Path, tmp_path: Path
) -> None:
    case = workloads / "synthetic-s7"
    events, output, checkpoint = tmp_path / "events", tmp_path / "out", tmp_path / "ck"
    shutil.copytree(case / "events", events)
    args = stream_cli(
        "--events", str(events), "--subscriptions", str(case / "subscriptions"),
        "--ontology", str(case / "ontology.owl"), "--checkpoint", str(checkpoint),
        "--output", str(output), "--max-files", "5",
    )  # fmt: skip
    with (tmp_path / "first.log").open("w") as log:
        first = subprocess.Popen([*args, "--trigger", "0.2"], stdout=subprocess.PIPE, stderr=log)
        deadline = time.monotonic() + 600
        while len(list(output.glob("batch=*"))) < 2:
            assert first.poll() is None, (tmp_path / "first.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "no batch written"
            time.sleep(0.2)
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert first.stdout is not None
    with first.stdout:
        assert first.stdout.read() == b""
    before = len(list(output.glob("batch=*")))
    assert before < 6, "the kill came after the last batch: nothing was resumed"

    second = subprocess.run([*args, "--available-now"], capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr[-3000:]
    assert second.stdout == ""
    answers = jsonl_answers(output)
    ids = [event for event, _ in answers]
    assert len(ids) == len(set(ids)), "an answer was written twice"
    assert dict(answers) == expected(case), "an answer was lost or wrong"
    assert len(list(output.glob("batch=*"))) > before
    assert not list(output.glob(".writing-*"))


def test_subscription_changes_apply_between_batches_without_a_restart(
    spark: object, workloads: Path, tmp_path: Path
) -> None:
    case = workloads / "synthetic-s7"
    subs, events = tmp_path / "subs", tmp_path / "events"
    subs.mkdir()
    events.mkdir()
    every = sorted((case / "subscriptions").glob("*.rq"))
    first, second = {p.stem for p in every[:50]}, {p.stem for p in every[10:]}
    for path in every[:50]:
        shutil.copy(path, subs)
    lines: list[str] = []
    watch = SubscriptionWatch(subs, load_stream_subscriptions, lines.append, rescan=0)
    run = start_stream(
        spark,  # type: ignore[arg-type]
        StreamSource("events", str(events)),
        watch,
        FileSink(str(tmp_path / "out")),
        checkpoint=str(tmp_path / "ck"),
        expansion=load_expansion(case / "ontology.owl"),
        trigger_seconds=0.2,
        progress=lines.append,
    )
    try:
        batch_one = sorted((case / "events").glob("*.rdf"))[:10]
        for path in batch_one:
            shutil.copy(path, events)
        run.query.processAllAvailable()
        for path in every[:10]:  # removed
            (subs / path.name).unlink()
        for path in every[50:]:  # added
            shutil.copy(path, subs)
        for path in sorted((case / "events").glob("*.rdf"))[10:]:
            shutil.copy(path, events)
        run.query.processAllAvailable()
    finally:
        run.stop()
    run.wait()
    want = expected(case)
    got = dict(jsonl_answers(tmp_path / "out"))
    assert set(got) == set(want)
    early = {p.stem for p in batch_one}
    for event, counts in got.items():
        live = first if event in early else second
        assert counts == {s: n for s, n in want[event].items() if s in live}, event
    assert any("subscriptions reloaded: 90" in line for line in lines)


def test_a_triples_table_streams_through_the_mined_placement_into_parquet(
    spark: object, workloads: Path, tmp_path: Path
) -> None:
    from semps.spark.sources import load_events, write_table

    case = workloads / "synthetic-s7"
    table = tmp_path / "table"
    write_table(spark, load_events(spark, str(case / "events")), str(table))  # type: ignore[arg-type]
    watch = SubscriptionWatch(case / "subscriptions", load_stream_subscriptions, print)
    lines: list[str] = []
    run = start_stream(
        spark,  # type: ignore[arg-type]
        StreamSource("triples", str(table)),
        watch,
        FileSink(str(tmp_path / "out"), "parquet"),
        checkpoint=str(tmp_path / "ck"),
        expansion=load_expansion(case / "ontology.owl"),
        trigger_seconds=None,
        placement=PlacementOptions(partitions=4, min_support=0.03),
        progress=lines.append,
    )
    run.wait()
    rows = pq.read_table(tmp_path / "out").to_pylist()
    got = {r["event"]: dict(r["solutions"]) for r in rows}
    assert len(rows) == len(got)
    assert got == expected(case)
    assert all(r["matches"] == sorted(r["matches"]) for r in rows)


def test_a_stream_publishes_to_a_running_service(workloads: Path, tmp_path: Path) -> None:
    case = workloads / "synthetic-s7"
    chosen = ["s0003", "s0017", "s0083"]
    subs = tmp_path / "subs"
    subs.mkdir()
    for sub_id in chosen:
        shutil.copy(case / "subscriptions" / f"{sub_id}.rq", subs)
    server = Server(tmp_path / "data")
    try:
        with server.client("admin") as admin:
            ontology = (case / "ontology.owl").read_bytes()
            headers = {"Content-Type": "application/rdf+xml"}
            assert admin.put("/ontology", content=ontology, headers=headers).status_code < 300
        ids = {}
        with server.client("subscriber") as client:
            for sub_id in chosen:
                text = (subs / f"{sub_id}.rq").read_text()
                ids[sub_id] = client.post("/subscriptions", content=text).json()["id"]
        done = subprocess.run(
            stream_cli(
                "--events", str(case / "events"), "--subscriptions", str(subs),
                "--ontology", str(case / "ontology.owl"),
                "--checkpoint", str(tmp_path / "ck"), "--outbox", server.url,
                f"--token={server.tokens['publisher']}", "--available-now",
            ),
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        want = expected(case)
        matched = [e for e, counts in want.items() if set(counts) & set(chosen)]
        markers = sorted((tmp_path / "ck" / "semps-outbox").iterdir())
        assert sum(int(m.read_text()) for m in markers) == len(matched)
        with server.client("subscriber") as client:
            for sub_id, service_id in ids.items():
                url = f"/subscriptions/{service_id}/notifications?once=true"
                text = client.get(url).text
                notes = [line for line in text.splitlines() if line.startswith("data: ")]
                assert len(notes) == sum(1 for c in want.values() if sub_id in c), sub_id
    finally:
        server.stop()


def test_bad_input_is_one_error_line_and_exit_2(workloads: Path, tmp_path: Path) -> None:
    case = workloads / "synthetic-s7"
    bad_subs = tmp_path / "bad"
    bad_subs.mkdir()
    (bad_subs / "broken.rq").write_text("SELECT ?x WHERE { ?x a ")
    a_file = tmp_path / "file"
    a_file.write_text("x")
    good = ["--subscriptions", str(case / "subscriptions"), "--output", str(tmp_path / "o")]
    cases = {
        "events folder not found": ["--events", str(tmp_path / "none"), *good,
                                    "--checkpoint", str(tmp_path / "ck")],
        "--checkpoint must be a folder": ["--events", str(case / "events"), *good,
                                          "--checkpoint", str(a_file)],
        "is not a stream checkpoint": ["--events", str(case / "events"), *good,
                                       "--checkpoint", str(case)],
        "subscription 'broken'": ["--events", str(case / "events"), "--subscriptions",
                                  str(bad_subs), "--output", str(tmp_path / "o"),
                                  "--checkpoint", str(tmp_path / "ck")],
        "needs Spark's Kafka connector": ["--kafka", "127.0.0.1:9", "--topic", "t", *good,
                                          "--checkpoint", str(tmp_path / "ck2")],
    }  # fmt: skip
    for message, args in cases.items():
        done = subprocess.run(stream_cli(*args), capture_output=True, text=True, timeout=600)
        assert done.returncode == 2, (message, done.stderr[-2000:])
        assert done.stdout == ""
        errors = [line for line in done.stderr.splitlines() if line.startswith("semps: error:")]
        assert len(errors) == 1 and message in errors[0], (message, done.stderr[-2000:])
        assert "Traceback" not in done.stderr
