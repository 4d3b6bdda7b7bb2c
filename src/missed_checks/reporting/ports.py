"""What the fleet report reads, as a Protocol: :mod:`missed_checks.reporting.fleet_report` never names
an adapter. The table adapter (:mod:`missed_checks.aws.table`) serves it, every read a Query, a
GetItem or a BatchGetItem (never a Scan)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from missed_checks.checklists.checklist import Checklist
    from missed_checks.checklists.recurrence import OccurrenceWindow
    from missed_checks.equipment.assignments import Assignment
    from missed_checks.equipment.out_of_service import OutOfServicePeriod
    from missed_checks.reporting.report import MissedRecord

CheckKey = tuple[str, str, str]
"""(checklist, equipment, performed_at as UTC ISO)."""


class ReportReader(Protocol):
    def get_checklist(self, checklist_id: str) -> Checklist | None:
        """The checklist (with its closure calendars), or None when it is gone."""
        ...

    def list_checklists(self) -> list[Checklist]:
        """Every existing checklist."""
        ...

    def checklists_judged(self, start: datetime, end: datetime) -> list[str]:
        """Every checklist, deleted ones included, with a window judged that started in ``[start, end)``."""
        ...

    def judged_windows_of(self, checklist_id: str, start: datetime, end: datetime) -> list[OccurrenceWindow]:
        """The judged windows that started in ``[start, end)``, oldest first, as the evaluation judged them."""
        ...

    def assignments(self, checklist_id: str, shard: int | None = None) -> list[Assignment]:
        """The checklist's assignments (of one shard when given)."""
        ...

    def assignments_of_equipment(self, equipment_id: str) -> list[Assignment]:
        """The equipment's assignments to every checklist, deleted ones' included."""
        ...

    def performed_check_keys(self, checklist_id: str, shard: int, low: str, high: str) -> list[tuple[str, str]]:
        """(equipment id, performed_at) of one shard's checks with ``low <= performed_at <= high`` (UTC ISO)."""
        ...

    def performed_checks_of_equipment(self, equipment_id: str, low: str, until: str) -> list[tuple[str, str]]:
        """(checklist id, performed_at) of the equipment's checks performed in ``[low, until]`` (UTC ISO)."""
        ...

    def missed_records_of_checklist(self, checklist_id: str, start: datetime, end: datetime) -> list[MissedRecord]:
        """The checklist's missed checks whose window started in ``[start, end)``."""
        ...

    def missed_records_of_equipment(self, equipment_id: str, checklist_ids: Iterable[str], start: datetime,
                                    end: datetime) -> list[tuple[str, MissedRecord]]:
        """(checklist id, missed check) of one piece of equipment on the given checklists, window started
        in ``[start, end)``."""
        ...

    def out_of_service_periods(self, start: datetime, end: datetime | None = None,
                               equipment_ids: Iterable[str] | None = None) -> list[OutOfServicePeriod]:
        """Out-of-service periods sharing an instant with ``[start, end)`` (of ``equipment_ids`` when given)."""
        ...

    def recorded_at_of(self, checks: Sequence[CheckKey]) -> dict[CheckKey, str]:
        """When each of these performed checks was recorded (UTC ISO), for those on record."""
        ...
