"""What recording an out-of-service period reads and writes, as a Protocol (the operator's
``equipment out-of-service`` and the scenario player use it; :mod:`missed_checks.aws.table` serves it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from missed_checks.equipment.assignments import Assignment
    from missed_checks.equipment.out_of_service import OutOfServicePeriod


class OutOfServiceRecords(Protocol):
    def assignments_of_equipment(self, equipment_id: str) -> list[Assignment]:
        """The equipment's assignments to every checklist (none: the id names no equipment we know)."""
        ...

    def record_out_of_service(self, period: OutOfServicePeriod) -> tuple[OutOfServicePeriod, bool]:
        """Write the period unless the same one is on record (then that record and False); refused
        (InvalidInput naming ``from``) when it overlaps another period of the equipment."""
        ...
