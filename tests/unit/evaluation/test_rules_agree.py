"""The report and the evaluation apply one definition of each rule (#35 item 3), so they cannot
disagree: property tests over random windows, checks and out-of-service periods, on a 15-minute
grid (so that instants often fall exactly on a bound) and in Berlin time (the report compares the
UTC ISO strings as stored, the evaluation aware datetimes in the checklist's zone).

* **timeliness**: a check the evaluation counts as performed is on time or late in the report, as
  :func:`~missed_checks.performed_checks.performed_check.timeliness` says; one it does not count
  makes nothing done in the report either;
* **excused**: the evaluation excuses a piece of equipment (no missed check) exactly when the
  report says the window was excused, by the same period;
* **outcome**: the evaluation's verdict (performed, excused, missed) is the report's outcome of the
  judged window (on time or late, excused, and missed once the missed-check record exists);
* **window**: the windows the evaluation plans to judge at an instant (closed by it, ending after
  the watermark) are the report's windows not judged yet (pending); the window equipment status
  shows as current is the one a check done now counts in, for the evaluation and the report.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import example, given
from hypothesis import strategies as st

from missed_checks.checklists.recurrence import OccurrenceWindow, parse_recurrence
from missed_checks.equipment.assignments import Assignment
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.equipment.status import current_or_next_window
from missed_checks.evaluation.missed_check import Judgement, judge
from missed_checks.performed_checks.performed_check import PerformedCheck, timeliness
from missed_checks.reporting.report import (
    EXCUSED,
    LATE,
    MISSED,
    ON_TIME,
    PENDING,
    MissedRecord,
    OutOfService,
    WindowOutcome,
    checklist_report,
)
from missed_checks.timefmt import to_utc_iso

BERLIN = ZoneInfo("Europe/Berlin")
BASE = datetime(2026, 3, 28, 20, 0, tzinfo=UTC)  # the grid crosses the spring-forward night
STEP = timedelta(minutes=15)
CHECKLIST, EQUIPMENT = "forklift-daily", "FL-1"
ASSIGNMENT = Assignment(CHECKLIST, EQUIPMENT, datetime(2026, 3, 1, tzinfo=UTC))
LATER = BASE + timedelta(days=30)
"""The report's "now": every window of the grid has closed."""

instants = st.integers(0, 64).map(lambda n: (BASE + n * STEP).astimezone(BERLIN))


@st.composite
def windows(draw: st.DrawFn) -> OccurrenceWindow:
    start = draw(st.integers(4, 40))
    end = start + draw(st.integers(1, 12))
    evaluate_at = end + draw(st.integers(0, 6))
    return OccurrenceWindow(*((BASE + n * STEP).astimezone(BERLIN) for n in (start, end, evaluate_at)))


@st.composite
def periods(draw: st.DrawFn) -> OutOfServicePeriod:
    start = draw(st.integers(0, 60))
    end = draw(st.none() | st.integers(start + 1, 64))
    return OutOfServicePeriod(EQUIPMENT, BASE + start * STEP, None if end is None else BASE + end * STEP,
                              "in the workshop", "j.doe", BASE)


def as_reported(period: OutOfServicePeriod) -> OutOfService:
    """The period as the report reads it (fleet_report.out_of_service_of)."""
    return OutOfService(period.equipment_id, to_utc_iso(period.start),
                        None if period.end is None else to_utc_iso(period.end), period.reason)


def judged(window: OccurrenceWindow, checks: list[datetime], service: list[OutOfServicePeriod]) -> Judgement:
    return judge(window, [ASSIGNMENT], [PerformedCheck(CHECKLIST, EQUIPMENT, at) for at in checks], service)


def reported(window: OccurrenceWindow, checks: list[datetime], service: list[OutOfServicePeriod],
             missed: list[MissedRecord] | None = None) -> list[WindowOutcome]:
    """The report's outcomes of ``window`` once the evaluation judged it."""
    outcomes: list[WindowOutcome] = []
    checklist_report(CHECKLIST, [window], [ASSIGNMENT], {EQUIPMENT: [to_utc_iso(at) for at in checks]},
                     missed or [], now=LATER, out_of_service={EQUIPMENT: [as_reported(p) for p in service]},
                     outcomes=outcomes)
    return outcomes


def record(window: OccurrenceWindow) -> MissedRecord:
    return MissedRecord(EQUIPMENT, to_utc_iso(window.start), dismissed=False)


@given(window=windows(), at=instants)
def test_report_and_judging_agree_on_timeliness(window: OccurrenceWindow, at: datetime) -> None:
    kind = timeliness(at, window.start, window.end, window.evaluate_at)
    assert judged(window, [at], []).performed == ((EQUIPMENT,) if kind is not None else ())
    assert [o.outcome for o in reported(window, [at], [])] == ([] if kind is None else [kind.value])
    assert timeliness(to_utc_iso(at), to_utc_iso(window.start), to_utc_iso(window.end),
                      to_utc_iso(window.evaluate_at)) is kind  # the strings as stored say the same


@given(window=windows(), period=periods())
def test_report_and_judging_agree_on_excused(window: OccurrenceWindow, period: OutOfServicePeriod) -> None:
    excused = judged(window, [], [period]).excused == (EQUIPMENT,)
    assert excused is period.excuses(window)
    outcomes = reported(window, [], [period])
    assert [o.outcome for o in outcomes] == ([EXCUSED] if excused else [])
    assert [o.out_of_service for o in outcomes] == ([as_reported(period)] if excused else [])


@given(window=windows(), checks=st.lists(instants, max_size=3), service=st.lists(periods(), max_size=2))
def test_report_and_judging_agree_on_the_outcome(window: OccurrenceWindow, checks: list[datetime],
                                                 service: list[OutOfServicePeriod]) -> None:
    judgement = judged(window, checks, service)
    assert judgement.counted == (EQUIPMENT,)
    kinds = {timeliness(at, window.start, window.end, window.evaluate_at) for at in checks} - {None}
    if judgement.performed:
        expected = [ON_TIME if any(k.value == ON_TIME for k in kinds) else LATE]
    elif judgement.excused:
        expected = [EXCUSED]
    else:
        assert judgement.missed == (EQUIPMENT,)
        expected = []  # judged missed: the report counts it by the missed-check record the evaluation writes
        assert [o.outcome for o in reported(window, checks, service, [record(window)])] == [MISSED]
    assert [o.outcome for o in reported(window, checks, service)] == expected


@given(day=st.integers(26, 30), watermark=st.integers(0, 10 * 24 * 4), now=st.integers(0, 12 * 24 * 4),
       window=st.sampled_from(["PT30M", "PT8H", "PT20H"]), grace=st.sampled_from(["PT0S", "PT15M", "PT2H"]))
def test_report_and_planning_agree_on_the_windows_due(day: int, watermark: int, now: int, window: str,
                                                      grace: str) -> None:
    rule = parse_recurrence(f"DTSTART;TZID=Europe/Berlin:202603{day}T013000\nRRULE:FREQ=DAILY;COUNT=5",
                            window=window, grace=grace)
    first = datetime(2026, 3, 25, tzinfo=UTC)
    mark, instant = first + watermark * STEP, first + now * STEP
    due = rule.due_windows(mark, instant, 100).windows  # what PlanEvaluation judges at that instant
    outcomes: list[WindowOutcome] = []
    checklist_report(CHECKLIST, [], [Assignment(CHECKLIST, EQUIPMENT, first)], {}, [], now=instant,
                     current=rule.windows(first, LATER), watermark=mark, outcomes=outcomes)
    assert [o.window_start for o in outcomes if o.outcome == PENDING] == [to_utc_iso(w.start) for w in due]
    assert all(w.closed_by(instant) and not w.settled_by(mark) for w in due)


@given(day=st.integers(26, 30), now=st.integers(0, 12 * 24 * 4), window=st.sampled_from(["PT30M", "PT8H", "PT20H"]),
       grace=st.sampled_from(["PT0S", "PT15M", "PT2H"]))
@example(day=26, now=388, window="PT30M", grace="PT15M")  # a check at 03:00 CEST, 29 March: late in the
# 01:30 window whose end (02:00) the clocks skipped; its lookback went back in wall time, not elapsed
def test_status_and_judging_agree_on_the_current_window(day: int, now: int, window: str, grace: str) -> None:
    rule = parse_recurrence(f"DTSTART;TZID=Europe/Berlin:202603{day}T013000\nRRULE:FREQ=DAILY;COUNT=5",
                            window=window, grace=grace)
    instant = (datetime(2026, 3, 25, tzinfo=UTC) + now * STEP).astimezone(BERLIN)
    shown = current_or_next_window(rule, instant)
    counting = [w for w in rule.windows(instant - timedelta(days=3), instant + STEP)
                if judged(w, [instant], []).performed]  # the windows the evaluation counts a check done now in
    if shown is not None and shown.start <= instant:
        assert counting == [shown]
        assert [o.outcome for o in reported(shown, [instant], [])] == [
            timeliness(instant, shown.start, shown.end, shown.evaluate_at).value]  # type: ignore[union-attr]
    else:
        assert counting == []
        assert shown is None or shown == next(rule.iter_windows(instant))

