"""Namespaces of IRIs and the prefixes the console suggests for an ontology's own.

The store keeps triples, not the prefix declarations of the documents they came from, so the
ontology's prefixes are made from its namespaces: a word of the namespace's path
(``https://brickschema.org/schema/Brick#`` -> ``brick``, ``http://qudt.org/schema/qudt/`` ->
``qudt``). The console lets the common prefixes (``rdf``, ``owl``, ``brick``, ...) and the
user's own win over these.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["namespace_of", "suggest_prefix", "suggest_prefixes"]

#: Path words that say little about a vocabulary ("http://www.w3.org/2004/02/skos/core#").
_GENERIC = frozenset(
    {"ns", "schema", "schemas", "ontology", "ontologies", "onto", "vocab", "vocabulary"}
    | {"core", "terms", "def", "www", "owl", "rdf", "index", "latest", "master", "main"}
)
_SUFFIX = re.compile(r"\.(owl|ttl|rdf|xml|jsonld|nt|n3)$")
_WORD = re.compile(r"[a-z][a-z0-9_-]{0,23}")


def namespace_of(iri: str) -> str:
    """The namespace of an IRI: up to its last ``#``, else its last ``/``, else its last
    ``:``.

    Example:
        >>> namespace_of("https://brickschema.org/schema/Brick#AHU")
        'https://brickschema.org/schema/Brick#'
        >>> namespace_of("http://qudt.org/vocab/unit/DEG_C"), namespace_of("urn:x:y")
        ('http://qudt.org/vocab/unit/', 'urn:x:')
    """
    for mark in "#/:":
        cut = iri.rfind(mark)
        if cut >= 0:
            return iri[: cut + 1]
    return ""


def suggest_prefix(namespace: str) -> str | None:
    """A prefix for ``namespace``: the last telling word of its path, else the first
    telling label of its host; ``None`` when it has neither.

    Example:
        >>> suggest_prefix("https://brickschema.org/schema/Brick#")
        'brick'
        >>> suggest_prefix("http://swat.cse.lehigh.edu/onto/univ-bench.owl#")
        'univ-bench'
        >>> suggest_prefix("http://www.w3.org/2004/02/skos/core#")
        'skos'
        >>> suggest_prefix("http://qudt.org/"), suggest_prefix("http://schema.org/")
        ('qudt', None)
    """
    scheme, _, rest = namespace.lower().partition(":")
    if not rest:
        return None
    host, _, path = rest.lstrip("/").partition("/") if rest.startswith("//") else ("", "", rest)
    for word in reversed(re.split(r"[/#:]+", path)):
        word = _SUFFIX.sub("", word)
        if word not in _GENERIC and _WORD.fullmatch(word):
            return word
    labels = host.split(".")[:-1]  # the top-level domain says nothing
    for label in labels:
        if label not in _GENERIC and _WORD.fullmatch(label):
            return label
    return None


def suggest_prefixes(namespaces: Iterable[str]) -> dict[str, str | None]:
    """A distinct prefix for each namespace (in the order given, which decides who keeps
    a word two would take: the second gets ``word2``), ``None`` for one without a telling
    word.

    Example:
        >>> suggest_prefixes(["http://a.org/x/core#", "http://b.org/x#", "http://w3id.org/"])
        {'http://a.org/x/core#': 'x', 'http://b.org/x#': 'x2', 'http://w3id.org/': 'w3id'}
        >>> suggest_prefixes(["urn:x:", "http://schema.org/"])
        {'urn:x:': 'x', 'http://schema.org/': None}
    """
    taken: set[str] = set()
    found: dict[str, str | None] = {}
    for namespace in namespaces:
        word = suggest_prefix(namespace)
        if word is None:
            found[namespace] = None
            continue
        name, n = word, 1
        while name in taken:
            n += 1
            name = f"{word}{n}"
        taken.add(name)
        found[namespace] = name
    return found
