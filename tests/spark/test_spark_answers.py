"""Bulk answers are written once, in event-id order, however the events were partitioned."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from semps.spark.answers import in_order, write_results

IDS = [f"e{i:03d}" for i in range(60)]


def counts_of(event_id: str) -> dict[str, int]:
    n = int(event_id[1:])
    return {f"s{k}": k + 1 for k in range(n % 4)}


def written(
    spark, partitions: list[list[str]], tmp_path: Path, spool: bool
) -> list[dict[str, object]]:
    parts = [[(event_id, counts_of(event_id)) for event_id in part] for part in partitions]
    rdd = spark.sparkContext.parallelize(parts, len(parts)).flatMap(lambda part: part)
    assert rdd.glom().collect() == parts  # the partitions asked for
    output = tmp_path / "answers.jsonl"
    count = write_results(spark, rdd, str(output), None, spool=spool)
    assert count == sum(len(part) for part in parts)
    return [json.loads(line) for line in output.read_text().splitlines()]


@pytest.mark.parametrize("spool", [True, False], ids=["spooled to files", "through Spark"])
@pytest.mark.parametrize(
    "layout",
    ["runs in reverse order", "interleaved", "one partition", "with empty partitions"],
)
def test_answers_come_in_event_id_order_once_each(
    spark, tmp_path: Path, layout: str, spool: bool
) -> None:
    shuffled = IDS[:]
    random.Random(7).shuffle(shuffled)
    partitions = {
        "runs in reverse order": [IDS[40:], IDS[20:40], IDS[:20]],
        "interleaved": [shuffled[0::3], shuffled[1::3], shuffled[2::3]],
        "one partition": [shuffled],
        "with empty partitions": [[], IDS[30:], [], IDS[:30], []],
    }[layout]
    lines = written(spark, partitions, tmp_path, spool)
    assert [line["event"] for line in lines] == IDS
    for line in lines:  # each event's own counts, whatever its partition
        assert line["solutions"] == counts_of(str(line["event"]))


def test_partitions_are_read_in_order_only_when_their_id_ranges_do_not_overlap() -> None:
    assert in_order([(2, 1, "g", "g"), (0, 3, "a", "c"), (1, 2, "d", "f")]) == [0, 1, 2]
    assert in_order([(0, 3, "a", "d"), (1, 2, "d", "f")]) is None  # "d" in both
    assert in_order([(0, 3, "a", "e"), (1, 1, "b", "b")]) is None  # one inside the other
    assert in_order([]) == []


def test_spooled_answers_keep_ids_with_newlines_and_other_scripts_in_order(
    spark, tmp_path: Path
) -> None:
    ids = ["a\nb", "a", "é", "z\u2028", "ab"]
    rdd = spark.sparkContext.parallelize([(i, {"s": 1}) for i in ids], 2)  # ranges overlap
    output = tmp_path / "answers.jsonl"
    assert write_results(spark, rdd, str(output), None, spool=True) == len(ids)
    lines = output.read_text(encoding="utf-8").split("\n")
    assert [json.loads(line)["event"] for line in lines[:-1]] == sorted(ids)
    assert lines[-1] == ""
