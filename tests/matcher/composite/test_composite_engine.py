"""Composite event detection: worked examples per operator, language errors, and the shared
tree against a simple reference evaluator on random definitions and streams."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semps_test_support import raised

from semps.errors import CompositeDefinitionError
from semps.event import Event
from semps.matcher.composite import CompositeMatcher, EventTree, parse_definitions
from semps.matcher.composite import tree as tree_module
from semps.matcher.values import Match, Subscription


def detect(defs: str, stream: list[str | tuple[str, float]]) -> list[list[str]]:
    tree = EventTree()
    tree.define(parse_definitions(defs))
    out = []
    for at, item in enumerate(stream):
        name, now = item if isinstance(item, tuple) else (item, float(at))
        out.append(sorted(n for n, _ in tree.occur(name, now, [{"at": at}])))
    return out


@pytest.mark.parametrize(
    ("defs", "stream", "expected"),
    [
        ("create event e = a and b;", "a a b b a", [[], [], ["e"], [], ["e"]]),
        ("create event e = a or b;", "a b c", [["e"], ["e"], []]),
        ("create event e = a then b;", "b a a b b", [[], [], [], ["e"], []]),
        ("create event e = all b in a, c;", "c a c a b b c", [[], [], [], [], [], [], ["e"]]),
        (
            "create event e = 2 times b in a, c;",
            "a b c a b b c a b b b c",
            [[], [], [], [], [], [], ["e"], [], [], [], [], []],
        ),
        ("create event e = no b in a, c;", "a c a b c c", [[], ["e"], [], [], [], []]),
        ("create event e = a then b; create event f = e or c;", "a b c", [[], ["e", "f"], ["f"]]),
    ],
)
def test_each_operator(defs: str, stream: str, expected: list[list[str]]) -> None:
    assert detect(defs, stream.split()) == expected


def test_windows_expire_pending_statuses() -> None:
    defs = "create event e = a then b within 10s;"
    assert detect(defs, [("a", 0), ("b", 11)]) == [[], []]
    assert detect(defs, [("a", 0), ("b", 10)]) == [[], ["e"]]
    assert detect("create event e = all b in a, c within 5s;", [("a", 0), ("b", 1), ("c", 7)]) == [
        [],
        [],
        [],
    ]


def test_a_detection_reaches_its_parents_before_the_next_parent_of_its_cause() -> None:
    tree = EventTree()
    tree.define(
        parse_definitions(
            "create event p = a or z; create event q = p or y; create event r = a or w;"
        )
    )
    assert [n for n, _ in tree.occur("a", 0, [])] == ["p", "q", "r"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("create event x = a and a;", "1:1: definition of 'x' names the same event twice"),
        ("create event x = x or b;", "1:1: event 'x' would form a cycle (it uses itself)"),
        ("create event x = a or b;\ncreate event x = c or d;", "2:1: event 'x' is already defined"),
        (
            "create event x = a or b;\ncreate event a = c or d;",
            "2:1: event 'a' is already used as a primitive event; define it before using it",
        ),
        (
            "create event x = a xor b;",
            "1:20: unknown operator 'xor' (use and, or, then, all, times, no)",
        ),
        ("create event x = a or b", "1:24: expected ';' but found end of input"),
        ("create event x = 2.5 times b in a, c;", "1:18: expected a whole number but found '2.5'"),
    ],
)
def test_definitions_are_refused_with_where(text: str, message: str) -> None:
    assert str(raised(CompositeDefinitionError, parse_definitions, text)) == message


def test_dropping_frees_unused_shared_nodes() -> None:
    tree = EventTree()
    tree.define(parse_definitions("create event e = a and b; create event f = a or c;"))
    tree.drop("e")
    assert sorted(tree.nodes) == ["a", "c", "f"]
    with pytest.raises(CompositeDefinitionError, match="no composite event 'e'"):
        tree.drop("e")


def test_state_survives_a_restart_between_a_and_b() -> None:
    defs = "create event e = a then b;"
    first = EventTree()
    first.define(parse_definitions(defs))
    first.occur("a", 0, [{"at": 0}])
    saved = json.loads(json.dumps(first.state()))
    second = EventTree()
    second.define(parse_definitions(defs))
    second.restore(saved)
    assert [n for n, _ in second.occur("b", 1, [{"at": 1}])] == ["e"]


def test_constituents_of_a_ternary_survive_a_restart_mid_interval() -> None:
    defs = "create event e = all b in a, c; create event f = e or z;"
    first = EventTree()
    first.define(parse_definitions(defs))
    for at, name in enumerate("a b b".split()):
        first.occur(name, at, [{"at": at}])
    saved = json.loads(json.dumps(first.state()))
    assert saved["e"]["count"] == 2 and saved["e"]["monitored"] == [{"at": 1}, {"at": 2}]
    second = EventTree()
    second.define(parse_definitions(defs))
    second.restore(saved)
    second.occur("b", 3, [{"at": 3}])
    found = second.occur("c", 4, [{"at": 4}])
    expected = [{"at": i} for i in range(5)]
    assert found == [("e", expected), ("f", expected)]


def test_constituents_held_by_a_status_outlive_many_other_detections() -> None:
    tree = EventTree()
    tree.define(parse_definitions("create event e = a then b; create event o = x or y;"))
    tree.occur("a", 0, [{"at": "first"}])
    for at in range(5000):  # enough detections to make the tree forget unreferenced ones
        assert tree.occur("x", at, [{"at": at}]) == [("o", [{"at": at}])]
    assert tree.occur("b", 5000, [{"at": "last"}]) == [("e", [{"at": "first"}, {"at": "last"}])]


def test_a_dropped_then_redefined_composite_starts_with_no_state() -> None:
    tree = EventTree()
    tree.define(parse_definitions("create event e = a then b;"))
    tree.occur("a", 0, [])
    tree.drop("e")
    tree.define(parse_definitions("create event e = c then b;"))
    assert tree.occur("b", 1, []) == []
    assert tree.occur("a", 2, []) == []
    assert [n for n, _ in tree.occur("c", 3, [])] == []
    assert [n for n, _ in tree.occur("b", 4, [])] == ["e"]


def test_matcher_uses_the_owners_subscription_names() -> None:
    subs = {
        "s1": Subscription("s1", "semantic", "...", owner="ann", name="bid"),
        "s2": Subscription("s2", "semantic", "...", owner="ann", name="sold"),
        "s3": Subscription("s3", "semantic", "...", owner="bob", name="bid"),
    }
    m = CompositeMatcher(resolver=subs.get)
    m.add(Subscription("c1", "composite", "create event deal = bid then sold;", owner="ann"))
    e = Event("e1")
    assert m.observe(e, [Match("s3", "e1")]) == []  # bob's "bid" is not ann's
    assert m.observe(e, [Match("s1", "e1")]) == []
    (found,) = m.observe(Event("e2"), [Match("s2", "e2")])
    assert found.subscription == "c1" and found.detail["composite"] == "deal"
    assert [c["subscription"] for c in found.detail["constituents"]] == ["s1", "s2"]


# --- reference evaluator: per-definition state machines, no sharing --------------------


def reference(defs: list, stream: list[tuple[str, float]]) -> list[list[tuple[str, list]]]:
    """Per arrival, each detection with its constituents (the arrival indexes it is made
    of, in order), in delivery order."""
    state: dict[str, dict] = {
        d.name: {"s": [None, None], "open": None, "count": 0, "monitored": []} for d in defs
    }

    def expire(d, now: float) -> None:
        st_ = state[d.name]
        if d.within is None:
            return
        st_["s"] = [s if s is None or now - s[0] <= d.within else None for s in st_["s"]]
        if st_["open"] is not None and now - st_["open"][0] > d.within:
            st_["open"], st_["count"], st_["monitored"] = None, 0, []

    def occur(name: str, now: float, cons: list, out: list) -> None:
        for d in defs:  # creation order
            if name not in d.operands:
                continue
            role = d.operands.index(name)
            expire(d, now)
            st_ = state[d.name]
            found = None
            if d.op == "or":
                found = cons
            elif d.op == "and":
                if st_["s"][role] is None:
                    st_["s"][role] = (now, cons)
                if None not in st_["s"]:
                    found = st_["s"][0][1] + st_["s"][1][1]
                    st_["s"] = [None, None]
            elif d.op == "then":
                if role == 0 and st_["s"][0] is None:
                    st_["s"][0] = (now, cons)
                elif role == 1 and st_["s"][0] is not None:
                    found = st_["s"][0][1] + cons
                    st_["s"][0] = None
            elif role == 0:
                if st_["open"] is None:
                    st_["open"], st_["count"], st_["monitored"] = (now, cons), 0, []
            elif st_["open"] is not None and role == 1:
                st_["count"] += 1
                st_["monitored"] = st_["monitored"] + cons
            elif st_["open"] is not None and role == 2:
                c = st_["count"]
                if {"all": c > 0, "times": c == d.n, "no": c == 0}[d.op]:
                    found = st_["open"][1] + st_["monitored"] + cons
                st_["open"], st_["count"], st_["monitored"] = None, 0, []
            if found is not None:
                out.append((d.name, found))
                occur(d.name, now, found, out)

    result = []
    for at, (name, now) in enumerate(stream):
        out: list[tuple[str, list]] = []
        occur(name, now, [at], out)
        result.append(out)
    return result


def reference_names(defs: list, stream: list[tuple[str, float]]) -> list[list[str]]:
    return [sorted(name for name, _ in found) for found in reference(defs, stream)]


PRIMS = ["a", "b", "c", "d"]


@st.composite
def definition_sets(draw: st.DrawFn) -> str:
    names: list[str] = []
    lines = []
    for i in range(draw(st.integers(1, 6))):
        pool = PRIMS + names
        op = draw(st.sampled_from(["and", "or", "then", "all", "times", "no"]))
        k = 2 if op in ("and", "or", "then") else 3
        operands = draw(st.lists(st.sampled_from(pool), min_size=k, max_size=k, unique=True))
        if op in ("and", "or", "then"):
            expr = f"{operands[0]} {op} {operands[1]}"
        else:
            a, b, c = operands
            head = f"{draw(st.integers(0, 3))} times" if op == "times" else op
            expr = f"{head} {b} in {a}, {c}"
        window = draw(st.sampled_from(["", " within 3s", " within 10s"]))
        lines.append(f"create event e{i} = {expr}{window};")
        names.append(f"e{i}")
    return "\n".join(lines)


def timed(steps: list[tuple[str, int]]) -> list[tuple[str, float]]:
    """(name, gap) steps as (name, time) arrivals."""
    now, stream = 0.0, []
    for name, gap in steps:
        now += gap
        stream.append((name, now))
    return stream


def roomy_tree(defs: str, room: int, constituents: bool) -> EventTree:
    """A tree of ``defs`` whose log and cells start with room for ``room``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tree_module, "ROOM", room)
        tree = EventTree(constituents=constituents)
    tree.define(parse_definitions(defs))
    return tree


ARRIVALS = st.lists(st.tuples(st.sampled_from([*PRIMS, "unknown"]), st.integers(0, 3)), max_size=40)
ROOMS = st.sampled_from([1, 2, tree_module.ROOM])


@settings(max_examples=300, deadline=None)
@given(
    definition_sets(),
    st.lists(st.tuples(st.sampled_from(PRIMS), st.integers(0, 3)), max_size=30),
)
def test_the_shared_tree_agrees_with_the_reference(defs: str, steps: list) -> None:
    stream = timed(steps)
    assert detect(defs, stream) == reference_names(parse_definitions(defs), stream)


@settings(max_examples=150, deadline=None)
@given(definition_sets(), ARRIVALS, st.integers(1, 7), ROOMS)
def test_batched_runs_agree_with_the_reference(
    defs: str, steps: list, batch: int, room: int
) -> None:
    """Arrivals handed over in batches (as the CLI does) detect what one by one would, also
    when the log starts with room for one detection (runs stop, grow it and resume)."""
    stream = timed(steps)
    tree = roomy_tree(defs, room, constituents=False)
    got: list[list[str]] = [[] for _ in stream]
    for start in range(0, len(stream), batch):
        chunk = stream[start : start + batch]
        found = tree.run([n for n, _ in chunk], [t for _, t in chunk])
        for at, name in zip(found.at.tolist(), found.names, strict=True):
            got[start + at].append(name)
    assert [sorted(g) for g in got] == reference_names(parse_definitions(defs), stream)


@settings(max_examples=200, deadline=None)
@given(definition_sets(), ARRIVALS, st.integers(1, 7), ROOMS)
def test_constituents_agree_with_the_reference(
    defs: str, steps: list, batch: int, room: int
) -> None:
    """Each detection's constituents, in delivery order, are the reference's: the arrivals
    it is made of, in order; also when the log, the parts and the monitored cells start with
    room for one (runs stop mid-cascade, grow them and resume)."""
    stream = timed(steps)
    tree = roomy_tree(defs, room, constituents=True)
    got: list[list[tuple[str, list]]] = []
    for start in range(0, len(stream), batch):
        chunk = [
            (n, t, [{"at": start + i}]) for i, (n, t) in enumerate(stream[start : start + batch])
        ]
        got += tree.occur_many(chunk)
    expected = [
        [(name, [{"at": at} for at in cons]) for name, cons in found]
        for found in reference(parse_definitions(defs), stream)
    ]
    assert got == expected


def test_the_state_holds_only_the_composites_waiting_on_something_and_restores_them() -> None:
    defs = "create event x = a or b; create event y = a then b; create event z = all b in a, c;"
    first = EventTree()
    first.define(parse_definitions(defs))
    assert first.state() == {}  # nothing is waiting yet: nothing to write after each event
    first.occur("a", 0, [{"at": 0}])
    saved = json.loads(json.dumps(first.state()))
    assert sorted(saved) == ["y", "z"]  # an `or` never waits
    second = EventTree()
    second.define(parse_definitions(defs))
    second.restore(saved)
    assert second.occur("b", 1, [{"at": 1}]) == [
        ("x", [{"at": 1}]),
        ("y", [{"at": 0}, {"at": 1}]),
    ]
    assert second.occur("c", 2, [{"at": 2}]) == [("z", [{"at": 0}, {"at": 1}, {"at": 2}])]


def test_warm_loads_every_kernel_the_tree_calls_in_a_fresh_process() -> None:
    script = (
        "from semps.matcher.composite import _kernel as k, tree\n"
        "kernels = (k.clear_monitored, k.run_arrivals, k.push_monitored)\n"
        "print([len(f.signatures) for f in kernels])\n"
        "tree.warm()\n"
        "print([len(f.signatures) for f in kernels])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[:2] == ["[0, 0, 0]", "[1, 1, 1]"]
