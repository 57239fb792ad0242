"""Compiled (numba) gains of a basic graph pattern under an event, over the knowledge
graph's sorted id arrays and the event's triples (see :mod:`semps.matcher.semantic.
graphjoin` for the tables it reads)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba.typed import List as TypedList

from semps.matcher.kernels import jit

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: Pattern kinds: a triple pattern, a ``p+`` path.
TRIPLE, PLUS = 0, 1
#: Columns of a pattern row: kind, property, subject and object (a variable's slot, or a
#: constant's id), whether each is a variable, the range of its parameters' restrictions.
KIND, PROP, S_VAL, S_VAR, O_VAL, O_VAR, AR_LO, AR_HI = range(8)
ATOM_WIDTH = 8
#: Step modes (as the template differ's ``_match``): a lookup by a bound end; the same,
#: the pattern's parameters then kept to their domains; a parameter object's domain
#: values counted from the bound subject; a parameter bound to each value, then matched.
LINK, RESTRICT, EXPAND_OBJECT, EXPAND_LINK = 0, 1, 2, 3
#: Columns of a step row: mode, side (0 old, 1 new), pattern, the parameter's slot and
#: domain range (expansions), the restrictions' range.
MODE, SIDE, ATOM, PARAM, DOM_LO, DOM_HI, R_LO, R_HI = range(8)
STEP_WIDTH = 8
#: A slot not bound yet (-1: a constant the graph and the event do not have).
UNBOUND = -2

_MASK = (1 << 32) - 1


@jit
def _grown(pa: IntArray, pb: IntArray, need: int = 0) -> tuple[IntArray, IntArray]:
    size = max(2 * len(pa), need)
    a = np.empty(size, dtype=np.int64)
    b = np.empty(size, dtype=np.int64)
    a[: len(pa)] = pa
    b[: len(pb)] = pb
    return a, b


@jit
def _pushed(values: IntArray, n: int, x: int) -> tuple[IntArray, int]:
    """``values[:n]`` with ``x`` after them (grown when full), and the new count."""
    if n == len(values):
        values, _ = _grown(values, values)
    values[n] = x
    return values, n + 1


@jit
def _fill(
    so: IntArray,
    os: IntArray,
    prop: int,
    s: int,
    o: int,
    new: bool,
    ov_p: IntArray,
    ov_s: IntArray,
    ov_o: IntArray,
    pa: IntArray,
    pb: IntArray,
) -> tuple[IntArray, IntArray, int]:
    """A property's pairs with the bound ends into ``pa``/``pb`` (grown when short; their
    count returned): the graph's in id order, then on the new side the event's in its
    order, as ``GraphPairs.lookup`` gives them (``prop``: the property's id, as the
    event's triples have it)."""
    by_s = s != UNBOUND
    node = s if by_s else o
    packed = so if by_s else os
    m = 0
    if node >= 0 and by_s and o != UNBOUND:  # both ends: one search for the pair
        key = (node << 32) | o
        at = np.searchsorted(packed, key)
        if o >= 0 and at < len(packed) and packed[at] == key:
            pa[0], pb[0] = node, o
            m = 1
    elif node >= 0:  # the node's range, read from its start (a search less)
        x = np.searchsorted(packed, node << 32)
        while x < len(packed) and (packed[x] >> 32) == node:
            if m == len(pa):
                pa, pb = _grown(pa, pb)
            other = packed[x] & _MASK
            if by_s:
                pa[m], pb[m] = node, other
            else:
                pa[m], pb[m] = other, node
            m += 1
            x += 1
    if new and m + len(ov_p) > len(pa):
        pa, pb = _grown(pa, pb, m + len(ov_p))
    if new:
        for i in range(len(ov_p)):
            if ov_p[i] != prop or (ov_s[i] != node if by_s else ov_o[i] != node):
                continue
            if by_s and o != UNBOUND and ov_o[i] != o:
                continue
            pa[m], pb[m] = ov_s[i], ov_o[i]
            m += 1
    return pa, pb, m


@jit
def _added(table: IntArray, used: IntArray, x: int) -> IntArray:
    """``x`` added to an open-addressing set of non-negative ids (``-1`` free slots,
    ``used[0]`` its size; grown at half full); returns the table (``used[1]``: 1 when
    ``x`` was new)."""
    if 2 * (used[0] + 1) > len(table):
        bigger = np.full(2 * len(table), -1, dtype=np.int64)
        for y in table:
            if y >= 0:
                at = (y * 0x9E3779B1) & (len(bigger) - 1)
                while bigger[at] >= 0:
                    at = (at + 1) & (len(bigger) - 1)
                bigger[at] = y
        table = bigger
    at = (x * 0x9E3779B1) & (len(table) - 1)
    while table[at] >= 0:
        if table[at] == x:
            used[1] = 0
            return table
        at = (at + 1) & (len(table) - 1)
    table[at] = x
    used[0] += 1
    used[1] = 1
    return table


@jit
def _reach(
    so: IntArray,
    os: IntArray,
    prop: int,
    start: int,
    forward: bool,
    new: bool,
    ov_p: IntArray,
    ov_s: IntArray,
    ov_o: IntArray,
    budget: IntArray,
    side: int,
) -> IntArray:
    """The nodes ``p+`` reaches from ``start`` (forward) or reaches it (backward), in the
    order the evaluator's search finds them (``Evaluator.reach``)."""
    found = np.empty(16, dtype=np.int64)
    n_found = 0
    stack = np.empty(16, dtype=np.int64)
    stack[0] = start
    depth = 1
    seen = np.full(32, -1, dtype=np.int64)
    seen_used = np.zeros(2, dtype=np.int64)
    expanded = np.full(32, -1, dtype=np.int64)
    expanded_used = np.zeros(2, dtype=np.int64)
    expanded = _added(expanded, expanded_used, start)
    pa = np.empty(16, dtype=np.int64)
    pb = np.empty(16, dtype=np.int64)
    while depth:
        depth -= 1
        node = stack[depth]
        if forward:
            pa, pb, n = _fill(so, os, prop, node, UNBOUND, new, ov_p, ov_s, ov_o, pa, pb)
            ends = pb
        else:
            pa, pb, n = _fill(so, os, prop, UNBOUND, node, new, ov_p, ov_s, ov_o, pa, pb)
            ends = pa
        for i in range(n):
            m = ends[i]
            budget[side] -= 1
            seen = _added(seen, seen_used, m)
            if seen_used[1]:
                found, n_found = _pushed(found, n_found, m)
            expanded = _added(expanded, expanded_used, m)
            if expanded_used[1]:
                stack, depth = _pushed(stack, depth, m)
        if budget[side] < 0:
            break
    return found[:n_found]


@jit
def _in(sorted_ids: IntArray, lo: int, hi: int, x: int) -> bool:
    while lo < hi:
        mid = (lo + hi) >> 1
        if sorted_ids[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(sorted_ids) and sorted_ids[lo] == x


@jit
def _push(
    rows: IntArray, tags: IntArray, n: int, row: IntArray, tag: int
) -> tuple[IntArray, IntArray]:
    if n == len(tags):
        bigger = np.empty((2 * n + 8, rows.shape[1]), dtype=np.int64)
        bigger[:n] = rows[:n]
        more = np.empty(2 * n + 8, dtype=np.int64)
        more[:n] = tags[:n]
        rows, tags = bigger, more
    rows[n] = row
    tags[n] = tag
    return rows, tags


@jit
def _kept(row: IntArray, lo: int, hi: int, restricts: IntArray, sdoms: IntArray) -> bool:
    for r in range(lo, hi):
        if not _in(sdoms, restricts[r, 1], restricts[r, 2], row[restricts[r, 0]]):
            return False
    return True


@jit
def _end(val: int, is_var: int, row: IntArray) -> int:
    return row[val] if is_var else val


@jit
def _matched(
    atom: IntArray,
    pid: int,
    row: IntArray,
    so: IntArray,
    os: IntArray,
    side: int,
    ov_p: IntArray,
    ov_s: IntArray,
    ov_o: IntArray,
    budget: IntArray,
    pa: IntArray,
    pb: IntArray,
) -> tuple[IntArray, IntArray, int]:
    """A pattern's pairs from the row's bound ends into ``pa``/``pb`` (each ticked, as
    the evaluator does)."""
    s = _end(atom[S_VAL], atom[S_VAR], row)
    o = _end(atom[O_VAL], atom[O_VAR], row)
    new = side == 1
    if atom[KIND] == TRIPLE:
        pa, pb, n = _fill(so, os, pid, s, o, new, ov_p, ov_s, ov_o, pa, pb)
        budget[side] -= n
        return pa, pb, n
    if s != UNBOUND:
        ends = _reach(so, os, pid, s, True, new, ov_p, ov_s, ov_o, budget, side)
        if o != UNBOUND:
            ends = ends[ends == o]
    else:
        ends = _reach(so, os, pid, o, False, new, ov_p, ov_s, ov_o, budget, side)
    n = len(ends)
    budget[side] -= n
    if n > len(pa):
        pa = np.empty(2 * n, dtype=np.int64)
        pb = np.empty(2 * n, dtype=np.int64)
    for i in range(n):
        if s != UNBOUND:
            pa[i], pb[i] = s, ends[i]
        else:
            pa[i], pb[i] = ends[i], o
    return pa, pb, n


@jit
def _step(  # noqa: C901 (the differ's four ways of matching one pattern)
    rows: IntArray,
    n: int,
    out: IntArray,
    tags: IntArray,
    row: IntArray,
    pa: IntArray,
    pb: IntArray,
    st: IntArray,
    atoms: IntArray,
    tables: tuple[IntArray, IntArray, IntArray],
    by_s: TypedList[IntArray],
    by_o: TypedList[IntArray],
    prop_ids: IntArray,
    event: tuple[IntArray, IntArray, IntArray],
    budget: IntArray,
) -> tuple[IntArray, IntArray, int, IntArray, IntArray]:
    """``rows[:n]`` extended by one step into ``out`` (rows without a match dropped);
    returns the buffers (grown when short) and the rows' count."""
    doms, restricts, sdoms = tables
    ov_p, ov_s, ov_o = event
    atom = atoms[st[ATOM]]
    side = st[SIDE]
    so, os, pid = by_s[atom[PROP]], by_o[atom[PROP]], prop_ids[atom[PROP]]
    m = 0
    for i in range(n):
        row[:] = rows[i]
        if st[MODE] == EXPAND_OBJECT:
            s = _end(atom[S_VAL], atom[S_VAR], row)
            for j in range(st[DOM_LO], st[DOM_HI]):
                pa, pb, found = _fill(so, os, pid, s, doms[j], side == 1, ov_p, ov_s, ov_o, pa, pb)
                budget[side] -= found
                row[st[PARAM]] = doms[j]
                for _x in range(found):
                    out, tags = _push(out, tags, m, row, 0)
                    m += 1
        else:
            lo_v, hi_v = 0, 1
            if st[MODE] == EXPAND_LINK:
                lo_v, hi_v = st[DOM_LO], st[DOM_HI]
            for j in range(lo_v, hi_v):
                if st[MODE] == EXPAND_LINK:
                    row[st[PARAM]] = doms[j]
                s_new = atom[S_VAR] == 1 and row[atom[S_VAL]] == UNBOUND
                o_new = atom[O_VAR] == 1 and row[atom[O_VAL]] == UNBOUND
                pa, pb, found = _matched(
                    atom, pid, row, so, os, side, ov_p, ov_s, ov_o, budget, pa, pb
                )
                for x in range(found):
                    if s_new and o_new and atom[S_VAL] == atom[O_VAL] and pa[x] != pb[x]:
                        continue
                    if s_new:
                        row[atom[S_VAL]] = pa[x]
                    if o_new:
                        row[atom[O_VAL]] = pb[x]
                    if _kept(row, st[R_LO], st[R_HI], restricts, sdoms):
                        out, tags = _push(out, tags, m, row, 0)
                        m += 1
                if s_new:
                    row[atom[S_VAL]] = UNBOUND
                if o_new:
                    row[atom[O_VAL]] = UNBOUND
        if budget[0] < 0 or budget[1] < 0:
            break
    return out, tags, m, pa, pb


@jit
def bgp_gains(  # noqa: C901 (the delta rule's loop)
    atoms: IntArray,
    touched: BoolArray,
    skip: BoolArray,
    k_lo: IntArray,
    k_hi: IntArray,
    steps: IntArray,
    doms: IntArray,
    restricts: IntArray,
    sdoms: IntArray,
    by_s: TypedList[IntArray],
    by_o: TypedList[IntArray],
    prop_ids: IntArray,
    ov_p: IntArray,
    ov_s: IntArray,
    ov_o: IntArray,
    width: int,
    old_budget: int,
    new_budget: int,
) -> tuple[IntArray, IntArray, int, int]:
    """The rows a basic graph pattern gains (``width`` slots of ids each), with the
    pattern each gained at, as the template differ's ``gains_only`` finds them (a
    property's arrays ``by_s[i]``, ``by_o[i]``, its id ``prop_ids[i]``): for each
    touched pattern ``k`` (``skip[k]``: a pattern before it the old graph, or after it
    the new one, has no triple of), its rows from the event's triples (``ov_*``) kept to
    its parameters' domains, each extended by ``steps[k_lo[k]:k_hi[k]]``. Returns the
    rows, their patterns, and what is left of the work budget of each side (the work
    stops once one is below 0)."""
    budget = np.array([old_budget, new_budget], dtype=np.int64)
    tables = (doms, restricts, sdoms)
    event = (ov_p, ov_s, ov_o)
    gained = np.empty((4, width), dtype=np.int64)
    tags = np.empty(4, dtype=np.int64)
    cur = np.empty((4, width), dtype=np.int64)
    cur_tags = np.empty(4, dtype=np.int64)
    nxt = np.empty((4, width), dtype=np.int64)
    nxt_tags = np.empty(4, dtype=np.int64)
    row = np.empty(width, dtype=np.int64)
    scratch = np.empty(width, dtype=np.int64)
    pa = np.empty(16, dtype=np.int64)
    pb = np.empty(16, dtype=np.int64)
    g = 0
    for k in range(len(atoms)):
        atom = atoms[k]
        if not touched[k] or skip[k] or atom[KIND] != TRIPLE:
            continue
        n = 0
        for i in range(len(ov_p)):
            if ov_p[i] != prop_ids[atom[PROP]]:
                continue
            a, b = ov_s[i], ov_o[i]
            if atom[S_VAR] == 0 and a != atom[S_VAL]:
                continue
            if atom[O_VAR] == 0 and b != atom[O_VAL]:
                continue
            if atom[S_VAR] == 1 and atom[O_VAR] == 1 and atom[S_VAL] == atom[O_VAL] and a != b:
                continue
            row[:] = UNBOUND
            if atom[S_VAR] == 1:
                row[atom[S_VAL]] = a
            if atom[O_VAR] == 1:
                row[atom[O_VAL]] = b
            if _kept(row, atom[AR_LO], atom[AR_HI], restricts, sdoms):
                cur, cur_tags = _push(cur, cur_tags, n, row, 0)
                n += 1
        for x in range(k_lo[k], k_hi[k]):
            if n == 0:
                break
            nxt, nxt_tags, n, pa, pb = _step(
                cur, n, nxt, nxt_tags, scratch, pa, pb, steps[x], atoms, tables, by_s, by_o,
                prop_ids, event, budget,
            )  # fmt: skip
            cur, nxt = nxt, cur
            cur_tags, nxt_tags = nxt_tags, cur_tags
            if budget[0] < 0 or budget[1] < 0:
                return gained[:g], tags[:g], budget[0], budget[1]
        for i in range(n):
            gained, tags = _push(gained, tags, g, cur[i], k)
            g += 1
    return gained[:g], tags[:g], budget[0], budget[1]


def warm() -> None:
    """Compile (or load from the cache) the kernel now."""
    z = np.zeros(0, dtype=np.int64)
    lists = TypedList([z])
    no = np.zeros(0, dtype=np.bool_)
    bgp_gains(
        np.zeros((0, ATOM_WIDTH), dtype=np.int64), no, no, z, z,
        np.zeros((0, STEP_WIDTH), dtype=np.int64), z, np.zeros((0, 3), dtype=np.int64), z,
        lists, lists, z, z, z, z, 1, 0, 0,
    )  # fmt: skip
