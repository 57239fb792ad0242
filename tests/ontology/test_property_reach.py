"""The property hierarchy's closure kept across edits (semps.ontology.compile.Kept): after
every edit, the compiled property table (each property -> every (property, inverted) it
implies) is the one a compilation from scratch of the same axioms gives, and the one a
brute-force search over the axioms gives. Random property hierarchies: subPropertyOf
(self-loops and cycles included), equivalentProperty, inverseOf and symmetric properties,
under random sequences of axioms added and removed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semps._types import Triple
from semps.errors import OntologyLimitExceeded
from semps.ontology.compile import (
    EQ_PROPERTY,
    INVERSE,
    SUB_PROPERTY,
    SYMMETRIC,
    Kept,
    compile_axioms,
)
from semps.ontology.reach import Reach
from semps.ontology.store import OntologyStore
from semps.terms import RDF_TYPE

PROPS = [f"http://ex/p{i}" for i in range(5)]
State = tuple[str, bool]


def brute(triples: set[Triple]) -> dict[str, tuple[State, ...]]:
    """Each property an axiom names as its subject (or either side of an equivalence or an
    inverse, or typed symmetric) -> itself, then every (property, inverted) it implies,
    sorted: a search over the axioms from each one, from scratch. A triple ``x p y``
    implies ``x q y`` for ``p`` below or equivalent to ``q``, ``y q x`` for ``q`` an inverse
    of ``p``, and ``y p x`` for ``p`` symmetric; ``inverted`` says the direction flips."""

    def steps(state: State) -> set[State]:
        prop, inv = state
        out: set[State] = set()
        for s, p, o in triples:
            if p == SUB_PROPERTY and s == prop:
                out.add((str(o), inv))
            if p == EQ_PROPERTY and prop in (s, o):
                out.add((str(o) if s == prop else s, inv))
            if p == INVERSE and prop in (s, o):
                out.add((str(o) if s == prop else s, not inv))
            if p == RDF_TYPE and o == SYMMETRIC and s == prop:
                out.add((prop, not inv))
        return out

    named = {s for s, p, _ in triples if p in (SUB_PROPERTY, RDF_TYPE)}
    named |= {str(t) for s, p, o in triples if p in (EQ_PROPERTY, INVERSE) for t in (s, o)}
    table: dict[str, tuple[State, ...]] = {}
    for prop in named:
        seen, todo = {(prop, False)}, [(prop, False)]
        while todo:
            for nxt in steps(todo.pop()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        table[prop] = ((prop, False), *sorted(seen - {(prop, False)}))
    return table


prop = st.sampled_from(PROPS)
axiom = st.one_of(
    st.tuples(prop, st.sampled_from([SUB_PROPERTY, EQ_PROPERTY, INVERSE]), prop),
    st.tuples(prop, st.just(RDF_TYPE), st.just(SYMMETRIC)),
)
steps = st.lists(st.tuples(st.booleans(), axiom, st.integers(0, 99)), max_size=30)


@settings(max_examples=300, deadline=None)
@given(start=st.sets(axiom, max_size=10), ops=steps)
def test_the_kept_property_table_is_a_fresh_compilation_s_after_every_edit(
    start: set[Triple], ops: list[tuple[bool, Triple, int]]
) -> None:
    triples = set(start)
    kept = Kept()
    compiled = compile_axioms(sorted(triples), kept=kept)
    held = kept.properties.reach
    for add, new, pick in ops:
        if add:
            triples.add(new)
        elif triples:  # remove an axiom present
            triples.discard(sorted(triples)[pick % len(triples)])
        compiled = compile_axioms(sorted(triples), kept=kept)
        assert kept.properties.reach is held  # brought to the new axioms, not made again
        assert dict(compiled.properties) == dict(compile_axioms(sorted(triples)).properties)
        assert dict(compiled.properties) == brute(triples)


edit = st.tuples(
    st.sampled_from(["add", "remove", "symmetric", "not symmetric"]),
    st.sampled_from(["subPropertyOf", "equivalentProperty", "inverseOf"]),
    prop,
    prop,
)


@settings(max_examples=40, deadline=None)
@given(edits=st.lists(edit, max_size=20))
def test_a_store_s_property_table_after_each_edit_is_a_fresh_compilation_s(
    edits: list[tuple[str, str, str, str]],
) -> None:
    """An ontology store's edits (axioms added and removed, symmetry set and unset) bring
    its kept property closure to the new axioms; the oracle is a compilation from scratch."""
    store = OntologyStore()
    present: list[tuple[str, str, str]] = []
    for kind, axiom_kind, sub, sup in edits:
        if kind == "add":
            store.add_axiom(axiom_kind, sub, sup)
            if (axiom_kind, sub, sup) not in present:
                present.append((axiom_kind, sub, sup))
        elif kind == "remove" and present:
            store.remove_axiom(*present.pop(PROPS.index(sub) % len(present)))
        elif kind != "remove":
            store.set_characteristic(sub, "symmetric", kind == "symmetric")
        fresh = compile_axioms(list(store.triples()))
        assert dict(store.expansion().properties) == dict(fresh.properties)


def test_an_edit_stopped_half_way_leaves_nothing_kept_and_the_next_one_is_right(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A limit reached inside the kept closure's update (here after one of the edges it
    adds) drops the kept state; the next compilation starts again from scratch."""
    p = PROPS
    before = {(p[0], SUB_PROPERTY, p[1]), (p[1], INVERSE, p[2])}
    after = before | {(p[2], SUB_PROPERTY, p[3]), (p[3], RDF_TYPE, SYMMETRIC)}
    kept = Kept()
    compile_axioms(sorted(before), kept=kept)
    assert kept.properties.reach is not None
    real = Reach.add
    added: list[object] = []

    def add(self: Reach[State], a: State, b: State) -> None:
        if added:
            raise OntologyLimitExceeded("compiling the ontology took too long")
        added.append((a, b))
        real(self, a, b)

    with monkeypatch.context() as patched:
        patched.setattr(Reach, "add", add)
        with pytest.raises(OntologyLimitExceeded):
            compile_axioms(sorted(after), kept=kept)
    assert added
    assert kept.properties.reach is None
    again = compile_axioms(sorted(after), kept=kept)
    assert dict(again.properties) == brute(after)
