"""The compiled (numba) delivery loop of the event tree; :mod:`.tree` holds the structure.

Conventions:

- Nodes are ids ``0..n-1``. A node's parents, in definition order, are
  ``par_node[par_off[x]:par_off[x+1]]`` with the role each plays (``par_role``) and whether
  that role is gated (counts only while the parent is open; ``par_gated``).
- Per composite: ``code`` (operator), ``within`` (window, ``inf`` for none) and ``times``.
- State per composite: up to two statuses (``st_set``, ``st_time``, ``st_occ``: is it set,
  when, and the occurrence that set it), a ternary's ``count`` and its monitored
  occurrences as a linked list of cells (``mon_head``/``mon_tail`` into ``cell_occ``/
  ``cell_next``; ``scal[1]`` is the free-cell list, ``scal[2]`` the cells in use).
- An occurrence is an id (``scal[0]`` is the next free one). Each detection is logged as
  ``(arrival, node, new occurrence)`` with its parts, the occurrences it is made of, in
  order: ``parts[part_off[k]:part_off[k+1]]``. The caller turns parts into constituents.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np
import numpy.typing as npt

from semps.matcher.kernels import jit

#: Operator codes; -1 marks a primitive (never a parent).
OR, AND, THEN, ALL, TIMES, NO = range(6)
#: Slots of ``scal``.
NEXT_OCC, FREE_CELL, USED_CELLS = 0, 1, 2

Arr = npt.NDArray[Any]


@nb.njit(cache=True, inline="always")
def _grow_i(a: Arr, need: int) -> Arr:
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0] + 16), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@nb.njit(cache=True, inline="always")
def _clear_monitored(x: int, mon_head: Arr, mon_tail: Arr, cell_next: Arr, scal: Arr) -> None:
    head = mon_head[x]
    if head >= 0:  # splice the whole list onto the free list
        cell_next[mon_tail[x]] = scal[FREE_CELL]
        scal[FREE_CELL] = head
        mon_head[x] = -1
        mon_tail[x] = -1


@nb.njit(cache=True, inline="always")
def push_monitored(
    x: int, occ: int, mon_head: Arr, mon_tail: Arr, cell_occ: Arr, cell_next: Arr, scal: Arr
) -> tuple[Arr, Arr]:
    """Append ``occ`` to ``x``'s monitored list (a free cell, else a new one); returns the
    (possibly grown) cell arrays."""
    cell = scal[FREE_CELL]
    if cell >= 0:
        scal[FREE_CELL] = cell_next[cell]
    else:
        cell = scal[USED_CELLS]
        scal[USED_CELLS] = cell + 1
        cell_occ = _grow_i(cell_occ, cell + 1)
        cell_next = _grow_i(cell_next, cell + 1)
    cell_occ[cell] = occ
    cell_next[cell] = -1
    if mon_head[x] < 0:
        mon_head[x] = cell
    else:
        cell_next[mon_tail[x]] = cell
    mon_tail[x] = cell
    return cell_occ, cell_next


@jit
def run_arrivals(  # noqa: PLR0913, PLR0915, C901
    arr_node: Arr,
    arr_time: Arr,
    arr_occ: Arr,
    par_off: Arr,
    par_node: Arr,
    par_role: Arr,
    par_gated: Arr,
    code: Arr,
    within: Arr,
    times: Arr,
    st_set: Arr,
    st_time: Arr,
    st_occ: Arr,
    count: Arr,
    mon_head: Arr,
    mon_tail: Arr,
    cell_occ: Arr,
    cell_next: Arr,
    scal: Arr,
    det_at: Arr,
    det_node: Arr,
    det_occ: Arr,
    part_off: Arr,
    parts: Arr,
) -> tuple[Arr, Arr, Arr, Arr, Arr, Arr, Arr, int]:
    """Deliver every arrival depth first; returns the (possibly grown) cell and log arrays
    and the number of detections."""
    n_nodes = code.shape[0]
    stk_node = np.empty(n_nodes + 1, dtype=np.int64)
    stk_pos = np.empty(n_nodes + 1, dtype=np.int64)
    stk_occ = np.empty(n_nodes + 1, dtype=np.int64)
    nd = 0
    part_off[0] = 0
    for i in range(arr_node.shape[0]):
        x = arr_node[i]
        if x < 0:
            continue
        now = arr_time[i]
        sp = 1
        stk_node[0], stk_pos[0], stk_occ[0] = x, par_off[x], arr_occ[i]
        while sp > 0:
            top = sp - 1
            node = stk_node[top]
            j = stk_pos[top]
            if j == par_off[node + 1]:
                sp -= 1
                continue
            stk_pos[top] = j + 1
            p = par_node[j]
            if par_gated[j] and not st_set[p, 0]:
                continue  # passive: a closed parent ignores this role
            role = par_role[j]
            cons = stk_occ[top]
            c = code[p]
            w = within[p]
            if c != OR and w < np.inf:  # expire lazily, on the next delivery
                for s in range(2):
                    if st_set[p, s] and now - st_time[p, s] > w:
                        st_set[p, s] = False
                        if c >= ALL:
                            count[p] = 0
                            _clear_monitored(p, mon_head, mon_tail, cell_next, scal)
            np_ = part_off[nd]
            found = False
            if c == OR:
                parts = _grow_i(parts, np_ + 1)
                parts[np_] = cons
                np_ += 1
                found = True
            elif c == AND:
                if not st_set[p, role]:
                    st_set[p, role] = True
                    st_time[p, role] = now
                    st_occ[p, role] = cons
                if st_set[p, 0] and st_set[p, 1]:
                    parts = _grow_i(parts, np_ + 2)
                    parts[np_] = st_occ[p, 0]
                    parts[np_ + 1] = st_occ[p, 1]
                    np_ += 2
                    st_set[p, 0] = False
                    st_set[p, 1] = False
                    found = True
            elif c == THEN:
                if role == 0:
                    if not st_set[p, 0]:
                        st_set[p, 0] = True
                        st_time[p, 0] = now
                        st_occ[p, 0] = cons
                elif st_set[p, 0]:
                    parts = _grow_i(parts, np_ + 2)
                    parts[np_] = st_occ[p, 0]
                    parts[np_ + 1] = cons
                    np_ += 2
                    st_set[p, 0] = False
                    found = True
            elif role == 0:  # ternary: A opens (again while open: no change)
                if not st_set[p, 0]:
                    st_set[p, 0] = True
                    st_time[p, 0] = now
                    st_occ[p, 0] = cons
                    count[p] = 0
                    _clear_monitored(p, mon_head, mon_tail, cell_next, scal)
            elif not st_set[p, 0]:
                pass
            elif role == 1:  # monitored: count it and keep it
                count[p] += 1
                cell_occ, cell_next = push_monitored(
                    p, cons, mon_head, mon_tail, cell_occ, cell_next, scal
                )
            else:  # closing: detect by the count, then reset either way
                k = count[p]
                hit = k > 0 if c == ALL else (k == times[p] if c == TIMES else k == 0)
                if hit:
                    parts = _grow_i(parts, np_ + 2 + k)
                    parts[np_] = st_occ[p, 0]
                    np_ += 1
                    cell = mon_head[p]
                    while cell >= 0:
                        parts[np_] = cell_occ[cell]
                        np_ += 1
                        cell = cell_next[cell]
                    parts[np_] = cons
                    np_ += 1
                    found = True
                st_set[p, 0] = False
                count[p] = 0
                _clear_monitored(p, mon_head, mon_tail, cell_next, scal)
            if found:
                det_at = _grow_i(det_at, nd + 1)
                det_node = _grow_i(det_node, nd + 1)
                det_occ = _grow_i(det_occ, nd + 1)
                part_off = _grow_i(part_off, nd + 2)
                occ = scal[NEXT_OCC]
                scal[NEXT_OCC] = occ + 1
                det_at[nd], det_node[nd], det_occ[nd] = i, p, occ
                nd += 1
                part_off[nd] = np_
                stk_node[sp], stk_pos[sp], stk_occ[sp] = p, par_off[p], occ
                sp += 1
    return cell_occ, cell_next, det_at, det_node, det_occ, part_off, parts, nd
