"""``GET /`` (``?site=``): Today at one site, in the site's zone: what is due now and until when, what
is still undone, what comes next, what was missed since yesterday (the site's midnight), which
equipment is out of service now, and whether each piece is cleared to operate (#33: its readiness as
last announced, :func:`~missed_checks.readiness.listing.site_readiness`, one Query).

The site, its equipment and its checklists come from the scoped use cases the API uses, with the
signed-in person's caller (:func:`~missed_checks.sites.saving.get_site`: another site's is a 404 page;
:func:`~missed_checks.equipment.registering.list_equipment`, one page of :data:`MAX_EQUIPMENT`;
:func:`~missed_checks.checklists.managing.list_checklists`; the out-of-service periods by
:func:`~missed_checks.equipment.taking_out_of_service.list_periods`; missed checks only where the
role may read records); each window's state is decided as an equipment's status decides it
(:func:`~missed_checks.equipment.status.current_or_next_window`, ``timeliness``). Table reads: three,
then two per checklist at the site, one per piece of equipment with a window open now (not per
equipment and checklist: :func:`today_at`), and two for the readiness (the site, then one Query of
its equipment's state items).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.checklists.checklist import Checklist, Status
from missed_checks.checklists.managing import list_checklists
from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.equipment.registering import list_equipment
from missed_checks.equipment.status import ChecklistStatus, current_or_next_window
from missed_checks.equipment.taking_out_of_service import list_periods
from missed_checks.performed_checks.performed_check import timeliness
from missed_checks.permissions.role import Action
from missed_checks.readiness.listing import site_readiness
from missed_checks.readiness.readiness import ReadinessRecord, State
from missed_checks.sites.saving import get_site
from missed_checks.sites.site import Site
from missed_checks.timefmt import parse_instant, to_utc_iso
from missed_checks.webapp import context, sessions
from missed_checks.webapp.rendering import page

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

READINESS_WORDS = {State.CLEARED: "cleared to operate", State.NOT_CLEARED: "NOT cleared to operate",
                   State.UNCHECKED: "not cleared to operate yet (its pre-use check is not done)",
                   State.OUT_OF_SERVICE: "out of service"}
"""A piece of equipment's readiness in words (the Record a check and Equipment pages say it so too)."""
_SAID_ALREADY = ("not cleared to operate: ", "cleared to operate: ", "out of service ")


def why(reason: str) -> str:
    """A readiness's reason after its state in words: what the words said already left out."""
    return next((reason[len(said):] for said in _SAID_ALREADY if reason.startswith(said)), reason)


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
    periods_shown: bool = True
    """False for a role that may not read out-of-service periods (an operator): the section says so."""
    readiness: tuple[tuple[str, str, ReadinessRecord | None], ...] = ()
    """Per piece of equipment (id, name): its readiness as last announced (None: none announced yet)."""

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


def _state(checklist: Checklist, window: OccurrenceWindow | None, now: datetime, done_at: datetime | None) -> str:
    """As :func:`~missed_checks.equipment.status.status_of` says it."""
    if checklist.status == Status.PAUSED:
        return "paused"
    if window is None:
        return "no_window"
    if window.start > now:
        return "not_due"
    return "done" if done_at else "undone"


def today_at(store: context.WebAppTable, person: sessions.Person, site_id: str, now: datetime) -> Today:
    """Read per checklist, not per piece of equipment: the site, its equipment and its checklists (one
    read each), then per checklist its assignments and its windows judged since yesterday (one Query
    each) and their missed checks (BatchGetItem), and per piece of equipment with a window open now
    its checks since the window opened (one ByEquipment Query)."""
    caller = person.caller
    site = get_site(store, caller, site_id)
    equipment = list_equipment(store, caller, site.site_id, limit=MAX_EQUIPMENT)
    names = {e.equipment_id: e.name for e in equipment.items}
    since = yesterday_midnight(now, site.timezone)
    open_windows: list[tuple[Checklist, str, OccurrenceWindow | None, str]] = []
    missed: list[Missed] = []
    for checklist in list_checklists(store, caller, site.site_id):
        assigned = sorted(a.equipment_id for a in store.assignments(checklist.checklist_id)
                          if a.equipment_id in names and a.assigned_at_instant(now))
        if not assigned:
            continue
        rule = checklist.parsed()
        window = current_or_next_window(rule, now)
        open_windows.extend((checklist, rule.timezone, window, equipment_id) for equipment_id in assigned)
        if caller.may(Action.read_records, checklist.site_id):
            starts = [str(w["window_start"]) for w in store.judged_windows(checklist.checklist_id, since, now)]
            for record in store.missed_records_of_windows(checklist.checklist_id, starts, assigned):
                missed.append(Missed(record.equipment_id, checklist.name or checklist.checklist_id, rule.timezone,
                                     parse_instant(record.window_start, "window_start"), record.dismissed))
    opened: dict[str, datetime] = {}  # per piece of equipment, the earliest start of a window open now
    for checklist, _zone, window, equipment_id in open_windows:
        if window is not None and window.start <= now and checklist.status != Status.PAUSED:
            opened[equipment_id] = min(window.start, opened.get(equipment_id, window.start))
    # out of service over a window open now: excused, never undone (the judging's one rule, overlaps);
    # read for everyone's rows (an operator may not list the periods, but is not told to do the undoable)
    periods = (store.out_of_service_periods(min(opened.values()), now + timedelta(seconds=1), list(opened))
               if opened else [])
    performed: dict[tuple[str, str], list[datetime]] = {}
    for equipment_id, low in opened.items():
        for checklist_id, at in store.performed_checks_of_equipment(equipment_id, to_utc_iso(low), to_utc_iso(now)):
            performed.setdefault((equipment_id, checklist_id), []).append(parse_instant(at, "performed_at"))
    due: list[Due] = []
    upcoming: list[Due] = []
    for checklist, zone, window, equipment_id in open_windows:
        done_at = None
        if window is not None:
            done_at = max((at for at in performed.get((equipment_id, checklist.checklist_id), [])
                           if timeliness(at, window.start, window.end, window.evaluate_at) is not None), default=None)
        state = _state(checklist, window, now, done_at)
        if state == "undone" and window is not None and any(
                p.equipment_id == equipment_id and p.excuses(window) for p in periods):
            state = "excused"
        row = Due(equipment_id, names[equipment_id], ChecklistStatus(checklist, zone, state, window, done_at, 0, None))
        (due if state in ("undone", "done") else upcoming).append(row)
    out = []
    periods_shown = caller.everywhere or caller.may(Action.read_records, site.site_id)
    if periods_shown:
        out = list_periods(store, caller, now, now + timedelta(seconds=1), list(names)) if names else []
    due.sort(key=lambda d: (d.status.state != "undone", d.status.window.end if d.status.window else now,
                            d.equipment_id))
    upcoming.sort(key=lambda d: (d.status.window.start if d.status.window else now, d.equipment_id))
    missed.sort(key=lambda m: (m.window_start, m.equipment_id), reverse=True)
    announced = {r.readiness.equipment_id: r for r in site_readiness(store, site.site_id, caller=caller,
                                                                      limit=MAX_EQUIPMENT, cursor=None).items}
    readiness = tuple((e.equipment_id, e.name, announced.get(e.equipment_id)) for e in equipment.items)
    return Today(site, now, since, due, upcoming, missed, out, equipment.next_position is not None, periods_shown,
                 readiness)


@router.get("/")
def today() -> Response[str]:
    person = sessions.signed_in(router)
    query = router.current_event.query_string_parameters or {}
    site_id = query.get("site") or (person.sites[0].site_id if person.sites else "")
    if not site_id:
        return page(router, "today.html.j2", title="Today", today=None)
    view = today_at(context.table(), person, site_id, clock.now())
    return page(router, "today.html.j2", title=f"Today at {view.site.name}", today=view,
                may_record=person.caller.may(Action.record, view.site.site_id), readiness_words=READINESS_WORDS,
                why=why)
