"""What the checks found in a report's range (#33 item 4): failed items, defects open and their age,
time to resolve. Pure: the fleet report (:mod:`missed_checks.reporting.fleet_report`) reads the
range's performed checks (with what each found, as recorded) and the defects, and hands them over.

Definitions (docs/report-outcomes.md repeats them, with a worked example). For the report's range
``[from, to)``, as of ``as_of``:

* **Checks and failed items**, per checklist and equipment and per checklist: every performed check
  with ``performed_at`` in ``[from, to)`` counts once in ``performed``; ``passed`` / ``failed`` its
  result as recorded (``no_items``: its checklist had no items then, neither passed nor failed);
  ``critical_failed`` the checks with at least one failed critical item. Per item (an item's id is
  its checklist's): how many checks failed it (``failed``) and how many of those failed it while it
  was critical (``critical_failed``; the item is *critical* in the report when that is not zero).
  Labels are as the latest check that failed the item recorded them (an edit of the items never
  changes how a check reads).
* **Open defects**: found before the range's end and not resolved by it (``min(to, as_of)``: a
  range reaching into the future is read as of now); each with its **age** at that instant, elapsed
  time since it was found (the check's ``performed_at``).
* **Resolved defects**: resolved in ``[from, to)``; **time to resolve** = resolved at - found at, in
  elapsed time; their count, median and longest, and how each was resolved (by a supervisor with a
  note, or cleared by a later check passing every critical item).

**Compliance never changes**: a check with failed items was still *performed*. The report's rows
and compliance (:mod:`missed_checks.reporting.report`) count performed checks by their instant
alone; nothing here feeds them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from missed_checks.reporting.report import TOTAL
from missed_checks.timefmt import to_utc_iso

__all__ = [
    "PASSING_CHECK",
    "SUPERVISOR",
    "CheckResult",
    "DefectView",
    "FailedItemView",
    "ItemCount",
    "OpenDefect",
    "ReportFindings",
    "ResolvedDefect",
    "ResultRow",
    "TimeToResolve",
    "in_words",
    "report_findings",
]

PASSED, FAILED, NO_ITEMS = "passed", "failed", "no_items"
SUPERVISOR, PASSING_CHECK = "supervisor", "passing_check"
"""How a defect was resolved (``Defect.resolved_how``)."""


class FailedItemView(Protocol):
    """A failed item as a check recorded it (``missed_checks.performed_checks.answers.FailedItem``)."""

    @property
    def item_id(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def critical(self) -> bool: ...


class DefectView(Protocol):
    """What the report reads of a defect (``missed_checks.defects.defect.Defect``)."""

    @property
    def defect_id(self) -> str: ...

    @property
    def checklist_id(self) -> str: ...

    @property
    def equipment_id(self) -> str: ...

    @property
    def found_by(self) -> str | None: ...

    @property
    def found_at(self) -> datetime: ...

    @property
    def failed_items(self) -> Sequence[FailedItemView]: ...

    @property
    def resolved_by(self) -> str | None: ...

    @property
    def resolved_at(self) -> datetime | None: ...

    @property
    def resolved_how(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class CheckResult:
    """A performed check as the report reads what it found: its result and failed items as recorded
    (a check recorded before items existed, or for a checklist without items: ``no_items``)."""

    checklist_id: str
    equipment_id: str
    performed_at: str
    """UTC ISO, as stored."""
    result: str = NO_ITEMS
    failed_items: tuple[FailedItemView, ...] = ()


def in_words(delta: timedelta) -> str:
    """An elapsed time in words: ``2 days 5 hours``, ``1 day``, ``7 hours 20 minutes``, ``45 minutes``,
    ``less than a minute`` (days and hours from a day on, hours and minutes below)."""
    minutes = int(delta.total_seconds() // 60)
    if minutes < 1:
        return "less than a minute"
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = [(days, "day"), (hours, "hour")] if days else [(hours, "hour"), (minutes, "minute")]
    return " ".join(f"{n} {unit}{'' if n == 1 else 's'}" for n, unit in parts if n)


@dataclass(frozen=True)
class ItemCount:
    """How often one item of a checklist failed."""

    item_id: str
    label: str
    failed: int
    """Checks that failed it."""
    critical_failed: int
    """Of those, the checks that failed it while it was critical."""

    @property
    def critical(self) -> bool:
        return self.critical_failed > 0

    def to_dict(self) -> dict[str, Any]:
        return {"item_id": self.item_id, "label": self.label, "critical": self.critical, "failed": self.failed,
                "critical_failed": self.critical_failed}


@dataclass(frozen=True)
class ResultRow:
    """The checks of one checklist and equipment (``equipment_id`` :data:`TOTAL`: the checklist's
    equipment together) performed in the range, and which items they failed, most failed first."""

    checklist_id: str
    equipment_id: str
    performed: int = 0
    passed: int = 0
    failed: int = 0
    critical_failed: int = 0
    items: tuple[ItemCount, ...] = ()

    @property
    def failed_share(self) -> str:
        """``2 of 5`` checks with a failed item."""
        return f"{self.failed} of {self.performed}"

    def to_dict(self) -> dict[str, Any]:
        return {"checklist_id": self.checklist_id, "equipment_id": self.equipment_id, "performed": self.performed,
                "passed": self.passed, "failed": self.failed, "critical_failed": self.critical_failed,
                "items": [item.to_dict() for item in self.items]}


def _labels(items: Iterable[FailedItemView]) -> tuple[str, ...]:
    return tuple(f"{item.label} (critical)" if item.critical else item.label for item in items)


@dataclass(frozen=True)
class OpenDefect:
    """A defect open at the range's end, and how long it had been open then."""

    defect_id: str
    checklist_id: str
    equipment_id: str
    found_at: datetime
    found_by: str | None
    items: tuple[str, ...]
    """What failed, in words (``Brakes work (critical)``)."""
    age: timedelta

    @property
    def age_words(self) -> str:
        return in_words(self.age)

    def to_dict(self) -> dict[str, Any]:
        return {"defect_id": self.defect_id, "checklist_id": self.checklist_id, "equipment_id": self.equipment_id,
                "found_at": to_utc_iso(self.found_at), "found_by": self.found_by, "failed_items": list(self.items),
                "age_s": int(self.age.total_seconds()), "age": self.age_words}


@dataclass(frozen=True)
class ResolvedDefect:
    """A defect resolved in the range: by whom, how, and how long it took from being found."""

    defect_id: str
    checklist_id: str
    equipment_id: str
    found_at: datetime
    resolved_at: datetime
    resolved_by: str | None
    how: str | None
    """:data:`SUPERVISOR` or :data:`PASSING_CHECK`."""
    items: tuple[str, ...]

    @property
    def took(self) -> timedelta:
        return self.resolved_at - self.found_at

    @property
    def how_words(self) -> str:
        return {SUPERVISOR: "by a supervisor", PASSING_CHECK: "by a passing check"}.get(self.how or "", "resolved")

    def to_dict(self) -> dict[str, Any]:
        return {"defect_id": self.defect_id, "checklist_id": self.checklist_id, "equipment_id": self.equipment_id,
                "found_at": to_utc_iso(self.found_at), "resolved_at": to_utc_iso(self.resolved_at),
                "resolved_by": self.resolved_by, "resolved_how": self.how, "failed_items": list(self.items),
                "time_to_resolve_s": int(self.took.total_seconds()), "time_to_resolve": in_words(self.took)}


@dataclass(frozen=True)
class TimeToResolve:
    """The defects resolved in the range: how many, the median and longest time to resolve, and how
    many were resolved by a supervisor and by a passing check."""

    count: int = 0
    median: timedelta | None = None
    longest: timedelta | None = None
    by_supervisor: int = 0
    by_passing_check: int = 0

    @classmethod
    def of(cls, resolved: Sequence[ResolvedDefect]) -> TimeToResolve:
        took = sorted(d.took for d in resolved)
        if not took:
            return cls()
        middle = len(took) // 2
        median = took[middle] if len(took) % 2 else (took[middle - 1] + took[middle]) / 2
        return cls(len(took), median, took[-1], sum(d.how == SUPERVISOR for d in resolved),
                   sum(d.how == PASSING_CHECK for d in resolved))

    def to_dict(self) -> dict[str, Any]:
        def seconds(delta: timedelta | None) -> int | None:
            return None if delta is None else int(delta.total_seconds())

        return {"count": self.count, "median_s": seconds(self.median), "longest_s": seconds(self.longest),
                "median": None if self.median is None else in_words(self.median),
                "longest": None if self.longest is None else in_words(self.longest),
                "by_supervisor": self.by_supervisor, "by_passing_check": self.by_passing_check}


@dataclass(frozen=True)
class ReportFindings:
    """What the checks of a range found (:func:`report_findings`)."""

    at: datetime
    """The instant open defects are read at and aged to: the range's end, or ``as_of`` when earlier."""
    rows: tuple[ResultRow, ...] = ()
    """Per checklist and equipment with a check performed in the range."""
    checklists: tuple[ResultRow, ...] = ()
    """Per checklist (equipment :data:`TOTAL`)."""
    open_defects: tuple[OpenDefect, ...] = ()
    """Oldest first."""
    resolved: tuple[ResolvedDefect, ...] = ()
    """In the order they were resolved."""
    time_to_resolve: TimeToResolve = field(default_factory=TimeToResolve)
    critical_checks: tuple[CheckResult, ...] = ()
    """The checks performed in the range that failed a critical item, in the order they were performed."""

    @property
    def fleet(self) -> ResultRow:
        """Every checklist's checks together (no items: an item id is its checklist's)."""
        rows = self.checklists
        return ResultRow(TOTAL, TOTAL, sum(r.performed for r in rows), sum(r.passed for r in rows),
                         sum(r.failed for r in rows), sum(r.critical_failed for r in rows))

    def to_dict(self) -> dict[str, Any]:
        return {"at": to_utc_iso(self.at), "checks": [row.to_dict() for row in (*self.rows, *self.checklists)],
                "fleet": {k: v for k, v in self.fleet.to_dict().items() if k not in ("items", "checklist_id",
                                                                                   "equipment_id")},
                "open_defects": [d.to_dict() for d in self.open_defects],
                "resolved_defects": [d.to_dict() for d in self.resolved],
                "time_to_resolve": self.time_to_resolve.to_dict(),
                "critical_failures": [{"checklist_id": c.checklist_id, "equipment_id": c.equipment_id,
                                       "performed_at": c.performed_at,
                                       "failed_items": list(_labels(i for i in c.failed_items if i.critical))}
                                      for c in self.critical_checks]}


@dataclass
class _Tally:
    performed: int = 0
    passed: int = 0
    failed: int = 0
    critical_failed: int = 0
    items: dict[str, list[Any]] = field(default_factory=dict)
    """item id -> [label, failed, critical failed, performed_at of the latest failure]."""

    def add(self, check: CheckResult) -> None:
        self.performed += 1
        self.passed += check.result == PASSED
        self.failed += check.result == FAILED
        self.critical_failed += any(item.critical for item in check.failed_items)
        for item in check.failed_items:
            tally = self.items.setdefault(item.item_id, [item.label, 0, 0, check.performed_at])
            tally[1] += 1
            tally[2] += bool(item.critical)
            if check.performed_at >= tally[3]:
                tally[0], tally[3] = item.label, check.performed_at

    def row(self, checklist_id: str, equipment_id: str) -> ResultRow:
        items = sorted((ItemCount(item_id, label, failed, critical)
                        for item_id, (label, failed, critical, _) in self.items.items()),
                       key=lambda i: (-i.failed, -i.critical_failed, i.item_id))
        return ResultRow(checklist_id, equipment_id, self.performed, self.passed, self.failed, self.critical_failed,
                         tuple(items))


def result_rows(checks: Iterable[CheckResult]) -> tuple[list[ResultRow], list[ResultRow]]:
    """The rows per (checklist, equipment) and per checklist of ``checks`` (all of them counted)."""
    rows: dict[tuple[str, str], _Tally] = defaultdict(_Tally)
    checklists: dict[str, _Tally] = defaultdict(_Tally)
    for check in checks:
        rows[(check.checklist_id, check.equipment_id)].add(check)
        checklists[check.checklist_id].add(check)
    return ([tally.row(*key) for key, tally in sorted(rows.items())],
            [tally.row(key, TOTAL) for key, tally in sorted(checklists.items())])


def report_findings(checks: Iterable[CheckResult], defects: Iterable[DefectView], start: datetime, end: datetime,
                    as_of: datetime) -> ReportFindings:
    """What ``checks`` (those performed in ``[start, end)`` count) and ``defects`` (any: those open at
    the end or resolved in the range are kept) found, as of ``as_of``."""
    low, high = to_utc_iso(start), to_utc_iso(end)
    in_range = [c for c in checks if low <= c.performed_at < high]
    rows, checklists = result_rows(in_range)
    at = min(end, as_of)
    open_defects: list[OpenDefect] = []
    resolved: list[ResolvedDefect] = []
    for defect in defects:
        items = _labels(defect.failed_items)
        if defect.found_at < at and (defect.resolved_at is None or defect.resolved_at >= at):
            open_defects.append(OpenDefect(defect.defect_id, defect.checklist_id, defect.equipment_id,
                                           defect.found_at, defect.found_by, items, at - defect.found_at))
        if defect.resolved_at is not None and start <= defect.resolved_at < end:
            resolved.append(ResolvedDefect(defect.defect_id, defect.checklist_id, defect.equipment_id,
                                           defect.found_at, defect.resolved_at, defect.resolved_by,
                                           defect.resolved_how, items))
    open_defects.sort(key=lambda d: (d.found_at, d.defect_id))
    resolved.sort(key=lambda d: (d.resolved_at, d.defect_id))
    critical = sorted((c for c in in_range if any(item.critical for item in c.failed_items)),
                      key=lambda c: (c.performed_at, c.checklist_id, c.equipment_id))
    return ReportFindings(at, tuple(rows), tuple(checklists), tuple(open_defects), tuple(resolved),
                          TimeToResolve.of(resolved), tuple(critical))

