"""Taking equipment out of service: recording a period (:class:`OutOfServicePeriod`, validated when
created) of equipment the table knows, through :class:`~missed_checks.equipment.ports.OutOfServiceRecords`.

The operator's ``equipment out-of-service`` (:mod:`missed_checks_ops.out_of_service`) and a local
run's ``out_of_service`` event (:mod:`missed_checks_local.product.scenario`) both record a period
this way. See docs/out-of-service.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.equipment.ports import OutOfServiceRecords
from missed_checks.errors import InvalidInput


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
