"""Bulk matching on a real local Spark session gives the answers of rdflib SPARQL over the
OWL 2 RL closure (the workloads' expected.jsonl), whatever the engine, placement or input."""

from __future__ import annotations

from pathlib import Path

import pytest
from semps_test_support import Case

from semps.errors import IngestError, SempsError, SparkError
from semps.matcher.base import Subscription
from semps.ontology import Expansion
from semps.spark.bulk import match_events, subscription_items
from semps.spark.placement import mine_placement
from semps.spark.sources import load_events, raise_load_errors, write_table

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


def test_the_graphframes_engine_reproduces_lubm(spark, lubm, workloads) -> None:
    # Three departments keep the motif joins small; all 98 subscriptions still run.
    some = [str(workloads / "lubm-u0" / "events" / f"u0-d0{i}.rdf") for i in range(3)]
    events = spark.sparkContext.union([load_events(spark, path) for path in some])
    got = answers(match_events(events, lubm.subscriptions, lubm.expansion, engine="graphframes"))
    assert got == {f"u0-d0{i}": lubm.expected[f"u0-d0{i}"] for i in range(3)}


def test_the_graphframes_engine_applies_filters_distinct_and_ask(
    synthetic, synthetic_events
) -> None:
    chosen = [s for s in synthetic.subscriptions if "FILTER" in s.text][:6]
    chosen.append(
        Subscription("ask-any-type", "semantic", "ASK { ?x a <http://example.org/onto#C1> }")
    )
    got = answers(match_events(synthetic_events, chosen, synthetic.expansion, engine="graphframes"))
    by_matcher = answers(match_events(synthetic_events, chosen, synthetic.expansion))
    ids = {s.id for s in chosen}
    want = {e: {s: n for s, n in c.items() if s in ids} for e, c in synthetic.expected.items()}
    for counts in want.values():
        assert set(counts) <= ids
    assert {e: {s: n for s, n in c.items() if s != "ask-any-type"} for e, c in got.items()} == want
    assert got == by_matcher
    assert any("ask-any-type" in counts for counts in got.values())


@pytest.mark.parametrize("table", ["events.parquet", "events.jsonl"])
def test_a_triples_table_replays_like_the_rdf_files(
    spark, synthetic, synthetic_events, tmp_path: Path, table: str
) -> None:
    path = str(tmp_path / table)
    written = write_table(spark, synthetic_events, path)
    assert written == sum(len(e.triples) for e in synthetic_events.collect())
    replay = load_events(spark, path)
    raise_load_errors(replay)
    got = answers(match_events(replay, synthetic.subscriptions, synthetic.expansion))
    assert got == synthetic.expected


def test_an_unreadable_document_stops_the_job_with_its_name(spark, tmp_path: Path) -> None:
    (tmp_path / "good.nt").write_text("<http://ex/a> <http://ex/p> <http://ex/b> .\n")
    (tmp_path / "bad.rdf").write_text("<rdf:RDF xmlns:rdf='oops'><unclosed></rdf:RDF>")
    with pytest.raises(IngestError, match=r"^bad\.rdf:"):
        raise_load_errors(load_events(spark, str(tmp_path)))


def test_a_table_without_the_triple_columns_is_refused(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "wrong.jsonl")
    spark.createDataFrame([("e1", "<http://ex/a>")], "event string, s string").write.json(path)
    with pytest.raises(SempsError, match="missing: subject, predicate, object"):
        load_events(spark, path)


def test_composite_subscriptions_are_refused_for_bulk_matching(spark, synthetic_events) -> None:
    composite = Subscription("c1", "composite", "create event ab = a then b;")
    with pytest.raises(SparkError, match="keep detection state"):
        match_events(synthetic_events, [composite], Expansion())
