"""What the fleet report's pictures show, computed from its window outcomes (plain Python, no I/O).

The report's HTML sections (``missed_checks.reporting.report_html``) draw these; nothing here knows about HTML.
Every figure comes from :class:`missed_checks.reporting.report.WindowOutcome` records, the same
classification that makes the report's rows, so the pictures and the table cannot disagree.

* **Weeks** are ISO weeks (Monday to Sunday) of a window's start *in its checklist's zone*: a
  Monday 06:00 Berlin window is in that Monday's week although it starts at 05:00 UTC, and an
  evening window in New York stays on its local day.
* **Weekly compliance** per checklist (and for the fleet): one :class:`ReportRow` of counts per
  week, whose ``compliance`` is the report's one definition (:func:`missed_checks.reporting.report.compliance`).
* **Missed-check heatmap**: missed (not dismissed) checks per equipment and week, over all its
  checklists, worst first (most missed, then the longest run of misses, then the id).
* **Repeat offenders**: an (equipment, checklist) whose windows were missed :data:`REPEAT_RUN` or
  more times in a row. The sequence is the windows that count for compliance, in order: on time,
  late, missed and recorded-late ones. A dismissed or excused window is left out (it neither
  extends nor breaks a run), a pending one has not been judged yet; on time, late or recorded late
  (done per the device's clock, recorded after judging) ends a run.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

from missed_checks.equipment.assignments import Assignment
from missed_checks.equipment.out_of_service import in_effect
from missed_checks.reporting.report import (
    DISMISSED,
    DONE,
    EXCUSED,
    LATE,
    MISSED,
    NOT_DONE,
    ON_TIME,
    PENDING,
    RECORDED_LATE,
    TOTAL,
    OutOfService,
    ReportRow,
    WindowOutcome,
)
from missed_checks.timefmt import to_utc_iso

REPEAT_RUN = 3
"""A run of this many missed windows in a row makes a repeat offender."""

Zones = Mapping[str, tzinfo]
"""checklist id -> its zone (checklists not in it are read in UTC)."""


def local(instant: str, zone: tzinfo) -> datetime:
    """A stored UTC ISO instant (``2026-03-02T05:00:00Z``) in ``zone``."""
    return datetime.fromisoformat(instant).astimezone(zone)


def week_of(day: date) -> date:
    """The Monday of ``day``'s ISO week."""
    return day - timedelta(days=day.weekday())


def outcome_week(outcome: WindowOutcome, zones: Zones) -> date:
    """The week of the outcome's window start, in its checklist's zone."""
    return week_of(local(outcome.window_start, zones.get(outcome.checklist_id, UTC)).date())


def weeks_of_period(start: datetime, end: datetime, zone: tzinfo, outcomes: Iterable[WindowOutcome] = (),
                    zones: Zones | None = None) -> list[date]:
    """The weeks (their Mondays, in order) of the period ``[start, end)`` read in ``zone``: from the
    one holding ``start`` to the one holding the last instant before ``end``, widened to hold every
    outcome's week. A first or last week that the period only partly covers is left out when no
    outcome falls in it (a period starting on a Sunday does not open with an empty week), unless
    that would leave no week at all."""
    first_day = start.astimezone(zone).date()
    last_day = (end - timedelta(microseconds=1)).astimezone(zone).date()
    first, last = week_of(first_day), week_of(last_day)
    used = {outcome_week(outcome, zones or {}) for outcome in outcomes}
    if used:
        first, last = min(first, *used), max(last, *used)
    weeks = [first + timedelta(weeks=n) for n in range((last - first).days // 7 + 1)]
    if len(weeks) > 1 and first_day.weekday() != 0 and weeks[0] == week_of(first_day) and weeks[0] not in used:
        weeks.pop(0)
    if len(weeks) > 1 and last_day.weekday() != 6 and weeks[-1] == week_of(last_day) and weeks[-1] not in used:
        weeks.pop()
    return weeks


def _row(checklist_id: str, counts: Counter[str]) -> ReportRow:
    return ReportRow.of(checklist_id, TOTAL, counts)


def weekly_rows(outcomes: Iterable[WindowOutcome], zones: Zones, weeks: Sequence[date]) -> dict[str, list[ReportRow]]:
    """Per checklist (sorted), and the fleet under :data:`~missed_checks.reporting.report.TOTAL` (last), one
    row of counts per week of ``weeks`` (all equipment: ``equipment_id`` is ``TOTAL``); weeks with
    nothing are rows of zeros (compliance ``None``). Outcomes outside ``weeks`` are left out."""
    position = {week: n for n, week in enumerate(weeks)}
    counts: dict[str, list[Counter[str]]] = defaultdict(lambda: [Counter() for _ in weeks])
    fleet: list[Counter[str]] = [Counter() for _ in weeks]
    for outcome in outcomes:
        n = position.get(outcome_week(outcome, zones))
        if n is None:
            continue
        counts[outcome.checklist_id][n][outcome.outcome] += 1
        fleet[n][outcome.outcome] += 1
    series = {checklist_id: [_row(checklist_id, c) for c in counts[checklist_id]] for checklist_id in sorted(counts)}
    series[TOTAL] = [_row(TOTAL, c) for c in fleet]
    return series


@dataclass(frozen=True)
class Streak:
    """A run of missed windows in a row for one (checklist, equipment)."""

    checklist_id: str
    equipment_id: str
    windows: tuple[WindowOutcome, ...]
    """The missed windows of the run, oldest first."""
    ended_by: WindowOutcome | None
    """The on-time, late or recorded-late window that ended the run; ``None`` when the run reaches
    the last judged window of the period (nothing done since)."""

    @property
    def length(self) -> int:
        return len(self.windows)

    @property
    def ongoing(self) -> bool:
        return self.ended_by is None


def _sequences(outcomes: Iterable[WindowOutcome]) -> dict[tuple[str, str], list[WindowOutcome]]:
    """Per (checklist, equipment), its on time, late and missed windows in order."""
    sequences: dict[tuple[str, str], list[WindowOutcome]] = defaultdict(list)
    for outcome in outcomes:
        if outcome.outcome in (ON_TIME, LATE, MISSED, RECORDED_LATE):
            sequences[(outcome.checklist_id, outcome.equipment_id)].append(outcome)
    for sequence in sequences.values():
        sequence.sort(key=lambda o: o.window_start)
    return sequences


def streaks(outcomes: Iterable[WindowOutcome], minimum: int = 1) -> list[Streak]:
    """Every maximal run of at least ``minimum`` missed windows, longest first (then checklist,
    equipment, start). See the module's docstring for what is in the sequence."""
    found = []
    for (checklist_id, equipment_id), sequence in _sequences(outcomes).items():
        run: list[WindowOutcome] = []
        for outcome in [*sequence, None]:
            if outcome is not None and outcome.outcome == MISSED:
                run.append(outcome)
                continue
            if len(run) >= minimum and run:
                found.append(Streak(checklist_id, equipment_id, tuple(run), ended_by=outcome))
            run = []
    found.sort(key=lambda s: (-s.length, s.checklist_id, s.equipment_id, s.windows[0].window_start))
    return found


def repeat_offenders(outcomes: Iterable[WindowOutcome], minimum: int = REPEAT_RUN) -> list[Streak]:
    """The runs of :data:`REPEAT_RUN` (or ``minimum``) or more missed windows in a row."""
    return streaks(outcomes, minimum)


@dataclass(frozen=True)
class HeatmapRow:
    equipment_id: str
    checklists: tuple[str, ...]
    """The checklists whose missed checks are in the row, sorted."""
    counts: tuple[int, ...]
    """Missed checks per week, aligned with the weeks asked for."""
    longest_run: int
    """The longest run of misses in a row of the equipment, over its checklists."""

    @property
    def total(self) -> int:
        return sum(self.counts)


def missed_heatmap(outcomes: Iterable[WindowOutcome], zones: Zones, weeks: Sequence[date]) -> list[HeatmapRow]:
    """Missed (not dismissed) checks per equipment and week, one row per equipment with any,
    worst first: most missed, then longest run in a row, then equipment id."""
    outcomes = list(outcomes)
    position = {week: n for n, week in enumerate(weeks)}
    cells: dict[str, list[int]] = defaultdict(lambda: [0] * len(weeks))
    checklists: dict[str, set[str]] = defaultdict(set)
    for outcome in outcomes:
        if outcome.outcome != MISSED:
            continue
        n = position.get(outcome_week(outcome, zones))
        if n is None:
            continue
        cells[outcome.equipment_id][n] += 1
        checklists[outcome.equipment_id].add(outcome.checklist_id)
    longest: dict[str, int] = defaultdict(int)
    for streak in streaks(outcomes):
        longest[streak.equipment_id] = max(longest[streak.equipment_id], streak.length)
    rows = [HeatmapRow(equipment_id, tuple(sorted(checklists[equipment_id])), tuple(counts), longest[equipment_id])
            for equipment_id, counts in cells.items()]
    rows.sort(key=lambda r: (-r.total, -r.longest_run, r.equipment_id))
    return rows


def late_checks(outcomes: Iterable[WindowOutcome]) -> list[WindowOutcome]:
    """The late windows, oldest first (then checklist, equipment); each knows how late (``late_by``)."""
    return sorted((o for o in outcomes if o.outcome == LATE),
                  key=lambda o: (o.window_start, o.checklist_id, o.equipment_id))


def dismissed_checks(outcomes: Iterable[WindowOutcome]) -> list[WindowOutcome]:
    """The dismissed windows, oldest first (then checklist, equipment), with reason and who."""
    return sorted((o for o in outcomes if o.outcome == DISMISSED),
                  key=lambda o: (o.window_start, o.checklist_id, o.equipment_id))


def missed_checks(outcomes: Iterable[WindowOutcome], order: Sequence[str] = ()) -> list[WindowOutcome]:
    """The missed windows, grouped by equipment in ``order`` (e.g. the heatmap's, worst first; the
    rest by id), then oldest first."""
    rank = {equipment_id: n for n, equipment_id in enumerate(order)}
    return sorted((o for o in outcomes if o.outcome == MISSED),
                  key=lambda o: (rank.get(o.equipment_id, len(rank)), o.equipment_id, o.window_start, o.checklist_id))


# -- heatmap cells: what each (equipment, week) was ------------------------------------------------
CELL_STATES = ("missed", "clean", "excused", "dismissed", "pending", "paused", "not_assigned", "not_due")
"""What a heatmap cell says, most telling first: ``missed`` (a plain miss among the week's judged
windows), ``clean`` (judged windows, none missed), then, for a week without a judged window:
``excused`` (out of service), ``dismissed``, ``pending`` (not judged yet), ``paused`` (every
checklist the equipment was assigned to that week is paused), ``not_assigned`` (assigned to none of
its checklists that week), ``not_due`` (assigned, but no window was due)."""


@dataclass(frozen=True)
class HeatCell:
    """One (equipment, week) over its checklists: counts of its windows' outcomes and what it was."""

    state: str
    """One of :data:`CELL_STATES`."""
    counts: Mapping[str, int]
    """Outcome -> windows of the equipment that week (every checklist)."""
    reasons: tuple[str, ...] = ()
    """Excused windows: the out-of-service reasons."""

    @property
    def missed(self) -> int:
        return self.counts.get(MISSED, 0)

    @property
    def judged(self) -> int:
        """The cell's denominator: windows in compliance (on time, late, missed, recorded late)."""
        return sum(self.counts.get(name, 0) for name in (*DONE, *NOT_DONE))


class Coverage:
    """What the report knows besides the outcomes, to tell why a week has none: the assignment of
    each (checklist, equipment) and since when each paused checklist is paused."""

    def __init__(self, assignments: Mapping[tuple[str, str], Assignment], paused_since: Mapping[str, datetime]) -> None:
        self.paused_since = paused_since
        self.by_equipment: dict[str, list[Assignment]] = defaultdict(list)
        for (_, equipment_id), assignment in assignments.items():
            self.by_equipment[equipment_id].append(assignment)

    def idle_state(self, equipment_id: str, monday: date, zones: Zones) -> str:
        """``paused``, ``not_assigned`` or ``not_due`` for a week without outcomes."""
        assigned = []
        for assignment in self.by_equipment.get(equipment_id, ()):
            zone = zones.get(assignment.checklist_id, UTC)
            start = datetime.combine(monday, datetime.min.time(), tzinfo=zone)
            end = datetime.combine(monday + timedelta(days=7), datetime.min.time(), tzinfo=zone)
            periods = ((assignment.assigned_at, assignment.unassigned_at), *assignment.earlier_periods)
            if any(a < end and (u is None or u > start) for a, u in periods):
                assigned.append((assignment.checklist_id, end))
        if not assigned:
            return "not_assigned"
        paused = [c for c, end in assigned if c in self.paused_since and self.paused_since[c] < end]
        return "paused" if len(paused) == len(assigned) else "not_due"


def heat_cells(outcomes: Iterable[WindowOutcome], zones: Zones, weeks: Sequence[date], equipment_ids: Iterable[str],
               coverage: Coverage) -> dict[str, list[HeatCell]]:
    """Per equipment of ``equipment_ids``, one :class:`HeatCell` per week of ``weeks``."""
    wanted = set(equipment_ids)
    position = {week: n for n, week in enumerate(weeks)}
    counts: dict[str, list[Counter[str]]] = {e: [Counter() for _ in weeks] for e in wanted}
    reasons: dict[tuple[str, int], set[str]] = defaultdict(set)
    for outcome in outcomes:
        n = position.get(outcome_week(outcome, zones))
        if outcome.equipment_id not in wanted or n is None:
            continue
        counts[outcome.equipment_id][n][outcome.outcome] += 1
        if outcome.out_of_service is not None:
            reasons[(outcome.equipment_id, n)].add(outcome.out_of_service.reason)
    cells: dict[str, list[HeatCell]] = {}
    for equipment_id in sorted(wanted):
        row = []
        for n, (week, tally) in enumerate(zip(weeks, counts[equipment_id], strict=True)):
            cell = HeatCell("", tally, tuple(sorted(reasons.get((equipment_id, n), ()))))
            if cell.judged:
                state = MISSED if cell.missed else "clean"
            else:
                state = next((name for name in (EXCUSED, DISMISSED, PENDING) if tally[name]), "")
                state = state or coverage.idle_state(equipment_id, week, zones)
            row.append(HeatCell(state, cell.counts, cell.reasons))
        cells[equipment_id] = row
    return cells


# -- open runs of misses at report time ------------------------------------------------------------
@dataclass(frozen=True)
class OpenRun:
    """Where an ongoing run of misses stands at report time."""

    state: str
    """``undone`` (still assigned and in service), ``unassigned`` or ``out_of_service``."""
    since: str
    """UTC ISO instant: undone since the first missed window closed; else when it was unassigned
    or went out of service."""
    undone_for: timedelta | None = None
    """``undone``: from ``since`` to the report's as-of instant."""
    reason: str = ""
    """``out_of_service``: why."""


def open_run(streak: Streak, assignment: Assignment | None, periods: Sequence[OutOfService],
             as_of: datetime) -> OpenRun | None:
    """How long an ongoing run (``streak.ongoing``) has been undone at ``as_of``; a unit unassigned
    after the run, or out of service since, is said so instead (never "not done since")."""
    if not streak.ongoing:
        return None
    last = streak.windows[-1]
    unassigned = None if assignment is None else assignment.unassigned_at
    if unassigned is not None and unassigned <= as_of and to_utc_iso(unassigned) >= last.window_start:
        return OpenRun("unassigned", to_utc_iso(unassigned))
    stamp = to_utc_iso(as_of)
    for period in periods:
        if in_effect(period.start, period.end, stamp):
            return OpenRun("out_of_service", period.start, reason=period.reason)
    first = streak.windows[0]
    since = first.closes_at or first.window_end or first.window_start
    return OpenRun("undone", since, as_of - datetime.fromisoformat(since))
