"""The fleet manager's report: per checklist and equipment, how each occurrence window ended.

Pure domain: the caller reads the table and hands over plain data. Instants are compared as the
table stores them (UTC ISO 8601 strings with a ``Z``, which sort as text), so a year of checks for
thousands of pieces of equipment is never turned into datetime objects.

Definition (README "The report's outcomes" and docs/operations.md repeat it). For the report
period ``[from, to)`` and each (checklist, equipment), the windows considered are:

* the **judged windows**: every window the evaluation judged (its judged-window records, written
  by CloseWindow) that starts in the period, with the start, end and ``end + grace`` of the rule
  it was judged by, whatever the rule is today, and also after the checklist was deleted or its
  rule made unreadable (its judged windows, assignments and performed checks stay); and
* for an active checklist, the windows of its **current** rule that start in the period, are
  closed (``end + grace`` at or before the report's "now"), end after its watermark and were not
  judged: the evaluation has not reached them yet.

A window counts for the equipment when it was assigned no later than the window started and not
unassigned before it ended (:meth:`missed_checks.equipment.assignments.Assignment.counts_for`, the rule the
evaluation applies). Every counted window has exactly one of seven outcomes (:data:`OUTCOMES`),
decided in this order:

1. a missed-check record exists for the window (the durable judgement, never rewritten):
   **dismissed** when it was dismissed (a check recorded later is still shown beside it: the
   dismissal is a person's decision and stands); else **recorded_late** when a performed check
   with ``performed_at`` in ``[start, end + grace)`` exists (it was recorded after the window
   was judged; the outcome carries ``performed_at``, ``recorded_at`` and the record's
   ``judged_at``); else **missed**. Every record in the period counts, also one without a
   judged-window record (e.g. a window whose CloseWindow has not run yet);
2. **on_time**: otherwise, a performed check inside ``[start, end)``;
3. **late**: otherwise, a performed check inside ``[end, end + grace)``;
4. **excused**: otherwise, the equipment was out of service for any part of ``[start, end)``
   (:class:`OutOfService`, its reason kept); a check done anyway counts as done (2, 3);
5. **pending**: otherwise, for a window not judged yet.

2 to 5 are the evaluation's own verdict (:func:`missed_checks.evaluation.missed_check.verdict`), from
the same definitions of on time and late (:func:`missed_checks.performed_checks.performed_check.timeliness`)
and of excused (:func:`missed_checks.equipment.out_of_service.overlaps`), applied to the instants as
stored; a window whose verdict is missed is pending until the evaluation judges it (then its
missed-check record says missed, 1).

A judged window with none of these for a counted equipment (no record, no check, not out of
service: the evaluation counted that equipment differently, e.g. its assignment was changed
afterwards) is not counted. Windows that were never judged and never will be (before the checklist
existed or its rule took effect, while it was paused) are not considered at all, so checks imported
for them count nowhere. ``expected = on_time + late + missed + recorded_late + dismissed`` (excused
and pending windows were not expected);
``compliance = (on_time + late) / (on_time + late + missed + recorded_late)``, which is
``(on_time + late) / (expected - dismissed)`` (:func:`compliance`), in percent, ``None`` when
nothing is left to judge. Dismissed and excused windows are left out and counted apart.

Besides the counts, :func:`checklist_report` can hand over every counted window's outcome
(:class:`WindowOutcome`: the window, its outcome and the facts behind it), from the same
classification: every format (table, CSV, JSON, HTML) and the HTML report's charts and lists
(:mod:`missed_checks.reporting.insights`) are built from these.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime, timedelta
from itertools import accumulate
from typing import Any

from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.assignments import Assignment
from missed_checks.equipment.out_of_service import overlaps
from missed_checks.evaluation.missed_check import Verdict, best_timeliness, verdict
from missed_checks.performed_checks.performed_check import PerformedCheck, Timeliness, timeliness
from missed_checks.timefmt import parse_instant, to_utc_iso

TOTAL = "*"
"""``checklist_id`` and ``equipment_id`` of the fleet total row."""

ON_TIME, LATE, MISSED, EXCUSED = Verdict.ON_TIME.value, Verdict.LATE.value, Verdict.MISSED.value, Verdict.EXCUSED.value
RECORDED_LATE, DISMISSED, PENDING = "recorded_late", "dismissed", "pending"
OUTCOMES = (ON_TIME, LATE, MISSED, RECORDED_LATE, DISMISSED, EXCUSED, PENDING)
"""The seven outcomes of a counted (window, equipment), in the report's column order."""
DONE = (ON_TIME, LATE)
"""Outcomes that count as done in compliance."""
NOT_DONE = (MISSED, RECORDED_LATE)
"""Outcomes that count as not done in compliance (with :data:`DONE`, its denominator)."""
EXPECTED = (*DONE, *NOT_DONE, DISMISSED)
"""Outcomes counted in ``expected``: the windows judged (or due) for the equipment."""


def compliance(performed: int, judged: int) -> float | None:
    """The one compliance rate: ``performed`` (on time + late) of ``judged`` (on time + late + missed +
    recorded late, which is expected - dismissed) windows, in percent; ``None`` when nothing is left
    to judge. Dismissed and excused windows are in neither figure. Late windows count as done; a
    check recorded after its window was judged missed (recorded late) does not."""
    return None if judged <= 0 else 100.0 * performed / judged


def why_no_compliance(row: ReportRow) -> str | None:
    """Why ``row`` has no compliance figure, in words for people (``None`` when it has one): no
    window was expected in the period at all, or none of its windows counts toward compliance (each
    was dismissed, excused or not judged yet). What every format says instead of a formula of
    zeros (``0 + 0 of 0 + 0 + 0 + 0``)."""
    if row.compliance is not None:
        return None
    left_out = [f"{count} {words}" for count, words in ((row.dismissed, "dismissed"), (row.excused, "out of service"),
                                                        (row.pending, "not judged yet")) if count]
    if not left_out:
        return "no windows were expected in this period"
    return f"no window in this period counts toward compliance ({', '.join(left_out)})"


@dataclass(frozen=True, slots=True)
class OutOfService:
    """A period ``[start, end)`` (UTC ISO instants; ``end`` ``None``: open-ended) in which a piece of
    equipment was out of service, for all its checklists, and why: an
    :class:`~missed_checks.equipment.out_of_service.OutOfServicePeriod` as the report shows it. What
    it excuses is :func:`missed_checks.equipment.out_of_service.overlaps`, the evaluation's rule."""

    equipment_id: str
    start: str
    end: str | None
    reason: str

    def to_dict(self) -> dict[str, str | None]:
        return {"from": self.start, "to": self.end, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Dismissal:
    """Why a missed check was excused, by whom and when (UTC ISO instant)."""

    reason: str
    by: str
    at: str

    def to_dict(self) -> dict[str, str]:
        return {"reason": self.reason, "by": self.by, "at": self.at}


@dataclass(frozen=True)
class MissedRecord:
    """What the report needs of a missed check (the table adapter reads it from its item)."""

    equipment_id: str
    window_start: str
    """UTC ISO instant, as stored."""
    dismissed: bool
    window_end: str | None = None
    """UTC ISO instant, as stored (for a window without a judged-window record)."""
    dismissal: Dismissal | None = None
    judged_at: str | None = None
    """When the evaluation wrote the record (UTC ISO instant, as stored)."""


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
    """On time or late: the earliest performed check that counted for the window. Recorded late
    (and dismissed, when one exists): the earliest check in ``[start, end + grace)`` recorded
    after the window was judged."""
    dismissal: Dismissal | None = None
    closes_at: str | None = None
    """The window's ``end + grace`` (when it was judged or is due to be)."""
    judged_at: str | None = None
    """Missed, recorded late, dismissed: when the missed-check record was written."""
    recorded_at: str | None = None
    """Recorded late (or dismissed with a check): when that check was recorded."""
    out_of_service: OutOfService | None = None
    """Excused: the out-of-service period that excuses the window."""

    @property
    def late_by(self) -> timedelta | None:
        """How long after the window's end the check was done (late windows only)."""
        if self.outcome != LATE or self.performed_at is None or self.window_end is None:
            return None
        return parse_instant(self.performed_at, "performed_at") - parse_instant(self.window_end, "window_end")

    @property
    def recorded_after_close(self) -> timedelta | None:
        """How long after the window closed (``end + grace``) its check was recorded."""
        if self.recorded_at is None or self.closes_at is None:
            return None
        return parse_instant(self.recorded_at, "recorded_at") - parse_instant(self.closes_at, "closes_at")

    def to_dict(self) -> dict[str, Any]:
        late_by, after = self.late_by, self.recorded_after_close
        optional = {  # each only when it has a value, in this order
            "performed_at": self.performed_at,
            "late_by_s": None if late_by is None else int(late_by.total_seconds()),
            "judged_at": self.judged_at,
            "recorded_at": self.recorded_at,
            "recorded_after_close_s": None if after is None else int(after.total_seconds()),
            "dismissal": None if self.dismissal is None else self.dismissal.to_dict(),
            "out_of_service": None if self.out_of_service is None else self.out_of_service.to_dict(),
        }
        return {"checklist_id": self.checklist_id, "equipment_id": self.equipment_id,
                "window_start": self.window_start, "window_end": self.window_end, "outcome": self.outcome,
                **{name: value for name, value in optional.items() if value is not None}}


@dataclass(frozen=True)
class ReportRow:
    checklist_id: str
    equipment_id: str
    expected: int = 0
    on_time: int = 0
    late: int = 0
    missed: int = 0
    recorded_late: int = 0
    dismissed: int = 0
    excused: int = 0
    pending: int = 0

    @classmethod
    def of(cls, checklist_id: str, equipment_id: str, counts: Mapping[str, int]) -> ReportRow:
        """The row of ``counts`` (outcome -> number of windows); ``expected`` from :data:`EXPECTED`."""
        return cls(checklist_id, equipment_id, expected=sum(counts.get(name, 0) for name in EXPECTED),
                   on_time=counts.get(ON_TIME, 0), late=counts.get(LATE, 0), missed=counts.get(MISSED, 0),
                   recorded_late=counts.get(RECORDED_LATE, 0), dismissed=counts.get(DISMISSED, 0),
                   excused=counts.get(EXCUSED, 0), pending=counts.get(PENDING, 0))

    @property
    def performed(self) -> int:
        return self.on_time + self.late

    @property
    def compliance(self) -> float | None:
        """Percent of the judged windows, neither dismissed nor excused, that were done (on time or
        late): (on time + late) / (on time + late + missed + recorded late)."""
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

    def containing(self, instant: str) -> Iterable[tuple[int, Timeliness]]:
        """(index, the check's timeliness) of the windows a check at ``instant`` counts in (``start <=
        instant < end + grace``: bisecting finds the candidates, :func:`timeliness` decides)."""
        high = bisect_right(self.starts, instant)
        low = bisect_right(self.max_evals, instant)
        for i in range(low, high):
            kind = timeliness(instant, self.starts[i], self.ends[i], self.evals[i])
            if kind is not None:
                yield i, kind


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
    out_of_service: Mapping[str, Sequence[OutOfService]] | None = None,
    outcomes: list[WindowOutcome] | None = None,
) -> list[ReportRow]:
    """Rows for one checklist, one per equipment with a counted window that has an outcome, or with
    a record.

    ``judged``: the windows the evaluation judged (its judged-window records) that start in the
    report period, whatever rule they were judged by. ``current``: the occurrence windows of the
    checklist's current rule that start in the period; only those closed by ``now``, ending after
    ``watermark`` and not judged are used (not judged yet: an outcome if done, else pending), and
    none when ``judging`` is False (a paused or deleted checklist) or there is no watermark.
    ``performed``: equipment id -> UTC ISO instants of its performed checks (any order, from the
    period's start to the last window's end + grace). ``missed``: the checklist's missed-check
    records whose window starts in the period. ``out_of_service``: equipment id -> its
    out-of-service periods. ``outcomes``: when given, every window counted in the rows is appended
    to it (by equipment, then window start), with the same outcome. Recorded-late outcomes carry
    ``performed_at`` but not ``recorded_at`` (the caller reads it: :func:`with_recorded_at`).
    """
    judged_starts = {to_utc_iso(w.start) for w in judged}
    upcoming: list[OccurrenceWindow] = []
    if judging and watermark is not None:
        upcoming = [w for w in current if w.closed_by(now) and not w.settled_by(watermark)
                    and to_utc_iso(w.start) not in judged_starts]
    windows = _Windows([*judged, *upcoming])
    pending_starts = {to_utc_iso(w.start) for w in upcoming}
    is_pending = [start in pending_starts for start in windows.starts]
    by_equipment = {a.equipment_id: a for a in assignments}
    records: dict[str, list[MissedRecord]] = defaultdict(list)
    for record in missed:
        records[record.equipment_id].append(record)
    services = out_of_service or {}

    rows = []
    for equipment_id in sorted(set(by_equipment) | set(records)):
        counted = windows.counted(by_equipment.get(equipment_id))
        own = records.get(equipment_id, [])
        recorded = {windows.index.get(r.window_start) for r in own} - {None}
        checks, attached = _checks(windows, counted, recorded, performed.get(equipment_id, ()))
        periods = services.get(equipment_id, ())
        on_time: dict[int, str] = {}
        late: dict[int, str] = {}
        excused: dict[int, OutOfService] = {}
        pending: list[int] = []
        for i in (i for r in counted for i in r if i not in recorded):  # no record: the evaluation's verdict
            earliest = checks.get(i, {})
            period = _excusing(windows, i, periods)
            outcome = verdict(best_timeliness(earliest), period is not None)
            if outcome is Verdict.ON_TIME:
                on_time[i] = earliest[Timeliness.ON_TIME]
            elif outcome is Verdict.LATE:
                late[i] = earliest[Timeliness.LATE]
            elif outcome is Verdict.EXCUSED and period is not None:
                excused[i] = period
            elif is_pending[i]:
                pending.append(i)  # missed but not judged yet; a judged one without a record is not counted
        if not (on_time or late or own or pending or excused):
            continue
        dismissed = sum(1 for r in own if r.dismissed)
        recorded_late = sum(1 for r in own if not r.dismissed and windows.index.get(r.window_start, -1) in attached)
        rows.append(ReportRow(
            checklist_id=checklist_id, equipment_id=equipment_id, expected=len(on_time) + len(late) + len(own),
            on_time=len(on_time), late=len(late), missed=len(own) - dismissed - recorded_late,
            recorded_late=recorded_late, dismissed=dismissed, excused=len(excused), pending=len(pending)))
        if outcomes is not None:  # the same classification, window by window
            found = [_window_outcome(checklist_id, equipment_id, windows, i, ON_TIME, instant)
                     for i, instant in on_time.items()]
            found += [_window_outcome(checklist_id, equipment_id, windows, i, LATE, instant)
                      for i, instant in late.items()]
            found += [_window_outcome(checklist_id, equipment_id, windows, i, PENDING) for i in pending]
            found += [_window_outcome(checklist_id, equipment_id, windows, i, EXCUSED, out_of_service=period)
                      for i, period in excused.items()]
            found += [_recorded(checklist_id, record, windows, attached) for record in own]
            found.sort(key=lambda o: o.window_start)
            outcomes.extend(found)
    return rows


def _checks(windows: _Windows, counted: Sequence[range], recorded: set[int | None],
            instants: Iterable[str]) -> tuple[dict[int, dict[Timeliness, str]], dict[int, str]]:
    """window index -> the earliest check of each timeliness in a counted window, and window index ->
    the earliest check that attaches to its missed-check record (a window with a record is never on
    time or late: the record is the judgement)."""
    checks: dict[int, dict[Timeliness, str]] = defaultdict(dict)
    attached: dict[int, str] = {}
    if counted or recorded:
        for instant in instants:
            for i, kind in windows.containing(instant):
                if i in recorded:
                    if instant < attached.get(i, "~"):
                        attached[i] = instant
                elif any(i in r for r in counted) and instant < checks[i].get(kind, "~"):
                    checks[i][kind] = instant
    return checks, attached


def _excusing(windows: _Windows, i: int, periods: Sequence[OutOfService]) -> OutOfService | None:
    """The first out-of-service period that covers part of window ``i`` (the evaluation's rule)."""
    return next((p for p in periods if overlaps(p.start, p.end, windows.starts[i], windows.ends[i])), None)


def _window_outcome(checklist_id: str, equipment_id: str, windows: _Windows, i: int, outcome: str,
                    performed_at: str | None = None, out_of_service: OutOfService | None = None) -> WindowOutcome:
    return WindowOutcome(checklist_id, equipment_id, windows.starts[i], windows.ends[i], outcome, performed_at,
                         closes_at=windows.evals[i], out_of_service=out_of_service)


def _recorded(checklist_id: str, record: MissedRecord, windows: _Windows,
              attached: Mapping[int, str]) -> WindowOutcome:
    """The outcome of a missed-check record: dismissed, recorded late (a check attached) or missed."""
    i = windows.index.get(record.window_start)
    check = attached.get(i) if i is not None else None
    outcome = DISMISSED if record.dismissed else RECORDED_LATE if check is not None else MISSED
    return WindowOutcome(checklist_id, record.equipment_id, record.window_start,
                         windows.ends[i] if i is not None else record.window_end, outcome, check,
                         dismissal=record.dismissal, closes_at=windows.evals[i] if i is not None else None,
                         judged_at=record.judged_at)


def with_recorded_at(outcomes: Iterable[WindowOutcome], recorded_at: Mapping[tuple[str, str, str], str]
                     ) -> list[WindowOutcome]:
    """``outcomes`` with ``recorded_at`` filled in for those with a check attached to a missed-check
    record (recorded late, or dismissed with a check), from ``recorded_at``: (checklist id,
    equipment id, performed_at) -> when that check was recorded."""
    return [replace(o, recorded_at=recorded_at.get((o.checklist_id, o.equipment_id, o.performed_at)))
            if o.performed_at is not None and o.outcome in (RECORDED_LATE, DISMISSED) else o for o in outcomes]


def attached_checks(outcomes: Iterable[WindowOutcome]) -> list[tuple[str, str, str]]:
    """(checklist id, equipment id, performed_at) of every check attached to a missed-check record,
    whose ``recorded_at`` :func:`with_recorded_at` needs."""
    return [(o.checklist_id, o.equipment_id, o.performed_at) for o in outcomes
            if o.performed_at is not None and o.outcome in (RECORDED_LATE, DISMISSED)]


def total(rows: Iterable[ReportRow], checklist_id: str = TOTAL, equipment_id: str = TOTAL) -> ReportRow:
    """The sum of ``rows`` (compliance is recomputed from the sums, not averaged)."""
    sums = dict.fromkeys(("expected", *OUTCOMES), 0)
    for row in rows:
        for name in sums:
            sums[name] += getattr(row, name)
    return ReportRow(checklist_id=checklist_id, equipment_id=equipment_id, **sums)
