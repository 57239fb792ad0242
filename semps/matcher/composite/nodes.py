"""The event tree's values: its nodes, a batch's detections, and growable arrays.

:class:`~semps.matcher.composite.tree.EventTree` keeps one :class:`Node` per event name
and answers a batch of arrivals with :class:`Detections`; its detection state lives in
numpy arrays that :func:`grown` enlarges when a run needs more room.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from semps.matcher.composite.language import Definition

__all__ = ["Constituents", "Detections", "IntArray", "Name", "Node", "grown", "object_array"]

Constituents = list[dict[str, Any]]
IntArray = npt.NDArray[np.int64]
#: A node's name: an event name, or any hashable key a caller names events by (the broker's
#: composite matcher uses ``(owner, name)``, so tenants' names never meet).
Name = Hashable


@dataclass(eq=False)
class Node:
    """An event in the tree: a primitive (``definition is None``) or a composite.

    ``parents`` lists ``(parent, role, gated)`` in the order the parents were defined;
    ``gated`` marks the roles that only count while the parent is open (``then``'s right
    child, a ternary's monitored and closing children): while the parent is closed they are
    the seed's passiveComEvents, skipped without a call.
    """

    name: Name
    id: int
    definition: Definition | None = None
    parents: list[tuple[Node, int, bool]] = field(default_factory=list)
    operands: tuple[Name, ...] = ()


class Detections(NamedTuple):
    """What a batch of arrivals detected, in delivery order: ``at[i]`` is the arrival (its
    index in the batch) and ``names[i]`` the composite."""

    at: IntArray
    names: list[Name]


def object_array(items: Sequence[Any]) -> npt.NDArray[np.object_]:
    """``items`` as a 1-D object array (``np.array`` would make tuples into rows)."""
    out = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        out[i] = item
    return out


def grown(a: Any, size: int, fill: Any = None) -> Any:
    """``a`` copied into the first rows of a new array of ``size`` rows (at least its
    own), the others ``fill`` (left unset without one)."""
    shape = (max(size, len(a)), *a.shape[1:])
    b = np.empty(shape, dtype=a.dtype) if fill is None else np.full(shape, fill, dtype=a.dtype)
    b[: len(a)] = a
    return b
