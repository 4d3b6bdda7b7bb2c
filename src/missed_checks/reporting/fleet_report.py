"""Reading what the report needs, by Query only (never Scan), and handing it to the domain.

Whole fleet or named checklists, per checklist: one Query for its judged windows, one for its
assignments, one per equipment shard for its performed checks (run in parallel, projected to the
sort key, which carries both the instant and the equipment), one for its missed checks. The whole
fleet also reads, from the ByPeriod index (one Query per month of the period), every checklist
judged in the period, so a deleted checklist is reported from what it left: its judged windows,
its assignments (kept, ended at the deletion), its performed and missed checks; its outcomes are
the ones it had before it was deleted. Named equipment: two Queries of the ByEquipment index per
piece of equipment (its assignments, deleted checklists' included; its performed and missed
checks in the period), and one for the judged windows of each of its checklists. Every Query
follows ``LastEvaluatedKey``. See README "The report's outcomes" for the definitions.

With ``detail=True`` the report also keeps every counted window's outcome (``Report.outcomes``),
the assignments and out-of-service periods behind them, which the JSON and HTML reports show;
the rows are the same either way. A check attached to a missed-check record (recorded late) gets
its ``recorded_at`` from one BatchGetItem of those checks alone.

In the product package (not the operator's) because the digest Lambda builds the same report
(``missed_checks.notifications.digesting``); the ``report`` command reads it through
``missed_checks_ops.report_reading``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from missed_checks import identifiers
from missed_checks.checklists.checklist import Checklist, Status, validate_checklist_id
from missed_checks.checklists.recurrence import OccurrenceWindow, Recurrence
from missed_checks.equipment.assignments import SHARD_COUNT, Assignment, shard_of, validate_equipment_id
from missed_checks.errors import InvalidInput, NotFound
from missed_checks.paging import MAX_PAGE
from missed_checks.reporting.findings import CheckResult, DefectView, ReportFindings, report_findings
from missed_checks.reporting.ports import ReportReader
from missed_checks.reporting.report import (
    MissedRecord,
    OutOfService,
    ReportRow,
    WindowOutcome,
    attached_checks,
    checklist_report,
    total,
    with_recorded_at,
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
    paused_since: datetime | None = None
    """A paused checklist: when it was paused (its last change)."""

    @property
    def zone(self) -> tzinfo:
        return ZoneInfo(self.timezone) if self.timezone else UTC

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "timezone": self.timezone, "deleted": self.deleted}
        if self.paused_since is not None:
            data["paused_since"] = to_utc_iso(self.paused_since)
        return data


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
    assignments: dict[tuple[str, str], Assignment] = field(default_factory=dict)
    """With ``detail``: the assignment of every (checklist, equipment) with a row."""
    out_of_service: dict[str, list[OutOfService]] = field(default_factory=dict)
    """The out-of-service periods the report excused windows with, by equipment."""
    findings: ReportFindings | None = None
    """With ``detail``: what the checks of the range found (failed items, defects; #33)."""

    @property
    def total(self) -> ReportRow:
        return total(self.rows)

    @property
    def found(self) -> ReportFindings:
        """:attr:`findings`, or nothing found when none were read (built without ``detail``, or of no checklist)."""
        return self.findings or ReportFindings(min(self.end, self.as_of))

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
            data["assignments"] = [_assignment_dict(a) for _, a in sorted(self.assignments.items())]
            data["out_of_service"] = {equipment_id: [p.to_dict() for p in periods]
                                      for equipment_id, periods in sorted(self.out_of_service.items())}
            data["findings"] = self.found.to_dict()
        return data


def _assignment_dict(assignment: Assignment) -> dict[str, Any]:
    periods = sorted([*assignment.earlier_periods, (assignment.assigned_at, assignment.unassigned_at)],
                     key=lambda period: period[0])
    return {"checklist_id": assignment.checklist_id, "equipment_id": assignment.equipment_id,
            "periods": [{"from": to_utc_iso(assigned), "to": None if unassigned is None else to_utc_iso(unassigned)}
                        for assigned, unassigned in periods]}


def out_of_service_of(table: ReportReader, start: datetime, equipment_ids: Sequence[str] = ()) -> list[OutOfService]:
    """The out-of-service periods that can excuse a window starting from ``start`` (one Query of the
    fleet's out-of-service partition: every period not ended by ``start``), as the report takes them."""
    periods = table.out_of_service_periods(start, None, equipment_ids or None)
    return [OutOfService(p.equipment_id, to_utc_iso(p.start), None if p.end is None else to_utc_iso(p.end), p.reason)
            for p in periods]


def build_report(
    table: ReportReader,
    start: datetime,
    end: datetime,
    *,
    now: datetime,
    checklist_ids: Sequence[str] = (),
    equipment_ids: Sequence[str] = (),
    progress: Progress | None = None,
    detail: bool = False,
    out_of_service: Iterable[OutOfService] | None = None,
) -> Report:
    """The report over windows starting in ``[start, end)`` as of ``now``. ``out_of_service``: the
    periods that excuse windows (None: read from the table, :func:`out_of_service_of`)."""
    if end <= start:
        raise InvalidInput("to", f"must be after --from ({to_utc_iso(start)})")
    for checklist_id in checklist_ids:
        validate_checklist_id(checklist_id, "checklist")
    for equipment_id in equipment_ids:
        validate_equipment_id(equipment_id)
    report = Report(start, end, now, [], outcomes=[] if detail else None)
    seen = _Found()
    if out_of_service is None:
        out_of_service = out_of_service_of(table, start, sorted(set(equipment_ids)))
    for period in out_of_service:
        report.out_of_service.setdefault(period.equipment_id, []).append(period)
    if equipment_ids:
        _by_equipment(table, report, sorted(set(equipment_ids)), set(checklist_ids), progress, seen)
    else:
        _by_checklist(table, report, checklist_ids, progress, seen)
    report.rows.sort(key=lambda row: (row.checklist_id, row.equipment_id))
    used = {row.checklist_id for row in report.rows}
    if report.outcomes is not None:
        report.outcomes.sort(key=lambda o: (o.checklist_id, o.equipment_id, o.window_start))
        report.outcomes = with_recorded_at(report.outcomes, _recorded_at(table, attached_checks(report.outcomes)))
        rows = {(row.checklist_id, row.equipment_id) for row in report.rows}
        report.assignments = {k: v for k, v in sorted(report.assignments.items()) if k in rows}
    report.checklists = {k: v for k, v in sorted(report.checklists.items()) if k in used}
    equipment = {row.equipment_id for row in report.rows}
    report.out_of_service = {k: v for k, v in sorted(report.out_of_service.items()) if k in equipment}
    if detail:
        report.findings = report_findings(seen.checks, seen.defects(table), start, end, now)
    return report


@dataclass
class _Found:
    """What the report read for its findings: the checks it read (each once), and where to read the
    defects of its checklists (by site, or by equipment when the report names equipment)."""

    checks: list[CheckResult] = field(default_factory=list)
    checklists: set[str] = field(default_factory=set)
    """The checklists whose defects count."""
    sites: set[str | None] = field(default_factory=set)
    equipment: list[str] = field(default_factory=list)

    def defects(self, table: ReportReader) -> list[DefectView]:
        """The defects of :attr:`checklists`: one Query per piece of equipment named, else each site's
        defects (every page), the checklists' sites and the equipment at none (``None``)."""
        found: list[DefectView] = []
        if self.equipment:
            for equipment_id in self.equipment:
                found.extend(table.defects_of_equipment(equipment_id))
        else:
            for site_id in sorted(self.sites, key=lambda s: (s is not None, s or "")):
                position: str | None = None
                while True:
                    page = table.defects_of_site(site_id, position=position, limit=MAX_PAGE)
                    found.extend(page.items)
                    position = page.next_position
                    if position is None:
                        break
        return [d for d in found if d.checklist_id in self.checklists]


def _recorded_at(table: ReportReader, checks: Sequence[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
    """When each of ``checks`` (checklist, equipment, performed_at) was recorded: one BatchGetItem
    of those performed-check items (only the checks attached to a missed-check record)."""
    wanted = list(dict.fromkeys(checks))
    return table.recorded_at_of(wanted) if wanted else {}


def _rule(checklist: Checklist) -> Recurrence | InvalidInput:
    """The checklist's rule, parsed once for a report (a parse checks the rule's windows fit: for an
    hourly rule a year of them, the most of a small report's time), or why it cannot be read."""
    try:
        return checklist.parsed()
    except InvalidInput as error:
        return error


def _info(checklist: Checklist, rule: Recurrence | InvalidInput) -> ChecklistInfo:
    zone: str | None
    if not isinstance(rule, InvalidInput):
        zone = rule.timezone
    else:
        zone = checklist.timezone if isinstance(checklist.timezone, str) and _known_zone(checklist.timezone) else None
    paused = checklist.updated_at if checklist.status is Status.PAUSED else None
    return ChecklistInfo(name=checklist.name, timezone=zone, paused_since=paused)


def _known_zone(name: str) -> bool:
    try:
        identifiers.zone(name, "timezone")
    except InvalidInput:
        return False
    return True


def _windows(checklist: Checklist, report: Report, rule: Recurrence | InvalidInput) -> list[Any]:
    """The windows of the checklist's current rule (:func:`_rule`) in the period (only those not judged
    yet count)."""
    if checklist.status is not Status.ACTIVE:
        return []
    try:
        if isinstance(rule, InvalidInput):
            raise rule
        return list(rule.windows(report.start, report.end))
    except InvalidInput as error:
        report.warnings.append(
            f"checklist {checklist.checklist_id}: its rule cannot be read ({error}); only its judged windows "
            "and missed-check records are counted")
        return []


def _judged(table: ReportReader, checklist_id: str, report: Report) -> list[OccurrenceWindow]:
    return table.judged_windows_of(checklist_id, report.start, report.end)


def _rows(checklist: Checklist | str, judged: list[OccurrenceWindow], current: list[Any],
          assignments: Iterable[Assignment], performed: dict[str, list[str]], missed: Iterable[MissedRecord],
          report: Report, rule: Recurrence | InvalidInput | None = None) -> list[ReportRow]:
    """The rows of a checklist (``rule``: its :func:`_rule`), or of a deleted one (given by its id:
    judged windows only)."""
    assignments = list(assignments)
    if isinstance(checklist, str):
        checklist_id, watermark, judging = checklist, None, False
        report.checklists.setdefault(checklist_id, ChecklistInfo(deleted=True))
        missed = list(missed)
        if not assignments:  # deleted before assignments were kept: whoever left a record or a check
            assignments = [Assignment(checklist_id, e, _EPOCH) for e in sorted({*performed, *(r.equipment_id
                                                                                                for r in missed)})]
    else:
        checklist_id, watermark = checklist.checklist_id, checklist.watermark
        judging = checklist.status is Status.ACTIVE
        if checklist_id not in report.checklists:  # its info once (the rule parsed once: :func:`_rule`)
            report.checklists[checklist_id] = _info(checklist, _rule(checklist) if rule is None else rule)
    if report.outcomes is not None:
        report.assignments.update({(checklist_id, a.equipment_id): a for a in assignments})
    return checklist_report(
        checklist_id, judged, assignments, performed, missed, now=report.as_of, current=current,
        watermark=watermark, judging=judging, out_of_service=report.out_of_service, outcomes=report.outcomes)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _checks_until(windows: Iterable[Any], report: Report) -> str:
    """Upper bound of performed checks that can count: the last window's end + grace."""
    last = max((w.evaluate_at for w in windows), default=report.end)
    return to_utc_iso(max(last, report.end))


# -- whole checklists -----------------------------------------------------------------------------
def _by_checklist(table: ReportReader, report: Report, checklist_ids: Sequence[str],
                  progress: Progress | None, seen: _Found) -> None:
    judged_ids: set[str] | None = None  # checklists with a window judged in the period (the fleet)
    deleted: list[str] = []
    if checklist_ids:
        checklists: list[Checklist | str] = []
        for checklist_id in dict.fromkeys(checklist_ids):
            found = table.get_checklist(checklist_id)
            if found is None and not table.judged_windows_of(checklist_id, report.start, report.end):
                raise NotFound(f"checklist {checklist_id!r} does not exist")
            checklists.append(checklist_id if found is None else found)
    else:
        live = table.list_checklists()
        judged_ids = set(table.checklists_judged(report.start, report.end))
        deleted = sorted(judged_ids - {c.checklist_id for c in live})
        checklists = [*live, *deleted]
    seen.checklists.update(c if isinstance(c, str) else c.checklist_id for c in checklists)
    seen.sites.update({None, *(c.site_id for c in checklists if not isinstance(c, str))})
    with ThreadPoolExecutor(max_workers=SHARD_COUNT) as pool:
        for checklist in checklists:
            checklist_id = checklist if isinstance(checklist, str) else checklist.checklist_id
            judged = _judged(table, checklist_id, report)
            rule = None if isinstance(checklist, str) else _rule(checklist)
            current = [] if isinstance(checklist, str) or rule is None else _windows(checklist, report, rule)
            high = _checks_until([*judged, *current], report)
            low = to_utc_iso(report.start)
            assignments = table.assignments(checklist_id)
            # A check is recorded only for equipment assigned to the checklist, and an assignment item
            # stays when it is unassigned: the checks of its equipment are all its checks, read from the
            # write partitions they are in alone (every partition for a checklist without assignment
            # items, deleted before they were kept: None). Its missed checks are read of that equipment
            # too (missed_records_of_checklist), so no row has equipment whose checks were not read.
            equipment = {a.equipment_id for a in assignments}
            shards = _performed_shards(pool, table, checklist_id, equipment or None, low, high)
            # A missed check implies a judged window (its record is opened first): no Query without one.
            missed = ([] if judged_ids is not None and checklist_id not in judged_ids
                      else _missed_of_checklist(table, checklist_id, report))
            performed: dict[str, list[str]] = defaultdict(list)
            for checks in shards:
                for check in checks:
                    performed[check.equipment_id].append(check.performed_at)
                seen.checks.extend(checks)
            report.rows.extend(_rows(checklist, judged, current, assignments, performed, missed, report, rule))
            if isinstance(checklist, str):
                # The checklist is gone; what it left (judged windows, assignments, checks) is counted.
                report.warnings.append(f"checklist {checklist_id} no longer exists; its judged windows are "
                                       "counted as they were judged")
            if progress:
                progress(checklist_id)


def _performed_shards(pool: ThreadPoolExecutor, table: ReportReader, checklist_id: str,
                      equipment: Collection[str] | None, low: str, high: str) -> Iterator[list[CheckResult]]:
    """The checklist's performed checks of ``equipment`` (None: every check), read on ``pool`` a shard
    at a time (the write partitions of that shard's equipment, or all eight, one Query each, one after
    another), a list per shard as each is read."""
    by_shard: dict[int, list[str] | None] = {shard: None for shard in range(SHARD_COUNT)}
    if equipment is not None:
        grouped: dict[int, list[str]] = defaultdict(list)
        for equipment_id in sorted(equipment):
            grouped[shard_of(equipment_id)].append(equipment_id)
        by_shard = dict(grouped)
    return pool.map(lambda shard: table.performed_check_results(checklist_id, shard, low, high, by_shard[shard]),
                    sorted(by_shard))


def _missed_of_checklist(table: ReportReader, checklist_id: str, report: Report) -> list[MissedRecord]:
    return table.missed_records_of_checklist(checklist_id, report.start, report.end)


# -- named equipment ------------------------------------------------------------------------------
def _by_equipment(table: ReportReader, report: Report, equipment_ids: list[str], only: set[str],
                  progress: Progress | None, seen: _Found) -> None:
    checklists: dict[str, Checklist | str] = {}  # a deleted checklist by its id
    # checklist id -> (judged windows, current-rule windows), read once for all the equipment
    windows: dict[str, tuple[list[OccurrenceWindow], list[Any]]] = {}
    rules: dict[str, Recurrence | InvalidInput] = {}  # each checklist's rule, parsed once
    low, high = to_utc_iso(report.start), to_utc_iso(report.end)
    for equipment_id in equipment_ids:
        assignments = [a for a in table.assignments_of_equipment(equipment_id)
                       if not only or a.checklist_id in only]
        for assignment in assignments:
            if assignment.checklist_id not in checklists:
                checklist = table.get_checklist(assignment.checklist_id)
                checklists[assignment.checklist_id] = assignment.checklist_id if checklist is None else checklist
                if checklist is not None:
                    rules[assignment.checklist_id] = _rule(checklist)
                windows[assignment.checklist_id] = (
                    _judged(table, assignment.checklist_id, report),
                    [] if checklist is None else _windows(checklist, report, rules[assignment.checklist_id]))
        until = max((_checks_until([*windows[a.checklist_id][0], *windows[a.checklist_id][1]], report)
                     for a in assignments), default=high)
        performed: dict[str, list[str]] = defaultdict(list)
        missed: dict[str, list[MissedRecord]] = defaultdict(list)
        for checklist_id, record in table.missed_records_of_equipment(
                equipment_id, [a.checklist_id for a in assignments], report.start, report.end):
            missed[checklist_id].append(record)
        for check in table.performed_check_results_of_equipment(equipment_id, low, until):
            if check.checklist_id in windows and not (only and check.checklist_id not in only):
                performed[check.checklist_id].append(check.performed_at)
                seen.checks.append(check)
        for assignment in assignments:
            report.rows.extend(_rows(checklists[assignment.checklist_id], *windows[assignment.checklist_id],
                                     [assignment], {equipment_id: performed[assignment.checklist_id]},
                                     missed[assignment.checklist_id], report, rules.get(assignment.checklist_id)))
        if progress:
            progress(equipment_id)
    seen.checklists.update(checklists)
    seen.equipment.extend(equipment_ids)
