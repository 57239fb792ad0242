"""Bulk matching on a real local Spark session gives the answers of rdflib SPARQL over the
OWL 2 RL closure (the workloads' expected.jsonl), whatever the placement or input, with the
input spread over every core."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from semps_test_support import Case

from semps.errors import IngestError, SempsError, SparkError
from semps.matcher.values import Subscription
from semps.ontology import Expansion
from semps.spark.bulk import match_events, match_lines
from semps.spark.placed import subscription_items
from semps.spark.placement import mine_placement
from semps.spark.sources import (
    balance,
    load_events,
    raise_first,
    raise_load_errors,
    without_load_errors,
    write_table,
)

pytestmark = pytest.mark.spark


def answers(results) -> dict[str, dict[str, int]]:  # type: ignore[no-untyped-def]
    return dict(results.collect())


@pytest.fixture(scope="module")
def synthetic_events(spark, synthetic: Case):  # type: ignore[no-untyped-def]
    return load_events(spark, str(synthetic.events)).cache()


@pytest.fixture(scope="module")
def lubm_events(spark, lubm: Case):  # type: ignore[no-untyped-def]
    return load_events(spark, str(lubm.events)).cache()


def test_the_matcher_engine_reproduces_the_synthetic_oracle(synthetic, synthetic_events) -> None:
    got = answers(match_events(synthetic_events, synthetic.subscriptions, synthetic.expansion))
    assert got == synthetic.expected


def test_the_matcher_engine_reproduces_lubm_with_transitivity_inverses_and_chairs(
    lubm, lubm_events
) -> None:
    got = answers(match_events(lubm_events, lubm.subscriptions, lubm.expansion))
    assert got == lubm.expected
    assert any("q11" in sid for counts in got.values() for sid in counts)  # transitive
    assert any("q12" in sid for counts in got.values() for sid in counts)  # Chair definition
    assert any("q13" in sid for counts in got.values() for sid in counts)  # inverseOf


@pytest.mark.parametrize("case", ["synthetic", "lubm"])
def test_lines_written_by_the_executors_give_the_oracle_answers(request, case: str) -> None:
    workload, events = request.getfixturevalue(case), request.getfixturevalue(f"{case}_events")
    lines = match_lines(events, workload.subscriptions, workload.expansion).collect()
    records = {event_id: json.loads(line) for event_id, line in lines}
    assert {e: r["solutions"] for e, r in records.items()} == workload.expected
    assert all(
        r["event"] == e and r["matches"] == sorted(r["solutions"]) for e, r in records.items()
    )


@pytest.mark.parametrize("partitions", [1, 3, 8])
def test_mined_placement_loses_no_match(spark, synthetic, synthetic_events, partitions) -> None:
    placement = mine_placement(
        spark,
        subscription_items(synthetic.subscriptions),
        partitions=partitions,
        min_support=0.03,
        virtual=1,
    )
    results = match_events(
        synthetic_events, synthetic.subscriptions, synthetic.expansion, placement=placement
    )
    assert answers(results) == synthetic.expected


def test_mined_placement_loses_no_lubm_match_even_with_overloaded_partitions(
    spark, lubm, lubm_events
) -> None:
    # A low overload threshold forces itemsets to be spread over permutation keys.
    placement = mine_placement(
        spark, subscription_items(lubm.subscriptions), partitions=6, overload=1.0, virtual=2
    )
    assert placement.spread
    results = match_events(lubm_events, lubm.subscriptions, lubm.expansion, placement=placement)
    assert answers(results) == lubm.expected


@pytest.mark.parametrize("table", ["events.parquet", "events.jsonl"])
def test_a_triples_table_replays_like_the_rdf_files(
    spark, synthetic, synthetic_events, tmp_path: Path, table: str
) -> None:
    path = str(tmp_path / table)
    written = write_table(spark, synthetic_events, path)
    assert written == sum(len(e.triples) for e in synthetic_events.collect())
    replay = load_events(spark, path)
    raise_load_errors(replay)
    # hashed by event over two partitions per core, not coalesced into one
    assert replay.getNumPartitions() == 2 * spark.sparkContext.defaultParallelism
    assert min(len(p) for p in replay.glom().collect()) > 0
    got = answers(match_events(replay, synthetic.subscriptions, synthetic.expansion))
    assert got == synthetic.expected


def test_an_rdf_folder_is_spread_over_two_partitions_per_core_by_size(spark, lubm) -> None:
    events = load_events(spark, str(lubm.events))
    sizes = [sum(len(e.triples) for e in part) for part in events.glom().collect()]
    assert len(sizes) == 2 * spark.sparkContext.defaultParallelism
    assert sorted(e.id for e in events.collect()) == sorted(lubm.expected)
    assert max(sizes) < 2 * min(sizes)  # 15 documents of similar size, balanced


def test_linked_files_keep_their_own_names_as_event_ids(spark, lubm, tmp_path: Path) -> None:
    document = lubm.events / "u0-d00.rdf"
    for name in ("copy-a.rdf", "copy-b.rdf"):
        (tmp_path / name).symlink_to(document.resolve())
    events = load_events(spark, str(tmp_path))
    assert sorted(e.id for e in events.collect()) == ["copy-a", "copy-b"]


def test_json_events_are_spread_over_two_partitions_per_core(spark, tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(f'{{"id": "e{i}", "values": {{"x": {i}}}}}\n' for i in range(40)))
    events = load_events(spark, str(path))
    assert events.getNumPartitions() >= 2 * spark.sparkContext.defaultParallelism
    assert sorted(e.id for e in events.collect()) == sorted(f"e{i}" for i in range(40))


def test_files_are_split_into_runs_in_order_with_the_smallest_largest_run() -> None:
    files = [(f"f{i}", size) for i, size in enumerate([9, 1, 1, 1, 4, 4, 8])]
    bins = balance(files, 3)
    assert [n for names in bins for n in names] == [name for name, _ in files]  # in order
    # brute force: the best split of the sizes into at most 3 runs
    sizes = [size + 1 for _, size in files]  # balance counts a byte per file
    best = min(
        max(sum(sizes[:i]), sum(sizes[i:j]), sum(sizes[j:]))
        for i in range(len(sizes) + 1)
        for j in range(i, len(sizes) + 1)
    )
    assert max(sum(dict(files)[n] + 1 for n in names) for names in bins) == best
    assert len(bins) <= 3
    assert balance(files[:2], 8) == [["f0"], ["f1"]]


def test_a_missing_input_is_refused_before_any_job(spark, tmp_path: Path) -> None:
    with pytest.raises(SempsError, match=f"events not found: {tmp_path / 'nowhere'}"):
        load_events(spark, str(tmp_path / "nowhere"), kind="rdf")
    with pytest.raises(SempsError, match="events not found: file:///nowhere/at/all"):
        load_events(spark, "file:///nowhere/at/all", kind="parquet")


def test_an_unreadable_document_stops_the_job_with_its_name(spark, tmp_path: Path) -> None:
    (tmp_path / "good.nt").write_text("<http://ex/a> <http://ex/p> <http://ex/b> .\n")
    (tmp_path / "bad.rdf").write_text("<rdf:RDF xmlns:rdf='oops'><unclosed></rdf:RDF>")
    with pytest.raises(IngestError, match=r"^bad\.rdf:"):
        raise_load_errors(load_events(spark, str(tmp_path)))


def test_an_unreadable_document_met_while_matching_is_named_after_the_job(
    spark, tmp_path: Path
) -> None:
    (tmp_path / "good.nt").write_text("<http://ex/a> <http://ex/p> <http://ex/b> .\n")
    (tmp_path / "bad.rdf").write_text("<rdf:RDF xmlns:rdf='oops'><unclosed></rdf:RDF>")
    (tmp_path / "worse.nt").write_text("<http://ex/a> <http://ex/p> .\n")
    events, errors = without_load_errors(spark, load_events(spark, str(tmp_path)))
    sub = Subscription("s", "semantic", "SELECT * { ?x <http://ex/p> ?y }")
    assert dict(match_events(events, [sub], Expansion()).collect()) == {"good": {"s": 1}}
    assert sorted(e.source for e in errors.value) == ["bad.rdf", "worse.nt"]
    with pytest.raises(IngestError, match=r"^bad\.rdf:"):
        raise_first(errors.value)


def test_a_table_without_the_triple_columns_is_refused(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "wrong.jsonl")
    spark.createDataFrame([("e1", "<http://ex/a>")], "event string, s string").write.json(path)
    with pytest.raises(SempsError, match="missing: subject, predicate, object"):
        load_events(spark, path)


def test_composite_subscriptions_are_refused_for_bulk_matching(spark, synthetic_events) -> None:
    composite = Subscription("c1", "composite", "create event ab = a then b;")
    with pytest.raises(SparkError, match="keep detection state"):
        match_events(synthetic_events, [composite], Expansion())
