"""semps' knowledge-graph engine in process, as a :class:`kg_systems.KgSystem`: the
ontology compiled, the graph a :class:`~semps.graph.graph.KnowledgeGraph` in a SQLite file,
the subscriptions in a :class:`~semps.matcher.semantic.SemanticMatcher`; each event matched
against the graph's view, each update's notifications computed on the view before it
(``change_matches``) and then applied, as the service's workers do.

(The service itself runs the same cases over HTTP: tests/api/test_api_graph_oracle.py.)
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from kg_oracle import Solutions, Triple
from kg_systems import SYSTEMS, KgSystem

from semps.event import Event
from semps.graph import KnowledgeGraph, connect
from semps.graph.change import GraphChange
from semps.limits import Limits
from semps.matcher.base import MatchContext, Subscription
from semps.matcher.semantic import SemanticMatcher
from semps.ontology import compile_axioms
from semps.ontology.expansion import Expansion

#: Every solution listed (the service's notifications keep the first 100).
ALL = Limits(max_solutions=1_000_000)


def _counter(rows: Iterable[Mapping[str, object]]) -> Solutions:
    return Counter(frozenset(row.items()) for row in rows)


class SempsInProcess(KgSystem):
    name = "semps"

    def _open(
        self, ontology: Sequence[Triple], graph: Sequence[Triple], queries: Mapping[str, str]
    ) -> tuple[KnowledgeGraph, Expansion, SemanticMatcher]:
        expansion = compile_axioms(ontology)
        self.folder = Path(tempfile.mkdtemp(prefix="kg-semps-"))
        self.conn = connect(self.folder / "semps.sqlite3")
        kg = KnowledgeGraph.open(self.conn, expansion)
        self._apply(kg, kg.plan_insert(list(graph)))
        matcher = SemanticMatcher(solution_limit=ALL.max_solutions)
        for qid, text in queries.items():
            matcher.add(Subscription(qid, "semantic", text))
        return kg, expansion, matcher

    def _close(self) -> None:
        self.conn.close()
        shutil.rmtree(self.folder)

    def _apply(self, kg: KnowledgeGraph, change: GraphChange) -> None:
        self.conn.execute("BEGIN")
        kg.apply(change)
        self.conn.execute("COMMIT")

    def added(self, ontology, graph, events, queries):  # type: ignore[no-untyped-def]
        kg, expansion, matcher = self._open(ontology, graph, queries)
        out = []
        for i, triples in enumerate(events):
            event = Event(f"e{i}", tuple(_apart(t, f"e{i}") for t in triples))
            context = MatchContext(event, expansion, limits=ALL, graph=kg.view)
            out.append({m.subscription: _counter(m.solutions) for m in matcher.match(context)})
        self._close()
        return out

    def change(self, ontology, graph, updates, queries):  # type: ignore[no-untyped-def]
        kg, _, matcher = self._open(ontology, graph, queries)
        out = []
        for text in updates:
            change = kg.plan_update(text)
            found = matcher.change_matches(change, kg.view)
            out.append(
                {c.subscription: (_counter(c.solutions), _counter(c.removed)) for c in found}
            )
            self._apply(kg, change)
        self._close()
        return out


def _apart(triple: Triple, label: str) -> Triple:
    """An event's blank nodes renamed apart from the graph's."""
    s, p, o = (
        f"_:{label}{t[2:]}" if isinstance(t, str) and t.startswith("_:") else t for t in triple
    )
    return (s, p, o)


SYSTEMS.append(SempsInProcess())
