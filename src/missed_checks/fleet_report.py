"""Reading what the report needs, by Query only (never Scan), and handing it to the domain.

Whole fleet or named checklists, per checklist: one Query for its judged windows, one for its
assignments, one per equipment shard for its performed checks (run in parallel, projected to the
sort key, which carries both the instant and the equipment); its missed checks come from one
Query of its own (named checklists) or, for the whole fleet, from one ByPeriod Query per month of
the period, which also brings the missed checks of deleted checklists (counted as recorded).
Named equipment: two Queries of the ByEquipment index per piece of equipment (its assignments;
its performed and missed checks in the period), and one for the judged windows of each of its
checklists. Every Query follows ``LastEvaluatedKey``. See README "Operate" for the definitions.

With ``detail=True`` the report also keeps every counted window's outcome (``Report.outcomes``),
which the HTML report and local runs need; the rows are the same either way.

In the product package (not the operator's) because the digest Lambda builds the same report
(``missed_checks.digesting``); the ``report`` command reads it through ``missed_checks_ops.report_reading``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from missed_checks.aws.table import ChecklistTable, NotFound
from missed_checks.checklist import Checklist, Status, validate_checklist_id
from missed_checks.equipment import SHARD_COUNT, Assignment, validate_equipment_id
from missed_checks.errors import InvalidInput
from missed_checks.recurrence import OccurrenceWindow
from missed_checks.report import (
    MissedRecord,
    ReportRow,
    WindowOutcome,
    checklist_report,
    deleted_checklist_report,
    judged_window,
    total,
)
from missed_checks.timefmt import to_utc_iso

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ChecklistInfo:
    """What the report shows of a checklist besides its id: its name and zone (``None``: the zone
    is unknown, a deleted checklist or an unreadable rule; its times are shown in UTC)."""

    name: str = ""
    timezone: str | None = None
    deleted: bool = False

    @property
    def zone(self) -> tzinfo:
        return ZoneInfo(self.timezone) if self.timezone else UTC

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "timezone": self.timezone, "deleted": self.deleted}


@dataclass
class Report:
    start: datetime
    end: datetime
    as_of: datetime
    rows: list[ReportRow]
    warnings: list[str] = field(default_factory=list)
    checklists: dict[str, ChecklistInfo] = field(default_factory=dict)
    """Every checklist with a row, by id."""
    outcomes: list[WindowOutcome] | None = None
    """With ``detail``: every counted window's outcome, by checklist, equipment and window start."""

    @property
    def total(self) -> ReportRow:
        return total(self.rows)

    @property
    def zones(self) -> dict[str, tzinfo]:
        return {checklist_id: info.zone for checklist_id, info in self.checklists.items()}

    def to_dict(self) -> dict[str, Any]:
        data = {
            "from": to_utc_iso(self.start),
            "to": to_utc_iso(self.end),
            "as_of": to_utc_iso(self.as_of),
            "rows": [row.to_dict() for row in self.rows],
            "total": self.total.to_dict(),
            "warnings": self.warnings,
        }
        if self.outcomes is not None:
            data["checklists"] = {key: info.to_dict() for key, info in sorted(self.checklists.items())}
            data["windows"] = [outcome.to_dict() for outcome in self.outcomes]
        return data


def build_report(
    table: ChecklistTable,
    start: datetime,
    end: datetime,
    *,
    now: datetime,
    checklist_ids: Sequence[str] = (),
    equipment_ids: Sequence[str] = (),
    progress: Progress | None = None,
    detail: bool = False,
) -> Report:
    if end <= start:
        raise InvalidInput("to", f"must be after --from ({to_utc_iso(start)})")
    for checklist_id in checklist_ids:
        validate_checklist_id(checklist_id, "checklist")
    for equipment_id in equipment_ids:
        validate_equipment_id(equipment_id)
    report = Report(start, end, now, [], outcomes=[] if detail else None)
    if equipment_ids:
        _by_equipment(table, report, sorted(set(equipment_ids)), set(checklist_ids), progress)
    else:
        _by_checklist(table, report, checklist_ids, progress)
    report.rows.sort(key=lambda row: (row.checklist_id, row.equipment_id))
    if report.outcomes is not None:
        report.outcomes.sort(key=lambda o: (o.checklist_id, o.equipment_id, o.window_start))
    used = {row.checklist_id for row in report.rows}
    report.checklists = {k: v for k, v in sorted(report.checklists.items()) if k in used}
    return report


def _info(checklist: Checklist) -> ChecklistInfo:
    zone: str | None
    try:
        zone = checklist.parsed().timezone
    except InvalidInput:
        zone = checklist.timezone if isinstance(checklist.timezone, str) and _known_zone(checklist.timezone) else None
    return ChecklistInfo(name=checklist.name, timezone=zone)


def _known_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _windows(checklist: Checklist, report: Report) -> list[Any]:
    """The windows of the checklist's current rule in the period (only those not judged yet count)."""
    if checklist.status is not Status.ACTIVE:
        return []
    try:
        return list(checklist.parsed().windows(report.start, report.end))
    except InvalidInput as error:
        report.warnings.append(
            f"checklist {checklist.checklist_id}: its rule cannot be read ({error}); only its judged windows "
            "and missed-check records are counted")
        return []


def _judged(table: ChecklistTable, checklist_id: str, report: Report) -> list[OccurrenceWindow]:
    return [judged_window(item) for item in table.judged_windows(checklist_id, report.start, report.end)]


def _rows(checklist: Checklist, judged: list[OccurrenceWindow], current: list[Any], assignments: Iterable[Assignment],
          performed: dict[str, list[str]], missed: Iterable[MissedRecord], report: Report) -> list[ReportRow]:
    if checklist.checklist_id not in report.checklists:
        report.checklists[checklist.checklist_id] = _info(checklist)
    return checklist_report(
        checklist.checklist_id, judged, assignments, performed, missed, now=report.as_of, current=current,
        watermark=checklist.watermark, judging=checklist.status is Status.ACTIVE, outcomes=report.outcomes)


def _checks_until(windows: Iterable[Any], report: Report) -> str:
    """Upper bound of performed checks that can count: the last window's end + grace."""
    last = max((w.evaluate_at for w in windows), default=report.end)
    return to_utc_iso(max(last, report.end))


# -- whole checklists -----------------------------------------------------------------------------
def _by_checklist(table: ChecklistTable, report: Report, checklist_ids: Sequence[str],
                  progress: Progress | None) -> None:
    fleet_missed: dict[str, list[MissedRecord]] | None = None
    if checklist_ids:
        checklists = []
        for checklist_id in dict.fromkeys(checklist_ids):
            checklist = table.get_checklist(checklist_id)
            if checklist is None:
                raise NotFound(f"checklist {checklist_id!r} does not exist")
            checklists.append(checklist)
    else:
        checklists = table.list_checklists()
        fleet_missed = _missed_of_fleet(table, report)
    with ThreadPoolExecutor(max_workers=SHARD_COUNT) as pool:
        for checklist in checklists:
            judged = _judged(table, checklist.checklist_id, report)
            current = _windows(checklist, report)
            high = _checks_until([*judged, *current], report)
            low = to_utc_iso(report.start)
            shards = pool.map(_performed_shard, [table] * SHARD_COUNT, [checklist.checklist_id] * SHARD_COUNT,
                              range(SHARD_COUNT), [low] * SHARD_COUNT, [high] * SHARD_COUNT)
            assignments = table.assignments(checklist.checklist_id)
            missed = (fleet_missed.pop(checklist.checklist_id, []) if fleet_missed is not None
                      else _missed_of_checklist(table, checklist.checklist_id, report))
            performed: dict[str, list[str]] = defaultdict(list)
            for pairs in shards:
                for equipment_id, instant in pairs:
                    performed[equipment_id].append(instant)
            report.rows.extend(_rows(checklist, judged, current, assignments, performed, missed, report))
            if progress:
                progress(checklist.checklist_id)
    for checklist_id, records in sorted((fleet_missed or {}).items()):
        # Missed checks outlive their checklist: with the checklist gone, only they are left to count.
        report.warnings.append(f"checklist {checklist_id} no longer exists; only its missed-check records are "
                               "counted")
        report.checklists[checklist_id] = ChecklistInfo(deleted=True)
        report.rows.extend(deleted_checklist_report(checklist_id, records, outcomes=report.outcomes))


def _performed_shard(table: ChecklistTable, checklist_id: str, shard: int, low: str,
                     high: str) -> list[tuple[str, str]]:
    return table.performed_check_keys(checklist_id, shard, low, high)


_MISSED_ATTRIBUTES = ("checklist_id", "equipment_id", "window_start", "window_end", "dismissal")


def _missed_of_checklist(table: ChecklistTable, checklist_id: str, report: Report) -> list[MissedRecord]:
    items = table.missed_checks_of_checklist(checklist_id, report.start, report.end, _MISSED_ATTRIBUTES)
    return [MissedRecord.from_item(item) for item in items]


def _missed_of_fleet(table: ChecklistTable, report: Report) -> dict[str, list[MissedRecord]]:
    """Missed checks of every checklist, deleted ones included, by checklist: one ByPeriod Query per
    month (the same records the per-checklist Queries would read, once)."""
    grouped: dict[str, list[MissedRecord]] = defaultdict(list)
    for item in table.missed_checks_of_fleet(report.start, report.end, _MISSED_ATTRIBUTES):
        grouped[str(item["checklist_id"])].append(MissedRecord.from_item(item))
    return grouped


# -- named equipment ------------------------------------------------------------------------------
def _by_equipment(table: ChecklistTable, report: Report, equipment_ids: list[str], only: set[str],
                  progress: Progress | None) -> None:
    checklists: dict[str, Checklist | None] = {}
    # checklist id -> (judged windows, current-rule windows), read once for all the equipment
    windows: dict[str, tuple[list[OccurrenceWindow], list[Any]]] = {}
    low, high = to_utc_iso(report.start), to_utc_iso(report.end)
    for equipment_id in equipment_ids:
        assignments = [a for a in table.assignments_of_equipment(equipment_id)
                       if not only or a.checklist_id in only]
        for assignment in assignments:
            if assignment.checklist_id not in checklists:
                checklist = checklists[assignment.checklist_id] = table.get_checklist(assignment.checklist_id)
                if checklist is not None:
                    windows[checklist.checklist_id] = (_judged(table, checklist.checklist_id, report),
                                                       _windows(checklist, report))
        live = [(a, checklists[a.checklist_id]) for a in assignments if checklists[a.checklist_id] is not None]
        until = max((_checks_until([*windows[a.checklist_id][0], *windows[a.checklist_id][1]], report)
                     for a, _ in live), default=high)
        performed: dict[str, list[str]] = defaultdict(list)
        missed: dict[str, list[MissedRecord]] = defaultdict(list)
        for item in table.missed_checks_of_equipment(equipment_id, [a.checklist_id for a, _ in live], report.start,
                                                     report.end):
            missed[str(item["checklist_id"])].append(MissedRecord.from_item(item))
        for checklist_id, performed_at in table.performed_checks_of_equipment(equipment_id, low, until):
            if checklist_id in windows and not (only and checklist_id not in only):
                performed[checklist_id].append(performed_at)
        for assignment, checklist in live:
            if checklist is None:
                continue
            report.rows.extend(_rows(checklist, *windows[checklist.checklist_id], [assignment],
                                     {equipment_id: performed[checklist.checklist_id]},
                                     missed[checklist.checklist_id], report))
        if progress:
            progress(equipment_id)
