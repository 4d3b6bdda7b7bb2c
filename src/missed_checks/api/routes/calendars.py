"""The management API's closure calendar routes (#31): ``GET /calendars`` (the caller's sites'),
``GET /calendars/{calendar_id}`` (with its ETag), ``PUT /calendars/{calendar_id}`` (create one at
``site_id``, or, with ``If-Match``, replace its dates: a new revision) and ``DELETE
/calendars/{calendar_id}`` (``If-Match``; refused while a checklist references it). Thin: the rules
are :mod:`missed_checks.checklists.closing`'s, the ``calendar`` commands' too."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any
from urllib.parse import quote, unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.api import etags, http_api
from missed_checks.api.routes.context import caller, table
from missed_checks.checklists import closing
from missed_checks.checklists.closure_calendar import ClosureCalendar, parse_dates, validate_description
from missed_checks.errors import Conflict, InvalidInput
from missed_checks.permissions.authorizing import authorize
from missed_checks.permissions.role import Action
from missed_checks.sites.saving import require_site
from missed_checks.sites.site import validate_site_id

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

PUT_FIELDS = ("site_id", "dates", "description")


def _tagged(calendar: ClosureCalendar, status: int = HTTPStatus.OK, *, created: bool = False) -> Response[str]:
    location = f"/calendars/{quote(calendar.calendar_id, safe='')}" if created else None
    return etags.tagged(calendar.to_dict(), calendar.revision, status=status, location=location)


def _sends_if_match() -> bool:
    return any(name.lower() == etags.HEADER.lower() for name in router.current_event.headers or {})


@router.get("/calendars")
def list_calendars() -> dict[str, Any]:
    query = http_api.page_query(router, "site_id")
    page = closing.calendars_page(table(), caller(router), query.filters["site_id"], query.position, query.limit)
    return http_api.page_answer((c.to_dict() for c in page.items), page.next_position, query)


@router.get("/calendars/<calendar_id>")
def get_calendar(calendar_id: str) -> Response[str]:
    http_api.query_parameters(router)
    return _tagged(closing.get_calendar(table(), caller(router), unquote(calendar_id)))


@router.put("/calendars/<calendar_id>")
def put_calendar(calendar_id: str) -> Response[str]:
    """Without ``If-Match``: a new calendar at ``site_id`` (201; one that exists is 428: read it, then
    send its ETag). With it: a new revision of its dates (and description), only over that revision."""
    http_api.query_parameters(router)
    body = http_api.fields(http_api.json_body(router), PUT_FIELDS, what="a closure calendar")
    if "dates" not in body:
        raise InvalidInput("dates", "give the closed local dates, a list of YYYY-MM-DD")
    dates = parse_dates(body["dates"], "dates")
    description = None if body.get("description") is None else validate_description(body["description"])
    calendar_id, who, now = unquote(calendar_id), caller(router), clock.now()
    if _sends_if_match():
        written = closing.put_calendar(table(), who, calendar_id, dates, now, description=description,
                                       site_id=body.get("site_id"), if_match=etags.if_match(router), create=False)
        return _tagged(written)
    if body.get("site_id") is None:
        raise InvalidInput("site_id", "give the site the new calendar belongs to (GET /sites lists yours); to "
                                      "replace an existing calendar's dates, send If-Match with its ETag")
    site_id = validate_site_id(body["site_id"])
    # before the site is read: a site the caller holds no role at is 404 whether it exists or not
    authorize(who, Action.manage, site_id, what=f"site {site_id!r}")
    require_site(table(), site_id)
    try:
        written = closing.put_calendar(table(), who, calendar_id, dates, now, description=description,
                                       site_id=site_id, create=True)
    except Conflict:
        raise etags.PreconditionRequired(f"calendar {calendar_id!r} exists: send If-Match with the ETag you read it "
                                         "with (GET it first) to replace its dates, or If-Match: * for any") from None
    return _tagged(written, HTTPStatus.CREATED, created=True)


@router.delete("/calendars/<calendar_id>")
def delete_calendar(calendar_id: str) -> Response[str]:
    http_api.query_parameters(router)
    revision = etags.if_match(router)
    closing.delete_calendar(table(), caller(router), unquote(calendar_id), if_match=revision)
    return Response(status_code=HTTPStatus.NO_CONTENT, body="")
