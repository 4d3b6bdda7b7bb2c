"""Taking equipment out of service: recording a period (:class:`OutOfServicePeriod`, validated when
created) of equipment the table knows, through :class:`~missed_checks.equipment.ports.OutOfServiceRecords`.

The operator's ``equipment out-of-service`` (:mod:`missed_checks_ops.out_of_service`), the
management API's ``/equipment/{equipment_id}/out-of-service`` routes and a local run's
``out_of_service`` event (:mod:`missed_checks_local.product.scenario`) all record a period this way.
For a :class:`~missed_checks.permissions.caller.Caller`, the equipment's site is the registry's
(equipment not registered has none: only an admin or the operator reach it); recording, ending and
cancelling a period need ``supervise`` there, reading them ``read_records``. See docs/out-of-service.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.equipment.ports import OutOfServiceRecords, OutOfServiceStore, RegistryReader
from missed_checks.errors import InvalidInput
from missed_checks.permissions.authorizing import authorize
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.timefmt import to_utc_iso

EVER = datetime.fromisoformat("1970-01-01T00:00:00+00:00")
"""The start of a listing with no ``from``: every period, past and planned."""


@dataclass(frozen=True)
class Recorded:
    period: OutOfServicePeriod
    """The period on record: when it was recorded already, the first record (who recorded it, when)."""
    written: bool
    """False: the same period was recorded already (nothing written)."""


def require_known_equipment(table: OutOfServiceRecords, equipment_id: str, field: str = "equipment") -> str:
    """The id, when the equipment is (or was) assigned to an existing checklist; else InvalidInput naming ``field``:
    a typo would otherwise excuse nothing while the real unit is marked missed."""
    equipment_id = validate_equipment_id(equipment_id, field)
    if not table.assignments_of_equipment(equipment_id):
        raise InvalidInput(field, f"{equipment_id!r} has no assignment to any checklist (a typo?): assign it first")
    return equipment_id


def record_period(table: OutOfServiceRecords, period: OutOfServicePeriod) -> Recorded:
    """Write a validated period of known equipment; refused (nothing written) when it overlaps another."""
    require_known_equipment(table, period.equipment_id)
    return Recorded(*table.record_out_of_service(period))


def equipment_site(registry: RegistryReader, equipment_id: str) -> str | None:
    """The site the registry has the equipment at now (None: not registered)."""
    found = registry.registered_equipment([equipment_id]).get(equipment_id)
    return None if found is None else found.site_id


def _authorized(store: RegistryReader, caller: Caller, action: Action, equipment_id: str,
                field: str = "equipment") -> str:
    equipment_id = validate_equipment_id(equipment_id, field)
    if not caller.everywhere:
        authorize(caller, action, equipment_site(store, equipment_id), what=f"equipment {equipment_id!r}")
    return equipment_id


def _supervised_throughout(store: RegistryReader, caller: Caller, equipment_id: str, start: datetime,
                           end: datetime | None) -> None:
    """A period excuses the windows it covers (the report reads it), so every site the equipment was at
    during ``[start, end)`` must be one the caller supervises at: a period reaching back before a move
    would change the old site's past report rows (InvalidInput naming ``from``)."""
    found = store.registered_equipment([equipment_id]).get(equipment_id)
    if found is None:
        return
    sites = [(found.site_at(start), start), *((move.site_id, move.since) for move in found.moves
                                              if move.since > start and (end is None or move.since < end))]
    for site_id, since in sites:
        if not caller.may(Action.supervise, site_id):
            raise InvalidInput("from", f"equipment {equipment_id!r} was at site {site_id} from {to_utc_iso(since)} "
                                       "on, during this period: only who supervises there records it out of service "
                                       "then (start the period when it came to your site)")


def take_out_of_service(store: OutOfServiceStore, caller: Caller, equipment_id: str, start: datetime,
                        end: datetime | None, *, reason: object, now: datetime, by: str | None = None) -> Recorded:
    """Record, as ``caller`` (``supervise`` at the equipment's site), that the equipment is out of
    service over ``[start, end)`` (``end`` None: until further notice); ``by`` names who on the
    period (default: the caller)."""
    equipment_id = _authorized(store, caller, Action.supervise, equipment_id)
    if not caller.everywhere:
        _supervised_throughout(store, caller, equipment_id, start, end)
    period = OutOfServicePeriod.create(equipment_id=equipment_id, start=start, end=end, reason=reason,
                                       recorded_by=by or caller.principal, recorded_at=now)
    return record_period(store, period)


def back_in_service(store: OutOfServiceStore, caller: Caller, equipment_id: str, at: datetime, *, now: datetime,
                    by: str | None = None) -> OutOfServicePeriod:
    """End the period in effect at ``at`` early (``at`` not before now, after the period's from)."""
    equipment_id = _authorized(store, caller, Action.supervise, equipment_id)
    return store.end_out_of_service(equipment_id, at, by=by or caller.principal, now=now)


def cancel_planned(store: OutOfServiceStore, caller: Caller, equipment_id: str, start: datetime, *, now: datetime,
                   by: str | None = None) -> OutOfServicePeriod:
    """Delete a period that has not started yet (a mistake, or plans changed); returns it."""
    equipment_id = _authorized(store, caller, Action.supervise, equipment_id)
    return store.cancel_out_of_service(equipment_id, start, now, by=by or caller.principal)


def periods_of(store: OutOfServiceStore, caller: Caller, equipment_id: str) -> list[OutOfServicePeriod]:
    """The equipment's periods, past and planned, oldest first (``read_records`` at its site)."""
    equipment_id = _authorized(store, caller, Action.read_records, equipment_id, "equipment_id")
    return store.out_of_service_of_equipment(equipment_id)


def list_periods(store: OutOfServiceStore, caller: Caller, start: datetime | None, end: datetime | None,
                 equipment_ids: Sequence[str] = ()) -> list[OutOfServicePeriod]:
    """Periods sharing an instant with ``[start, end)`` (every one when both are None), of
    ``equipment_ids`` when given; only the equipment at sites the caller may ``read_records`` at."""
    ids = [validate_equipment_id(e) for e in equipment_ids] or None
    periods = store.out_of_service_periods(start or EVER, end, ids)
    if caller.everywhere:
        return periods
    sites = store.registered_equipment({p.equipment_id for p in periods})
    return [p for p in periods if p.equipment_id in sites
            and caller.may(Action.read_records, sites[p.equipment_id].site_id)]
