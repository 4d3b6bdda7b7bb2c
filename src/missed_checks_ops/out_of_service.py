"""Equipment out of service (issue #23 item 1): the use cases of ``equipment out-of-service``,
``equipment back-in-service`` and ``equipment out-of-service-list`` (and of the scenario events).

A period covers the equipment on all its checklists; a window overlapping it is excused (no missed
check). See docs/out-of-service.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.equipment.ports import OutOfServiceRecords
from missed_checks.errors import InvalidInput
from missed_checks_ops.target import StackTarget

EVER = datetime.fromisoformat("1970-01-01T00:00:00+00:00")
"""The start of a listing with no ``--from``: every period, past and planned."""


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


def take_out_of_service(target: StackTarget, equipment_id: str, start: datetime, end: datetime | None, *,
                        reason: str, by: str, now: datetime) -> Recorded:
    """Record that the equipment is out of service over ``[start, end)`` (``end`` None: until further notice)."""
    period = OutOfServicePeriod.create(equipment_id=equipment_id, start=start, end=end, reason=reason,
                                       recorded_by=by, recorded_at=now)
    return record_period(target.table(), period)


def back_in_service(target: StackTarget, equipment_id: str, at: datetime, *, by: str,
                    now: datetime) -> OutOfServicePeriod:
    """End the period in effect at ``at`` early (``at`` not before now, after the period's from)."""
    return target.table().end_out_of_service(validate_equipment_id(equipment_id), at, by=by, now=now)


def cancel_planned(target: StackTarget, equipment_id: str, start: datetime, *, now: datetime) -> OutOfServicePeriod:
    """Delete a period that has not started yet (a mistake, or plans changed); returns it."""
    return target.table().cancel_out_of_service(validate_equipment_id(equipment_id), start, now)


def list_periods(target: StackTarget, start: datetime | None, end: datetime | None,
                 equipment_ids: Sequence[str] = ()) -> list[OutOfServicePeriod]:
    """Periods sharing an instant with ``[start, end)`` (every one when both are None), of
    ``equipment_ids`` when given."""
    ids = [validate_equipment_id(e) for e in equipment_ids] or None
    return target.table().out_of_service_periods(start or EVER, end, ids)
