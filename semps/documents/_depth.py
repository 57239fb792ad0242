"""Screen a document's nesting depth before any parser sees its bytes.

RDF parsers spend time super-linear in the nesting of what they read (1.2 MB of nested
RDF/XML cost 36 s of CPU), so :func:`screen_depth` refuses a document nested deeper than
``max_document_depth`` with :class:`~semps.errors.EventLimitExceeded` carrying the line and
column where it gets too deep:

- XML: element depth;
- Turtle (and TriG, N3): ``[`` / ``(`` depth (blank-node property lists, collections),
  outside strings, IRIs and comments;
- JSON-LD: ``{`` / ``[`` depth, outside strings.

The screen is one linear pass that does not loop in Python per character or per tag: regular
expressions (possessive, so they never backtrack) remove strings, IRIs and comments, and
numpy sums the brackets that remain. Positions are worked out only for a refusal.
"""

from __future__ import annotations

import re
import xml.parsers.expat

import numpy as np
import numpy.typing as npt

from semps.documents._screen import position
from semps.errors import EventLimitExceeded, RDFSyntaxError

__all__ = ["screen_depth"]

_XML, _TURTLE, _JSON = "xml", "turtle", "json"

# What may hold brackets that do not nest: removed before counting.
_TURTLE_OPAQUE = re.compile(
    rb'"""(?:[^"\\]++|\\.|"(?!""))*+"""'
    rb"|'''(?:[^'\\]++|\\.|'(?!''))*+'''"
    rb'|"(?:[^"\\\n\r]++|\\.)*+"'
    rb"|'(?:[^'\\\n\r]++|\\.)*+'"
    rb"|<[^<>\s]*+>"
    rb"|\#[^\n\r]*+"
    rb"|\\.",
    re.S,
)
_JSON_OPAQUE = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.S)
_OPENERS = {_TURTLE: b"[(", _JSON: b"{["}
_CLOSERS = {_TURTLE: b"])", _JSON: b"}]"}

# XML markup whose content is not elements: comments, CDATA sections, processing
# instructions (a DOCTYPE's declarations start with "<!" and are never counted).
_XML_SKIP = re.compile(rb"<!--|<!\[CDATA\[|<\?")
_DECLARATION = re.compile(rb"<!(?!--|\[CDATA\[)")
_XML_SKIP_END = {b"<!--": b"-->", b"<![CDATA[": b"]]>", b"<?": b"?>"}


def _too_deep(data: bytes, offset: int, limit: int) -> EventLimitExceeded:
    line, column = position(data, offset)
    msg = f"the document nests deeper than the limit of {limit} levels (max_document_depth)"
    return EventLimitExceeded(msg, line=line, column=column)


def screen_depth(data: bytes, syntax: str, limit: int) -> None:
    """Raise :class:`EventLimitExceeded` if ``data`` nests deeper than ``limit``.

    ``syntax`` is ``"xml"``, ``"turtle"`` or ``"json"``; anything else has no nesting.

    Example:
        >>> try:
        ...     screen_depth(b"<a><b><c/></b></a>", "xml", 2)
        ... except EventLimitExceeded as exc:
        ...     print(exc.line, exc.column, exc.detail)
        1 7 the document nests deeper than the limit of 2 levels (max_document_depth)
    """
    if syntax == _XML:
        _screen_xml_depth(data, limit)
    elif syntax in _OPENERS:
        _screen_brackets(data, syntax, limit)


# -- Turtle, JSON-LD --------------------------------------------------------------------------


def _screen_brackets(data: bytes, syntax: str, limit: int) -> None:
    openers, closers = _OPENERS[syntax], _CLOSERS[syntax]
    if sum(data.count(c) for c in openers) <= limit:
        return  # cannot nest deeper than it opens
    opaque = _TURTLE_OPAQUE if syntax == _TURTLE else _JSON_OPAQUE
    if _max_depth(opaque.sub(b"", data), openers, closers) <= limit:
        return
    # Refused: blank the opaque spans instead (same length), so offsets are the document's.
    blanked = opaque.sub(lambda m: b" " * len(m.group()), data)
    raise _too_deep(data, _first_past(blanked, openers, closers, limit), limit)


def _steps(data: bytes, openers: bytes, closers: bytes) -> tuple[npt.NDArray[np.int64], ...]:
    chars = np.frombuffer(data, np.uint8)
    where = np.flatnonzero(np.isin(chars, np.frombuffer(openers + closers, np.uint8)))
    step = np.where(np.isin(chars[where], np.frombuffer(openers, np.uint8)), 1, -1)
    return where, np.cumsum(step)


def _max_depth(data: bytes, openers: bytes, closers: bytes) -> int:
    _, depth = _steps(data, openers, closers)
    return int(depth.max()) if len(depth) else 0


def _first_past(data: bytes, openers: bytes, closers: bytes, limit: int) -> int:
    where, depth = _steps(data, openers, closers)
    return int(where[np.argmax(depth > limit)])


# -- XML --------------------------------------------------------------------------------------


def _screen_xml_depth(data: bytes, limit: int) -> None:
    if data.count(b"<") <= limit:
        return
    fast = _xml_depths(data)
    if fast is None:  # a tag the vectorised reading cannot be sure of: ask expat
        _expat_depth(data, limit)
        return
    where, depth = fast
    if len(depth) and int(depth.max()) > limit:
        raise _too_deep(data, int(where[np.argmax(depth > limit)]), limit)


def _skipped(data: bytes) -> list[tuple[int, int]]:
    """The spans of comments, CDATA sections and processing instructions."""
    spans = []
    at = 0
    while (found := _XML_SKIP.search(data, at)) is not None:
        end = data.find(_XML_SKIP_END[found.group()], found.end())
        end = len(data) if end < 0 else end + 1
        spans.append((found.start(), end))
        at = end
    return spans


def _xml_depths(data: bytes) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """Element depth after each tag (offsets, depths), read from where ``<`` and ``>`` are;
    ``None`` when that reading cannot be sure of every tag: a declaration (DOCTYPE), a
    ``<`` inside a tag (pyoxigraph accepts ``a="<!--"``, which would hide what follows),
    both quote kinds in one tag, a tag that never ends."""
    if _DECLARATION.search(data):
        return None
    chars = np.frombuffer(data, np.uint8)
    lt = np.flatnonzero(chars == ord("<"))
    spans = _skipped(data) if b"<!" in data or b"<?" in data else []
    if spans:
        starts = np.array([s for s, _ in spans])
        ends = np.array([e for _, e in spans])
        inside = np.searchsorted(starts, lt, side="right") - 1
        lt = lt[(inside < 0) | (lt >= ends[np.maximum(inside, 0)])]
    if not len(lt):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    gt = np.flatnonzero(chars == ord(">"))
    k = np.searchsorted(gt, lt)
    if k[-1] >= len(gt):
        return None  # a tag that never ends: malformed
    end = gt[k]
    if np.any(end[:-1] > lt[1:]):
        return None  # a "<" before the tag's first ">": inside an attribute?
    if spans:  # a comment, CDATA or instruction opened inside a tag: not one
        at = np.searchsorted(lt, starts) - 1
        if np.any((at >= 0) & (end[np.maximum(at, 0)] > starts)):
            return None
    # The first ">" ends the tag unless it is quoted: sure when the tag holds one quote
    # kind only, an even number of times.
    dq = np.flatnonzero(chars == ord('"'))
    sq = np.flatnonzero(chars == ord("'"))
    n_dq = np.searchsorted(dq, end) - np.searchsorted(dq, lt)
    n_sq = np.searchsorted(sq, end) - np.searchsorted(sq, lt)
    if np.any(((n_dq > 0) & (n_sq > 0)) | (n_dq % 2 == 1) | (n_sq % 2 == 1)):
        return None
    closing = chars[np.minimum(lt + 1, len(chars) - 1)] == ord("/")
    empty = chars[end - 1] == ord("/")
    # An empty element nests one level for the time it lasts: +1 at "<", -1 at its ">".
    offsets = np.concatenate([lt, end[empty & ~closing]])
    ends = np.full(int((empty & ~closing).sum()), -1, np.int64)
    steps = np.concatenate([np.where(closing, -1, 1).astype(np.int64), ends])
    order = np.argsort(offsets, kind="stable")
    return offsets[order], np.cumsum(steps[order]).astype(np.int64)


def _expat_depth(data: bytes, limit: int) -> None:
    """Exact element depth from expat, one callback per element. A document expat refuses
    is refused here (RDFSyntaxError, as :mod:`semps.ingest.rdf` words expat's errors):
    pyoxigraph is more lenient, and would read what the screen could not count."""
    parser = xml.parsers.expat.ParserCreate()
    depth = 0

    def start(name: str, attrs: object) -> None:
        nonlocal depth
        depth += 1
        if depth > limit:
            line, column = parser.CurrentLineNumber, parser.CurrentColumnNumber + 1
            msg = f"the document nests deeper than the limit of {limit} levels (max_document_depth)"
            raise EventLimitExceeded(msg, line=line, column=column)

    def end(name: str) -> None:
        nonlocal depth
        depth -= 1

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as exc:
        detail = xml.parsers.expat.ErrorString(exc.code)
        msg = f"malformed XML: {detail}"
        raise RDFSyntaxError(msg, line=exc.lineno, column=exc.offset + 1) from None
