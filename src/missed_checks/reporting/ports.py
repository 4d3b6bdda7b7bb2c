"""What the fleet report reads, as a Protocol: :mod:`missed_checks.reporting.fleet_report` never names
an adapter. The table adapter (:mod:`missed_checks.aws.table`) serves it, every read a Query, a
GetItem or a BatchGetItem (never a Scan)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from missed_checks.checklists.checklist import Checklist
    from missed_checks.checklists.recurrence import OccurrenceWindow
    from missed_checks.defects.defect import Defect, DefectStatus
    from missed_checks.equipment.assignments import Assignment
    from missed_checks.equipment.out_of_service import OutOfServicePeriod
    from missed_checks.paging import Page
    from missed_checks.reporting.findings import CheckResult
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

    def performed_check_results(self, checklist_id: str, shard: int, low: str, high: str,
                                equipment_ids: Collection[str] | None = None) -> list[CheckResult]:
        """One shard's checks with ``low <= performed_at <= high`` (UTC ISO), with what each found (its
        result and failed items as recorded; #33); of ``equipment_ids`` (of the shard) alone, when given."""
        ...

    def performed_check_results_of_equipment(self, equipment_id: str, low: str, until: str) -> list[CheckResult]:
        """The equipment's checks, on every checklist, performed in ``[low, until]`` (UTC ISO), with what
        each found."""
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

    def defects_of_equipment(self, equipment_id: str, status: DefectStatus | None = None) -> list[Defect]:
        """The equipment's defects (#33), oldest found first."""
        ...

    def defects_of_site(self, site_id: str | None, status: DefectStatus | None = None,
                        position: str | None = None, limit: int = 100) -> Page[Defect]:
        """A page of the site's defects (None: of equipment at no site), oldest found first."""
        ...
