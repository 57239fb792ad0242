"""Triples in a group (``s p o``, ``;`` and ``,`` lists, ``[ ... ]`` blank nodes, ``( ... )``
collections) and their predicates: variables, IRIs and property paths. A path of links in
sequence becomes triple patterns joined by fresh variables; any other path stays one
:class:`~semps.ingest.sparql.algebra.PathPattern`."""

from __future__ import annotations

from collections.abc import Callable

from semps.ingest.sparql import algebra as alg
from semps.ingest.sparql._lexer import Token
from semps.ingest.sparql._terms import TermParser
from semps.ingest.sparql.model import PatternTerm, TriplePattern, Var
from semps.terms import RDF, RDF_TYPE

_MODIFIERS = {"*": "star", "+": "plus", "?": "opt"}
#: Operators that continue a property path after an IRI.
_PATH_OPS = frozenset(("/", "|", *_MODIFIERS))
#: Words that start a group element other than triples (a '.' before them is optional).
ELEMENTS = {"OPTIONAL", "MINUS", "FILTER", "BIND", "VALUES", "GRAPH", "SERVICE"}


class TriplesParser(TermParser):
    """The triples of :class:`~semps.ingest.sparql.parser._Parser`'s groups."""

    #: The triples read since the group's last other element (a basic graph pattern's).
    block: list[TriplePattern | alg.PathPattern]
    pattern_count: int
    #: The constructs beyond basic graph patterns read so far (an ordered set).
    constructs: dict[str, None]

    def emit(self, pattern: TriplePattern | alg.PathPattern, tok: Token) -> None:
        if self.pattern_count >= self.limits.max_patterns:
            raise self.too_many(self.limits.max_patterns, "triple patterns (max_patterns)", tok)
        self.pattern_count += 1
        self.block.append(pattern)

    def triples_same_subject(self) -> None:
        # "[ :p :o ]" and a non-empty "( ... )" may stand alone; "[]" and "()" may not.
        if self.tok.kind != "OP":  # a variable, an IRI or a literal (the common case)
            self.property_list(self.term(position="subject"))
            return
        if self.tok.is_op("[") and not self.peek().is_op("]"):
            subject = self.blank_node_property_list()
            if self.tok.is_op(".") or self.tok.is_op("}"):
                return
        else:
            collection = self.tok.is_op("(") and not self.peek().is_op(")")
            subject = self.term(position="subject")
            if collection and (self.tok.is_op(".") or self.tok.is_op("}")):
                return
        self.property_list(subject)

    def property_list(self, subject: PatternTerm) -> None:
        while True:
            verb = self.verb()
            while True:
                tok = self.tok
                obj = self.blank_node_property_list() if tok.is_op("[") else self.term("object")
                self.add_triple(subject, verb, obj, tok)
                if not self.tok.is_op(","):
                    break
                self.advance()
            if self.tok.text != ";" or self.tok.kind != "OP":
                return
            while self.tok.is_op(";"):
                self.advance()
            if self.tok.is_op(".") or self.tok.is_op("}") or self.tok.is_op("]"):
                return
            if self.tok.is_keyword(*ELEMENTS) or self.tok.is_op("{"):
                return

    def add_triple(self, s: PatternTerm, verb: Var | alg.Path, o: PatternTerm, tok: Token) -> None:
        """A triple pattern; a path of links and inverse links in sequence becomes triple
        patterns joined by fresh blank variables (SPARQL 1.1 section 18.2.2.4)."""
        if isinstance(verb, Var):
            self.emit(TriplePattern(s, verb, o), tok)
            return
        if verb[0] == "link":  # one IRI (the common case)
            self.emit(TriplePattern(s, verb[1], o), tok)
            return
        steps = _simple_steps(verb)
        if steps is None:
            self.constructs.setdefault("property path")
            self.emit(alg.PathPattern(s, verb, o), tok)
            return
        if len(steps) > 1 or steps[0][1]:
            self.constructs.setdefault("property path")
        ends = [s, *(self.fresh_blank() for _ in steps[1:]), o]
        for k, (iri, inverse) in enumerate(steps):
            a, b = ends[k], ends[k + 1]
            self.emit(TriplePattern(b, iri, a) if inverse else TriplePattern(a, iri, b), tok)

    def verb(self) -> Var | alg.Path:
        tok = self.tok
        if tok.kind == "VAR":
            self.advance()
            self.constructs.setdefault("variable predicate")
            return Var(tok.text[1:])
        if tok.kind in ("IRIREF", "PNAME", "OP") or (tok.kind == "NAME" and tok.text == "a"):
            nxt = self.peek()
            if tok.kind != "OP" and (nxt.kind != "OP" or nxt.text not in _PATH_OPS):
                return ("link", self.path_iri())  # one IRI: what path() reads, sooner
            if tok.kind == "OP" and tok.text not in ("^", "!", "("):
                raise self.error(f"expected a predicate but found {tok.describe()}")
            return self.path()
        raise self.error(f"expected a predicate but found {tok.describe()}")

    def blank_node_property_list(self) -> PatternTerm:
        self.expect_op("[")
        self.enter()
        node = self.fresh_blank()
        if not self.tok.is_op("]"):
            self.property_list(node)
        self.expect_op("]")
        self.depth -= 1
        return node

    def collection(self) -> PatternTerm:
        """``( item ... )``: an RDF list, as ``rdf:first`` / ``rdf:rest`` triple patterns
        over fresh blank nodes; its head (``rdf:nil`` when empty)."""
        start = self.expect_op("(")
        self.enter()
        items: list[PatternTerm] = []
        while not self.tok.is_op(")"):
            if self.tok.is_op("[") and not self.peek().is_op("]"):
                items.append(self.blank_node_property_list())
            else:
                items.append(self.term("list item"))
        self.advance()
        self.depth -= 1
        if not items:
            return RDF + "nil"
        nodes = [self.fresh_blank() for _ in items]
        for k, item in enumerate(items):
            rest = nodes[k + 1] if k + 1 < len(items) else RDF + "nil"
            self.emit(TriplePattern(nodes[k], RDF + "first", item), start)
            self.emit(TriplePattern(nodes[k], RDF + "rest", rest), start)
        return nodes[0]

    # -- property paths --------------------------------------------------------------------

    def path(self) -> alg.Path:
        """``seq | seq | ...``."""
        return self.path_list("|", self.path_sequence, "alt")

    def path_sequence(self) -> alg.Path:
        """``element / element / ...``."""
        return self.path_list("/", self.path_element, "seq")

    def path_list(self, op: str, item: Callable[[], alg.Path], tag: str) -> alg.Path:
        """One ``item``, or several separated by ``op`` as a ``(tag, items)`` path."""
        items = [item()]
        while self.tok.is_op(op):
            self.advance()
            items.append(item())
        return items[0] if len(items) == 1 else (tag, tuple(items))

    def path_element(self) -> alg.Path:
        inverse = self.tok.is_op("^")
        if inverse:
            self.advance()
        path = self.path_primary()
        tok = self.tok
        if tok.kind == "OP" and tok.text in _MODIFIERS:
            self.advance()
            path = (_MODIFIERS[tok.text], path)
        return ("inv", path) if inverse else path

    def path_primary(self) -> alg.Path:
        tok = self.tok
        if tok.is_op("("):
            self.advance()
            self.enter()
            path = self.path()
            self.expect_op(")")
            self.depth -= 1
            return path
        if tok.is_op("!"):
            self.advance()
            return self.negated_set()
        return ("link", self.path_iri())

    def path_iri(self) -> str:
        tok = self.tok
        if tok.kind == "NAME" and tok.text == "a":
            self.advance()
            return RDF_TYPE
        if tok.kind in ("IRIREF", "PNAME"):
            return self.iri(self.advance())
        raise self.error(f"expected a property path but found {tok.describe()}")

    def negated_set(self) -> alg.Path:
        """``!iri``, ``!^iri`` or ``!( iri | ^iri | ... )``."""
        forward: list[str] = []
        inverse: list[str] = []
        bracketed = self.tok.is_op("(")
        if bracketed:
            self.advance()
        while not (bracketed and self.tok.is_op(")")):
            if self.tok.is_op("^"):
                self.advance()
                inverse.append(self.path_iri())
            else:
                forward.append(self.path_iri())
            if not bracketed or not self.tok.is_op("|"):
                break
            self.advance()
        if bracketed:
            self.expect_op(")")
        return ("nps", tuple(sorted(set(forward))), tuple(sorted(set(inverse))))


def _simple_steps(path: alg.Path) -> list[tuple[str, bool]] | None:
    """A path of links and inverse links in sequence as ``(iri, inverse)`` steps, or
    ``None`` when it needs path evaluation."""
    items = path[1] if path[0] == "seq" else (path,)
    steps = []
    for item in items:
        if item[0] == "link":
            steps.append((item[1], False))
        elif item[0] == "inv" and item[1][0] == "link":
            steps.append((item[1][1], True))
        else:
            return None
    return steps
