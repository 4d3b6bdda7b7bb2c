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

from missed_checks.equipment import taking_out_of_service as periods
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.equipment.taking_out_of_service import EVER, Recorded
from missed_checks.permissions.caller import Caller
from missed_checks_ops.target import StackTarget

__all__ = ["EVER", "back_in_service", "cancel_planned", "list_periods", "take_out_of_service"]


def take_out_of_service(target: StackTarget, caller: Caller, equipment_id: str, start: datetime,
                        end: datetime | None, *, reason: str, by: str, now: datetime) -> Recorded:
    """Record that the equipment is out of service over ``[start, end)`` (``end`` None: until further notice)."""
    return periods.take_out_of_service(target.table(), caller, equipment_id, start, end, reason=reason, now=now,
                                       by=by)


def back_in_service(target: StackTarget, caller: Caller, equipment_id: str, at: datetime, *, by: str,
                    now: datetime) -> OutOfServicePeriod:
    """End the period in effect at ``at`` early (``at`` not before now, after the period's from)."""
    return periods.back_in_service(target.table(), caller, equipment_id, at, now=now, by=by)


def cancel_planned(target: StackTarget, caller: Caller, equipment_id: str, start: datetime, *,
                   now: datetime) -> OutOfServicePeriod:
    """Delete a period that has not started yet (a mistake, or plans changed), as the caller; returns it."""
    return periods.cancel_planned(target.table(), caller, equipment_id, start, now=now)


def list_periods(target: StackTarget, caller: Caller, start: datetime | None, end: datetime | None,
                 equipment_ids: Sequence[str] = ()) -> list[OutOfServicePeriod]:
    """Periods sharing an instant with ``[start, end)`` (every one when both are None), of
    ``equipment_ids`` when given."""
    return periods.list_periods(target.table(), caller, start, end, equipment_ids)
