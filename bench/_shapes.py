"""Subscription and event shapes for ``semantic_workload.py write --shape`` beyond the bench's
own (``bench``: 1-4 patterns, seven templates).

- ``users``: shaped like facilities and catalogue queries. Subscriptions of 1-9 patterns
  (median 4), 80% with a ``?x a C`` type pattern, chains of one to three variables joined
  by object properties, typed literals (``xsd:integer``, ``xsd:boolean``) as constant
  objects, 47% with FILTERs (numeric ranges over integers and decimals, ``regex`` in 14%,
  ``contains``), variables named as people name them (``?s``, ``?sensor``, ``?x``, ...).
  Events of ~17 triples: four nodes typed over the 300-class hierarchy, a chain of two
  links and a third link, an integer value per node, a decimal reading, two enumerated
  codes, a flag and two labels.
- ``deep``: the same with chains of up to five variables over events whose chain is five
  nodes long.
- ``multitype``: nodes of one to three types in events, one to three type patterns per
  variable in subscriptions.
- ``filters``: the users' shape with more FILTER kinds (``IN``, ``!=``, ``STRSTARTS``,
  ``STRLEN``, ``LCASE``, arithmetic, ``!``, ``||``, two variables compared, ``datatype``).

All are drawn from a seeded ``random.Random``; ``breadth`` (0-1) sets how broad the
classes and properties picked are and how wide the ranges, hence the share of
subscriptions that match an event (see :data:`BREADTH` for the calibration).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

EX = "http://bench.example/w#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD = "http://www.w3.org/2001/XMLSchema#"
N_CLASSES, N_PROPS, N_INT, N_STR, N_NODES = 300, 100, 10, 10, 3000
N_ENUM, N_READ = 4, 4
WORDS = ["red", "green", "blue", "gold", "iron", "salt", "oak", "ash", "elm", "fir"]
SHAPES = ("bench", "users", "deep", "multitype", "filters")

#: Patterns per subscription, 1-9 (median 4), as weights.
N_PATTERNS = (8, 12, 16, 18, 14, 11, 9, 7, 5)
ROOTS = ("x", "s", "e", "eq", "sensor", "item")
LINKED = ("y", "p", "pt", "part", "o", "z", "loc", "r")
VALUES = ("v", "val", "n", "value", "t", "w")


@dataclass(frozen=True)
class Shape:
    """What one shape draws: nodes in an event's chain, types per node, the longest chain
    of a subscription's variables, and whether FILTERs of the wider kinds appear."""

    chain: int = 3
    types: tuple[int, ...] = (1,)
    sub_chain: tuple[int, ...] = (30, 45, 25)
    more_filters: bool = False


KINDS = {
    "users": Shape(),
    "deep": Shape(chain=5, sub_chain=(15, 25, 25, 20, 15)),
    "multitype": Shape(types=(1, 2, 3)),
    "filters": Shape(more_filters=True),
}


class Vocabulary:
    """Draws classes and properties by breadth: ``broad`` is the share of draws taken near
    the roots (classes at most two levels deep, properties at most ``prop_depth``)."""

    def __init__(
        self,
        rng: random.Random,
        classes: list[int],
        props: list[int],
        broad: float,
        leaves: bool = False,
        prop_depth: int = 2,
    ) -> None:
        self.rng = rng
        self.broad = broad
        cdepth, pdepth = _depth(classes), _depth(props)
        self.shallow_classes = [i for i in range(1, N_CLASSES) if cdepth[i] <= 2]
        self.classes = list(range(1, N_CLASSES))
        self.shallow_props = [i for i in range(1, N_PROPS) if pdepth[i] <= prop_depth]
        self.props = list(range(1, N_PROPS))
        if leaves:  # only terms without sub-terms: each is hit by its own events only
            class_parents, prop_parents = set(classes), set(props)
            self.classes = [i for i in self.classes if i not in class_parents]
            self.props = [i for i in self.props if i not in prop_parents]

    def cls(self) -> str:
        pool = self.shallow_classes if self.rng.random() < self.broad else self.classes
        return f"<{EX}C{self.rng.choice(pool)}>"

    def prop(self) -> str:
        pool = self.shallow_props if self.rng.random() < self.broad else self.props
        return f"<{EX}p{self.rng.choice(pool)}>"


class Draw:
    """Seeded draws of one shape's events and subscriptions over a class and property tree
    (parents lists, as ``semantic_workload.tree`` makes them)."""

    def __init__(
        self, rng: random.Random, shape: str, classes: list[int], props: list[int], breadth: float
    ) -> None:
        self.rng, self.shape, self.breadth = rng, KINDS[shape], breadth
        depth = _depth(classes)
        self.leafish = [i for i in range(N_CLASSES) if depth[i] >= 3] or list(range(N_CLASSES))
        self.link_props = list(range(N_PROPS // 3, N_PROPS))
        # the shallow properties are one level deep here, two in the bench's own shape
        self.terms = Vocabulary(rng, classes, props, breadth, prop_depth=1)

    # Events -------------------------------------------------------------------------------

    def event(self) -> str:
        rng, shape = self.rng, self.shape
        nodes = [f"<{EX}n{rng.randrange(N_NODES)}>" for _ in range(shape.chain + 1)]
        lines = []
        for node in nodes:
            for c in rng.sample(self.leafish, rng.choice(shape.types)):
                lines.append(f"{node} <{RDF}type> <{EX}C{c}> .")
            lines.append(f'{node} <{EX}d{rng.randrange(N_INT)}> "{rng.randrange(100)}"{_INT} .')
        chain = [*zip(nodes[:-2], nodes[1:-1], strict=True), (nodes[0], nodes[-1])]
        for a, b in chain:
            lines.append(f"{a} <{EX}p{rng.choice(self.link_props)}> {b} .")
        reading = f"{rng.randrange(1000) / 10:.1f}"
        lines.append(f'{rng.choice(nodes)} <{EX}r{rng.randrange(N_READ)}> "{reading}"{_DEC} .')
        for _ in range(2):
            code = rng.randrange(10)
            lines.append(f'{rng.choice(nodes)} <{EX}e{rng.randrange(N_ENUM)}> "{code}"{_INT} .')
        flag = rng.choice(("true", "false"))
        lines.append(f'{rng.choice(nodes)} <{EX}flag> "{flag}"^^<{XSD}boolean> .')
        for node in rng.sample(nodes, 2):
            words = " ".join(rng.sample(WORDS, 3))
            lines.append(f'{node} <{EX}s{rng.randrange(N_STR)}> "{words}" .')
        return "\n".join(lines) + "\n"

    # Subscriptions ------------------------------------------------------------------------

    def subscription(self) -> str:
        rng, shape = self.rng, self.shape
        total = rng.choices(range(1, 10), N_PATTERNS)[0]
        length = rng.choices(range(1, len(shape.sub_chain) + 1), shape.sub_chain)[0]
        length = min(length, total + 1) if total > 1 else 1
        names = _names(rng, length)
        patterns = [f"?{a} {self.prop()} ?{b}" for a, b in zip(names, names[1:], strict=False)]
        filters: list[str] = []
        vals: list[str] = []
        if rng.random() < 0.8:
            patterns.append(self.typed(rng.choice(names)))
        want_filter = rng.random() < 0.47
        want_regex = want_filter and rng.random() < 0.14 / 0.47
        if want_regex:
            label = self.fresh(vals)
            patterns.append(f"?{rng.choice(names)} <{EX}s{rng.randrange(N_STR)}> ?{label}")
            filters.append(self.regex(label))
        while len(patterns) < total:
            patterns.append(self.decoration(rng.choice(names), vals, filters))
        if want_filter and not filters:
            v = self.fresh(vals)
            patterns.append(f"?{rng.choice(names)} <{EX}d{rng.randrange(N_INT)}> ?{v}")
            filters.append(self.numeric(v, "int"))
        rng.shuffle(patterns)
        body = " . ".join(patterns) + "".join(f" FILTER({f})" for f in filters)
        head = rng.choices(("SELECT *", "SELECT DISTINCT ?" + names[0], "ASK"), (70, 20, 10))[0]
        return f"{head} WHERE {{ {body} }}\n"

    def fresh(self, vals: list[str]) -> str:
        name = self.rng.choice(VALUES) + (str(len(vals)) if vals else "")
        vals.append(name)
        return name

    def typed(self, var: str) -> str:
        return f"?{var} a {self.cls()}"

    def decoration(self, var: str, vals: list[str], filters: list[str]) -> str:
        """One more pattern on ``var``: a type, a value (with a FILTER half the time), a
        constant typed literal, a flag, a reading or a label."""
        rng = self.rng
        kind = rng.choices(
            ("type", "value", "code", "flag", "read", "label"), (30, 30, 12, 8, 10, 10)
        )[0]
        if kind == "type":
            return self.typed(var)
        if kind == "code":
            return f'?{var} <{EX}e{rng.randrange(N_ENUM)}> "{rng.randrange(10)}"{_INT}'
        if kind == "flag":
            return f'?{var} <{EX}flag> "{rng.choice(("true", "false"))}"^^<{XSD}boolean>'
        v = self.fresh(vals)
        if kind == "value":
            if rng.random() < 0.5:
                filters.append(self.numeric(v, "int"))
            return f"?{var} <{EX}d{rng.randrange(N_INT)}> ?{v}"
        if kind == "read":
            if rng.random() < 0.6:
                filters.append(self.numeric(v, "dec"))
            return f"?{var} <{EX}r{rng.randrange(N_READ)}> ?{v}"
        if rng.random() < 0.3:
            filters.append(f'contains(?{v}, "{rng.choice(WORDS)}")')
        return f"?{var} <{EX}s{rng.randrange(N_STR)}> ?{v}"

    def numeric(self, v: str, kind: str) -> str:
        rng = self.rng
        width = max(2, int(100 * self.breadth))
        lo = rng.randrange(100)
        hi = lo + width
        if kind == "dec":
            lo_s, hi_s = f"{lo}.5", f"{hi}.5"
        else:
            lo_s, hi_s = str(lo), str(hi)
        if self.shape.more_filters and rng.random() < 0.5:
            return self.other_filter(v, lo, hi)
        form = rng.randrange(3)
        if form == 0:
            return f"?{v} >= {lo_s} && ?{v} < {hi_s}"
        if form == 1:
            return f"?{v} < {hi_s}" if hi < 100 else f"?{v} > {lo_s}"
        return f"?{v} > {lo_s} || ?{v} < {width // 3}"

    def other_filter(self, v: str, lo: int, hi: int) -> str:
        rng = self.rng
        form = rng.randrange(6)
        if form == 0:
            values = ", ".join(str(rng.randrange(100)) for _ in range(max(2, (hi - lo) // 2)))
            return f"?{v} IN ({values})"
        if form == 1:
            return f"?{v} != {lo} && ?{v} <= {hi}"
        if form == 2:
            return f"?{v} * 2 + 1 > {2 * lo}"
        if form == 3:
            return f"!(?{v} < {lo}) && ?{v} - {lo} <= {hi - lo}"
        if form == 4:
            return f"datatype(?{v}) = <{XSD}integer> && ?{v} >= {lo}"
        return f"abs(?{v} - {lo}) < {max(1, (hi - lo) // 2)}"

    def regex(self, v: str) -> str:
        rng = self.rng
        word, other = rng.sample(WORDS, 2)
        form = rng.randrange(4 if not self.shape.more_filters else 7)
        forms = (
            f'regex(?{v}, "^{word}")',
            f'regex(?{v}, "{word}|{other}")',
            f'regex(?{v}, "{word.upper()}", "i")',
            f'regex(?{v}, "{word} [a-z]+$")',
            f'strstarts(?{v}, "{word}")',
            f"strlen(?{v}) > {rng.randrange(10, 16)}",
            f'lcase(?{v}) = "{word} {other} {rng.choice(WORDS)}"',
        )
        return forms[form]

    def cls(self) -> str:
        return self.terms.cls()

    def prop(self) -> str:
        return self.terms.prop()


_INT = f"^^<{XSD}integer>"
_DEC = f"^^<{XSD}decimal>"


def _names(rng: random.Random, length: int) -> list[str]:
    root = rng.choice(ROOTS)
    linked = rng.sample(LINKED, length - 1)
    return [root, *linked]


def _depth(parents: list[int]) -> list[int]:
    depth = [0] * len(parents)
    for i in range(1, len(parents)):
        depth[i] = depth[parents[i]] + 1
    return depth


#: Breadth by selectivity, calibrated on 10k subscriptions x 200 events of the users'
#: shape (seed 1): the share of subscriptions that match an event.
BREADTH = ((0.001, 0.05), (0.01, 0.38))


def breadth_for(selectivity: float) -> float:
    """The breadth that gives about ``selectivity`` (interpolated in :data:`BREADTH`)."""
    (s0, b0), (s1, b1) = BREADTH
    if selectivity <= s0:
        return b0
    if selectivity >= s1:
        return min(1.0, b1 * selectivity / s1)
    return b0 + (b1 - b0) * (selectivity - s0) / (s1 - s0)


def write_shape(
    folder: Path,
    rng: random.Random,
    shape: str,
    classes: list[int],
    props: list[int],
    subs: int,
    events: int,
    selectivity: float,
) -> None:
    """Write ``subs`` subscriptions and ``events`` events of ``shape`` into ``folder``."""
    draw = Draw(rng, shape, classes, props, breadth_for(selectivity))
    sub_dir, event_dir = folder / "subscriptions", folder / "events"
    sub_dir.mkdir(exist_ok=True)
    event_dir.mkdir(exist_ok=True)
    for i in range(subs):
        (sub_dir / f"s{i:06}.rq").write_text(draw.subscription())
    for i in range(events):
        (event_dir / f"e{i:05}.nt").write_text(draw.event())
