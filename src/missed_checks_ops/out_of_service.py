"""Equipment out of service (issue #23 item 1): the use cases of ``equipment out-of-service``,
``equipment back-in-service`` and ``equipment out-of-service-list``; a period is recorded by
:func:`missed_checks.equipment.taking_out_of_service.record_period`, which the scenario player's
events call too.

A period covers the equipment on all its checklists; a window overlapping it is excused (no missed
check). See docs/out-of-service.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.equipment.taking_out_of_service import Recorded, record_period
from missed_checks_ops.target import StackTarget

EVER = datetime.fromisoformat("1970-01-01T00:00:00+00:00")
"""The start of a listing with no ``--from``: every period, past and planned."""


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


def cancel_planned(target: StackTarget, equipment_id: str, start: datetime, *, now: datetime,
                   by: str) -> OutOfServicePeriod:
    """Delete a period that has not started yet (a mistake, or plans changed), as ``by``; returns it."""
    return target.table().cancel_out_of_service(validate_equipment_id(equipment_id), start, now, by=by)


def list_periods(target: StackTarget, start: datetime | None, end: datetime | None,
                 equipment_ids: Sequence[str] = ()) -> list[OutOfServicePeriod]:
    """Periods sharing an instant with ``[start, end)`` (every one when both are None), of
    ``equipment_ids`` when given."""
    ids = [validate_equipment_id(e) for e in equipment_ids] or None
    return target.table().out_of_service_periods(start or EVER, end, ids)
