"""The closure calendars pages (#32): ``GET /calendars`` (the person's sites' calendars, and a form for a
new one, ``POST /calendars``), ``GET /calendars/{id}`` (its dates, the checklists that use it, and the
form that replaces its dates) and ``POST /calendars/{id}`` (that replacement, a new revision).

Thin, as :mod:`missed_checks.api.routes.calendars`: the rules are :mod:`missed_checks.checklists.closing`'s,
called with the signed-in person's Caller. The revision the page was opened at travels in the form's
hidden ``revision`` field as the API's ``If-Match``: a calendar that moved on since is not written and
the form comes back with its current dates and "changed since you opened it".
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from urllib.parse import quote, unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.checklists import closing
from missed_checks.checklists.closure_calendar import (
    ClosureCalendar,
    parse_dates,
    validate_calendar_id,
    validate_description,
)
from missed_checks.errors import Conflict, InvalidInput, PreconditionFailed, shorten
from missed_checks.permissions.authorizing import authorize
from missed_checks.permissions.role import Action
from missed_checks.sites.saving import require_site
from missed_checks.sites.site import validate_site_id
from missed_checks.webapp.context import table
from missed_checks.webapp.pages.checklists import control_errors, managed_sites, opened_revision, typed_list
from missed_checks.webapp.rendering import page
from missed_checks.webapp.sessions import Person, form, redirect, signed_in

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

PAGE_SIZE = 50
NEW_FIELDS = ("id", "site_id", "description", "dates")
EDIT_FIELDS = ("revision", "description", "dates")
STALE = "changed since you opened it: below are its current dates; make your change again on them"


def _link(calendar_id: str) -> str:
    return f"/calendars/{quote(calendar_id, safe='')}"


def values_of(calendar: ClosureCalendar) -> dict[str, str]:
    return {"revision": str(calendar.revision), "description": calendar.description,
            "dates": "\n".join(d.isoformat() for d in calendar.dates)}


@router.get("/calendars")
def list_calendars() -> Response[str]:
    person = signed_in(router)
    return _list_page(person)


def _list_page(person: Person, *, values: Mapping[str, str] | None = None, errors: Mapping[str, str] | None = None,
               status: int = HTTPStatus.OK) -> Response[str]:
    event = router.current_event
    site_id = event.get_query_string_value("site") or None
    cursor = event.get_query_string_value("cursor") or None
    listed = closing.calendars_page(table(), person.caller, site_id, cursor, PAGE_SIZE)
    today = clock.now().date()
    return page(router, "calendars.html.j2", title="Closure calendars", status=status, person=person,
                calendars=listed.items, site=site_id, next_cursor=listed.next_position, today=today,
                managed=managed_sites(person),
                values=values or {}, errors=errors or {})


@router.post("/calendars")
def create_calendar() -> Response[str]:
    person = signed_in(router)
    values = form(router, NEW_FIELDS)
    who = person.caller
    try:
        calendar_id = validate_calendar_id(values["id"].strip(), "id")
        site_id = validate_site_id(values["site_id"].strip())
        # before the site is read, as the API: a site the person holds no role at is 404 whether it exists or not
        authorize(who, Action.manage, site_id, what=f"site {site_id!r}")
        require_site(table(), site_id)
        dates = parse_dates(typed_list(values["dates"]), "dates")
        description = validate_description(values["description"])
        closing.put_calendar(table(), who, calendar_id, dates, clock.now(), description=description,
                             site_id=site_id, create=True)
    except InvalidInput as problem:
        return _list_page(person, values=values, errors=control_errors(problem, NEW_FIELDS),
                          status=HTTPStatus.BAD_REQUEST)
    except Conflict:
        taken = {"id": f"there is a calendar {shorten(calendar_id)} already: choose another id, or change its dates "
                       "on its page"}
        return _list_page(person, values=values, errors=taken, status=HTTPStatus.CONFLICT)
    return redirect(_link(calendar_id))


@router.get("/calendars/<calendar_id>")
def show_calendar(calendar_id: str) -> Response[str]:
    person = signed_in(router)
    calendar = closing.get_calendar(table(), person.caller, unquote(calendar_id))
    return _calendar_page(person, calendar, values_of(calendar))


def _calendar_page(person: Person, calendar: ClosureCalendar, values: Mapping[str, str], *,
                   errors: Mapping[str, str] | None = None, notice: str | None = None,
                   status: int = HTTPStatus.OK) -> Response[str]:
    return page(router, "calendar.html.j2", title=f"Closure calendar {calendar.calendar_id}", status=status,
                person=person, calendar=calendar, link=_link(calendar.calendar_id), values=values,
                errors=errors or {}, notice=notice, today=clock.now().date(),
                may_manage=person.caller.may(Action.manage, calendar.site_id))


@router.post("/calendars/<calendar_id>")
def replace_dates(calendar_id: str) -> Response[str]:
    """A new revision of the calendar's dates (and description), only over the revision the page showed."""
    person = signed_in(router)
    values = form(router, EDIT_FIELDS)
    who = person.caller
    current = closing.get_calendar(table(), who, unquote(calendar_id), action=Action.manage)
    try:
        revision = opened_revision(values)
        dates = parse_dates(typed_list(values["dates"]), "dates")
        description = validate_description(values["description"])
        closing.put_calendar(table(), who, current.calendar_id, dates, clock.now(), description=description,
                             if_match=revision, create=False)
    except InvalidInput as problem:
        return _calendar_page(person, current, values, errors=control_errors(problem, EDIT_FIELDS),
                              status=HTTPStatus.BAD_REQUEST)
    except PreconditionFailed:
        now = closing.get_calendar(table(), who, current.calendar_id, action=Action.manage)
        return _calendar_page(person, now, values_of(now), status=HTTPStatus.CONFLICT,
                              notice=f"Nothing was changed: calendar {now.calendar_id} {STALE}.")
    return redirect(_link(current.calendar_id))
