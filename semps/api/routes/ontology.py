"""``/ontology``: read it (RDF/XML or Turtle), replace or merge a document, and edit axioms,
classes and properties (admin). Every edit answers the new ontology ``version``.

Reads serve the current snapshot and never wait for an edit; an edit is checked against the
ontology limits before anything is applied (422 naming the limit, 413 for a document over
``max_ontology_bytes``) and, when the disk is full, answered 507 with nothing applied."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ValidationError

from semps.api.bodies import (
    JSON,
    json_body,
    read_body,
    request_body,
    require_media_type,
    text_content,
)
from semps.api.context import Context
from semps.api.errors import responses
from semps.api.models import Axiom, Entity, Version
from semps.documents import SUPPORTED_MEDIA_TYPES
from semps.errors import DocumentTooLarge, OntologyError

__all__ = ["ontology_router"]

M = TypeVar("M", bound=BaseModel)

#: The most bytes of a JSON edit (an axiom, a class or a property).
MAX_EDIT = 65536
_RDF_BODY = request_body(text_content(SUPPORTED_MEDIA_TYPES))


_AXIOM_MSG = 'expected JSON {"kind": ..., "subject": IRI, "object": IRI}'
_ENTITY_MSG = 'expected JSON {"iri": IRI, "parents": [IRI, ...], "kind": "object"|"datatype"}'
_EXPECTED: dict[type[BaseModel], str] = {Axiom: _AXIOM_MSG, Entity: _ENTITY_MSG}
_EDIT_ERRORS = responses(400, 401, 403, 413, 415, 422, 503, 507)


def ontology_router(ctx: Context) -> APIRouter:
    """The ontology routes."""
    router = APIRouter(tags=["ontology"])
    ontology = ctx.broker.ontology
    admin = [Depends(ctx.auth.require("admin"))]

    async def edit(function: Callable[..., object], *args: object) -> Version:
        # the knowledge graph is closed again under the edited ontology, and the edit
        # answered once that change and its notifications are committed
        await ctx.broker.graphs.edit_ontology(lambda: function(*args))
        return Version(version=ontology.version)

    async def document(request: Request) -> tuple[bytes, str | None]:
        declared = require_media_type(request, SUPPORTED_MEDIA_TYPES)
        limit = ontology.limits.max_ontology_bytes
        try:
            return await read_body(request, limit), declared
        except DocumentTooLarge as exc:
            msg = f"the ontology document is over the limit of {limit} bytes (max_ontology_bytes)"
            raise DocumentTooLarge(msg) from exc

    async def parsed(request: Request, model: type[M], message: str) -> M:
        require_media_type(request, (JSON,))
        try:
            return model.model_validate_json(await read_body(request, MAX_EDIT))
        except ValidationError as exc:
            raise OntologyError(message) from exc

    @router.get(
        "/ontology",
        dependencies=[Depends(ctx.auth.require())],
        response_class=Response,
        responses={
            200: {"content": {"application/rdf+xml": {}, "text/turtle": {}}},
            **responses(401),
        },
    )
    def get_ontology(accept: str | None = Header(None)) -> Response:
        """The ontology as RDF/XML, or Turtle when ``Accept`` asks for it."""
        turtle = accept is not None and "turtle" in accept
        body = ontology.export("turtle" if turtle else "rdfxml")
        return Response(body, media_type="text/turtle" if turtle else "application/rdf+xml")

    @router.put("/ontology", dependencies=admin, openapi_extra=_RDF_BODY, responses=_EDIT_ERRORS)
    async def replace_ontology(request: Request) -> Version:
        """Replace the whole ontology with a document."""
        data, declared = await document(request)
        return await edit(lambda: ontology.load(data, format=declared, replace=True))

    @router.post("/ontology", dependencies=admin, openapi_extra=_RDF_BODY, responses=_EDIT_ERRORS)
    async def merge_ontology(request: Request) -> Version:
        """Merge a document into the ontology."""
        data, declared = await document(request)
        return await edit(lambda: ontology.load(data, format=declared))

    def json_edit(
        method: str, path: str, name: str, doc: str, model: type[M], apply: Callable[[M], object]
    ) -> None:
        """Route ``method path``: parse a JSON ``model`` and ``apply`` it to the ontology."""
        message = _EXPECTED[model]

        async def endpoint(request: Request) -> Version:
            item = await parsed(request, model, message)
            return await edit(apply, item)

        router.add_api_route(
            path,
            endpoint,
            methods=[method],
            name=name,
            description=doc,
            response_model=Version,
            dependencies=admin,
            openapi_extra=json_body(model),
            responses=_EDIT_ERRORS,
        )

    json_edit(
        "POST",
        "/ontology/axioms",
        "add_axiom",
        "Add an axiom (subClassOf, subPropertyOf, equivalentClass, ...).",
        Axiom,
        lambda a: ontology.add_axiom(a.kind, a.subject, a.object),
    )
    json_edit(
        "DELETE",
        "/ontology/axioms",
        "remove_axiom",
        "Remove an axiom.",
        Axiom,
        lambda a: ontology.remove_axiom(a.kind, a.subject, a.object),
    )
    json_edit(
        "POST",
        "/ontology/classes",
        "add_class",
        "Declare a class under its parents.",
        Entity,
        lambda e: ontology.add_class(e.iri, e.parents),
    )
    json_edit(
        "POST",
        "/ontology/properties",
        "add_property",
        "Declare an object or datatype property under its parents.",
        Entity,
        lambda e: ontology.add_property(e.iri, e.kind, e.parents),
    )

    @router.delete(
        "/ontology/entities", dependencies=admin, responses=responses(400, 401, 403, 422)
    )
    async def remove_entity(
        iri: str = Query(..., description="a class or property IRI"),
    ) -> Version:
        """Remove a class or property and the axioms that mention it."""
        return await edit(ontology.remove_class, iri)

    return router
