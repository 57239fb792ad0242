"""RDF terms as light Python values.

IRIs and blank nodes are plain ``str`` (blank nodes start with ``"_:"``), literals are
:class:`Literal` named tuples. This keeps events cheap to build, hash, compare and pickle
(Spark ships them to workers), which matters at hundreds of thousands of triples a second.
"""

from __future__ import annotations

from operator import itemgetter

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
XSD = "http://www.w3.org/2001/XMLSchema#"

RDF_TYPE = RDF + "type"
XSD_STRING = XSD + "string"
RDF_LANGSTRING = RDF + "langString"

#: The XSD datatypes derived from xsd:integer, and the other numeric ones.
XSD_INTEGER_TYPES = frozenset(
    XSD + t
    for t in (
        "integer",
        "int",
        "long",
        "short",
        "byte",
        "nonNegativeInteger",
        "positiveInteger",
        "nonPositiveInteger",
        "negativeInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
    )
)
XSD_DECIMAL = XSD + "decimal"
XSD_FLOAT_TYPES = frozenset({XSD + "double", XSD + "float"})


class Literal(tuple[str, str, "str | None"]):
    """An RDF literal: lexical form, datatype IRI and language tag (an immutable tuple).

    A plain literal has datatype ``xsd:string`` and ``lang`` ``None``; a language-tagged
    literal has datatype ``rdf:langString`` and a lower-cased ``lang``.

    Example:
        >>> Literal("42", XSD + "integer").n3()
        '"42"^^<http://www.w3.org/2001/XMLSchema#integer>'
        >>> Literal("chat", lang="FR")
        Literal('chat', lang='fr')
    """

    __slots__ = ()

    def __new__(cls, lexical: str, datatype: str | None = None, lang: str | None = None) -> Literal:
        if lang:
            return tuple.__new__(cls, (lexical, RDF_LANGSTRING, lang.lower()))
        return tuple.__new__(cls, (lexical, datatype or XSD_STRING, None))

    def __getnewargs__(self) -> tuple[str, str, str | None]:
        return (self[0], self[1], self[2])

    lexical = property(itemgetter(0), doc="The lexical form.")
    datatype = property(itemgetter(1), doc="The datatype IRI.")
    lang = property(itemgetter(2), doc="The language tag, lower-cased, or None.")

    def __repr__(self) -> str:
        if self[2]:
            return f"Literal({self[0]!r}, lang={self[2]!r})"
        if self[1] == XSD_STRING:
            return f"Literal({self[0]!r})"
        return f"Literal({self[0]!r}, {self[1]!r})"

    def n3(self) -> str:
        """The literal in N-Triples syntax."""
        text = _escape(self.lexical)
        if self.lang:
            return f'"{text}"@{self.lang}'
        if self.datatype == XSD_STRING:
            return f'"{text}"'
        return f'"{text}"^^<{self.datatype}>'


def is_literal(term: object) -> bool:
    """True for a :class:`Literal`."""
    return type(term) is Literal


def is_blank(term: object) -> bool:
    """True for a blank node label (``"_:..."``)."""
    return type(term) is str and term.startswith("_:")


def n3(term: str | Literal) -> str:
    """Any term in N-Triples syntax.

    Example:
        >>> n3("http://ex.org/a"), n3("_:b0")
        ('<http://ex.org/a>', '_:b0')
    """
    if type(term) is Literal:
        return term.n3()
    assert isinstance(term, str)
    return term if term.startswith("_:") else f"<{term}>"


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(text: str) -> str:
    if not any(ch in text for ch in _ESCAPES):
        return text
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


_UNESCAPES = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        code = text[i + 1 : i + 2]
        if code in ("u", "U"):
            width = 4 if code == "u" else 8
            out.append(chr(int(text[i + 2 : i + 2 + width], 16)))
            i += 2 + width
        else:
            out.append(_UNESCAPES[code])
            i += 2
    return "".join(out)


def parse_n3(text: str) -> str | Literal:
    """The inverse of :func:`n3`: one term in N-Triples syntax back to a term.

    Raises:
        ValueError: ``text`` is not one N-Triples term.

    Example:
        >>> parse_n3('"4\\\\"2"^^<http://www.w3.org/2001/XMLSchema#integer>')
        Literal('4"2', 'http://www.w3.org/2001/XMLSchema#integer')
        >>> parse_n3("<http://ex.org/a>"), parse_n3("_:b0"), parse_n3('"chat"@fr')
        ('http://ex.org/a', '_:b0', Literal('chat', lang='fr'))
    """
    if text.startswith("<") and text.endswith(">"):
        return _unescape(text[1:-1])
    if text.startswith("_:") and len(text) > 2:
        return text
    if text.startswith('"'):
        end = text.rfind('"')
        if end > 0:
            try:
                lexical = _unescape(text[1:end])
            except (KeyError, ValueError, IndexError):
                lexical = None
            rest = text[end + 1 :]
            if lexical is not None:
                if not rest:
                    return Literal(lexical)
                if rest.startswith("@") and len(rest) > 1:
                    return Literal(lexical, lang=rest[1:])
                if rest.startswith("^^<") and rest.endswith(">"):
                    return Literal(lexical, rest[3:-1])
    msg = f"not an N-Triples term: {text!r}"
    raise ValueError(msg)
