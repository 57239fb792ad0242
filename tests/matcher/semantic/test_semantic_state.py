"""The semantic matcher's index saved whole and restored (semps.matcher.semantic.state).

A matcher restored from a saved state answers every event as a matcher that registered the
same subscriptions one by one from their texts (the rebuild path: the oracle here), also
after both go on adding and removing subscriptions; subscriptions of every form the index
holds are drawn (type patterns, chains, FILTERs that form families, strings, regexes, the
algebra: OPTIONAL, UNION, paths), with texts repeated. A state file that is missing,
truncated, altered, written under another key, by other code or under other parse limits
restores nothing and says why; one naming a global it may not hold is refused.
"""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import pytest
from matcher_samples import semantic_event, semantic_text

from semps.errors import MatcherError
from semps.event import Event
from semps.limits import DEFAULT_LIMITS, Limits
from semps.matcher.base import MatchContext
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic import state as semantic_state
from semps.matcher.state_file import code_fingerprint, write_state
from semps.matcher.values import Match, Subscription

KEY = bytes(range(32))


def random_subscriptions(rng: random.Random, n: int, first: int = 0) -> list[Subscription]:
    texts = [semantic_text(rng) for _ in range(n)]
    return [Subscription(f"s{first + i}", "semantic", t) for i, t in enumerate(texts)]


def built(subs: list[Subscription], limits: Limits = DEFAULT_LIMITS) -> SemanticMatcher:
    """The rebuild path: every subscription registered from its text."""
    matcher = SemanticMatcher()
    matcher.limits = limits
    for sub in subs:
        matcher.add(sub)
    return matcher


def answers(matcher: SemanticMatcher, events: list[Event]) -> list[list[Match]]:
    return [matcher.match(MatchContext(e)) for e in events]


def restored(path: Path, limits: Limits = DEFAULT_LIMITS) -> SemanticMatcher:
    matcher = SemanticMatcher()
    matcher.limits = limits
    assert matcher.restore_state(path, KEY) is not None
    return matcher


@pytest.mark.parametrize("seed", range(6))
def test_a_restored_index_answers_as_one_built_from_the_texts(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    subs = random_subscriptions(rng, 120)
    subs += [Subscription(f"dup{i}", "semantic", s.text) for i, s in enumerate(subs[:15])]
    events = [semantic_event(rng, i) for i in range(60)]
    saved = built(subs)
    gone = rng.sample([s.id for s in subs], 20)
    for sub_id in gone:  # removed before saving: free slots and containers in the state
        saved.remove(sub_id)
    path = tmp_path / "semantic.state"
    assert saved.save_state(path, KEY)
    live = [s for s in subs if s.id not in gone]
    again = restored(path)
    oracle = built(live)
    assert len(again) == len(oracle) == len(live)
    assert answers(again, events) == answers(oracle, events)
    assert any(answers(oracle, events)), "the events match something"


@pytest.mark.parametrize("seed", range(4))
def test_a_restored_index_keeps_answering_as_a_built_one_as_subscriptions_come_and_go(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(100 + seed)
    subs = random_subscriptions(rng, 80)
    path = tmp_path / "semantic.state"
    assert built(subs).save_state(path, KEY)
    again = restored(path)
    oracle = built(subs)
    live = {s.id: s for s in subs}
    for step in range(6):
        for sub_id in rng.sample(sorted(live), 10):
            again.remove(sub_id)
            oracle.remove(sub_id)
            del live[sub_id]
        for sub in random_subscriptions(rng, 15, first=1000 * (step + 1)):
            again.add(sub)
            oracle.add(sub)
            live[sub.id] = sub
        replaced = Subscription(rng.choice(sorted(live)), "semantic", semantic_text(rng))
        again.add(replaced)  # the same id with another text: a replacement
        oracle.add(replaced)
        live[replaced.id] = replaced
        events = [semantic_event(rng, i) for i in range(15)]
        assert answers(again, events) == answers(oracle, events)
    # saved again from the restored one, and restored: still the same answers
    assert again.save_state(path, KEY)
    events = [semantic_event(rng, i) for i in range(40)]
    assert answers(restored(path), events) == answers(built(list(live.values())), events)


def test_restoring_gives_the_texts_it_holds_by_id(tmp_path: Path) -> None:
    subs = random_subscriptions(random.Random(7), 10)
    path = tmp_path / "semantic.state"
    built(subs).save_state(path, KEY)
    held = SemanticMatcher().restore_state(path, KEY)
    assert held == {s.id: s.text for s in subs}


def test_the_state_file_is_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "semantic.state"
    built(random_subscriptions(random.Random(1), 5)).save_state(path, KEY)
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["semantic.state"]  # no temporary left


def test_no_file_restores_nothing(tmp_path: Path) -> None:
    matcher = SemanticMatcher()
    assert matcher.restore_state(tmp_path / "semantic.state", KEY) is None
    assert len(matcher) == 0


def test_a_matcher_that_holds_subscriptions_restores_nothing(tmp_path: Path) -> None:
    path = tmp_path / "semantic.state"
    built(random_subscriptions(random.Random(1), 5)).save_state(path, KEY)
    matcher = built(random_subscriptions(random.Random(2), 3))
    assert matcher.restore_state(path, KEY) is None
    assert len(matcher) == 3


def refusal(path: Path, key: bytes = KEY, limits: Limits = DEFAULT_LIMITS) -> str:
    """The message restoring ``path`` fails with; the matcher is left empty."""
    matcher = SemanticMatcher()
    matcher.limits = limits
    with pytest.raises(MatcherError) as caught:
        matcher.restore_state(path, key)
    assert len(matcher) == 0
    return str(caught.value)


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    path = tmp_path / "semantic.state"
    built(random_subscriptions(random.Random(3), 40)).save_state(path, KEY)
    return path


def test_a_truncated_state_is_refused(saved: Path) -> None:
    data = saved.read_bytes()
    for size in (0, 10, len(data) // 2, len(data) - 1):
        saved.write_bytes(data[:size])
        assert "not a usable matcher state" in refusal(saved)


def test_an_altered_state_is_refused_before_it_is_unpickled(saved: Path) -> None:
    data = bytearray(saved.read_bytes())
    data[len(data) // 2] ^= 1
    saved.write_bytes(bytes(data))
    assert "its tag does not match (damaged, altered, or another key's)" in refusal(saved)


def test_a_state_written_under_another_key_is_refused(saved: Path) -> None:
    assert "its tag does not match" in refusal(saved, key=bytes(32))


def test_a_state_built_under_other_parse_limits_is_stale(saved: Path) -> None:
    assert "stale: built under other limits" in refusal(saved, limits=Limits(max_patterns=3))


def test_other_limits_than_parsing_reads_do_not_make_a_state_stale(saved: Path) -> None:
    matcher = SemanticMatcher()
    matcher.limits = Limits(match_timeout=60.0, max_subscriptions=5)
    assert matcher.restore_state(saved, KEY) is not None


def test_a_state_written_by_other_code_is_stale(
    saved: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code_fingerprint.cache_clear()
    monkeypatch.setattr("semps.matcher.state_file.code_fingerprint", lambda: "0" * 64)
    try:
        assert "stale: written by other code" in refusal(saved)
    finally:
        code_fingerprint.cache_clear()


def test_a_file_of_another_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "semantic.state"
    path.write_bytes(b"semps-semantic-index\n{}\n" + bytes(100))
    assert "it does not start with 'semps-matcher-state'" in refusal(path)


def test_a_state_naming_a_global_it_may_not_hold_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "semantic.state"
    meta = semantic_state.parse_limits(DEFAULT_LIMITS)
    write_state(path, "semantic", (pickle.loads, {}), KEY, meta, {})  # tagged with the key
    assert "it names _pickle.loads, which a state may not hold" in refusal(path)
