"""Snapshots of semantic subscriptions (``semps index``, ``semps match --index``).

A matcher loaded from a snapshot gives the shared workloads' expected answers (SPARQL over
the OWL 2 RL closure, an oracle independent of semps) and the randomised rdflib oracle's;
every query the parser accepts (the W3C SPARQL suites, the workloads) comes back from a
snapshot equal to its parse; a damaged, altered, foreign, stale or hostile file is refused
with one error naming it, and ``semps`` prints it as one ``semps: error:`` line (exit 2).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from semps_test_support import WORKLOADS, raised
from test_semantic_oracle import events, ontologies, oracle, subscriptions

from semps.errors import SempsError, SubscriptionError
from semps.event import Event
from semps.ingest.sparql import Query, parse_memo, parse_query
from semps.limits import DEFAULT_LIMITS
from semps.matcher.base import MatchContext
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic.matcher import load_matcher
from semps.matcher.semantic.snapshot import (
    FORMAT,
    MAX_NESTING,
    SPOT_CHECK,
    read_snapshot,
    save_snapshot,
    snapshot_bytes,
    snapshot_file_bytes,
    subscriptions_digest,
)
from semps.matcher.semantic.snapshot_memo import snapshot_memo
from semps.matcher.values import Subscription
from semps.ontology import compile_axioms

CASES = ["synthetic-s7", "lubm-u0", "brick-a"]
SUBS = [
    Subscription(
        "s1", "semantic", "SELECT * { ?x a <http://ex/C> ; <http://ex/p> ?v FILTER(?v > 2) }"
    ),
    Subscription("s2", "semantic", "ASK { ?x <http://ex/p>+ ?y OPTIONAL { ?y <http://ex/q> ?z } }"),
    Subscription(
        "s3", "semantic", "SELECT * { ?x a <http://ex/C> ; <http://ex/p> ?v FILTER(?v > 2) }"
    ),
]


STALE = "the subscriptions changed since it was built"


def _semps(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semps", *argv], capture_output=True, text=True, timeout=600
    )


def _save(path: Path, subs: list[Subscription]) -> Path:
    queries: dict[str, Query] = {s.text: parse_query(s.text) for s in subs}
    save_snapshot(path, subs, queries, DEFAULT_LIMITS)
    return path


@pytest.mark.parametrize("case", CASES)
def test_semps_match_from_a_snapshot_prints_the_expected_answers(tmp_path: Path, case: str) -> None:
    folder = WORKLOADS / case
    snap = tmp_path / "index.snap"
    built = _semps("index", "--subscriptions", str(folder / "subscriptions"), "--output", str(snap))
    assert built.returncode == 0, built.stderr
    assert built.stdout.startswith(f"{snap}: ")
    result = _semps(
        "match",
        "--index",
        str(snap),
        "--subscriptions",  # checked: the snapshot must have been built from these
        str(folder / "subscriptions"),
        "--ontology",
        str(folder / "ontology.owl"),
        "--events",
        str(folder / "events"),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (folder / "expected.jsonl").read_text()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ontologies(), events, st.lists(subscriptions(), min_size=1, max_size=6))
def test_a_loaded_snapshot_matches_as_sparql_over_the_owl_rl_closure(
    tmp_path_factory: pytest.TempPathFactory, axioms, event, queries
) -> None:
    subs = [Subscription(f"s{i}", "semantic", text) for i, text in enumerate(queries)]
    matcher = load_matcher(_save(tmp_path_factory.mktemp("snap") / "i.snap", subs))
    e = Event("e", tuple(dict.fromkeys(event)))
    context = MatchContext(e, compile_axioms(axioms))
    assert {m.subscription: m.count for m in matcher.match(context)} == oracle(
        axioms, event, queries
    )


def _accepted_queries() -> list[tuple[str, str]]:
    """Every query of the W3C SPARQL suites and the shared workloads the parser accepts."""
    out = []
    for path in sorted(WORKLOADS.rglob("*.rq")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            parse_query(text)
        except SempsError:
            continue
        out.append((str(path.relative_to(WORKLOADS)), text))
    return out


def test_every_accepted_query_comes_back_equal_to_its_parse(tmp_path: Path) -> None:
    accepted = _accepted_queries()
    assert len(accepted) > 300  # the W3C suites and the workloads are there
    subs = [Subscription(f"q{i}", "semantic", text) for i, (_, text) in enumerate(accepted)]
    snapshot = read_snapshot(_save(tmp_path / "all.snap", subs))
    assert snapshot.subscriptions == tuple(subs)
    for where, text in accepted:
        assert snapshot.queries[text] == parse_query(text), where


def test_identical_texts_are_stored_once_and_loaded_under_each_id(tmp_path: Path) -> None:
    snapshot = read_snapshot(_save(tmp_path / "i.snap", SUBS))
    assert [s.id for s in snapshot.subscriptions] == ["s1", "s2", "s3"]
    assert len(snapshot.queries) == 2
    assert len(load_matcher(tmp_path / "i.snap")) == 3


def test_loading_parses_only_the_spot_check(
    tmp_path: Path, count_parses: Callable[[], list[str]]
) -> None:
    subs = [
        Subscription(f"s{i}", "semantic", f"ASK {{ ?x <http://ex/p{i}> ?y }}") for i in range(200)
    ]
    path = _save(tmp_path / "i.snap", subs)
    parsed = count_parses()
    assert len(load_matcher(path)) == 200
    assert len(parsed) == 200 // SPOT_CHECK


def test_a_snapshot_whose_queries_are_not_their_texts_parses_is_refused(tmp_path: Path) -> None:
    path = _save(tmp_path / "i.snap", SUBS)
    _rewrite(path, lambda d: {**d, "queries": d["queries"][::-1]})  # s1's query is s2's
    error = raised(SubscriptionError, read_snapshot, path)
    assert str(error).endswith(
        "a stored query is not what this semps parses of its text (another version?)"
    )


def test_the_parse_memo_answers_a_text_parsed_before_and_keeps_what_it_parses() -> None:
    text = SUBS[0].text
    memo: dict[str, Query] = {}
    with parse_memo(memo):
        first = parse_query(text)
        assert parse_query(text) is first
        assert parse_query(text, base="http://ex/") is not first  # another base: parsed
    assert memo == {text: first}
    assert parse_query(text) is not first  # outside the block: parsed again


def test_a_stale_snapshot_is_refused(tmp_path: Path) -> None:
    path = _save(tmp_path / "i.snap", SUBS)
    current = [*SUBS[:2], replace(SUBS[2], text=SUBS[1].text)]
    error = raised(
        SubscriptionError, load_matcher, path, expect_sha256=subscriptions_digest(current)
    )
    assert str(error) == f"{path}: not a usable semantic index snapshot: stale: {STALE}"
    assert len(load_matcher(path, expect_sha256=subscriptions_digest(SUBS))) == 3


def test_a_snapshot_parsed_under_other_limits_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "i.snap"
    queries = {s.text: parse_query(s.text) for s in SUBS}
    save_snapshot(path, SUBS, queries, replace(DEFAULT_LIMITS, max_patterns=2))
    error = raised(SubscriptionError, load_matcher, path)
    assert str(error).endswith("parsed under other limits than this matcher's")


def _rewrite(path: Path, edit, deep: int = 0) -> None:  # type: ignore[no-untyped-def]
    """Replace the payload by ``edit(payload as JSON)`` with the header's size and digest
    recomputed: a forged file that passes the digest (``"DEEP"`` in it becomes a value
    nested ``deep`` arrays deep, which orjson would not write)."""
    magic, head, payload = path.read_bytes().split(b"\n", 2)
    nested = b"[0," * deep + b"[0]" + b"]" * deep
    data = orjson.dumps(edit(orjson.loads(payload))).replace(b'"DEEP"', nested)
    header = orjson.loads(head)
    header.update(payload_bytes=len(data), payload_sha256=hashlib.sha256(data).hexdigest())
    path.write_bytes(magic + b"\n" + orjson.dumps(header) + b"\n" + data)


HOSTILE = {
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[:-10]), "bytes after the header"),
    "a flipped byte": (
        lambda p: p.write_bytes(p.read_bytes()[:-5] + b"X" + p.read_bytes()[-4:]),
        "its digest does not match its content (altered or damaged)",
    ),
    "another format": (
        lambda p: p.write_bytes(b"PK\x03\x04" + p.read_bytes()),
        "does not start with",
    ),
    "empty": (lambda p: p.write_bytes(b""), "does not start with"),
    "no header line": (
        lambda p: p.write_bytes(FORMAT.encode() + b"\n" + b"{" * 70_000),
        "no header line (or one over 64 KiB)",
    ),
    "another version": (
        lambda p: p.write_bytes(p.read_bytes().replace(b'"version":1', b'"version":99', 1)),
        "version 99, this semps reads version 1",
    ),
    "ids and texts out of line": (
        lambda p: _rewrite(p, lambda d: {**d, "query_of": d["query_of"][:-1]}),
        "its ids, texts and queries do not line up",
    ),
    "an id twice": (
        lambda p: _rewrite(p, lambda d: {**d, "ids": ["s1", "s1", "s3"]}),
        "an id appears twice",
    ),
    "an unknown class": (
        lambda p: _rewrite(p, lambda d: {**d, "queries": [[5, 99], *d["queries"][1:]]}),
        "that no query holds",
    ),
    "nested too deep": (
        lambda p: _rewrite(
            p, lambda d: {**d, "queries": ["DEEP", d["queries"][1]]}, MAX_NESTING + 2
        ),
        "nested too deep",
    ),
    "a float where a term belongs": (
        lambda p: _rewrite(p, lambda d: {**d, "queries": [[0, 1.5], d["queries"][1]]}),
        "inconsistent content",
    ),
    "not a query": (
        lambda p: _rewrite(p, lambda d: {**d, "queries": [[0], d["queries"][1]]}),
        "an entry of its queries is not a query",
    ),
    "a header without the subscriptions' digest": (
        lambda p: p.write_bytes(p.read_bytes().replace(b'"subscriptions_sha256"', b'"x"', 1)),
        "inconsistent content ('subscriptions_sha256')",
    ),
    "limits that are not limits": (
        lambda p: p.write_bytes(
            p.read_bytes().replace(b'"max_patterns":64', b'"max_patterns":"x"', 1)
        ),
        "inconsistent content",
    ),
    "a bad term": (
        lambda p: _rewrite(p, lambda d: {**d, "terms": [[2, 1, 2, 3], *d["terms"][1:]]}),
        "is not a term",
    ),
}


@pytest.mark.parametrize("given", ["file", "bytes", "file bytes"])
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_damaged_or_hostile_snapshot_is_refused_naming_the_file(
    tmp_path: Path, case: str, given: str
) -> None:
    path = _save(tmp_path / "i.snap", SUBS)
    damage, why = HOSTILE[case]
    damage(path)
    if given == "file":
        error, name = raised(SubscriptionError, load_matcher, path), str(path)
    elif given == "file bytes":  # its frame checked as read, then decoded (spark --index)
        name = str(path)
        error = raised(
            SubscriptionError, lambda: load_matcher(snapshot_file_bytes(path), name=name)
        )
    else:  # as Spark ships it: errors name it as told
        error = raised(SubscriptionError, load_matcher, path.read_bytes(), name="shipped v1")
        name = "shipped v1"
    assert str(error).startswith(f"{name}: not a usable semantic index snapshot: "), str(error)
    assert why in str(error)


def test_snapshot_bytes_are_the_file_and_load_as_it_does(tmp_path: Path) -> None:
    queries = {s.text: parse_query(s.text) for s in SUBS}
    data = snapshot_bytes(SUBS, queries)
    assert data == _save(tmp_path / "i.snap", SUBS).read_bytes()
    snapshot = read_snapshot(data)
    assert snapshot.subscriptions == tuple(SUBS)
    assert snapshot.queries == queries
    assert snapshot.subscriptions_sha256 == subscriptions_digest(SUBS)
    stale = raised(SubscriptionError, load_matcher, data, expect_sha256="0" * 64)
    assert STALE in str(stale)
    from_texts = SemanticMatcher()
    for sub in SUBS:
        from_texts.add(sub)
    event = Event("e", (("http://ex/a", "http://ex/p", "http://ex/b"),))
    counts = load_matcher(data).count_batch([MatchContext(event)])
    assert counts == from_texts.count_batch([MatchContext(event)]) == [{"s2": 1}]


def test_semps_match_prints_one_error_line_for_a_bad_snapshot(tmp_path: Path) -> None:
    path = _save(tmp_path / "i.snap", SUBS)
    size = orjson.loads(path.read_bytes().split(b"\n", 2)[1])["payload_bytes"]
    path.write_bytes(path.read_bytes()[:-1])
    events = WORKLOADS / "synthetic-s7" / "events"
    result = _semps("match", "--index", str(path), "--events", str(events))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"semps: error: {path}: not a usable semantic index snapshot: "
        f"{size - 1} bytes after the header, not {size}\n"
    )


def test_semps_match_refuses_a_snapshot_of_other_subscriptions(tmp_path: Path) -> None:
    folder = WORKLOADS / "synthetic-s7"
    snap = tmp_path / "i.snap"
    _save(snap, SUBS)
    result = _semps(
        "match",
        "--index",
        str(snap),
        "--subscriptions",
        str(folder / "subscriptions"),
        "--events",
        str(folder / "events"),
    )
    assert result.returncode == 2
    assert result.stderr == (
        f"semps: error: {snap}: not a usable semantic index snapshot: stale: {STALE}\n"
    )


def test_semps_match_needs_subscriptions_or_an_index() -> None:
    result = _semps("match", "--events", str(WORKLOADS / "synthetic-s7" / "events"))
    assert (result.returncode, result.stderr) == (
        2,
        "semps: error: give the subscriptions: --subscriptions FOLDER or --index SNAPSHOT\n",
    )


def test_the_snapshot_memo_reads_a_current_snapshot_and_leaves_it_as_it_is(
    tmp_path: Path, count_parses: Callable[[], list[str]]
) -> None:
    path = _save(tmp_path / "i.snap", SUBS)
    written = path.read_bytes()
    parsed = count_parses()
    matcher = SemanticMatcher()
    with snapshot_memo(path, SUBS):
        for sub in SUBS:
            matcher.add(sub)
    assert len(matcher) == 3
    assert len(parsed) == 1  # the spot check
    assert path.read_bytes() == written


def test_the_snapshot_memo_rewrites_a_stale_missing_or_damaged_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "i.snap"
    other = Subscription("c1", "content", '{"constraints": []}')  # not semantic: not saved
    for before in (None, b"damaged", SUBS[:1]):
        if before is None:
            path.unlink(missing_ok=True)
        elif isinstance(before, bytes):
            path.write_bytes(before)
        else:
            _save(path, before)
        with snapshot_memo(path, [*SUBS, other]):
            for sub in SUBS:
                parse_query(sub.text)
        assert read_snapshot(path).subscriptions == tuple(SUBS)


def test_a_reading_only_snapshot_memo_leaves_a_stale_snapshot_to_the_writer(
    tmp_path: Path,
) -> None:
    path = _save(tmp_path / "i.snap", SUBS[:1])
    written = path.read_bytes()
    with snapshot_memo(path, SUBS, write=False):
        for sub in SUBS:
            parse_query(sub.text)
    assert path.read_bytes() == written
