"""Compiled (numba) families' pass: every family run of one event joined and counted in
one call (see :mod:`semps.matcher.semantic.familyjoin` for the tables it reads)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from semps.matcher.kernels import jit, search_sorted
from semps.matcher.semantic.codes import ALL, AND, BY_O, BY_S, END, MASK

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: The members' programs run over at most this many times the step budget of rows in one
#: call (each member over each row of its family's join; ~0.3 s of CPU here): the members
#: past it are left to verification one by one (count -1), which the event's budget
#: bounds (:class:`~semps.matcher.semantic.verify.EventBudget`). Before, 2,000 members
#: over a 216k-row join took 3.2 s.
MEMBER_ROWS = 64

#: Up to this many rows, the distinct rows are found by comparing each with those before
#: it (no sort, no arrays but the answer).
SMALL_GROUPS = 24


@jit
def family_join_runs(
    run_fam: IntArray,
    bounds: IntArray,
    member_cols: IntArray,
    params: IntArray,
    fam_bare: IntArray,
    fam_mode: IntArray,
    bare_at: IntArray,
    steps: IntArray,
    width: IntArray,
    programs: IntArray,
    program_at: IntArray,
    inputs_at: IntArray,
    inputs: IntArray,
    strings_at: IntArray,
    strings: IntArray,
    proj_at: IntArray,
    proj: IntArray,
    pair_p: IntArray,
    pair_s: IntArray,
    pair_o: IntArray,
    tid: IntArray,
    ival: IntArray,
    isint: BoolArray,
    isstr: BoolArray,
    hit_lo: IntArray,
    hit_hi: IntArray,
    hits: IntArray,
    known: BoolArray,
    budget: int,
) -> tuple[IntArray, BoolArray]:
    """The solution counts of the family members of one event's runs, and by run whether
    it is left to verify one by one (its join ran over ``budget`` partial rows, or a value
    its program reads is not of the kind it compares); a member's count is -1 when it is
    left because the pass's work (:data:`MEMBER_ROWS`) ran out before it.

    Run ``q`` counts members ``bounds[q]:bounds[q + 1]`` (parameter rows
    ``member_cols[...]`` of ``params``) of family ``run_fam[q]``: over the rows of the
    family's join (``fam_bare``; steps ``(property, mode, subject column, object
    column)``, ``width`` columns of the event's term numbers), how many rows pass the
    family's program (``fam_mode`` 0), whether any does (1), how many distinct projected
    rows do (2). The program's operands: term numbers ``tid`` (input kind 0) or integer
    values ``ival`` (kind 1) of a column (``inputs``), and for string templates
    (``strings``: column, function) whether the parameter is among the needle numbers
    the function finds in the value (``hits[hit_lo[k]:hit_hi[k]]`` for ``k = term * 4 +
    function``, when ``known[k]``)."""
    n_terms = len(tid)
    # The pairs by (property, subject, object) and by (property, object).
    by_o = np.argsort(pair_o, kind="mergesort")
    key_s = pair_p[by_o] * n_terms + pair_s[by_o]
    order = by_o[np.argsort(key_s, kind="mergesort")]
    keys_s = pair_p[order] * n_terms + pair_s[order]
    s_s, o_s = pair_s[order], pair_o[order]
    key_o = pair_p * n_terms + pair_o
    order = np.argsort(key_o, kind="mergesort")
    keys_o, s_o = key_o[order], pair_s[order]

    size = len(member_cols)
    out = np.zeros(size, dtype=np.int64)
    n_runs = len(run_fam)
    generic = np.zeros(n_runs, dtype=np.bool_)
    n_bares = len(bare_at) - 1
    state = np.zeros(max(1, n_bares), dtype=np.int64)  # 0 unjoined, 1 joined, 2 over
    rows_at = np.zeros(max(1, n_bares), dtype=np.int64)
    rows_n = np.zeros(max(1, n_bares), dtype=np.int64)
    buf = np.empty(1024, dtype=np.int64)
    used = 0
    # Scratch reused by every run (grown when short): the joins' partial rows, the
    # programs' operands, the sorted first column, the distinct rows' marks.
    cur = np.empty(1024, dtype=np.int64)
    nxt = np.empty(1024, dtype=np.int64)
    vals = np.empty(1024, dtype=np.int64)
    keys_buf = np.empty(256, dtype=np.int64)
    order_buf = np.empty(0, dtype=np.int64)
    mark_buf = np.empty(256, dtype=np.int64)
    work = 0  # members' rows evaluated (at most MEMBER_ROWS x budget)
    stack = np.empty(len(programs) + 1, dtype=np.bool_)
    for q in range(n_runs):
        fam = run_fam[q]
        b = fam_bare[fam]
        w = width[b]
        if state[b] == 0:
            got, ok, cur, nxt = _join(
                bare_at[b], bare_at[b + 1], steps, w, keys_s, s_s, o_s, keys_o, s_o, n_terms,
                budget, cur, nxt,
            )  # fmt: skip
            if not ok:
                state[b] = 2
            else:
                state[b] = 1
                size_flat = got * w
                while used + size_flat > len(buf):
                    grown = np.empty(2 * len(buf), dtype=np.int64)
                    grown[:used] = buf[:used]
                    buf = grown
                buf[used : used + size_flat] = cur[:size_flat]
                rows_at[b] = used
                rows_n[b] = got
                used += size_flat
        if state[b] == 2:
            generic[q] = True
            continue
        n = rows_n[b]
        if n == 0:
            continue
        at = rows_at[b]
        if not _covered(fam, buf, at, n, w, inputs_at, inputs, strings_at, strings,
                        isint, isstr, known):  # fmt: skip
            generic[q] = True
            continue
        mode = fam_mode[fam]
        groups = (
            _groups(buf, at, n, w, proj, proj_at[fam], proj_at[fam + 1]) if mode == 2 else buf[:0]
        )
        if mode == 2:
            if n > len(mark_buf):
                mark_buf = np.empty(2 * n, dtype=np.int64)
            mark = mark_buf[:n]
            mark[:] = -1
        else:
            mark = mark_buf[:0]
        p0, p1 = program_at[fam], program_at[fam + 1]
        i0, s0 = inputs_at[fam], strings_at[fam]
        # The program's operands over the rows, read once for all members (row r's
        # operand a at vals[r * nv + a]).
        nv = inputs_at[fam + 1] - i0
        if n * nv > len(vals):
            vals = np.empty(2 * n * nv, dtype=np.int64)
        for r in range(n):
            for a in range(nv):
                term = buf[at + r * w + inputs[i0 + a, 0]]
                vals[r * nv + a] = tid[term] if inputs[i0 + a, 1] == 0 else ival[term]
        # A first template that is one comparison rules out at once the members no row
        # can pass: by the rows' values in its column, sorted (an equality: is the
        # member's there?) or by their least and greatest (an order).
        first = programs[p0, 0] if p1 - p0 >= 2 and programs[p0 + 1, 0] == END else END
        keys = keys_buf[:0]
        order = order_buf[:0]
        lo = hi = 0
        if first <= 6:
            if n > len(keys_buf):
                keys_buf = np.empty(2 * n, dtype=np.int64)
            keys = keys_buf[:n]
            col = programs[p0, 1]
            for r in range(n):
                keys[r] = vals[r * nv + col]
            order = np.argsort(keys, kind="mergesort")
            for r in range(n):
                keys[r] = vals[order[r] * nv + col]
            lo, hi = keys[0], keys[n - 1]
        for t in range(bounds[q], bounds[q + 1]):
            if work + n > MEMBER_ROWS * budget:  # past the pass's work: left, -1
                out[t] = -1
                continue
            work += n
            member = member_cols[t]
            c = 0
            # The rows that may pass: those whose value passes the first template when it
            # is one comparison (a range of the sorted values; "!=" rules out none), else
            # all.
            r0, r1 = 0, n
            if first <= 6:
                y = params[member, programs[p0, 2]]
                if first <= 1:  # EQ (a term) or "=" (a value)
                    r0 = search_sorted(keys, 0, n, y, False)
                    r1 = search_sorted(keys, r0, n, y, True)
                elif first == 3:  # <
                    r1 = search_sorted(keys, 0, n, y, False)
                elif first == 4:  # >
                    r0 = search_sorted(keys, 0, n, y, True)
                elif first == 5:  # <=
                    r1 = search_sorted(keys, 0, n, y, True)
                elif first == 6:  # >=
                    r0 = search_sorted(keys, 0, n, y, False)
                elif lo == hi == y:  # != and every value equal
                    r1 = 0
                if r0 >= r1:
                    continue  # out[t] stays 0
            for kr in range(r0, r1):
                r = order[kr] if first <= 6 else kr
                row = at + r * w
                sp = 0
                ok = True
                for i in range(p0, p1):
                    code, a, pb = programs[i, 0], programs[i, 1], programs[i, 2]
                    if code == END:  # a template ends: the row fails unless it holds
                        if not stack[0]:
                            ok = False
                            break
                        sp = 0
                        continue
                    if code <= 6:
                        x = vals[r * nv + a]
                        y = params[member, pb]
                        if code <= 1:
                            v = x == y
                        elif code == 2:
                            v = x != y
                        elif code == 3:
                            v = x < y
                        elif code == 4:
                            v = x > y
                        elif code == 5:
                            v = x <= y
                        else:
                            v = x >= y
                    elif code == MASK:
                        term = buf[row + strings[s0 + a, 0]]
                        k = term * 4 + strings[s0 + a, 1]
                        h0, h1 = hit_lo[k], hit_hi[k]
                        needle = params[member, pb]
                        j = search_sorted(hits, h0, h1, needle, False)
                        v = j < h1 and hits[j] == needle
                    else:
                        v = code == AND
                        for m in range(sp - a, sp):
                            v = (v and stack[m]) if code == AND else (v or stack[m])
                        sp -= a
                    stack[sp] = v
                    sp += 1
                if ok:
                    if mode == 0:
                        c += 1
                    elif mode == 1:
                        c = 1
                        break
                    elif mark[groups[r]] != t:
                        mark[groups[r]] = t
                        c += 1
            out[t] = c
    return out, generic


@jit
def _range(keys: IntArray, key: int) -> tuple[int, int]:
    n = len(keys)
    return search_sorted(keys, 0, n, key, False), search_sorted(keys, 0, n, key, True)


@jit
def _join(
    st0: int,
    st1: int,
    steps: IntArray,
    w: int,
    keys_s: IntArray,
    s_s: IntArray,
    o_s: IntArray,
    keys_o: IntArray,
    s_o: IntArray,
    n_terms: int,
    budget: int,
    cur: IntArray,
    nxt: IntArray,
) -> tuple[int, bool, IntArray, IntArray]:
    """The rows of one family's join (breadth first: over ``budget`` partial rows in
    all, it stops): their number, ``False`` when over the budget, and the two scratch
    arrays (grown if short), the first holding the rows (row ``r``'s column ``c`` at
    ``r * w + c``). The pairs: ``s_s``, ``o_s`` by (property, subject, object),
    ``keys_s`` their ``property * n_terms + subject``; ``s_o`` by (property, object),
    ``keys_o`` likewise."""
    if w > len(cur):
        cur = np.empty(2 * w, dtype=np.int64)
    cur[:w] = 0
    n = 1
    for st in range(st0, st1):
        p, mode, sc, oc = steps[st, 0], steps[st, 1], steps[st, 2], steps[st, 3]
        if mode == ALL:
            lo = search_sorted(keys_s, 0, len(keys_s), p * n_terms, False)
            hi = search_sorted(keys_s, 0, len(keys_s), (p + 1) * n_terms, False)
            ext = 0
            for i in range(lo, hi):
                if sc != oc or s_s[i] == o_s[i]:
                    ext += 1
            total = n * ext
        elif mode == BY_S or mode == BY_O:
            keys = keys_s if mode == BY_S else keys_o
            bound = sc if mode == BY_S else oc
            total = 0
            for r in range(n):
                lo, hi = _range(keys, p * n_terms + cur[r * w + bound])
                total += hi - lo
        else:
            total = n
        if total > budget and (mode == ALL or mode == BY_S or mode == BY_O):
            return n, False, cur, nxt
        if total * w > len(nxt):
            nxt = np.empty(2 * total * w, dtype=np.int64)
        k = 0
        if mode == ALL:
            for r in range(n):
                for i in range(lo, hi):
                    if sc == oc and s_s[i] != o_s[i]:
                        continue
                    for c in range(w):
                        nxt[k * w + c] = cur[r * w + c]
                    nxt[k * w + sc] = s_s[i]
                    nxt[k * w + oc] = o_s[i]
                    k += 1
        elif mode == BY_S or mode == BY_O:
            keys, ends = (keys_s, o_s) if mode == BY_S else (keys_o, s_o)
            bound, free = (sc, oc) if mode == BY_S else (oc, sc)
            for r in range(n):
                lo, hi = _range(keys, p * n_terms + cur[r * w + bound])
                for i in range(lo, hi):
                    for c in range(w):
                        nxt[k * w + c] = cur[r * w + c]
                    nxt[k * w + free] = ends[i]
                    k += 1
        else:  # both ends bound: is the pair among the property's?
            for r in range(n):
                lo, hi = _range(keys_s, p * n_terms + cur[r * w + sc])
                j = search_sorted(o_s, lo, hi, cur[r * w + oc], False)  # objects ascend here
                if j < hi and o_s[j] == cur[r * w + oc]:
                    for c in range(w):
                        nxt[k * w + c] = cur[r * w + c]
                    k += 1
        budget -= k
        cur, nxt = nxt, cur
        n = k
        if n == 0:
            return 0, True, cur, nxt
    return n, True, cur, nxt


@jit
def _covered(
    fam: int,
    buf: IntArray,
    at: int,
    n: int,
    w: int,
    inputs_at: IntArray,
    inputs: IntArray,
    strings_at: IntArray,
    strings: IntArray,
    isint: BoolArray,
    isstr: BoolArray,
    known: BoolArray,
) -> bool:
    """Whether every value the family's program reads over the rows is of the kind it
    compares: integers for comparisons, plain strings whose needles are known."""
    for i in range(inputs_at[fam], inputs_at[fam + 1]):
        if inputs[i, 1] == 1:
            for r in range(n):
                if not isint[buf[at + r * w + inputs[i, 0]]]:
                    return False
    for i in range(strings_at[fam], strings_at[fam + 1]):
        for r in range(n):
            term = buf[at + r * w + strings[i, 0]]
            if not isstr[term] or not known[term * 4 + strings[i, 1]]:
                return False
    return True


@jit
def _groups(buf: IntArray, at: int, n: int, w: int, proj: IntArray, j0: int, j1: int) -> IntArray:
    """Each row's number among the distinct rows over columns ``proj[j0:j1]`` (below
    ``n``; equal numbers for equal rows, different for different ones)."""
    if n <= SMALL_GROUPS:  # few rows: each numbered by the first row equal to it
        groups = np.empty(n, dtype=np.int64)
        for r in range(n):
            groups[r] = r
            for e in range(r):
                if groups[e] != e:
                    continue
                same = True
                for j in range(j0, j1):
                    if buf[at + r * w + proj[j]] != buf[at + e * w + proj[j]]:
                        same = False
                        break
                if same:
                    groups[r] = e
                    break
        return groups
    order = np.arange(n)
    for j in range(j1 - 1, j0 - 1, -1):
        col = np.empty(n, dtype=np.int64)
        for r in range(n):
            col[r] = buf[at + order[r] * w + proj[j]]
        order = order[np.argsort(col, kind="mergesort")]
    groups = np.zeros(n, dtype=np.int64)
    g = 0
    for i in range(1, n):
        a, b = at + order[i] * w, at + order[i - 1] * w
        for j in range(j0, j1):
            if buf[a + proj[j]] != buf[b + proj[j]]:
                g += 1
                break
        groups[order[i]] = g
    return groups


@jit
def run_inputs(
    shapes: IntArray, grouped: IntArray, bounds: IntArray, shape_fam: IntArray, shape_row: IntArray
) -> tuple[IntArray, IntArray]:
    """The pass's inputs from phase 1's grouping (``_kernels.candidate_shapes``): each
    run's family (its first member's) and each member's parameter column."""
    n_runs = len(bounds) - 1
    run_fam = np.empty(n_runs, dtype=np.int64)
    for q in range(n_runs):
        run_fam[q] = shape_fam[shapes[grouped[bounds[q]]]]
    member_cols = np.empty(len(grouped), dtype=np.int64)
    for i in range(len(grouped)):
        member_cols[i] = shape_row[shapes[grouped[i]]]
    return run_fam, member_cols


@jit
def scatter_counts(
    counts: IntArray, grouped: IntArray, bounds: IntArray, found: IntArray, left: BoolArray
) -> IntArray:
    """The pass's outputs into ``counts`` (by shape position; ``found``'s -1, "not
    reached", as 0); the positions it leaves to verify one by one: the members it did
    not reach, then every member of each run it left, in order."""
    n_past = 0
    n_left = 0
    for i in range(len(grouped)):
        c = found[i]
        counts[grouped[i]] = c if c > 0 else 0
        n_past += c < 0
    for q in range(len(left)):
        if left[q]:
            n_left += bounds[q + 1] - bounds[q]
    out = np.empty(n_past + n_left, dtype=np.int64)
    k = 0
    for i in range(len(grouped)):
        if found[i] < 0:
            out[k] = grouped[i]
            k += 1
    for q in range(len(left)):
        if left[q]:
            for i in range(bounds[q], bounds[q + 1]):
                out[k] = grouped[i]
                k += 1
    return out


def warm() -> None:
    """Compile (or load from the cache) the kernels now."""
    z = np.zeros(0, dtype=np.int64)
    one = np.zeros(1, dtype=np.int64)
    nb = np.zeros(0, dtype=np.bool_)
    run_inputs(z, z, one, z, z)
    scatter_counts(z, z, one, z, nb)
    family_join_runs(
        z, one, z, np.zeros((1, 1), dtype=np.int64), z, z, one, np.zeros((0, 4), dtype=np.int64),
        z, np.zeros((0, 3), dtype=np.int64), one, one, np.zeros((0, 2), dtype=np.int64), one,
        np.zeros((0, 2), dtype=np.int64), one, z, z, z, z, z, z, nb, nb, z, z, z, nb, 0,
    )  # fmt: skip
