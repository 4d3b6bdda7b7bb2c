"""The Equipment pages (#32): ``GET /equipment`` lists the equipment of the person's sites (``site``:
one of them), a page at a time, with whether each is out of service now; ``GET /equipment/{id}``
shows one: its status across its checklists now (due, done, undone, its open run of misses), its
registry history (registered, moved, retired) and its out-of-service periods; ``POST
/equipment/{id}/out-of-service`` records a period and ``POST /equipment/{id}/back-in-service`` ends
the one in effect. Since #33 the page says first whether the equipment is cleared to operate now
(its readiness: state, since when, why) and lists its defects; a supervisor (a site manager, an
admin) resolves an open one with a note (``POST /equipment/{id}/defects/{defect_id}/resolve``: the
defect's revision in the form, so a defect cleared meanwhile by a passing check is said, not
overwritten).

Thin, as the people's API: the registry is :mod:`missed_checks.equipment.registering` (``read`` at
the equipment's site: another site's equipment is a 404 page, as unregistered equipment), the status
:func:`missed_checks.equipment.status.status_for` (the checklists at the person's sites), the periods
:mod:`missed_checks.equipment.taking_out_of_service` (``read_records`` to see them, ``supervise`` to
record or end one). A period's ``from`` and ``to`` are typed as local times of the equipment's site
(``2026-03-02T06:00``); a refused one comes back as the page with the message next to its field,
nothing written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from urllib.parse import unquote, urlencode
from zoneinfo import ZoneInfo

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks import clock
from missed_checks.api import http_api, parameters
from missed_checks.defects import listing as defects
from missed_checks.defects.resolving import resolve_defect
from missed_checks.equipment import registering
from missed_checks.equipment import taking_out_of_service as periods
from missed_checks.equipment.registration import RegisteredEquipment
from missed_checks.equipment.status import status_for
from missed_checks.errors import Conflict, InvalidInput, NotFound, PreconditionFailed, shorten
from missed_checks.permissions.role import Action
from missed_checks.readiness.watching import readiness_now
from missed_checks.sites.ports import SiteReader
from missed_checks.webapp.context import resolver, table
from missed_checks.webapp.pages.missed import equipment_href
from missed_checks.webapp.pages.today import READINESS_WORDS, why
from missed_checks.webapp.rendering import page
from missed_checks.webapp.sessions import Person, form, redirect, signed_in

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

PAGE_SIZE = 50
PERIOD_FIELDS = ("from", "to", "reason")
BACK_FIELDS = ("at",)
RESOLVE_FIELDS = ("note", "revision")
MAX_DEFECTS = 100
"""Defects shown on the page, oldest found first (the open ones are never many)."""
STATE_WORDS = {"done": "done", "undone": "not done yet", "not_due": "not due yet", "paused": "checklist paused",
               "no_window": "no more windows"}


def local_instant(text: str, field: str, zone: str) -> datetime | None:
    """A local date and time typed in a form (``YYYY-MM-DDTHH:MM``, as ``<input type=datetime-local>``
    sends it) in ``zone``; None when empty; InvalidInput naming ``field`` otherwise."""
    text = text.strip()
    if not text:
        return None
    try:
        if len(text) not in (16, 19) or text[10] != "T":
            raise ValueError(text)
        local = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(field, f"{shorten(text)} is not a date and time: give it as YYYY-MM-DDTHH:MM "
                                  f"(in {zone})") from None
    return local.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)


def local_value(instant: datetime | None, zone: str) -> str:
    """``instant`` as a ``datetime-local`` field's value in ``zone``."""
    return "" if instant is None else instant.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%dT%H:%M")


# -- the list -------------------------------------------------------------------------------------------
@router.get("/equipment")
def list_equipment() -> Response[str]:
    person = signed_in(router)
    caller = person.caller
    query = http_api.page_query(resolver(router), "site", default=PAGE_SIZE)
    site = query.filters["site"] or None
    store = table()
    found = registering.list_equipment(store, caller, site, query.position, query.limit)
    now = clock.now()
    out_now = {p.equipment_id: p for p in periods.list_periods(store, caller, now, now + timedelta(seconds=1),
                                                               [e.equipment_id for e in found.items])} \
        if found.items else {}
    zones = {s.site_id: s.timezone for s in person.sites}
    cursor = None if found.next_position is None else parameters.next_cursor({"after": found.next_position},
                                                                              {"site": site})
    shows_periods = {e.site_id for e in found.items if caller.may(Action.read_records, e.site_id)}
    return page(router, "equipment_list.html.j2", title="Equipment", equipment=found.items, out_now=out_now,
                zones=zones, site=site, next_cursor=cursor, shows_periods=shows_periods,
                query={"site": site or "", "cursor": resolver(router).current_event.get_query_string_value("cursor")
                       or ""},
                equipment_href=equipment_href)


# -- one piece of equipment -----------------------------------------------------------------------------
def _path_id(equipment_id: str) -> str:
    return unquote(equipment_id)  # an id holding '/' comes as %2F


def equipment_page(person: Person, equipment_id: str, *, status: int = 200, errors: Mapping[str, str] | None = None,
                   values: Mapping[str, str] | None = None) -> Response[str]:
    """The page of one piece of equipment; ``errors`` and ``values``: a form refused, shown again."""
    caller = person.caller
    store = table()
    equipment = registering.get_equipment(store, caller, equipment_id)
    now = clock.now()
    zone = site_zone(store, person, equipment)
    statuses = status_for(store, caller, equipment.equipment_id, now)
    may_read_periods = caller.may(Action.read_records, equipment.site_id)
    found = periods.periods_of(store, caller, equipment.equipment_id) if may_read_periods else []
    current = next((p for p in found if p.in_effect_at(now)), None)
    may_supervise = caller.may(Action.supervise, equipment.site_id) and equipment.retired_at is None
    found_defects = defects.list_defects(store, caller, equipment_id=equipment.equipment_id, limit=MAX_DEFECTS).items
    return page(router, "equipment.html.j2", title=f"Equipment {equipment.equipment_id}", status=status,
                errors=dict(errors or {}), values=dict(values or {}), equipment=equipment, zone=zone,
                readiness=readiness_now(store, equipment.equipment_id, now), readiness_words=READINESS_WORDS, why=why,
                defects=sorted(found_defects, key=lambda d: (not d.is_open, d.found_at)),
                may_resolve=caller.may(Action.supervise, equipment.site_id),
                statuses=statuses, state_words=STATE_WORDS, periods=list(reversed(found)),
                may_read_periods=may_read_periods, current=current, may_supervise=may_supervise,
                href=equipment_href(equipment.equipment_id), csrf=person.csrf, now=now,
                now_value=local_value(now, zone), missed_href="/missed?" + urlencode(
                    {"site": equipment.site_id, "equipment": equipment.equipment_id}))


def site_zone(store: SiteReader, person: Person, equipment: RegisteredEquipment) -> str:
    """The zone of the equipment's site: one of the person's sites', else read (UTC when it is gone)."""
    known = {s.site_id: s.timezone for s in person.sites}.get(equipment.site_id)
    if known is not None:
        return known
    site = store.get_site(equipment.site_id)
    return "UTC" if site is None else site.timezone


@router.get("/equipment/<equipment_id>")
def show_equipment(equipment_id: str) -> Response[str]:
    return equipment_page(signed_in(router), _path_id(equipment_id))


def _zone_of(person: Person, equipment_id: str) -> tuple[RegisteredEquipment, str]:
    """The equipment (``read`` at its site, else NotFound) and its site's zone."""
    store = table()
    equipment = registering.get_equipment(store, person.caller, equipment_id)
    return equipment, site_zone(store, person, equipment)


def _change_periods(equipment_id: str, fields: tuple[str, ...],
                    change: Callable[[Person, str, Mapping[str, str], str, datetime], object]) -> Response[str]:
    """A period form of the equipment's page: ``change`` (the person, the equipment id, the form's
    values, the site's zone, now); refused, the page again with the message next to its field, nothing
    written (NotFound here: no period to end then, the equipment itself was read first; Conflict: a
    period recorded meanwhile)."""
    person = signed_in(router)
    values = form(router, fields)
    equipment, zone = _zone_of(person, _path_id(equipment_id))
    try:
        change(person, equipment.equipment_id, values, zone, clock.now())
    except (InvalidInput, NotFound, Conflict) as error:
        if isinstance(error, InvalidInput):
            where, message = (error.field if error.field in fields else "_form"), error.message
        else:
            where, message = fields[0], str(error)
        return equipment_page(person, equipment.equipment_id, status=409 if isinstance(error, Conflict) else 400,
                              errors={where: message}, values=values)
    return redirect(f"{equipment_href(equipment.equipment_id)}#out-of-service")


def _record(person: Person, equipment_id: str, values: Mapping[str, str], zone: str, now: datetime) -> object:
    start = local_instant(values["from"], "from", zone) or now
    end = local_instant(values["to"], "to", zone)
    return periods.take_out_of_service(table(), person.caller, equipment_id, start, end, reason=values["reason"],
                                       now=now)


def _end(person: Person, equipment_id: str, values: Mapping[str, str], zone: str, now: datetime) -> object:
    at = local_instant(values["at"], "at", zone) or now
    return periods.back_in_service(table(), person.caller, equipment_id, at, now=now)


@router.post("/equipment/<equipment_id>/out-of-service")
def take_out_of_service(equipment_id: str) -> Response[str]:
    return _change_periods(equipment_id, PERIOD_FIELDS, _record)


@router.post("/equipment/<equipment_id>/back-in-service")
def back_in_service(equipment_id: str) -> Response[str]:
    return _change_periods(equipment_id, BACK_FIELDS, _end)


@router.post("/equipment/<equipment_id>/defects/<defect_id>/resolve")
def resolve(equipment_id: str, defect_id: str) -> Response[str]:
    """Resolve one of the equipment's defects with a note (``supervise`` at its site); refused (no note,
    resolved meanwhile, changed since the page was read), the page again with the message next to the
    defect's note, nothing written."""
    person = signed_in(router)
    values = form(router, RESOLVE_FIELDS)
    equipment, _zone = _zone_of(person, _path_id(equipment_id))
    defect_id = unquote(defect_id)
    key = f"note-{defect_id}"
    try:
        revision = parameters.whole_number(values["revision"], "revision", minimum=1)
        resolve_defect(table(), defect_id, values["note"], caller=person.caller, now=clock.now(), if_match=revision)
    except (InvalidInput, Conflict, PreconditionFailed) as error:
        message = error.message if isinstance(error, InvalidInput) else str(error)
        if isinstance(error, PreconditionFailed):
            message = ("it changed since you opened this page (a passing check may have cleared it): read it "
                       "again below")
        status = 400 if isinstance(error, InvalidInput) else 409 if isinstance(error, Conflict) else 412
        return equipment_page(person, equipment.equipment_id, status=status, errors={key: message},
                              values={key: values["note"]})
    return redirect(f"{equipment_href(equipment.equipment_id)}#defects")
