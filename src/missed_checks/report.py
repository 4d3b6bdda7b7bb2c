"""The fleet manager's report: per checklist and equipment, how each occurrence window ended.

Pure domain: the caller reads the table and hands over plain data. Instants are compared as the
table stores them (UTC ISO 8601 strings with a ``Z``, which sort as text), so a year of checks for
thousands of pieces of equipment is never turned into datetime objects.

Definition (README "Operate" repeats it). For the report period ``[from, to)`` and each
(checklist, equipment), the windows considered are:

* the **judged windows**: every window the evaluation judged (its judged-window records, written
  by CloseWindow) that starts in the period, with the start, end and ``end + grace`` of the rule
  it was judged by, whatever the rule is today; and
* for an active checklist, the windows of its **current** rule that start in the period, are
  closed (``end + grace`` at or before the report's "now"), end after its watermark and were not
  judged: the evaluation has not reached them yet.

A window counts for the equipment when it was assigned no later than the window started and not
unassigned before it ended (:meth:`missed_checks.equipment.Assignment.counts_for`, the rule the
evaluation applies). Every counted window falls in at most one bucket:

* **missed** / **dismissed**: a missed-check record exists for the window (its dismissal decides
  which). The record is the durable judgement and wins over a check recorded after it was
  written. Every record in the period counts, also one without a judged-window record (e.g. a
  window whose CloseWindow has not run yet).
* **on time**: otherwise, a performed check inside ``[start, end)``;
* **late**: otherwise, a performed check inside ``[end, end + grace)``;
* **pending**: otherwise, for a window not judged yet; it is not in ``expected``.

A judged window with none of these for a counted equipment (no record and no check: the
evaluation counted that equipment differently, e.g. its assignment was changed afterwards) is
not counted. Windows that were never judged and never will be (before the checklist existed or
its rule took effect, while it was paused) are not considered at all, so checks imported for them
count nowhere. ``expected = on_time + late + missed + dismissed``;
``compliance = (on_time + late) / (expected - dismissed)`` (that is, of the windows judged and not
excused, the share done on time or late; :func:`compliance`), in percent, ``None`` when nothing is
left to judge.

Besides the counts, :func:`checklist_report` can hand over every counted window's outcome
(:class:`WindowOutcome`: the window, on time / late / missed / dismissed / pending, the check that
counted, the dismissal), from the same classification: the HTML report's charts and lists
(:mod:`missed_checks.report_insights`) are built from them.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from itertools import accumulate
from typing import Any

from missed_checks.equipment import Assignment
from missed_checks.performed_check import PerformedCheck, Timeliness, timeliness
from missed_checks.recurrence import OccurrenceWindow
from missed_checks.timefmt import parse_instant, to_utc_iso

TOTAL = "*"
"""``checklist_id`` and ``equipment_id`` of the fleet total row."""

ON_TIME, LATE = Timeliness.ON_TIME.value, Timeliness.LATE.value
MISSED, DISMISSED, PENDING = "missed", "dismissed", "pending"
OUTCOMES = (ON_TIME, LATE, MISSED, DISMISSED, PENDING)


def compliance(performed: int, judged: int) -> float | None:
    """The one compliance rate: ``performed`` (on time + late) of ``judged`` (expected - dismissed,
    which is on time + late + missed) windows, in percent; ``None`` when nothing is left to judge.
    Dismissed windows are excused: in neither figure. Late windows count as done."""
    return None if judged <= 0 else 100.0 * performed / judged


def judged_window(item: Mapping[str, Any]) -> OccurrenceWindow:
    """The window of a judged-window record, as the evaluation judged it."""
    return OccurrenceWindow(parse_instant(item["window_start"], "window_start"),
                            parse_instant(item["window_end"], "window_end"),
                            parse_instant(item["evaluate_at"], "evaluate_at"))


@dataclass(frozen=True, slots=True)
class Dismissal:
    """Why a missed check was excused, by whom and when (UTC ISO instant)."""

    reason: str
    by: str
    at: str

    @classmethod
    def from_item(cls, value: Any) -> Dismissal | None:
        if not isinstance(value, Mapping):
            return None
        return cls(str(value.get("reason") or ""), str(value.get("by") or ""), str(value.get("at") or ""))

    def to_dict(self) -> dict[str, str]:
        return {"reason": self.reason, "by": self.by, "at": self.at}


@dataclass(frozen=True)
class MissedRecord:
    """What the report needs of a missed-check item."""

    equipment_id: str
    window_start: str
    """UTC ISO instant, as stored."""
    dismissed: bool
    window_end: str | None = None
    """UTC ISO instant, as stored (for a window without a judged-window record)."""
    dismissal: Dismissal | None = None

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> MissedRecord:
        window_end = item.get("window_end")
        return cls(str(item["equipment_id"]), str(item["window_start"]), bool(item.get("dismissal")),
                   window_end=None if window_end is None else str(window_end),
                   dismissal=Dismissal.from_item(item.get("dismissal")))


@dataclass(frozen=True, slots=True)
class WindowOutcome:
    """How one counted window ended for one piece of equipment (instants as UTC ISO strings)."""

    checklist_id: str
    equipment_id: str
    window_start: str
    window_end: str | None
    """``None`` only for a missed-check record that does not carry its window's end."""
    outcome: str
    """One of :data:`OUTCOMES`."""
    performed_at: str | None = None
    """On time or late: the earliest performed check that counted for the window."""
    dismissal: Dismissal | None = None

    @property
    def late_by(self) -> timedelta | None:
        """How long after the window's end the check was done (late windows only)."""
        if self.outcome != LATE or self.performed_at is None or self.window_end is None:
            return None
        return parse_instant(self.performed_at, "performed_at") - parse_instant(self.window_end, "window_end")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"checklist_id": self.checklist_id, "equipment_id": self.equipment_id,
                                "window_start": self.window_start, "window_end": self.window_end,
                                "outcome": self.outcome}
        if self.performed_at is not None:
            data["performed_at"] = self.performed_at
        late_by = self.late_by
        if late_by is not None:
            data["late_by_s"] = int(late_by.total_seconds())
        if self.dismissal is not None:
            data["dismissal"] = self.dismissal.to_dict()
        return data


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
        return compliance(self.performed, self.expected - self.dismissed)

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
    """The windows of one checklist's report as sorted UTC ISO strings, for bisecting. Windows judged
    under different rules may differ in length, so ends and ``end + grace`` need not grow with the
    start: bisecting uses their running maximum and checks each candidate."""

    def __init__(self, windows: Sequence[OccurrenceWindow]) -> None:
        ordered = sorted(windows, key=lambda w: w.start)
        self.starts = [to_utc_iso(w.start) for w in ordered]
        self.ends = [to_utc_iso(w.end) for w in ordered]
        self.evals = [to_utc_iso(w.evaluate_at) for w in ordered]
        self.monotonic = all(a <= b for a, b in zip(self.ends, self.ends[1:], strict=False))
        self.max_evals = list(accumulate(self.evals, max))
        self.index = {start: i for i, start in enumerate(self.starts)}

    def __len__(self) -> int:
        return len(self.starts)

    def counted(self, assignment: Assignment | None) -> list[range]:
        """Indices of the windows ``assignment`` counts for (Assignment.counts_for: any of its
        assignment periods), as sorted, non-overlapping ranges."""
        if assignment is None:
            return []
        periods = ((assignment.assigned_at, assignment.unassigned_at), *assignment.earlier_periods)
        ranges = sorted((r for assigned, unassigned in periods for r in self._period(assigned, unassigned)),
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

    def _period(self, assigned_at: datetime, unassigned_at: datetime | None) -> list[range]:
        low = bisect_left(self.starts, to_utc_iso(assigned_at))
        if unassigned_at is None:
            return [range(low, len(self.starts))]
        unassigned = to_utc_iso(unassigned_at)
        if self.monotonic:
            return [range(low, max(low, bisect_right(self.ends, unassigned)))]
        runs: list[range] = []
        for i in range(low, bisect_right(self.starts, unassigned)):
            if self.ends[i] <= unassigned:
                runs.append(range(runs.pop().start, i + 1) if runs and runs[-1].stop == i else range(i, i + 1))
        return runs

    def containing(self, instant: str) -> Iterable[int]:
        """Indices of the windows with ``start <= instant < end + grace``."""
        high = bisect_right(self.starts, instant)
        low = bisect_right(self.max_evals, instant)
        return (i for i in range(low, high) if instant < self.evals[i])


def checklist_report(
    checklist_id: str,
    judged: Sequence[OccurrenceWindow],
    assignments: Iterable[Assignment],
    performed: Mapping[str, Iterable[str]],
    missed: Iterable[MissedRecord],
    *,
    now: datetime,
    current: Sequence[OccurrenceWindow] = (),
    watermark: datetime | None = None,
    judging: bool = True,
    outcomes: list[WindowOutcome] | None = None,
) -> list[ReportRow]:
    """Rows for one checklist, one per equipment with a counted window that has an outcome or is
    pending, or with a record.

    ``judged``: the windows the evaluation judged (its judged-window records) that start in the
    report period, whatever rule they were judged by. ``current``: the occurrence windows of the
    checklist's current rule that start in the period; only those closed by ``now``, ending after
    ``watermark`` and not judged are used (not judged yet: an outcome if done, else pending), and
    none when ``judging`` is False (a paused checklist) or there is no watermark. ``performed``:
    equipment id -> UTC ISO instants of its performed checks (any order, from the period's start to
    the last window's end + grace). ``missed``: the checklist's missed-check records whose window
    starts in the period. ``outcomes``: when given, every window counted in the rows is appended
    to it (by equipment, then window start), with the same outcome.
    """
    judged_starts = {to_utc_iso(w.start) for w in judged}
    upcoming: list[OccurrenceWindow] = []
    if judging and watermark is not None:
        upcoming = [w for w in current if w.evaluate_at <= now and w.end > watermark
                    and to_utc_iso(w.start) not in judged_starts]
    windows = _Windows([*judged, *upcoming])
    pending_starts = {to_utc_iso(w.start) for w in upcoming}
    is_pending = [start in pending_starts for start in windows.starts]
    by_equipment = {a.equipment_id: a for a in assignments}
    records: dict[str, list[MissedRecord]] = defaultdict(list)
    for record in missed:
        records[record.equipment_id].append(record)

    rows = []
    for equipment_id in sorted(set(by_equipment) | set(records)):
        counted = windows.counted(by_equipment.get(equipment_id))
        own = records.get(equipment_id, [])
        recorded = {windows.index.get(r.window_start) for r in own} - {None}
        # window index -> the earliest check that makes it on time / late
        on_time: dict[int, str] = {}
        late: dict[int, str] = {}
        if counted:
            for instant in performed.get(equipment_id, ()):
                for i in windows.containing(instant):
                    if i not in recorded and any(i in r for r in counted):
                        kind = timeliness(instant, windows.starts[i], windows.ends[i], windows.evals[i])
                        done = on_time if kind is Timeliness.ON_TIME else late
                        if instant < done.get(i, "~"):
                            done[i] = instant
        for i in on_time:
            late.pop(i, None)
        pending = [i for r in counted for i in r
                   if is_pending[i] and i not in recorded and i not in on_time and i not in late]
        if not (on_time or late or own or pending):
            continue
        dismissed = sum(1 for r in own if r.dismissed)
        rows.append(ReportRow(
            checklist_id=checklist_id,
            equipment_id=equipment_id,
            expected=len(on_time) + len(late) + len(own),
            on_time=len(on_time),
            late=len(late),
            missed=len(own) - dismissed,
            dismissed=dismissed,
            pending=len(pending),
        ))
        if outcomes is not None:
            outcomes.extend(_outcomes(checklist_id, equipment_id, windows, on_time, late, own, pending))
    return rows


def _outcomes(checklist_id: str, equipment_id: str, windows: _Windows, on_time: Mapping[int, str],
              late: Mapping[int, str], own: Iterable[MissedRecord], pending: Iterable[int]) -> list[WindowOutcome]:
    def at(i: int, outcome: str, performed_at: str | None = None) -> WindowOutcome:
        return WindowOutcome(checklist_id, equipment_id, windows.starts[i], windows.ends[i], outcome, performed_at)

    found = [at(i, ON_TIME, instant) for i, instant in on_time.items()]
    found += [at(i, LATE, instant) for i, instant in late.items()]
    found += [at(i, PENDING) for i in pending]
    found += [_recorded(checklist_id, record, windows) for record in own]
    found.sort(key=lambda o: o.window_start)
    return found


def _recorded(checklist_id: str, record: MissedRecord, windows: _Windows | None = None) -> WindowOutcome:
    i = windows.index.get(record.window_start) if windows is not None else None
    return WindowOutcome(checklist_id, record.equipment_id, record.window_start,
                         windows.ends[i] if windows is not None and i is not None else record.window_end,
                         DISMISSED if record.dismissed else MISSED, dismissal=record.dismissal)


def deleted_checklist_report(checklist_id: str, missed: Iterable[MissedRecord], *,
                             outcomes: list[WindowOutcome] | None = None) -> list[ReportRow]:
    """Rows for a checklist that no longer exists: only its missed-check records are left (its
    judged windows and assignments went with it), each counted as recorded (and appended to
    ``outcomes`` when given)."""
    records: dict[str, list[MissedRecord]] = defaultdict(list)
    for record in missed:
        records[record.equipment_id].append(record)
    rows = []
    for equipment_id, own in sorted(records.items()):
        dismissed = sum(1 for r in own if r.dismissed)
        rows.append(ReportRow(checklist_id=checklist_id, equipment_id=equipment_id, expected=len(own),
                              missed=len(own) - dismissed, dismissed=dismissed))
        if outcomes is not None:
            outcomes.extend(sorted((_recorded(checklist_id, r) for r in own), key=lambda o: o.window_start))
    return rows


def total(rows: Iterable[ReportRow], checklist_id: str = TOTAL, equipment_id: str = TOTAL) -> ReportRow:
    """The sum of ``rows`` (compliance is recomputed from the sums, not averaged)."""
    sums = dict.fromkeys(("expected", "on_time", "late", "missed", "dismissed", "pending"), 0)
    for row in rows:
        for name in sums:
            sums[name] += getattr(row, name)
    return ReportRow(checklist_id=checklist_id, equipment_id=equipment_id, **sums)
