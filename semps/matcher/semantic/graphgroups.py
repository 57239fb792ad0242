"""Subscriptions grouped by template (:mod:`.graphtemplate`), for matching with a knowledge
graph: each template is evaluated once per change, and its changed solutions are
dispatched to the subscriptions by their constants.

- A :class:`Group` holds one template's subscriptions: by their constants (a hash table:
  a solution's parameter values find its :class:`Bucket` in one lookup), and per
  parameter the values subscriptions use (its *domain*: the evaluation drops a solution as
  soon as a parameter is bound to a value no subscription has).
- A :class:`Bucket` holds the subscriptions of one template and constants, as
  :class:`Member` s (those with the same post filters too: one verdict for all of them),
  and which of them a solution passes (:class:`~.graphthresholds.PostFilters`).
- :class:`GraphGroups` indexes the groups by what a change must carry to touch them (the
  properties of their patterns, and each subscription's classes of type patterns), and
  knows per template which of its required patterns the graph can satisfy (:meth:`Group.
  possible`): a required pattern the graph has nothing for must be met by the change, or
  the template gains and loses nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from semps._types import Term
from semps.graph.view import GraphView
from semps.ingest.sparql import algebra as alg
from semps.matcher.semantic.compiled import CompiledSubscription
from semps.matcher.semantic.graphrows import Rows
from semps.matcher.semantic.graphtemplate import TYPE_PARAM, Template, template_of
from semps.matcher.semantic.graphthresholds import PostFilters
from semps.matcher.semantic.templatediff import TemplatePlan
from semps.matcher.semantic.touchkeys import ANY, touch_keys, zero_length
from semps.terms import RDF_TYPE

TouchKey = str | tuple[str, Term]
MemberKey = tuple[tuple[Term, ...], tuple[Any, ...]]
_NO_TYPE = ("type", TYPE_PARAM)


class Member:
    """The subscriptions of one template with the same constants and post filters."""

    __slots__ = ("constants", "ids", "post")

    def __init__(self, constants: tuple[Term, ...], post: tuple[Any, ...]) -> None:
        self.constants = constants
        self.post = post
        self.ids: list[str] = []


class Bucket:
    """A template's members with one tuple of constants."""

    __slots__ = ("_filters", "members")

    def __init__(self) -> None:
        self.members: dict[tuple[Any, ...], Member] = {}
        self._filters: PostFilters[Member] | None = None

    def changed(self) -> None:
        """A member came or went."""
        self._filters = None

    def route(self, rows: Rows, out: dict[int, tuple[Member, Rows, Rows]], side: int) -> None:
        """Each row to the members whose post filters it passes (``out`` by member id: its
        gained rows (``side`` 0) and lost rows (1))."""
        filters = self._filters
        if filters is None:
            filters = self._filters = PostFilters((m, m.post) for m in self.members.values())
        for row in rows:
            for member in filters.passing(row):
                found = out.get(id(member))
                if found is None:
                    found = out[id(member)] = (member, [], [])
                (found[2] if side else found[1]).append(row)


class Group:
    """One template's subscriptions (see the module docstring)."""

    __slots__ = ("buckets", "domains", "plan", "required", "size", "static_keys", "template")

    def __init__(self, template: Template) -> None:
        self.template = template
        self.buckets: dict[tuple[Term, ...], Bucket] = {}
        #: Per parameter name: value -> how many members use it.
        self.domains: dict[str, dict[Term, int]] = {p: {} for p in template.params}
        self.size = 0
        self.static_keys = touch_keys(template.keyed) - {_NO_TYPE}
        #: The touch keys of each required pattern (one of which a change must carry, or
        #: the graph must have a triple for).
        self.required = tuple(_atom_keys(a) for a in spine_atoms(template.keyed))
        #: What the template's differ keeps across events (join orders, parameters).
        self.plan = TemplatePlan()

    def add(self, constants: tuple[Term, ...], post: tuple[Any, ...], sub_id: str) -> None:
        bucket = self.buckets.get(constants)
        if bucket is None:
            bucket = self.buckets[constants] = Bucket()
        member = bucket.members.get(post)
        if member is None:
            member = bucket.members[post] = Member(constants, post)
            bucket.changed()
        member.ids.append(sub_id)
        for name, value in zip(self.template.params, constants, strict=True):
            domain = self.domains[name]
            domain[value] = domain.get(value, 0) + 1
        self.size += 1
        self.plan.joins.clear()  # (compiled with the domains)

    def remove(self, constants: tuple[Term, ...], post: tuple[Any, ...], sub_id: str) -> None:
        bucket = self.buckets[constants]
        member = bucket.members[post]
        member.ids.remove(sub_id)
        if not member.ids:
            del bucket.members[post]
            bucket.changed()
            if not bucket.members:
                del self.buckets[constants]
        for name, value in zip(self.template.params, constants, strict=True):
            domain = self.domains[name]
            domain[value] -= 1
            if not domain[value]:
                del domain[value]
        self.size -= 1
        self.plan.joins.clear()

    def members(self) -> Iterable[Member]:
        """Every member."""
        for bucket in self.buckets.values():
            yield from bucket.members.values()

    def dispatch(self, gained: Rows, lost: Rows) -> list[tuple[Member, Rows, Rows]]:
        """The template's changed solutions by member: ``(member, gained, lost)`` for the
        members some of them reach."""
        params = self.template.params
        by_bucket: dict[tuple[Term, ...], tuple[Rows, Rows]] = {}
        for side, rows in ((0, gained), (1, lost)):
            for row in rows:
                key = tuple([row[p] for p in params])
                found = by_bucket.get(key)
                if found is None:
                    if key not in self.buckets:
                        continue
                    found = by_bucket[key] = ([], [])
                found[side].append(row)
        out: dict[int, tuple[Member, Rows, Rows]] = {}
        for key, (g, lo) in by_bucket.items():
            bucket = self.buckets[key]
            bucket.route(g, out, 0)
            bucket.route(lo, out, 1)
        return list(out.values())

    def absent(self, has: Any) -> tuple[frozenset[TouchKey], ...]:
        """The touch keys of the required patterns the graph has no triple for (``has(key)``):
        a change must touch each of them (:meth:`possible` is ``all(not k.isdisjoint(keys)
        for k in absent)``, the graph's side computed once per graph version)."""
        return tuple(k for k in self.required if ANY not in k and not any(has(key) for key in k))

    def possible(self, keys: set[TouchKey], has: Any) -> bool:
        """Whether a change carrying ``keys`` can change the template's solutions: it
        touches it, and every required pattern is touched or has triples in the graph
        (``has(key)``)."""
        for atom_keys in self.required:
            if ANY in atom_keys or not atom_keys.isdisjoint(keys):
                continue
            if not any(has(k) for k in atom_keys):
                return False
        return True


def spine_atoms(node: alg.Node) -> list[Any]:
    """The triple and path patterns every solution of ``node`` matches (its spine's)."""
    kind = type(node)
    if kind is alg.BGP:
        return list(node.triples)  # type: ignore[union-attr]
    if kind is alg.Join:
        return spine_atoms(node.left) + spine_atoms(node.right)  # type: ignore[union-attr]
    if kind in (alg.LeftJoin, alg.Minus):
        return spine_atoms(node.left)  # type: ignore[union-attr]
    if kind in (alg.Filter, alg.Extend):
        return spine_atoms(node.inner)  # type: ignore[union-attr]
    return []


def _atom_keys(atom: Any) -> frozenset[TouchKey]:
    """What a change must carry to change an atom's rows: its touch keys; a type pattern
    whose class is a parameter: every type triple (``rdf:type``)."""
    if type(atom) is not alg.PathPattern and atom.p == RDF_TYPE and atom.o == TYPE_PARAM:
        return frozenset((RDF_TYPE,))
    if type(atom) is alg.PathPattern:
        if zero_length(atom.path):  # (a node to itself needs no triple)
            return frozenset((ANY,))
        return frozenset(alg.path_iris(atom.path)) | (touch_keys(alg.BGP((atom,))) & {ANY})
    return touch_keys(alg.BGP((atom,)))


class GraphGroups:
    """Every subscription by template, indexed by what a change must carry to touch it."""

    def __init__(self) -> None:
        self.groups: dict[Template, Group] = {}
        self.member_of: dict[str, tuple[Template, tuple[Term, ...], tuple[Any, ...]]] = {}
        #: Touch key -> the templates with a subscription it touches (and how many).
        self.by_key: dict[TouchKey, dict[Template, int]] = {}

    def add(self, sub: CompiledSubscription, where: alg.Node) -> None:
        """Index a subscription (replacing one with its id); ``where``: its pattern."""
        if sub.id in self.member_of:
            self.remove(sub.id)
        template, constants, post = template_of(where, sub.projection, sub.distinct, sub.ask)
        group = self.groups.get(template)
        if group is None:
            group = self.groups[template] = Group(template)
        group.add(constants, post, sub.id)
        self.member_of[sub.id] = (template, constants, post)
        for key in self._keys(group, constants):
            found = self.by_key.setdefault(key, {})
            found[template] = found.get(template, 0) + 1

    def remove(self, sub_id: str) -> None:
        """Drop a subscription (no error when it is not there)."""
        found = self.member_of.pop(sub_id, None)
        if found is None:
            return
        template, constants, post = found
        group = self.groups[template]
        for key in self._keys(group, constants):
            users = self.by_key[key]
            users[template] -= 1
            if not users[template]:
                del users[template]
                if not users:
                    del self.by_key[key]
        group.remove(constants, post, sub_id)
        if not group.size:
            del self.groups[template]

    @staticmethod
    def _keys(group: Group, constants: Sequence[Term]) -> list[TouchKey]:
        keys: list[TouchKey] = list(group.static_keys)
        keys.extend(("type", constants[i]) for i in group.template.type_params)
        return list(dict.fromkeys(keys))

    def candidates(self, keys: set[TouchKey]) -> list[Group]:
        """The groups a change carrying ``keys`` may touch."""
        found: dict[Template, None] = dict.fromkeys(self.by_key.get(ANY, {}))
        for k in keys:
            hit = self.by_key.get(k)
            if hit:
                found.update(dict.fromkeys(hit))
        return [self.groups[t] for t in found]


def graph_has(view: GraphView) -> Any:
    """``has(key)``: whether the graph holds a triple a touch key names (a property's, or
    a type triple of a class)."""
    terms, triples = view.terms, view.triples

    def has(key: TouchKey) -> bool:
        if type(key) is tuple:
            t, c = terms.get(RDF_TYPE), terms.get(key[1])
            return t is not None and c is not None and bool(triples.subjects(t, c))
        p = terms.get(key)  # type: ignore[arg-type]
        return p is not None and triples.count(p) > 0

    return has
