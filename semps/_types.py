"""Type aliases shared across semps (one place, imported everywhere)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from semps.terms import Literal

#: An IRI is a plain ``str`` holding the absolute IRI (no angle brackets).
IRI: TypeAlias = str
#: A blank node is a ``str`` starting with ``"_:"``; IRIs never do (they need a scheme).
BNode: TypeAlias = str
#: A node that can be a subject: an IRI or a blank node.
Node: TypeAlias = str
#: Any RDF term: an IRI, a blank node or a :class:`~semps.terms.Literal`.
Term: TypeAlias = "str | Literal"
#: A triple (subject, predicate, object).
Triple: TypeAlias = "tuple[str, str, Term]"
#: A scalar attribute value of the content matchers.
Value: TypeAlias = "float | int | str"
