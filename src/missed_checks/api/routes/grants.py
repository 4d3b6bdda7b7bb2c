"""The management API's grant routes (#31): ``/grants`` (list) and one principal's grant (read,
put, delete); admins only (:mod:`missed_checks.permissions.granting`: anyone else is 403).

``PUT /grants/{principal}`` without ``If-Match`` creates a grant (201); a grant that exists already
needs the ETag it was read with (428 without it, 412 when stale), or ``If-Match: *`` to replace
whatever it is (201 when there was none). A principal is a person's user name or an IAM
principal's ARN, URL-encoded in the path (``arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fyard``)."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.api import etags, http_api
from missed_checks.api.routes.context import caller, resolver, table
from missed_checks.errors import Conflict, InvalidInput
from missed_checks.permissions import granting
from missed_checks.permissions.grant import Grant

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated
PUT_FIELDS = ("roles", "admin")


def _tagged(grant: Grant, status: int = HTTPStatus.OK) -> Response[str]:
    return etags.tagged(grant.to_dict(), grant.revision, status=status)


@router.get("/grants")
def list_grants() -> dict[str, Any]:
    query = http_api.page_query(resolver(router))
    page = granting.list_grants(table(), caller(router), query.position, query.limit)
    return http_api.page_answer((grant.to_dict() for grant in page.items), page.next_position, query)


@router.get("/grants/<principal>")
def get_grant(principal: str) -> Response[str]:
    http_api.query_parameters(resolver(router))
    return _tagged(granting.get_grant(table(), caller(router), unquote(principal)))


@router.put("/grants/<principal>")
def put_grant(principal: str) -> Response[str]:
    app = resolver(router)
    http_api.query_parameters(app)
    headers = {name.lower() for name in (app.current_event.headers or {})}
    creating = etags.HEADER.lower() not in headers
    if_match = etags.ANY if creating else etags.if_match(app)
    body = http_api.fields(http_api.json_body(app), PUT_FIELDS, what="a grant")
    if "roles" not in body:
        raise InvalidInput("roles", 'is required: a map of site id to role, such as {"north": "operator"} '
                                             "({} for none)")
    try:
        grant = granting.put_grant(table(), caller(router), unquote(principal), roles=body["roles"],
                                   admin=body.get("admin", False), now=clock.now(), if_match=if_match,
                                   create=True if creating else None)
    except Conflict as exists:
        if not creating:
            raise
        raise etags.PreconditionRequired(f"{exists}: GET /grants/{{principal}} and send its ETag in If-Match, or "
                                         "If-Match: * to replace whatever it is") from exists
    return _tagged(grant, HTTPStatus.CREATED if grant.revision == 1 else HTTPStatus.OK)


@router.delete("/grants/<principal>")
def delete_grant(principal: str) -> Response[str]:
    app = resolver(router)
    http_api.query_parameters(app)
    if_match = etags.if_match(app)
    granting.delete_grant(table(), caller(router), unquote(principal), if_match)
    return Response(status_code=HTTPStatus.NO_CONTENT)
