"""The semantic matcher's code constants, shared by its Python modules and its compiled
kernels (which read them as numbers): the node-pair wildcard, the sentinel property of a
variable predicate, how a verification step finds its rows, and the instructions of a
family's program."""

from __future__ import annotations

__all__ = [
    "ALL",
    "AND",
    "ANY_PROPERTY",
    "BOTH",
    "BY_O",
    "BY_S",
    "COMPARISONS",
    "END",
    "EQ",
    "MASK",
    "OR",
    "STAR",
]

#: The node-pair-name wildcard: a variable matches any node (the seed's ``*``).
STAR = "*"

#: The property of a required pattern that any property satisfies (a variable predicate
#: with a constant end); no IRI starts with NUL.
ANY_PROPERTY = "\x00any property"

#: How a verification step finds its rows, given the bindings of the earlier steps: all
#: of the pattern's rows, by bound subject, by bound object, or by both ends bound.
ALL, BY_S, BY_O, BOTH = 0, 1, 2, 3

#: Instruction codes of a family's program (see ``_join_kernels.family_join_runs``): a
#: term-number test, the six integer comparisons (:data:`COMPARISONS`), a string
#: template's mask, n-ary ``&&`` / ``||``, and the end of a template (the row fails unless
#: the template's value is true).
EQ, MASK, AND, OR, END = 0, 7, 8, 9, 10
COMPARISONS = {"=": 1, "!=": 2, "<": 3, ">": 4, "<=": 5, ">=": 6}
