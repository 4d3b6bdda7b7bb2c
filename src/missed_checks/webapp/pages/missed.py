"""The Missed checks page (#32): ``GET /missed`` lists the missed checks of the person's sites on
demand, filtered by site, checklist, equipment and a range of days, one page at a time (``cursor``);
``POST /missed/dismiss`` dismisses one with a reason.

Thin, as ``GET /missed`` and ``POST /missed/dismissals`` of the HTTP API: which checklists' missed
checks the person reads is :func:`missed_checks.evaluation.listing.missed_scope` (``read_records`` at
the checklist's site: another site's checklist is a 404 page, a role without the action a 403 page),
a page of the fleet or of one checklist is the table's :meth:`missed_checks_page` (the API's pages,
its cursor; a fleet page reads the partitions of the person's checklists only: ``only``), of one piece
of equipment its missed checks on the checklists it was assigned to; a dismissal is
:func:`missed_checks.evaluation.dismissing.dismiss` (``supervise``) with the reason checked by
:func:`~missed_checks.evaluation.dismissing.validate_reason`. A dismissal that cannot be made comes
back as the list with the message next to that row's reason, nothing written.

Each row says its outcome as the report does (:mod:`missed_checks.reporting.report`): **dismissed**
(by whom, when, why), **recorded late** (a check of that equipment on that checklist performed within
the window or its grace, recorded after the window was judged: one ByEquipment Query per piece of
equipment on the page) or **missed**. Windows the equipment was out of service for were **excused**,
never judged missed: the page lists the out-of-service periods of the range beside the rows.

What a page reads: the session, the grant and the person's sites (:mod:`..sessions`), the checklists
once, then each checklist's missed checks in the range until the page is full, as ``GET /missed`` and
``missed list`` read them: one Query of its assignment items, then one Query of each write partition
the equipment ever assigned to it is in (at most one per piece of equipment, 16 in flight; all 128
for a checklist with more than 128 or none: docs/measurements.md), one ByEquipment Query per piece of
equipment on the page (recorded late) and one Query of the out-of-service periods.

The range is of days, ``from`` to ``to`` included, in the chosen site's zone (without a site: the zone
all the person's sites share, else UTC); each window is shown in its checklist's zone.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock_time
from typing import Any
from urllib.parse import parse_qs, quote, urlencode
from zoneinfo import ZoneInfo

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.api import parameters
from missed_checks.aws.table.windows import missed_position
from missed_checks.checklists.checklist import Checklist, validate_checklist_id
from missed_checks.checklists.managing import list_checklists
from missed_checks.equipment import taking_out_of_service
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.errors import Conflict, InvalidInput, shorten
from missed_checks.evaluation import dismissing, listing
from missed_checks.paging import page_after
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.reporting.report import DISMISSED, MISSED, RECORDED_LATE
from missed_checks.sites.site import validate_site_id
from missed_checks.timefmt import parse_instant, to_utc_iso
from missed_checks.webapp.context import WebAppTable, resolver, table
from missed_checks.webapp.rendering import page
from missed_checks.webapp.sessions import Person, form, redirect, signed_in

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

PAGE_SIZE = 25
"""Missed checks a page shows (each of its pieces of equipment costs one Query for recorded late)."""
FILTERS = ("site", "checklist", "equipment", "from", "to")
QUERY = (*FILTERS, "cursor")
DISMISS_FIELDS = ("checklist_id", "equipment_id", "window_start", "reason", "back")
DEFAULT_DAYS = 7
"""Without ``from``: the week up to today."""
MAX_RANGE_DAYS = 366
PAGE_SECONDS = 5.0
"""A page stops reading after this long (and says where to go on)."""
MAX_PERIODS = 50
"""Out-of-service periods listed beside the rows at most."""
OUTCOME_WORDS = {MISSED: "missed", RECORDED_LATE: "recorded late", DISMISSED: "dismissed"}


@dataclass(frozen=True)
class Filters:
    """The list's filters as given (the form shows them back) and as read."""

    given: Mapping[str, str]
    zone: str
    start: datetime
    end: datetime
    site: str | None = None
    checklist: str | None = None
    equipment: str | None = None
    cursor: str | None = None
    errors: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Row:
    """One missed check as the page shows it."""

    anchor: str
    checklist_id: str
    checklist_name: str
    zone: str
    equipment_id: str
    window_start: str
    window_end: str | None
    judged_at: str | None
    outcome: str
    performed_at: str | None
    dismissal: Mapping[str, Any] | None
    may_dismiss: bool
    deleted: bool = False
    """Its checklist was deleted since (its missed checks stay: an admin's or the operator's to see)."""

    @property
    def outcome_words(self) -> str:
        return OUTCOME_WORDS[self.outcome]

    @property
    def equipment_href(self) -> str:
        return equipment_href(self.equipment_id)


def equipment_href(equipment_id: str) -> str:
    """The equipment page of ``equipment_id`` (an id may hold ``/``: sent as ``%2F``)."""
    return f"/equipment/{quote(equipment_id, safe='')}"


@dataclass(frozen=True)
class ListedOnce:
    """The table's checklists, read once for a page: the scope and the filter's choices both read them."""

    checklists: Sequence[Checklist]

    def get_checklist(self, checklist_id: str) -> Checklist | None:
        return next((c for c in self.checklists if c.checklist_id == checklist_id), None)

    def list_checklists(self) -> list[Checklist]:
        return list(self.checklists)


def anchor_of(checklist_id: str, window_start: str, equipment_id: str) -> str:
    """A row's stable id on the page (a dismissal comes back to it)."""
    digest = hashlib.sha256(f"{checklist_id}\n{window_start}\n{equipment_id}".encode()).hexdigest()[:12]
    return f"missed-{digest}"


def zone_for(person: Person, site_id: str | None) -> str:
    """The zone a person's days are read in: the site's; without one, the zone all their sites share, else UTC."""
    zones = {site.site_id: site.timezone for site in person.sites}
    if site_id is not None:
        return zones.get(site_id, "UTC")
    shared = set(zones.values())
    return shared.pop() if len(shared) == 1 else "UTC"


def _day(text: str, field_name: str) -> date:
    try:
        if len(text) != 10:
            raise ValueError(text)
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidInput(field_name, f"{shorten(text)} is not a day: give it as YYYY-MM-DD") from None


def _midnight(day: date, zone: str) -> datetime:
    return datetime.combine(day, clock_time(0), tzinfo=ZoneInfo(zone)).astimezone(UTC)


def day_range(given: Mapping[str, str], zone: str, now: datetime, errors: dict[str, str], *,
              default_days: int = DEFAULT_DAYS,
              max_days: int = MAX_RANGE_DAYS) -> tuple[date, date, datetime, datetime]:
    """The days ``from`` to ``to`` (included) of a page's query ``given`` (``YYYY-MM-DD``; without
    them the ``default_days`` up to today in ``zone``) and the instants ``[start, end)`` they span in
    ``zone``: midnight of ``from`` to midnight after ``to``. A wrong one is said in ``errors`` next to
    its field (its default then stands in), and so is ``to`` before ``from`` or more than ``max_days``."""
    today = now.astimezone(ZoneInfo(zone)).date()
    days = {}
    for name, default in (("from", today - timedelta(days=default_days - 1)), ("to", today)):
        text = (given.get(name) or "").strip()
        try:
            days[name] = _day(text, name) if text else default
        except InvalidInput as error:
            errors[name], days[name] = error.message, default
    first, last = days["from"], days["to"]
    start, end = _midnight(first, zone), _midnight(last + timedelta(days=1), zone)
    if not {"from", "to"} & set(errors):
        if last < first:
            errors["to"] = f"{last.isoformat()} is before from ({first.isoformat()}): give a day on or after it"
        elif (last - first).days + 1 > max_days:
            errors["to"] = f"a range spans at most {max_days} days: ask for a shorter one"
    return first, last, start, end


def read_filters(person: Person, given: Mapping[str, str], now: datetime) -> Filters:
    """The filters of ``given`` (a query), each refused next to its field (``errors``); an unknown one at the top."""
    errors: dict[str, str] = {}
    unknown = sorted(set(given) - set(QUERY))
    if unknown:
        errors["_form"] = f"{shorten(unknown[0])} is not a filter of this page: use the form's fields"

    def read(name: str, check: Any) -> Any:
        value = (given.get(name) or "").strip()
        if not value:
            return None
        try:
            return check(value, name)
        except InvalidInput as error:
            errors[name] = error.message
            return None

    site = read("site", validate_site_id)
    checklist = read("checklist", validate_checklist_id)
    equipment = read("equipment", validate_equipment_id)
    zone = zone_for(person, site)
    first, last, start, end = day_range(given, zone, now, errors)
    shown = {name: (given.get(name) or "").strip() for name in FILTERS}
    shown["from"], shown["to"] = shown["from"] or first.isoformat(), shown["to"] or last.isoformat()
    return Filters(given=shown, zone=zone, start=start, end=end, site=site, checklist=checklist, equipment=equipment,
                   cursor=(given.get("cursor") or None), errors=errors)


def _cursor_query(filters: Filters) -> dict[str, object]:
    """What a cursor of this list is bound to (another filter: the cursor is refused)."""
    return {"from": to_utc_iso(filters.start), "to": to_utc_iso(filters.end), "site": filters.site,
            "checklist": filters.checklist, "equipment": filters.equipment}


def _missed_items(store: WebAppTable, filters: Filters,
                  scope: frozenset[str] | None) -> tuple[list[Mapping[str, Any]], str | None]:
    """One page of missed checks in the person's scope and where the next starts (a cursor)."""
    query = _cursor_query(filters)
    state = parameters.cursor(filters.cursor, query)
    if filters.equipment is None:  # the fleet's or one checklist's: the table's pages, as GET /missed
        after = None if state is None else missed_position(state, filters.start, filters.end, filters.checklist)
        items, following = store.missed_checks_page(filters.start, filters.end, limit=PAGE_SIZE,
                                                    checklist_id=filters.checklist, after=after,
                                                    deadline=time.monotonic() + PAGE_SECONDS, only=scope)
        cursor = None if following is None else parameters.next_cursor(following._asdict(), query)
        return listing.in_scope(items, scope), cursor
    # one piece of equipment: its missed checks on the checklists it was assigned to, in scope
    assigned = {a.checklist_id for a in store.assignments_of_equipment(filters.equipment)}
    ids = {filters.checklist} & assigned if filters.checklist is not None else assigned
    wanted = sorted(ids if scope is None else ids & scope)
    found = store.missed_checks_of_equipment(filters.equipment, wanted, filters.start, filters.end)
    position = None
    if state is not None:
        position = state.get("after") if isinstance(state, dict) else None
        if not isinstance(position, str):
            raise InvalidInput("cursor", "is not a position of this list: follow the page's links")
    chosen = page_after(found, lambda item: f"{item['window_start']}#{item['checklist_id']}", position, PAGE_SIZE)
    cursor = None if chosen.next_position is None else parameters.next_cursor({"after": chosen.next_position}, query)
    return list(chosen.items), cursor


def _late_checks(store: WebAppTable, items: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str, str], str]:
    """(checklist, equipment, window start) -> the first check performed within the window or its grace,
    of the items not dismissed: one ByEquipment Query per piece of equipment."""
    spans: dict[str, tuple[str, str]] = {}
    for item in items:
        if item.get("dismissal"):
            continue
        low, high = str(item["window_start"]), str(item.get("evaluate_at") or item.get("window_end") or "")
        if not high:
            continue
        held = spans.get(str(item["equipment_id"]))
        spans[str(item["equipment_id"])] = (min(low, held[0]), max(high, held[1])) if held else (low, high)
    performed = {equipment: store.performed_checks_of_equipment(equipment, low, high)
                 for equipment, (low, high) in spans.items()}
    late: dict[tuple[str, str, str], str] = {}
    for item in items:
        equipment, start = str(item["equipment_id"]), str(item["window_start"])
        closes = str(item.get("evaluate_at") or item.get("window_end") or "")
        within = sorted(at for checklist_id, at in performed.get(equipment, [])
                        if checklist_id == item["checklist_id"] and start <= at < closes)
        if within:
            late[(str(item["checklist_id"]), equipment, start)] = within[0]
    return late


def zone_of(checklist: Checklist | None) -> str:
    """The zone a checklist's windows are shown in (its rule's; UTC for a deleted or unreadable one)."""
    if checklist is None:
        return "UTC"
    if checklist.timezone:
        return checklist.timezone
    try:
        return checklist.parsed().timezone
    except InvalidInput:
        return "UTC"


def _rows(caller: Caller, items: Sequence[Mapping[str, Any]], checklists: Mapping[str, Checklist],
          late: Mapping[tuple[str, str, str], str]) -> list[Row]:
    rows = []
    zones = {checklist_id: zone_of(checklists.get(checklist_id)) for checklist_id in {i["checklist_id"] for i in items}}
    for item in items:
        checklist_id, equipment, start = str(item["checklist_id"]), str(item["equipment_id"]), str(item["window_start"])
        checklist = checklists.get(checklist_id)
        dismissal = item.get("dismissal") if isinstance(item.get("dismissal"), Mapping) else None
        performed = late.get((checklist_id, equipment, start))
        outcome = DISMISSED if dismissal else RECORDED_LATE if performed else MISSED
        site = checklist.site_id if checklist is not None else None
        rows.append(Row(anchor=anchor_of(checklist_id, start, equipment), checklist_id=checklist_id,
                        checklist_name=checklist.name or checklist_id if checklist is not None else checklist_id,
                        zone=zones[checklist_id],
                        equipment_id=equipment, window_start=start,
                        window_end=None if item.get("window_end") is None else str(item["window_end"]),
                        judged_at=None if item.get("judged_at") is None else str(item["judged_at"]),
                        outcome=outcome, performed_at=performed, dismissal=dismissal,
                        may_dismiss=outcome != DISMISSED and caller.may(Action.supervise, site),
                        deleted=checklist is None))
    return rows


def _excusing(store: WebAppTable, caller: Caller, filters: Filters) -> list[OutOfServicePeriod]:
    """The out-of-service periods of the range (of the equipment, at the site, when filtered) the person may read."""
    if not (caller.everywhere or any(caller.may(Action.read_records, site) for site in caller.roles)):
        return []
    periods = taking_out_of_service.list_periods(store, caller, filters.start, filters.end,
                                                 [filters.equipment] if filters.equipment else ())
    if filters.site is not None:
        sites = store.registered_equipment({p.equipment_id for p in periods})
        periods = [p for p in periods if p.equipment_id in sites and sites[p.equipment_id].site_id == filters.site]
    return periods


def _query_of(filters: Filters) -> dict[str, str]:
    """The page's query as links and the dismiss form's ``back`` keep it."""
    kept = {name: value for name, value in filters.given.items() if value}
    if filters.cursor:
        kept["cursor"] = filters.cursor
    return kept


def missed_page(person: Person, given: Mapping[str, str], *, status: int = 200,
                row_error: tuple[str, str, str] | None = None) -> Response[str]:
    """The page for the query ``given``; ``row_error``: (row anchor, message, the reason typed) of a
    dismissal refused, shown next to that row's reason."""
    caller = person.caller
    now = clock.now()
    filters = read_filters(person, given, now)
    store = table()
    listed = ListedOnce(store.list_checklists())
    checklists = {c.checklist_id: c for c in list_checklists(listed, caller)}
    rows: list[Row] = []
    periods: list[OutOfServicePeriod] = []
    next_cursor = None
    errors = dict(filters.errors)
    if not errors:
        scope = listing.missed_scope(listed, caller, filters.checklist, filters.site)
        try:
            items, next_cursor = _missed_items(store, filters, scope)
        except InvalidInput as error:
            errors["cursor" if error.field == "cursor" else "_form"] = error.message
            items = []
        rows = _rows(caller, items, checklists, _late_checks(store, items))
        periods = _excusing(store, caller, filters)
    reason_typed = ""
    if row_error is not None:
        anchor, message, reason_typed = row_error
        if any(row.anchor == anchor for row in rows):
            errors[f"reason-{anchor}"] = message
        else:
            errors["_form"] = message
        status = 400
    elif errors:
        status = 400
    sites = [s for s in person.sites if caller.may(Action.read_records, s.site_id)]
    return page(router, "missed.html.j2", title="Missed checks", status=status, errors=errors, filters=filters,
                rows=rows, periods=periods[:MAX_PERIODS], more_periods=max(0, len(periods) - MAX_PERIODS),
                next_cursor=next_cursor, query=_query_of(filters), back=urlencode(_query_of(filters)),
                sites=sites, checklists=sorted(checklists.values(), key=lambda c: (c.name or c.checklist_id)),
                csrf=person.csrf, reason_typed=reason_typed, zone=filters.zone, equipment_href=equipment_href)


@router.get("/missed")
def show_missed() -> Response[str]:
    person = signed_in(router)
    return missed_page(person, resolver(router).current_event.query_string_parameters or {})


def _back(text: str) -> dict[str, str]:
    """The list's query a dismiss form came from (only the list's own parameters)."""
    parsed = parse_qs(text, keep_blank_values=False)
    return {name: values[0] for name, values in parsed.items() if name in QUERY and values}


@router.post("/missed/dismiss")
def dismiss_missed() -> Response[str]:
    person = signed_in(router)
    values = form(router, DISMISS_FIELDS)
    back = _back(values["back"])
    checklist_id = validate_checklist_id(values["checklist_id"], "checklist_id")
    equipment_id = validate_equipment_id(values["equipment_id"], "equipment_id")
    window_start = parse_instant(values["window_start"], "window_start")
    anchor = anchor_of(checklist_id, to_utc_iso(window_start), equipment_id)
    try:
        reason = dismissing.validate_reason(values["reason"])
        dismissing.dismiss(table(), person.caller, checklist_id, window_start, equipment_id, reason=reason,
                           at=clock.now())
    except InvalidInput as error:
        if error.field != "reason":
            raise
        return missed_page(person, back, row_error=(anchor, error.message, values["reason"]))
    except Conflict as error:  # dismissed meanwhile (by someone else)
        return missed_page(person, back, row_error=(anchor, str(error), values["reason"]))
    query = urlencode(back)
    return redirect(f"/missed{'?' + query if query else ''}#{anchor}")
