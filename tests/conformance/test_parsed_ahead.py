"""Registration with the texts parsed ahead by a helper process (semps.matcher.semantic.bulk)
registers what registering one by one does: the shared workloads' answers equal their
oracle's (rdflib SPARQL over the owlrl closure), also when the helper dies at once; a bad
subscription is refused with the message one-by-one registration gives it; an enclosing
parse memo gets every text's parse."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from semps_test_support import WORKLOADS

from semps import pool
from semps.cli.match import build_matcher, event_files, load_subscriptions
from semps.errors import SubscriptionError
from semps.ingest.rdf import read_events
from semps.ingest.sparql import Query, parse_memo, parse_query
from semps.matcher.base import MatchContext
from semps.matcher.results import result_line
from semps.matcher.semantic import bulk
from semps.ontology import load_expansion


def _helper_gone(*_: object) -> None:
    os._exit(0)  # the helper exits before sending anything


@pytest.fixture(params=["ahead", "helper gone"])
def parsed_ahead(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every registration of the test parses ahead, in chunks of 7 subscriptions."""
    monkeypatch.setattr(bulk, "MIN_SUBSCRIPTIONS", 0)
    monkeypatch.setattr(bulk, "CHUNK", 7)
    monkeypatch.setattr(bulk, "_cores", lambda: 2)
    monkeypatch.setattr(pool, "can_fork", lambda: True)  # even with a test's thread left
    if request.param == "helper gone":
        monkeypatch.setattr(bulk, "_parser", _helper_gone)


@pytest.mark.usefixtures("parsed_ahead")
@pytest.mark.parametrize("case", ["synthetic-s7", "lubm-u0"])
def test_answers_equal_the_oracle(case: str) -> None:
    folder = WORKLOADS / case
    expansion = load_expansion(folder / "ontology.owl")
    matcher = build_matcher(load_subscriptions(folder / "subscriptions"), workers=1)
    lines = (folder / "expected.jsonl").read_text().splitlines()
    want = {row["event"]: row for row in map(json.loads, lines)}
    got = {}
    for event in read_events(event_files(folder / "events"), None):
        matched = {m.subscription: m.count for m in matcher.match(MatchContext(event, expansion))}
        got[event.id] = json.loads(result_line(event.id, matched))
    assert got == want


def _refusal(folder: Path) -> str:
    with pytest.raises(SubscriptionError) as raised:
        build_matcher(load_subscriptions(folder), workers=1)
    return str(raised.value)


@pytest.mark.usefixtures("parsed_ahead")
def test_a_bad_subscription_is_refused_as_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "subscriptions"
    shutil.copytree(WORKLOADS / "synthetic-s7" / "subscriptions", folder)
    names = sorted(p.stem for p in folder.glob("*.rq"))
    bad = names[len(names) // 2]  # past the first chunks
    (folder / f"{bad}.rq").write_text("SELECT ?x WHERE { ?x <http://ex/p> ")
    ahead = _refusal(folder)
    monkeypatch.setattr(bulk, "MIN_SUBSCRIPTIONS", 10**9)
    assert ahead.startswith(f"{folder / bad}.rq:")  # the file as given, as event errors say
    assert ahead == _refusal(folder)


@pytest.mark.usefixtures("parsed_ahead")
def test_an_enclosing_parse_memo_gets_every_text(tmp_path: Path) -> None:
    """``semps index`` and ``semps spark match`` keep every text's parse for a snapshot."""
    subscriptions = load_subscriptions(WORKLOADS / "lubm-u0" / "subscriptions")
    kept: dict[str, Query] = {}
    with parse_memo(kept):
        build_matcher(subscriptions, workers=1)
    assert set(kept) == {s.text for s in subscriptions}
    assert all(kept[s.text] == parse_query(s.text) for s in subscriptions)
