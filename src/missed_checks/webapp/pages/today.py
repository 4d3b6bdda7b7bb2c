"""``GET /`` (``?site=``): Today at one site, in the site's zone: what is due now and until when, what
is still undone, what comes next, what was missed since yesterday (the site's midnight), and which
equipment is out of service now.

Every figure comes from the scoped use cases the API uses, with the signed-in person's caller: the
site (:func:`~missed_checks.sites.saving.get_site`: another site's is a 404 page), its equipment
(:func:`~missed_checks.equipment.registering.list_equipment`, one page of :data:`MAX_EQUIPMENT`), each
one's status (:func:`~missed_checks.equipment.status.status_for`), its missed checks since yesterday
and the out-of-service periods (:func:`~missed_checks.equipment.taking_out_of_service.list_periods`).
Table reads: a bounded number per piece of equipment on the page (its assignments, its checks, and
per checklist the checklist, its judged windows and missed checks).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.equipment.registering import list_equipment
from missed_checks.equipment.status import ChecklistStatus, status_for
from missed_checks.equipment.taking_out_of_service import list_periods
from missed_checks.permissions.role import Action
from missed_checks.sites.saving import get_site
from missed_checks.sites.site import Site
from missed_checks.timefmt import parse_instant
from missed_checks.webapp import context, sessions
from missed_checks.webapp.rendering import page

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

MAX_EQUIPMENT = 100
"""Equipment shown at most (one page of the registry at the site)."""


@dataclass(frozen=True)
class Due:
    """One piece of equipment on one checklist: its current (or next) window and its state."""

    equipment_id: str
    equipment_name: str
    status: ChecklistStatus


@dataclass(frozen=True)
class Missed:
    equipment_id: str
    checklist_name: str
    zone: str
    window_start: datetime
    dismissed: bool


@dataclass(frozen=True)
class Today:
    site: Site
    now: datetime
    since: datetime
    due: list[Due]
    upcoming: list[Due]
    missed: list[Missed]
    out_of_service: list[OutOfServicePeriod]
    more_equipment: bool

    @property
    def undone(self) -> list[Due]:
        return [d for d in self.due if d.status.state == "undone"]

    @property
    def done(self) -> list[Due]:
        return [d for d in self.due if d.status.state == "done"]


def yesterday_midnight(now: datetime, zone: str) -> datetime:
    """The start of yesterday in ``zone`` (a DST change between is taken care of by the zone)."""
    local = now.astimezone(ZoneInfo(zone))
    return datetime.combine(local.date() - timedelta(days=1), datetime.min.time(), tzinfo=ZoneInfo(zone))


def today_at(store: context.WebAppTable, person: sessions.Person, site_id: str, now: datetime) -> Today:
    caller = person.caller
    site = get_site(store, caller, site_id)
    equipment = list_equipment(store, caller, site.site_id, limit=MAX_EQUIPMENT)
    since = yesterday_midnight(now, site.timezone)
    due: list[Due] = []
    upcoming: list[Due] = []
    missed: list[Missed] = []
    for registered in equipment.items:
        statuses = status_for(store, caller, registered.equipment_id, now)
        for status in statuses:
            row = Due(registered.equipment_id, registered.name, status)
            (due if status.state in ("undone", "done") else upcoming).append(row)
        readable = {s.checklist.checklist_id: s for s in statuses
                    if caller.may(Action.read_records, s.checklist.site_id)}
        if readable:
            for checklist_id, record in store.missed_records_of_equipment(registered.equipment_id, sorted(readable),
                                                                          since, now):
                status = readable[checklist_id]
                missed.append(Missed(registered.equipment_id, status.checklist.name or checklist_id, status.zone_name,
                                     parse_instant(record.window_start, "window_start"), record.dismissed))
    out = []
    if caller.everywhere or caller.may(Action.read_records, site.site_id):
        ids = [e.equipment_id for e in equipment.items]
        out = list_periods(store, caller, now, now + timedelta(seconds=1), ids) if ids else []
    due.sort(key=lambda d: (d.status.state != "undone", d.status.window.end if d.status.window else now,
                            d.equipment_id))
    upcoming.sort(key=lambda d: (d.status.window.start if d.status.window else now, d.equipment_id))
    missed.sort(key=lambda m: (m.window_start, m.equipment_id), reverse=True)
    return Today(site, now, since, due, upcoming, missed, out, equipment.next_position is not None)


@router.get("/")
def today() -> Response[str]:
    person = sessions.signed_in(router)
    query = router.current_event.query_string_parameters or {}
    site_id = query.get("site") or (person.sites[0].site_id if person.sites else "")
    if not site_id:
        return page(router, "today.html.j2", title="Today", today=None)
    view = today_at(context.table(), person, site_id, clock.now())
    return page(router, "today.html.j2", title=f"Today at {view.site.name}", today=view,
                may_record=person.caller.may(Action.record, view.site.site_id))
