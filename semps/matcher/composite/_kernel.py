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
- The loop never grows an array: an array reassigned inside it (to grow it) makes numba
  keep every array's reference count and pointers live across the loop, and the loop ran
  4-6x slower for it. Before each step it checks that the cell and log arrays have room
  for what the step can write; when they do not, it saves where it stands (``scal[AT]``,
  ``scal[SP]`` and the stack) and returns, and the caller grows them and calls again.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np
import numpy.typing as npt

from semps.matcher.kernels import jit

#: Operator codes; -1 marks a primitive (never a parent).
OR, AND, THEN, ALL, TIMES, NO = range(6)
#: Slots of ``scal``: the next occurrence id, the free-cell list, the cells in use, and
#: where an interrupted run resumes (its arrival and stack depth; ``SP`` 0: not begun).
NEXT_OCC, FREE_CELL, USED_CELLS, AT, SP = range(5)

Arr = npt.NDArray[Any]


@nb.njit(cache=True, inline="always")
def clear_monitored(x: int, mon_head: Arr, mon_tail: Arr, cell_next: Arr, scal: Arr) -> None:
    """Empty ``x``'s monitored list (its cells go to the free list)."""
    head = mon_head[x]
    if head >= 0:  # splice the whole list onto the free list
        cell_next[mon_tail[x]] = scal[FREE_CELL]
        scal[FREE_CELL] = head
        mon_head[x] = -1
        mon_tail[x] = -1


@nb.njit(cache=True, inline="always")
def push_monitored(
    x: int, occ: int, mon_head: Arr, mon_tail: Arr, cell_occ: Arr, cell_next: Arr, scal: Arr
) -> None:
    """Append ``occ`` to ``x``'s monitored list: a free cell, else the next unused one (the
    caller makes sure there is one: :func:`has_cell`)."""
    cell = scal[FREE_CELL]
    if cell >= 0:
        scal[FREE_CELL] = cell_next[cell]
    else:
        cell = scal[USED_CELLS]
        scal[USED_CELLS] = cell + 1
    cell_occ[cell] = occ
    cell_next[cell] = -1
    if mon_head[x] < 0:
        mon_head[x] = cell
    else:
        cell_next[mon_tail[x]] = cell
    mon_tail[x] = cell


@nb.njit(cache=True, inline="always")
def has_cell(cell_occ: Arr, scal: Arr) -> bool:
    """Whether :func:`push_monitored` has a cell to take."""
    return bool(scal[FREE_CELL] >= 0 or scal[USED_CELLS] < cell_occ.shape[0])


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
    stk_node: Arr,
    stk_pos: Arr,
    stk_occ: Arr,
    det_at: Arr,
    det_node: Arr,
    det_occ: Arr,
    part_off: Arr,
    parts: Arr,
    nd: int,
    keep: bool,
) -> int:
    """Deliver the arrivals depth first, from where ``scal[AT]``/``scal[SP]`` say (0, 0: the
    start), logging detections from number ``nd`` on; returns the number logged.

    Stops early, with ``scal[SP] > 0``, when a step could overflow the cell arrays or the
    log: the caller grows them and calls again with the same arguments and the count
    returned. The log's room is the shortest of ``det_at``, ``det_node``, ``det_occ`` and
    ``part_off`` (one more). Without ``keep`` only ``det_at`` and ``det_node`` are written
    (and measured): no parts and no monitored lists (a ternary's count alone decides)."""
    n_det = min(det_at.shape[0], det_node.shape[0])
    if keep:
        n_det = min(n_det, det_occ.shape[0], part_off.shape[0] - 1)
    n_parts = parts.shape[0]
    i = scal[AT]
    sp = scal[SP]
    if nd == 0:
        part_off[0] = 0
    while i < arr_node.shape[0]:
        if sp == 0:
            x = arr_node[i]
            if x < 0:
                i += 1
                continue
            stk_node[0], stk_pos[0], stk_occ[0] = x, par_off[x], arr_occ[i]
            sp = 1
        now = arr_time[i]
        while sp > 0:
            top = sp - 1
            node = stk_node[top]
            j = stk_pos[top]
            if j == par_off[node + 1]:
                sp -= 1
                continue
            p = par_node[j]
            np_ = part_off[nd] if keep else 0
            if nd >= n_det or (
                keep and (np_ + 2 + count[p] > n_parts or not has_cell(cell_occ, scal))
            ):  # no room for what this step may write: the caller grows the arrays
                scal[AT], scal[SP] = i, sp
                return nd
            stk_pos[top] = j + 1
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
                            clear_monitored(p, mon_head, mon_tail, cell_next, scal)
            found = False
            if c == OR:
                if keep:
                    parts[np_] = cons
                    np_ += 1
                found = True
            elif c == AND:
                if not st_set[p, role]:
                    st_set[p, role] = True
                    st_time[p, role] = now
                    st_occ[p, role] = cons
                if st_set[p, 0] and st_set[p, 1]:
                    if keep:
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
                    if keep:
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
                    clear_monitored(p, mon_head, mon_tail, cell_next, scal)
            elif not st_set[p, 0]:
                pass
            elif role == 1:  # monitored: count it (and keep it for the parts)
                count[p] += 1
                if keep:
                    push_monitored(p, cons, mon_head, mon_tail, cell_occ, cell_next, scal)
            else:  # closing: detect by the count, then reset either way
                k = count[p]
                found = k > 0 if c == ALL else (k == times[p] if c == TIMES else k == 0)
                if found and keep:
                    parts[np_] = st_occ[p, 0]
                    np_ += 1
                    cell = mon_head[p]
                    while cell >= 0:
                        parts[np_] = cell_occ[cell]
                        np_ += 1
                        cell = cell_next[cell]
                    parts[np_] = cons
                    np_ += 1
                st_set[p, 0] = False
                count[p] = 0
                clear_monitored(p, mon_head, mon_tail, cell_next, scal)
            if found:
                occ = scal[NEXT_OCC]
                scal[NEXT_OCC] = occ + 1
                det_at[nd], det_node[nd] = i, p
                if keep:
                    det_occ[nd] = occ
                    part_off[nd + 1] = np_
                nd += 1
                stk_node[sp], stk_pos[sp], stk_occ[sp] = p, par_off[p], occ
                sp += 1
        i += 1
    scal[AT], scal[SP] = 0, 0
    return nd
