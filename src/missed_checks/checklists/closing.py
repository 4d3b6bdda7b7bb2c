"""Closing dates: managing closure calendars (put, read, list, delete) for a
:class:`~missed_checks.permissions.caller.Caller` at the calendar's site.

The operator's ``calendar`` commands and the management API's ``/calendars`` routes
(:mod:`missed_checks.api.routes.calendars`) both go through here. Reading needs ``read`` at the
calendar's site, putting and deleting ``manage`` (another site's calendar is NotFound, as a missing
one); a calendar made before sites existed has no site (admin and the operator only). A replace or
delete given ``if_match`` (the revision read) is written only at that revision, by the conditional
write itself (PreconditionFailed with the current ETag otherwise).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, datetime

from missed_checks.checklists.closure_calendar import ClosureCalendar, validate_calendar_id
from missed_checks.checklists.ports import CalendarStore
from missed_checks.errors import InvalidInput, NotFound
from missed_checks.paging import Page, page_after
from missed_checks.permissions.authorizing import at_sites, authorize
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.revisions import at_revision, expected_revision


def what(calendar_id: str) -> str:
    return f"calendar {calendar_id!r}"


def get_calendar(store: CalendarStore, caller: Caller, calendar_id: str, revision: int | None = None, *,
                 action: Action = Action.read) -> ClosureCalendar:
    """The calendar (or one of its revisions, kept after it is deleted), when ``caller`` may do
    ``action`` at its site; NotFound otherwise."""
    calendar_id = validate_calendar_id(calendar_id)
    current = store.get_calendar(calendar_id)
    found = current if revision is None else store.calendar_revision(calendar_id, revision)
    if found is None:
        raise NotFound(f"{what(calendar_id)} "
                       + ("does not exist" if revision is None else f"has no revision {revision}"))
    # a revision of a deleted calendar is at the site that revision was at
    authorize(caller, action, (current or found).site_id, what=what(calendar_id))
    return found


def list_calendars(store: CalendarStore, caller: Caller, site_id: str | None = None) -> list[ClosureCalendar]:
    """The calendars at the caller's sites (``site_id``: at that one, NotFound when the caller holds no
    role there, as for a site that does not exist), by id."""
    if site_id is not None:
        authorize(caller, Action.read, site_id, what=f"site {site_id!r}")
    return sorted(at_sites(caller, Action.read, store.list_calendars(), lambda c: c.site_id, site_id),
                  key=lambda c: c.calendar_id)


def calendars_page(store: CalendarStore, caller: Caller, site_id: str | None, position: str | None,
                   limit: int) -> Page[ClosureCalendar]:
    """One page of :func:`list_calendars`: those after ``position`` (the last id of the page before)."""
    return page_after(list_calendars(store, caller, site_id), lambda c: c.calendar_id, position, limit)


def put_calendar(store: CalendarStore, caller: Caller, calendar_id: str, dates: Sequence[date], now: datetime, *,
                 description: str | None = None, site_id: str | None = None, if_match: int | None = None,
                 create: bool | None = None, by: str | None = None) -> ClosureCalendar:
    """A new revision of the calendar (created at ``site_id`` when there is none), put by the caller
    at ``now``. ``create`` True refuses an existing one (Conflict), False a missing one (NotFound).
    An existing calendar keeps its site (naming another is InvalidInput ``site_id``, by the save).
    ``by``: who the revision names (default the caller; the operator's ``--by``)."""
    calendar_id = validate_calendar_id(calendar_id)
    current = store.get_calendar(calendar_id)
    if current is not None:
        authorize(caller, Action.manage, current.site_id, what=what(calendar_id))
    expected_revision(what(calendar_id), current, if_match=if_match, create=create)
    if current is None:
        if site_id is None and not caller.everywhere:  # only an admin or the operator makes one without a site
            raise InvalidInput("site_id", f"give the site {what(calendar_id)} belongs to (one you manage)")
        authorize(caller, Action.manage, site_id, what=f"site {site_id!r}")
    return at_revision(what(calendar_id), if_match, _revision_now(store, calendar_id), lambda: store.put_calendar(
        calendar_id, dates, now=now, description=description, by=by or caller.principal, site_id=site_id,
        expected_revision=if_match))


def delete_calendar(store: CalendarStore, caller: Caller, calendar_id: str, *, if_match: int | None = None) -> None:
    """Delete the calendar; refused (Conflict naming them) while checklists reference it; NotFound."""
    calendar = get_calendar(store, caller, calendar_id, action=Action.manage)
    expected_revision(what(calendar.calendar_id), calendar, if_match=if_match)
    if not at_revision(what(calendar.calendar_id), if_match, _revision_now(store, calendar.calendar_id),
                       lambda: store.delete_calendar(
            calendar.calendar_id, by=caller.principal, expected_revision=if_match)):
        raise NotFound(f"{what(calendar.calendar_id)} does not exist")


def _revision_now(store: CalendarStore, calendar_id: str) -> Callable[[], int | None]:
    def revision() -> int | None:
        calendar = store.get_calendar(calendar_id)
        return None if calendar is None else calendar.revision
    return revision
