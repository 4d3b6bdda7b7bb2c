"""The management API's audit trail routes (#31): ``GET /audit?kind=&id=`` (one object's changes)
and ``GET /sites/{site_id}/audit`` (every change at a site), oldest first, a page at a time, for a
caller who may ``read_management`` there (:mod:`missed_checks.audit_trails.reading`). The trail is
written from the table's stream by ``AuditFunction``; nothing here writes."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks.api import http_api
from missed_checks.api.routes.context import caller, resolver, table
from missed_checks.audit_trails import reading
from missed_checks.errors import InvalidInput
from missed_checks.sites.site import validate_site_id

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated


@router.get("/audit")
def object_trail() -> dict[str, Any]:
    query = http_api.page_query(resolver(router), "kind", "id")
    kind, object_id = query.filters["kind"], query.filters["id"]
    if kind is None:
        raise InvalidInput("kind", "is required: the kind of object whose trail you want (site, equipment, "
                                   "checklist, ...)")
    if object_id is None:
        raise InvalidInput("id", "is required: the id of the object whose trail you want")
    page = reading.trail_of(table(), caller(router), kind, object_id, query.position, query.limit)
    return http_api.page_answer((entry.to_dict() for entry in page.items), page.next_position, query)


@router.get("/sites/<site_id>/audit")
def site_trail(site_id: str) -> dict[str, Any]:
    query = http_api.page_query(resolver(router))
    page = reading.site_trail(table(), caller(router), validate_site_id(unquote(site_id)), query.position, query.limit)
    return http_api.page_answer((entry.to_dict() for entry in page.items), page.next_position, query)
