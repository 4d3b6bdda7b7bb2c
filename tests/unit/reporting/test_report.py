"""The fleet report's numbers, checked against an independent tally of generated data.

The generator plays the checklist's year: created on day 10, paused for days 120-129, its rule
edited on day 200 (06:00-14:00 Europe/Berlin with 30 min grace before, 07:00-13:00 with one hour
after), evaluated until WATERMARK. It writes the judged-window records of the windows the system
would have judged (under the rule of their day), and decides for every (equipment, window) what
happened (done on time, late, missed, dismissed, a check imported for a window nobody judged,
pending, recorded after its window was judged, excused by an out-of-service week...) and writes
the data the table would hold. The expected numbers are the generator's own
tally of its decisions, never the report's logic. Windows are built here with zoneinfo arithmetic
(across both DST changes), independently of the recurrence engine.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from missed_checks.checklists.recurrence import OccurrenceWindow
from missed_checks.equipment.assignments import Assignment
from missed_checks.reporting.report import (
    OUTCOMES,
    TOTAL,
    Dismissal,
    MissedRecord,
    OutOfService,
    ReportRow,
    WindowOutcome,
    checklist_report,
    compliance,
    total,
    with_recorded_at,
)
from missed_checks.timefmt import to_utc_iso

BERLIN = ZoneInfo("Europe/Berlin")
YEAR = 2026
NOW = datetime(2027, 1, 10, 12, 0, tzinfo=UTC)
PERIOD_START = datetime(2026, 1, 5, tzinfo=UTC)
PERIOD_END = datetime(2026, 12, 14, tzinfo=UTC)
WATERMARK = datetime(2026, 12, 2, 13, 0, tzinfo=UTC)  # windows ending after this are not judged yet
CREATED_DAY, PAUSED_DAYS, EDIT_DAY = 10, range(120, 130), 200
OLD_RULE = (time(6), time(14), timedelta(minutes=30))  # start, end (Berlin), grace
NEW_RULE = (time(7), time(13), timedelta(hours=1))


Win = OccurrenceWindow


def daily_window(day: date, rule: tuple[time, time, timedelta]) -> Win:
    start = datetime.combine(day, rule[0], tzinfo=BERLIN).astimezone(UTC)
    end = datetime.combine(day, rule[1], tzinfo=BERLIN).astimezone(UTC)
    return Win(start, end, end + rule[2])


def daily_windows(first: date, days: int, rule: tuple[time, time, timedelta] = OLD_RULE) -> list[Win]:
    return [daily_window(first + timedelta(days=offset), rule) for offset in range(days)]


def at(seconds_after: datetime, seconds: float) -> str:
    return to_utc_iso(seconds_after + timedelta(seconds=seconds))


JUDGED = ("on_time", "late", "missed", "dismissed", "recorded_after_judged", "counted_differently")
JUDGED_WEIGHTS = (70, 8, 10, 3, 2, 1)
NOT_JUDGED_YET = ("on_time", "late", "nothing")
NOT_JUDGED_YET_WEIGHTS = (70, 8, 22)


def write_window(rng: random.Random, equipment: str, w: Win, judged: bool, checks: list[str],
                 missed: list[MissedRecord]) -> tuple[str | None, str | None]:
    """Decide what happened in one closed window (judged, or of the current rule and not judged
    yet), write it as the table would hold it, and return the report bucket it belongs in (None:
    no outcome, not counted) with the check that decided it (the earliest in the window, else the
    late one)."""
    length = (w.end - w.start).total_seconds()
    grace = (w.evaluate_at - w.end).total_seconds()
    choices, weights = (JUDGED, JUDGED_WEIGHTS) if judged else (NOT_JUDGED_YET, NOT_JUDGED_YET_WEIGHTS)
    outcome = rng.choices(choices, weights)[0]
    if rng.random() < 0.05:  # noise outside any window (evening) never counts
        checks.append(at(w.evaluate_at, rng.uniform(60, 3 * 3600)))
    decided_by = None
    if outcome == "on_time":
        done = [at(w.start, rng.uniform(0, length - 1)) for _ in range(rng.choice([1, 1, 2]))]
        checks.extend(done)
        decided_by = min(done)
        if rng.random() < 0.2:  # also a late one: still on time
            checks.append(at(w.end, rng.uniform(0, grace - 1)))
    elif outcome == "late":
        decided_by = at(w.end, rng.uniform(0, grace - 1))
        checks.append(decided_by)
    elif outcome in ("missed", "dismissed", "recorded_after_judged"):
        missed.append(MissedRecord(equipment, to_utc_iso(w.start), outcome == "dismissed"))
        if outcome == "recorded_after_judged":  # a check imported after the record: it attaches to it
            decided_by = at(w.start, rng.uniform(0, length + grace - 1))
            checks.append(decided_by)
    if outcome == "counted_differently":  # judged, but neither a record nor a check: not counted
        return None, None
    if outcome == "nothing":
        return "pending", None
    return ("recorded_late" if outcome == "recorded_after_judged" else outcome), decided_by


def write_out_of_service_window(rng: random.Random, w: Win, checks: list[str]) -> tuple[str, str | None]:
    """A window the equipment was out of service for: judged or not, no missed-check record; done
    anyway (on time) now and then, else excused."""
    if rng.random() < 0.25:
        done = at(w.start, rng.uniform(0, (w.end - w.start).total_seconds() - 1))
        checks.append(done)
        return "on_time", done
    return "excused", None


@dataclass
class Year:
    """The windows of each day under the rule of that day, which of them the system judged, and the
    current rule's windows (what the recurrence engine gives the report)."""

    windows: list[Win]
    judged: list[bool]
    current: list[Win]


def the_year() -> Year:
    first = date(YEAR, 1, 1)
    windows, judged = [], []
    for day in range(365):
        w = daily_window(first + timedelta(days=day), NEW_RULE if day >= EDIT_DAY else OLD_RULE)
        windows.append(w)
        judged.append(day >= CREATED_DAY and day not in PAUSED_DAYS and w.end <= WATERMARK)
    return Year(windows, judged, daily_windows(first, 365, NEW_RULE))


def generate(equipment_count: int, seed: int, decisions: dict | None = None):
    """Data as the table holds it, and the truth tallied per equipment for windows in the period;
    ``decisions`` (when given) gets each counted window's bucket and deciding check, by
    (equipment, window start)."""
    rng = random.Random(seed)
    year = the_year()
    windows = year.windows
    in_period = [PERIOD_START <= w.start < PERIOD_END for w in windows]
    assignments, performed, missed = [], defaultdict(list), []
    services: dict[str, list[OutOfService]] = {}
    truth: dict[str, Counter] = {}
    decisions = {} if decisions is None else decisions
    for n in range(equipment_count):
        equipment = f"FL-{n:05d}"
        first = rng.choice([0, 0, 0, rng.randrange(365)])
        assigned_at = windows[first].start - timedelta(minutes=rng.choice([0, 1, 600]))
        last = 364 if rng.random() < 0.8 else rng.randrange(first, 365)
        unassigned_at = None if last == 364 else windows[last].end + timedelta(minutes=rng.choice([0, 5]))
        assignments.append(Assignment("forklift", equipment, assigned_at, unassigned_at))
        if n % 13 == 0:  # in the workshop from day 150 03:00 UTC to day 157's window start: 7 windows
            services[equipment] = [OutOfService(equipment, at(windows[150].start, 3 * 3600),
                                                to_utc_iso(windows[157].start), "workshop")]
        tally: Counter = Counter()
        for i, w in enumerate(windows):
            if not first <= i <= last:
                if rng.random() < 0.05:  # a check while not assigned: never counts
                    performed[equipment].append(at(w.start, rng.uniform(0, 8 * 3600)))
                continue
            if w.evaluate_at > NOW:
                continue
            if not year.judged[i] and w.end <= WATERMARK:
                # Never judged (before the checklist existed, while paused): an imported check for
                # it counts nowhere, also not in the current rule's window of that day.
                if rng.random() < 0.3:
                    performed[equipment].append(at(w.start, rng.uniform(0, (w.end - w.start).total_seconds() - 1)))
                continue
            if equipment in services and 150 <= i < 157:
                bucket, decided_by = write_out_of_service_window(rng, w, performed[equipment])
            else:
                bucket, decided_by = write_window(rng, equipment, w, year.judged[i], performed[equipment], missed)
            if in_period[i] and bucket:
                tally[bucket] += 1
                decisions[(equipment, to_utc_iso(w.start))] = (bucket, decided_by)
        # A record without a judged-window record (07:00 UTC starts, an older rule): counted as recorded.
        if n % 97 == 0:
            day = windows[100].start.replace(hour=7, minute=0)
            missed.append(MissedRecord(equipment, to_utc_iso(day), False))
            tally["missed"] += 1
            decisions[(equipment, to_utc_iso(day))] = ("missed", None)
        truth[equipment] = tally
    for checks in performed.values():
        rng.shuffle(checks)
    judged_windows = [w for w, judged in zip(windows, year.judged, strict=True) if judged]
    return judged_windows, year.current, assignments, performed, missed, services, truth


def expected_row(equipment: str, tally: Counter) -> ReportRow:
    buckets = {name: tally.get(name, 0) for name in OUTCOMES}
    return ReportRow("forklift", equipment,
                     expected=sum(v for k, v in buckets.items() if k not in ("pending", "excused")), **buckets)


def in_period(windows: list[Win]) -> list[Win]:
    return [w for w in windows if PERIOD_START <= w.start < PERIOD_END]


def report_of(judged, current, assignments, performed, missed, services=None, **options) -> list[ReportRow]:
    records = [r for r in missed if to_utc_iso(PERIOD_START) <= r.window_start < to_utc_iso(PERIOD_END)]
    return checklist_report("forklift", in_period(judged), assignments, performed, records, now=NOW,
                            current=in_period(current), watermark=WATERMARK, out_of_service=services, **options)


@pytest.mark.slow  # a year for 1,000 equipment: about 5 s, not in the fast lane
def test_a_year_of_daily_checks_for_1000_equipment_matches_an_independent_tally() -> None:
    judged, current, assignments, performed, missed, services, truth = generate(1000, seed=20260302)
    rows = report_of(judged, current, assignments, performed, missed, services)
    got = {row.equipment_id: row for row in rows}
    want = {e: expected_row(e, t) for e, t in truth.items() if sum(t.values())}
    assert set(got) == set(want)
    mismatched = [(got[e], want[e]) for e in want if got[e] != want[e]]
    assert not mismatched, mismatched[:3]
    fleet = total(rows)
    assert fleet.expected == sum(r.expected for r in want.values()) > 200_000
    assert fleet.missed == sum(t["missed"] for t in truth.values())
    assert fleet.pending == sum(t["pending"] for t in truth.values()) > 0
    assert fleet.excused == sum(t["excused"] for t in truth.values()) > 0
    assert fleet.recorded_late == sum(t["recorded_late"] for t in truth.values()) > 0
    judged_count = fleet.on_time + fleet.late + fleet.missed + fleet.recorded_late
    assert judged_count == fleet.expected - fleet.dismissed
    assert fleet.compliance == pytest.approx(100 * (fleet.on_time + fleet.late) / judged_count)


def test_every_window_outcome_matches_the_generator_decision_and_the_rows() -> None:
    decisions: dict[tuple[str, str], tuple[str, str | None]] = {}
    judged, current, assignments, performed, missed, services, _truth = generate(120, seed=11, decisions=decisions)
    outcomes: list[WindowOutcome] = []
    rows = report_of(judged, current, assignments, performed, missed, services, outcomes=outcomes)
    assert rows == report_of(judged, current, assignments, performed, missed, services)  # the sink changes nothing
    got = {(o.equipment_id, o.window_start): (o.outcome, o.performed_at) for o in outcomes}
    assert len(got) == len(outcomes)  # one outcome per (equipment, window)
    assert got == decisions
    assert {o.outcome for o in outcomes} == set(OUTCOMES)
    for row in rows:  # the rows count exactly these outcomes
        mine = Counter(o.outcome for o in outcomes if o.equipment_id == row.equipment_id)
        assert tuple(mine[name] for name in OUTCOMES) == tuple(getattr(row, name) for name in OUTCOMES)
    lates = [o for o in outcomes if o.outcome == "late"]
    assert lates and all(timedelta(0) <= o.late_by < timedelta(hours=1) for o in lates)
    assert all(o.late_by is None for o in outcomes if o.outcome != "late")
    records_without_window = [o for o in outcomes if o.window_start.endswith("T07:00:00Z")]
    assert records_without_window and all(o.window_end is None for o in records_without_window)


def test_paused_checklist_has_nothing_pending_and_no_windows_of_its_current_rule() -> None:
    judged, current, assignments, performed, missed, _services, _truth = generate(30, seed=7)
    active = report_of(judged, current, assignments, performed, missed)
    paused = report_of(judged, current, assignments, performed, missed, judging=False)
    assert sum(r.pending for r in active) > 0
    assert sum(r.pending for r in paused) == 0
    # Paused, the windows not judged yet never will be: only the judged windows count.
    assert paused == report_of(judged, [], assignments, performed, missed)
    assert sum(r.expected for r in paused) < sum(r.expected for r in active)


def test_a_rule_edit_counts_each_day_by_the_rule_that_judged_it() -> None:
    # The reviewer's case: 06:00 PT8H Berlin, a check at 14:30 Berlin on Monday (missed); the rule
    # becomes 07:00 PT8H on Tuesday; Tuesday missed. 14:30 lies in the new rule's Monday window,
    # which never existed: it must not make Monday "on time".
    monday, tuesday = date(2026, 3, 2), date(2026, 3, 3)
    old, new = (time(6), time(14), timedelta(0)), (time(7), time(15), timedelta(0))
    judged = [daily_window(monday, old), daily_window(tuesday, new)]
    current = [daily_window(monday, new), daily_window(tuesday, new)]
    assignment = Assignment("c", "E1", datetime(2026, 3, 1, tzinfo=UTC))
    performed = {"E1": [to_utc_iso(datetime(2026, 3, 2, 14, 30, tzinfo=BERLIN))]}
    missed = [MissedRecord("E1", to_utc_iso(w.start), False) for w in judged]
    [row] = checklist_report("c", judged, [assignment], performed, missed, now=datetime(2026, 3, 4, tzinfo=UTC),
                             current=current, watermark=judged[-1].evaluate_at)
    assert (row.expected, row.on_time, row.late, row.missed, row.pending, row.compliance) == (2, 0, 0, 2, 0, 0.0)


def test_windows_judged_under_rules_of_different_lengths_overlap_correctly() -> None:
    # A 24-hour window judged under an old rule, then 2-hour windows inside the same day.
    day0 = datetime(2026, 3, 2, 6, tzinfo=UTC)
    judged = [Win(day0, day0 + timedelta(days=1), day0 + timedelta(days=1, hours=1)),
              Win(day0 + timedelta(hours=2), day0 + timedelta(hours=4), day0 + timedelta(hours=5)),
              Win(day0 + timedelta(hours=6), day0 + timedelta(hours=8), day0 + timedelta(hours=9))]
    # Unassigned at +5 h: counts for the 2-hour window at +2 h only (the others end later).
    assignment = Assignment("c", "E1", day0 - timedelta(days=1), day0 + timedelta(hours=5))
    performed = {"E1": [to_utc_iso(day0 + timedelta(hours=4, minutes=30))]}
    [row] = checklist_report("c", judged, [assignment], performed, [], now=day0 + timedelta(days=3))
    assert (row.expected, row.on_time, row.late) == (1, 0, 1)
    forever = Assignment("c", "E1", day0 - timedelta(days=1))
    [row] = checklist_report("c", judged, [forever], performed, [], now=day0 + timedelta(days=3))
    assert (row.expected, row.on_time, row.late) == (2, 1, 1)  # the long window on time, +2 h late


def test_a_paused_or_deleted_checklist_keeps_the_outcomes_of_its_judged_windows() -> None:
    # Deleting stops judging (judging=False, no current windows): every judged window keeps its outcome.
    day0 = datetime(2026, 3, 2, 5, tzinfo=UTC)
    windows = [Win(day0 + timedelta(days=d), day0 + timedelta(days=d, hours=8), day0 + timedelta(days=d, hours=9))
               for d in range(5)]
    assignment = Assignment("c", "E1", day0 - timedelta(days=1), day0 + timedelta(days=30))
    performed = {"E1": [to_utc_iso(day0 + timedelta(hours=1)),
                        to_utc_iso(day0 + timedelta(days=1, hours=8, minutes=5))]}
    records = [MissedRecord("E1", to_utc_iso(windows[d].start), False) for d in (2, 3, 4)]
    live = checklist_report("c", windows[:3], [assignment], performed, records[:1], now=day0 + timedelta(days=3),
                            current=windows, watermark=windows[2].end)
    gone = checklist_report("c", windows[:3], [assignment], performed, records[:1], now=day0 + timedelta(days=3),
                            judging=False)
    assert live == gone == [ReportRow("c", "E1", expected=3, on_time=1, late=1, missed=1)]


def test_one_check_can_be_late_for_one_window_and_on_time_for_the_next() -> None:
    # 24-hour windows from 06:00 with 2 h grace: 07:00 is late for yesterday and on time for today.
    day0 = datetime(2026, 3, 2, 6, tzinfo=UTC)
    windows = [Win(day0 + timedelta(days=d), day0 + timedelta(days=d + 1), day0 + timedelta(days=d + 1, hours=2))
               for d in range(3)]
    assignment = Assignment("c", "E1", day0 - timedelta(days=1))
    performed = {"E1": [to_utc_iso(day0 + timedelta(days=1, hours=1))]}
    [row] = checklist_report("c", windows, [assignment], performed, [], now=day0 + timedelta(days=10),
                             watermark=day0 + timedelta(days=10))
    assert (row.on_time, row.late, row.expected) == (1, 1, 2)


def test_equipment_counts_in_every_assignment_period_and_not_between() -> None:
    day0 = datetime(2026, 3, 2, 6, tzinfo=UTC)
    windows = [Win(day0 + timedelta(days=d), day0 + timedelta(days=d, hours=8), day0 + timedelta(days=d, hours=9))
               for d in range(10)]
    # Assigned days 0-2, unassigned, re-assigned from day 6: days 3-5 do not count.
    assignment = Assignment("c", "E1", day0 + timedelta(days=6),
                            earlier_periods=((day0, day0 + timedelta(days=2, hours=8)),))
    performed = {"E1": [to_utc_iso(w.start + timedelta(hours=1)) for w in windows]}
    [row] = checklist_report("c", windows, [assignment], performed, [], now=day0 + timedelta(days=20),
                             watermark=day0 + timedelta(days=20))
    assert (row.on_time, row.expected) == (3 + 4, 7)
    assert sum(assignment.counts_for(w.start, w.end) for w in windows) == 7  # the evaluation's own rule


def test_windows_not_closed_yet_do_not_count() -> None:
    day0 = datetime(2026, 3, 2, 6, tzinfo=UTC)
    windows = [Win(day0, day0 + timedelta(hours=8), day0 + timedelta(hours=9))]
    assignment = Assignment("c", "E1", day0 - timedelta(days=1))
    performed = {"E1": [to_utc_iso(day0 + timedelta(hours=1))]}
    assert checklist_report("c", [], [assignment], performed, [], now=day0 + timedelta(hours=8, minutes=59),
                            current=windows, watermark=day0) == []
    [row] = checklist_report("c", [], [assignment], performed, [], now=day0 + timedelta(hours=9),
                             current=windows, watermark=day0)
    assert (row.on_time, row.expected, row.pending) == (1, 1, 0)


def test_compliance_leaves_dismissed_windows_out_and_is_none_when_nothing_is_left() -> None:
    # The README's worked example: 10 windows expected, 6 on time, 1 late, 1 missed, 2 dismissed.
    assert ReportRow("c", "e", expected=10, on_time=6, late=1, missed=1, dismissed=2).compliance == pytest.approx(
        100 * 7 / 8)
    assert compliance(7, 8) == pytest.approx(87.5)
    assert compliance(0, 0) is None
    assert ReportRow("c", "e", expected=2, dismissed=2).compliance is None
    assert ReportRow("c", "e").to_dict()["compliance_pct"] is None


def test_total_sums_rows_and_recomputes_compliance() -> None:
    rows = [ReportRow("a", "1", expected=10, on_time=10), ReportRow("b", "2", expected=2, missed=2, pending=1)]
    fleet = total(rows)
    assert (fleet.checklist_id, fleet.equipment_id) == (TOTAL, TOTAL)
    assert (fleet.expected, fleet.on_time, fleet.missed, fleet.pending) == (12, 10, 2, 1)
    assert fleet.compliance == pytest.approx(100 * 10 / 12)  # not the mean of 100% and 0%


def _days(count: int) -> list[Win]:
    """Daily 05:00-13:00 UTC windows with one hour of grace, from Monday 2026-03-02."""
    day0 = datetime(2026, 3, 2, 5, tzinfo=UTC)
    return [Win(day0 + timedelta(days=d), day0 + timedelta(days=d, hours=8), day0 + timedelta(days=d, hours=9))
            for d in range(count)]


def test_a_check_recorded_after_its_window_was_judged_attaches_to_the_missed_record() -> None:
    windows = _days(3)
    assignment = Assignment("c", "E1", windows[0].start - timedelta(days=1))
    # Day 0: done 07:00 on the device, synced the next day (the record stays). Day 1: done in the grace
    # period, synced late. Day 2: a check after end + grace does not attach.
    performed = {"E1": ["2026-03-02T07:00:00Z", "2026-03-03T13:30:00Z", "2026-03-04T14:30:00Z"]}
    records = [MissedRecord("E1", to_utc_iso(w.start), False, judged_at=to_utc_iso(w.evaluate_at)) for w in windows]
    outcomes: list[WindowOutcome] = []
    [row] = checklist_report("c", windows, [assignment], performed, records, now=datetime(2026, 3, 10, tzinfo=UTC),
                             outcomes=outcomes)
    assert row == ReportRow("c", "E1", expected=3, missed=1, recorded_late=2)
    assert row.compliance == 0.0  # recorded late is not done in compliance
    assert [(o.outcome, o.performed_at) for o in outcomes] == [
        ("recorded_late", "2026-03-02T07:00:00Z"), ("recorded_late", "2026-03-03T13:30:00Z"), ("missed", None)]
    filled = with_recorded_at(outcomes, {("c", "E1", "2026-03-02T07:00:00Z"): "2026-03-03T08:00:00Z"})
    assert filled[0].to_dict() == {
        "checklist_id": "c", "equipment_id": "E1", "window_start": "2026-03-02T05:00:00Z",
        "window_end": "2026-03-02T13:00:00Z", "outcome": "recorded_late", "performed_at": "2026-03-02T07:00:00Z",
        "judged_at": "2026-03-02T14:00:00Z", "recorded_at": "2026-03-03T08:00:00Z",
        "recorded_after_close_s": 18 * 3600}
    assert filled[1].recorded_at is None and filled[2] == outcomes[2]


def test_a_dismissal_stands_when_a_check_is_recorded_after_it() -> None:
    [window] = _days(1)
    excuse = Dismissal("device offline", "j.doe", "2026-03-02T15:00:00Z")
    records = [MissedRecord("E1", to_utc_iso(window.start), True, dismissal=excuse)]
    outcomes: list[WindowOutcome] = []
    [row] = checklist_report("c", [window], [Assignment("c", "E1", window.start)], {"E1": ["2026-03-02T06:00:00Z"]},
                             records, now=datetime(2026, 3, 10, tzinfo=UTC), outcomes=outcomes)
    assert row == ReportRow("c", "E1", expected=1, dismissed=1)
    [outcome] = outcomes
    assert (outcome.outcome, outcome.performed_at, outcome.dismissal) == ("dismissed", "2026-03-02T06:00:00Z", excuse)


def test_out_of_service_excuses_a_window_it_touches_unless_it_was_done_or_judged_missed() -> None:
    windows = _days(5)  # 05:00-13:00 UTC, Monday to Friday, all judged
    assignment = Assignment("c", "E1", windows[0].start - timedelta(days=1))
    # Monday done. Out of service from Tuesday 12:59 (the last minute of its window) to Thursday
    # 05:00 (Thursday's start: not touched); Wednesday done anyway; Thursday judged missed; out of
    # service again from Friday 00:00, open-ended, but Friday was judged missed before that period
    # was entered: the record stands.
    services = {"E1": [OutOfService("E1", "2026-03-03T12:59:00Z", "2026-03-05T05:00:00Z", "workshop"),
                       OutOfService("E1", "2026-03-06T00:00:00Z", None, "sold")]}
    performed = {"E1": ["2026-03-02T06:00:00Z", "2026-03-04T06:00:00Z"]}
    records = [MissedRecord("E1", to_utc_iso(w.start), False) for w in windows[3:]]
    outcomes: list[WindowOutcome] = []
    [row] = checklist_report("c", windows, [assignment], performed, records, now=datetime(2026, 3, 9, tzinfo=UTC),
                             out_of_service=services, outcomes=outcomes)
    assert row == ReportRow("c", "E1", expected=4, on_time=2, missed=2, excused=1)
    assert row.compliance == 50.0
    assert [o.outcome for o in outcomes] == ["on_time", "excused", "on_time", "missed", "missed"]
    assert outcomes[1].to_dict()["out_of_service"] == {"from": "2026-03-03T12:59:00Z", "to": "2026-03-05T05:00:00Z",
                                                       "reason": "workshop"}
    # Not judged yet and nothing recorded: Tuesday, Wednesday and Friday excused, the others pending.
    outcomes.clear()
    [row] = checklist_report("c", [], [assignment], {}, [], now=datetime(2026, 3, 9, tzinfo=UTC), current=windows,
                             watermark=windows[0].start, out_of_service=services, outcomes=outcomes)
    assert row == ReportRow("c", "E1", pending=2, excused=3)


def test_the_worked_example_of_the_readme_and_docs() -> None:
    """README "The report's outcomes" and docs/report-outcomes.md: FL-1, 06:00-14:00 Berlin with 30
    minutes' grace, the week of Monday 2 March 2026 (05:00-13:00 UTC, judged from 13:30 UTC)."""
    week = [Win(datetime(2026, 3, 2 + d, 5, tzinfo=UTC), datetime(2026, 3, 2 + d, 13, tzinfo=UTC),
                datetime(2026, 3, 2 + d, 13, 30, tzinfo=UTC)) for d in range(7)]
    judged = week[:6]  # Sunday's firing failed: not judged yet
    performed = {"FL-1": ["2026-03-02T06:12:00Z",  # Mon 07:12 Berlin
                          "2026-03-03T13:10:00Z",  # Tue 14:10, in the grace period
                          "2026-03-05T08:00:00Z"]}  # Thu 09:00 on the tablet, synced Fri 08:00
    records = [MissedRecord("FL-1", "2026-03-04T05:00:00Z", False),  # Wed
               MissedRecord("FL-1", "2026-03-05T05:00:00Z", False),  # Thu: judged before the sync
               MissedRecord("FL-1", "2026-03-06T05:00:00Z", True,
                            dismissal=Dismissal("site closed for inventory", "j.doe", "2026-03-06T15:00:00Z"))]
    workshop = {"FL-1": [OutOfService("FL-1", "2026-03-07T09:00:00Z", "2026-03-07T17:00:00Z", "in the workshop")]}
    outcomes: list[WindowOutcome] = []
    [row] = checklist_report("forklift", judged, [Assignment("forklift", "FL-1", datetime(2026, 3, 1, tzinfo=UTC))],
                             performed, records, now=datetime(2026, 3, 9, tzinfo=UTC), current=week,
                             watermark=judged[-1].end, out_of_service=workshop, outcomes=outcomes)
    assert [o.outcome for o in outcomes] == ["on_time", "late", "missed", "recorded_late", "dismissed", "excused",
                                             "pending"]
    assert row == ReportRow("forklift", "FL-1", expected=5, on_time=1, late=1, missed=1, recorded_late=1,
                            dismissed=1, excused=1, pending=1)
    assert row.compliance == 50.0
    [recorded] = with_recorded_at([outcomes[3]], {("forklift", "FL-1", "2026-03-05T08:00:00Z"): "2026-03-06T07:00:00Z"})
    assert recorded.recorded_after_close == timedelta(hours=17, minutes=30)
