"""The HTTP API's request and response bodies as pydantic models (they make the OpenAPI).

Bodies are read by the routes themselves (bounded while read, media type checked), then
parsed with these models; responses are validated against them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from semps.broker.contracts import DeadLetter

__all__ = [
    "BODY_MODELS",
    "Axiom",
    "BatchIn",
    "BatchItem",
    "BatchOut",
    "DeadLetterPage",
    "Entity",
    "ErrorBody",
    "GraphEdit",
    "GraphInfo",
    "Health",
    "JsonEvent",
    "JsonSubscription",
    "Published",
    "Replayed",
    "SubscriptionBatchOut",
    "SubscriptionCreated",
    "SubscriptionOut",
    "SubscriptionPage",
    "TokenCreated",
    "TokenIn",
    "TokenOut",
    "Version",
]


class ErrorBody(BaseModel):
    """Every 4xx/5xx body: a stable ``error`` code and a message for people."""

    error: str = Field(examples=["not_found"])
    detail: str
    line: int | None = Field(None, description="1-based line of a syntax error")
    column: int | None = Field(None, description="1-based column of a syntax error")
    construct_: str | None = Field(
        None, alias="construct", description="the unsupported SPARQL construct"
    )


class Health(BaseModel):
    """``GET /health``."""

    status: Literal["ok"]
    subscriptions: int


class SubscriptionCreated(BaseModel):
    """A registered subscription; ``secret`` signs its webhook calls (with ``callback``)."""

    id: str
    secret: str | None = None


class SubscriptionBatchOut(BaseModel):
    """``POST /subscriptions/batch``: each item's outcome, in order: registered (its id) or
    refused with its error."""

    subscriptions: list[SubscriptionCreated | ErrorBody]


class SubscriptionOut(BaseModel):
    """A subscription as its owner (or an admin) sees it."""

    id: str
    kind: str
    text: str
    owner: str | None
    name: str | None
    status: Literal["active", "suspended"]
    reason: str | None = Field(None, description="why it is suspended")
    matches: int = Field(
        0, description="notifications made so far (events that matched; pruned ones count)"
    )
    last_match: float | None = Field(
        None, description="Unix time of the latest notification (null: none yet)"
    )


class SubscriptionPage(BaseModel):
    """One page of subscriptions; ``next`` is the cursor of the next page (null: the last)."""

    items: list[SubscriptionOut]
    next: str | None


class Published(BaseModel):
    """An accepted event and how many notifications it made; for one that changed the
    knowledge graph (retained, or a SPARQL Update), the graph's version after it."""

    id: str
    matched: int
    graph_version: int | None = None


class BatchItem(BaseModel):
    """One event of a batch: its document as text and its media type; ``retain`` keeps
    its triples in the knowledge graph."""

    media_type: str | None = Field(None, description="default application/rdf+xml")
    body: str
    retain: bool = False


class BatchIn(BaseModel):
    """``POST /events/batch``."""

    events: list[BatchItem]


class BatchOut(BaseModel):
    """Each event's outcome, in order: published or refused with its error."""

    events: list[Published | ErrorBody]


Interval = list[float]


class JsonEvent(BaseModel):
    """A JSON event (``application/json``): content values and/or a region."""

    values: dict[str, float | str] | None = None
    region: dict[str, Interval] | None = Field(
        None, description="attribute -> [low, high]", examples=[{"x": [0.2, 0.4]}]
    )
    time: float | None = None


class Constraint(BaseModel):
    """One content constraint: ``attr op value``, or ``attr between low and high``."""

    attr: str
    op: Literal[">=", "<=", "=", "between"]
    value: float | str | None = None
    low: float | None = None
    high: float | None = None


class JsonSubscription(BaseModel):
    """A JSON subscription: constraints (``kind=content``) or a region (``kind=symmetric``)."""

    constraints: list[Constraint] | None = None
    region: dict[str, Interval] | None = None


class GraphEdit(BaseModel):
    """What an edit of the knowledge graph did, once it and its notifications committed."""

    version: int = Field(description="the graph's version after the edit")
    inserted: int = Field(description="asserted triples inserted")
    deleted: int = Field(description="asserted triples deleted")
    inferred_added: int = Field(description="inferred triples the closure gained")
    inferred_removed: int = Field(description="inferred triples the closure lost")
    notified: int = Field(description="notifications the change made")


class GraphInfo(BaseModel):
    """``GET /graph/info``: the knowledge graph's sizes."""

    version: int
    triples: int = Field(description="triples in the closure (asserted and inferred)")
    asserted: int
    terms: int


class Version(BaseModel):
    """The ontology version after an edit."""

    version: int


class Axiom(BaseModel):
    """An axiom to add or remove: ``subject kind object``."""

    kind: str = Field(
        examples=["subClassOf"],
        description="subClassOf, subPropertyOf, equivalentClass, equivalentProperty, inverseOf",
    )
    subject: str
    object: str


class Entity(BaseModel):
    """A class or property to add, with its parents."""

    iri: str
    parents: list[str] = []
    kind: Literal["object", "datatype"] = "object"


class DeadLetterPage(BaseModel):
    """One page of dead letters; ``next`` is the cursor of the next page (null: the last)."""

    items: list[DeadLetter]  # the store's record (a dataclass) is the schema
    next: str | None


class Replayed(BaseModel):
    """The outcome of replaying a dead letter."""

    delivered: bool
    error: str | None


class TokenIn(BaseModel):
    """``POST /tokens``: a role and an optional lifetime (seconds, or ``30d``, ``12h``...)."""

    role: Literal["admin", "publisher", "subscriber"]
    subject: str | None = Field(
        None, max_length=200, description="whose subscriptions (default: a new name)"
    )
    expires_in: int | str | None = Field(None, examples=[3600, "30d"])


class TokenOut(BaseModel):
    """A token as listed: never its secret."""

    id: str
    role: str
    subject: str
    created: float = Field(description="Unix time")
    expires: float | None = Field(description="Unix time; null: never")
    revoked: float | None = Field(description="Unix time of the revocation; null: not revoked")


class TokenCreated(TokenOut):
    """A new token: ``token`` is the secret, shown this once."""

    token: str


#: The bodies routes read themselves and the error body (documented through ``$ref``).
BODY_MODELS: tuple[type[BaseModel], ...] = (
    ErrorBody,
    Axiom,
    BatchIn,
    Entity,
    JsonEvent,
    JsonSubscription,
    TokenIn,
)
