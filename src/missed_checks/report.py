"""The fleet manager's report: per checklist and equipment, how each occurrence window ended.

Pure domain: the caller reads the table and hands over plain data. Instants are compared as the
table stores them (UTC ISO 8601 strings with a ``Z``, which sort as text), so a year of checks for
thousands of pieces of equipment is never turned into datetime objects.

Definition (README "Operate" repeats it). For the report period ``[from, to)`` and each
(checklist, equipment), a *closed window* is an occurrence window of the checklist's current rule
that starts in the period, whose ``end + grace`` is at or before the report's "now", and for which
the equipment counts (assigned no later than the window started, not unassigned before it ended:
:meth:`missed_checks.equipment.Assignment.counts_for`, the rule the evaluation applies). Every
window that has an outcome falls in exactly one bucket:

* **missed** / **dismissed**: a missed-check record exists for the window (its dismissal decides
  which). The record is the durable judgement and wins over a check recorded after it was
  written. Records count whatever rule judged them, even when the checklist's rule changed since.
* **on time**: otherwise, a performed check inside ``[start, end)`` of a closed window;
* **late**: otherwise, a performed check inside ``[end, end + grace)``.

``expected = on_time + late + missed + dismissed``: the windows the system judged or that were
done. A closed window with none of these outcomes whose end is after the checklist's
evaluated-until watermark (an active checklist only) is **pending**: the evaluation has not
reached it yet and it is not in ``expected``. Any other closed window without an outcome was
never judged by design (the checklist was paused, or the rule did not exist yet) and is not
counted. ``compliance = (on_time + late) / (expected - dismissed)``, in percent, ``None`` when
nothing is left to judge.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Protocol

from missed_checks.equipment import Assignment
from missed_checks.performed_check import PerformedCheck
from missed_checks.timefmt import to_utc_iso

TOTAL = "*"
"""``checklist_id`` and ``equipment_id`` of the fleet total row."""


class Window(Protocol):
    start: datetime
    end: datetime
    evaluate_at: datetime


@dataclass(frozen=True)
class MissedRecord:
    """What the report needs of a missed-check item."""

    equipment_id: str
    window_start: str
    """UTC ISO instant, as stored."""
    dismissed: bool

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> MissedRecord:
        return cls(str(item["equipment_id"]), str(item["window_start"]), bool(item.get("dismissal")))


@dataclass(frozen=True)
class ReportRow:
    checklist_id: str
    equipment_id: str
    expected: int = 0
    on_time: int = 0
    late: int = 0
    missed: int = 0
    dismissed: int = 0
    pending: int = 0

    @property
    def performed(self) -> int:
        return self.on_time + self.late

    @property
    def compliance(self) -> float | None:
        """Percent of the judged, not dismissed windows that were done (on time or late)."""
        judged = self.expected - self.dismissed
        return None if judged <= 0 else 100.0 * self.performed / judged

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        compliance = self.compliance
        data["compliance_pct"] = None if compliance is None else round(compliance, 2)
        return data


COLUMNS = (*(f.name for f in fields(ReportRow)), "compliance_pct")


def performed_by_equipment(checks: Iterable[PerformedCheck]) -> dict[str, list[str]]:
    """Group performed checks as :func:`checklist_report` takes them."""
    grouped: dict[str, list[str]] = defaultdict(list)
    for check in checks:
        grouped[check.equipment_id].append(to_utc_iso(check.performed_at))
    return grouped


class _Windows:
    """Closed windows of one checklist as sorted UTC ISO strings, for bisecting."""

    def __init__(self, windows: Sequence[Window], now: datetime) -> None:
        closed = sorted((w for w in windows if w.evaluate_at <= now), key=lambda w: w.start)
        self.starts = [to_utc_iso(w.start) for w in closed]
        self.ends = [to_utc_iso(w.end) for w in closed]
        self.evals = [to_utc_iso(w.evaluate_at) for w in closed]
        # One rule's windows all have the same window and grace, so ends and end + grace grow with
        # the start. Bisecting relies on it; fall back to scanning should that ever not hold.
        self.monotonic = all(a <= b for a, b in zip(self.ends, self.ends[1:], strict=False)) and all(
            a <= b for a, b in zip(self.evals, self.evals[1:], strict=False))
        self.index = {start: i for i, start in enumerate(self.starts)}

    def __len__(self) -> int:
        return len(self.starts)

    def counted(self, assignment: Assignment | None) -> list[range]:
        """Indices of the windows ``assignment`` counts for (Assignment.counts_for: any of its
        assignment periods), as sorted, non-overlapping ranges."""
        if assignment is None:
            return []
        periods = ((assignment.assigned_at, assignment.unassigned_at), *assignment.earlier_periods)
        ranges = sorted((self._period(assigned, unassigned) for assigned, unassigned in periods),
                        key=lambda r: r.start)
        merged: list[range] = []
        for current in ranges:
            if not len(current):
                continue
            if merged and current.start <= merged[-1].stop:
                merged[-1] = range(merged[-1].start, max(merged[-1].stop, current.stop))
            else:
                merged.append(current)
        return merged

    def _period(self, assigned_at: datetime, unassigned_at: datetime | None) -> range:
        low = bisect_left(self.starts, to_utc_iso(assigned_at))
        if unassigned_at is None:
            return range(low, len(self.starts))
        unassigned = to_utc_iso(unassigned_at)
        if self.monotonic:
            return range(low, max(low, bisect_right(self.ends, unassigned)))
        high = low
        while high < len(self.starts) and self.ends[high] <= unassigned:
            high += 1
        return range(low, high)

    def containing(self, instant: str) -> Iterable[int]:
        """Indices of the windows with ``start <= instant < end + grace``."""
        high = bisect_right(self.starts, instant)
        low = bisect_right(self.evals, instant) if self.monotonic else 0
        return (i for i in range(low, high) if instant < self.evals[i])


def checklist_report(
    checklist_id: str,
    windows: Sequence[Window],
    assignments: Iterable[Assignment],
    performed: Mapping[str, Iterable[str]],
    missed: Iterable[MissedRecord],
    *,
    now: datetime,
    watermark: datetime | None,
    judging: bool = True,
) -> list[ReportRow]:
    """Rows for one checklist, one per equipment with a closed counted window or a record.

    ``windows``: the occurrence windows of the checklist's current rule that start in the report
    period. ``performed``: equipment id -> UTC ISO instants of its performed checks (any order,
    from the period's start to the last window's end + grace). ``missed``: the checklist's
    missed-check records whose window starts in the period. ``watermark``: the checklist's
    evaluated-until instant; ``judging`` is False for a paused checklist (nothing is pending).
    """
    closed = _Windows(windows, now)
    by_equipment = {a.equipment_id: a for a in assignments}
    records: dict[str, list[MissedRecord]] = defaultdict(list)
    for record in missed:
        records[record.equipment_id].append(record)
    watermark_iso = to_utc_iso(watermark) if watermark is not None else None
    first_pending = len(closed)
    if judging and watermark_iso is not None:
        first_pending = next((i for i, end in enumerate(closed.ends) if end > watermark_iso), len(closed))

    rows = []
    for equipment_id in sorted(set(by_equipment) | set(records)):
        counted = closed.counted(by_equipment.get(equipment_id))
        own = records.get(equipment_id, [])
        recorded = {closed.index.get(r.window_start) for r in own} - {None}
        on_time: set[int] = set()
        late: set[int] = set()
        if counted:
            for instant in performed.get(equipment_id, ()):
                for i in closed.containing(instant):
                    if i not in recorded and any(i in r for r in counted):
                        (on_time if instant < closed.ends[i] else late).add(i)
        late -= on_time
        dismissed = sum(1 for r in own if r.dismissed)
        pending = sum(1 for r in counted for i in range(max(r.start, first_pending), r.stop)
                      if i not in recorded and i not in on_time and i not in late)
        if not counted and not own:
            continue
        rows.append(ReportRow(
            checklist_id=checklist_id,
            equipment_id=equipment_id,
            expected=len(on_time) + len(late) + len(own),
            on_time=len(on_time),
            late=len(late),
            missed=len(own) - dismissed,
            dismissed=dismissed,
            pending=pending,
        ))
    return rows


def total(rows: Iterable[ReportRow], checklist_id: str = TOTAL, equipment_id: str = TOTAL) -> ReportRow:
    """The sum of ``rows`` (compliance is recomputed from the sums, not averaged)."""
    sums = dict.fromkeys(("expected", "on_time", "late", "missed", "dismissed", "pending"), 0)
    for row in rows:
        for name in sums:
            sums[name] += getattr(row, name)
    return ReportRow(checklist_id=checklist_id, equipment_id=equipment_id, **sums)
