"""The fleet report's numbers, checked against an independent tally of generated data.

The generator decides, for every (equipment, daily window), what happened (done on time, late,
missed, dismissed, never judged, pending...) and writes the data the table would hold; the
expected numbers are the generator's own tally of its decisions, never the report's logic.
Windows are built here with zoneinfo arithmetic (06:00-14:00 Europe/Berlin, 30 min grace, across
both DST changes), independently of the recurrence engine.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from missed_checks.equipment import Assignment
from missed_checks.report import TOTAL, MissedRecord, ReportRow, checklist_report, total
from missed_checks.timefmt import to_utc_iso

BERLIN = ZoneInfo("Europe/Berlin")
YEAR = 2026
GRACE = timedelta(minutes=30)
NOW = datetime(2027, 1, 10, 12, 0, tzinfo=UTC)
PERIOD_START = datetime(2026, 1, 19, tzinfo=UTC)
PERIOD_END = datetime(2026, 12, 14, tzinfo=UTC)
WATERMARK = datetime(2026, 12, 2, 13, 0, tzinfo=UTC)  # windows ending after this are not judged yet


@dataclass(frozen=True)
class Win:
    start: datetime
    end: datetime
    evaluate_at: datetime


def daily_windows(first: date, days: int) -> list[Win]:
    windows = []
    for offset in range(days):
        day = first + timedelta(days=offset)
        start = datetime.combine(day, time(6), tzinfo=BERLIN).astimezone(UTC)
        end = datetime.combine(day, time(14), tzinfo=BERLIN).astimezone(UTC)
        windows.append(Win(start, end, end + GRACE))
    return windows


def at(seconds_after: datetime, seconds: float) -> str:
    return to_utc_iso(seconds_after + timedelta(seconds=seconds))


OUTCOMES = ("on_time", "late", "missed", "dismissed", "recorded_after_judged", "nothing")
WEIGHTS = (70, 8, 10, 3, 2, 7)


def write_window(rng: random.Random, equipment: str, w: Win, judged: bool, checks: list[str],
                 missed: list[MissedRecord]) -> str | None:
    """Decide what happened in one closed window, write it as the table would hold it, and return
    the report bucket it belongs in (None: no outcome, not counted)."""
    length = (w.end - w.start).total_seconds()
    outcome = rng.choices(OUTCOMES, WEIGHTS)[0]
    if not judged and outcome in ("missed", "dismissed", "recorded_after_judged"):
        outcome = "pending"
    if rng.random() < 0.05:  # noise outside any window (evening) never counts
        checks.append(at(w.end, GRACE.total_seconds() + rng.uniform(60, 3 * 3600)))
    if outcome == "on_time":
        for _ in range(rng.choice([1, 1, 2])):
            checks.append(at(w.start, rng.uniform(0, length - 1)))
        if rng.random() < 0.2:  # also a late one: still on time
            checks.append(at(w.end, rng.uniform(0, GRACE.total_seconds() - 1)))
    elif outcome == "late":
        checks.append(at(w.end, rng.uniform(0, GRACE.total_seconds() - 1)))
    elif outcome in ("missed", "dismissed", "recorded_after_judged"):
        missed.append(MissedRecord(equipment, to_utc_iso(w.start), outcome == "dismissed"))
        if outcome == "recorded_after_judged":  # a check imported after the record: the record wins
            checks.append(at(w.start, rng.uniform(0, length - 1)))
    if outcome == "nothing":
        return None if judged else "pending"
    return "missed" if outcome == "recorded_after_judged" else outcome


def generate(equipment_count: int, seed: int):
    """Data as the table holds it, and the truth tallied per equipment for windows in the period."""
    rng = random.Random(seed)
    windows = daily_windows(date(YEAR, 1, 1), 365)
    in_period = [PERIOD_START <= w.start < PERIOD_END for w in windows]
    assignments, performed, missed = [], defaultdict(list), []
    truth: dict[str, Counter] = {}
    for n in range(equipment_count):
        equipment = f"FL-{n:05d}"
        first = rng.choice([0, 0, 0, rng.randrange(365)])
        assigned_at = windows[first].start - timedelta(minutes=rng.choice([0, 1, 600]))
        last = 364 if rng.random() < 0.8 else rng.randrange(first, 365)
        unassigned_at = None if last == 364 else windows[last].end + timedelta(minutes=rng.choice([0, 5]))
        assignments.append(Assignment("forklift", equipment, assigned_at, unassigned_at))
        tally: Counter = Counter()
        for i, w in enumerate(windows):
            if not first <= i <= last:
                if rng.random() < 0.05:  # a check while not assigned: never counts
                    performed[equipment].append(at(w.start, rng.uniform(0, 8 * 3600)))
                continue
            if w.evaluate_at > NOW:
                continue
            judged = w.end <= WATERMARK
            bucket = write_window(rng, equipment, w, judged, performed[equipment], missed)
            if in_period[i] and bucket:
                tally[bucket] += 1
        # A record judged under an older rule (07:00 UTC starts): counted as recorded.
        if n % 97 == 0:
            day = windows[100].start.replace(hour=7, minute=0)
            missed.append(MissedRecord(equipment, to_utc_iso(day), False))
            tally["missed"] += 1
        truth[equipment] = tally
    for checks in performed.values():
        rng.shuffle(checks)
    return windows, assignments, performed, missed, truth


def expected_row(equipment: str, tally: Counter) -> ReportRow:
    buckets = {name: tally.get(name, 0) for name in ("on_time", "late", "missed", "dismissed", "pending")}
    return ReportRow("forklift", equipment,
                     expected=sum(v for k, v in buckets.items() if k != "pending"), **buckets)


def in_period(windows: list[Win]) -> list[Win]:
    return [w for w in windows if PERIOD_START <= w.start < PERIOD_END]


def test_a_year_of_daily_checks_for_1000_equipment_matches_an_independent_tally() -> None:
    windows, assignments, performed, missed, truth = generate(1000, seed=20260302)
    records = [r for r in missed if to_utc_iso(PERIOD_START) <= r.window_start < to_utc_iso(PERIOD_END)]
    rows = checklist_report("forklift", in_period(windows), assignments, performed, records, now=NOW,
                            watermark=WATERMARK)
    got = {row.equipment_id: row for row in rows}
    want = {e: expected_row(e, t) for e, t in truth.items() if sum(t.values())}
    assert set(got) == set(want)
    mismatched = [(got[e], want[e]) for e in want if got[e] != want[e]]
    assert not mismatched, mismatched[:3]
    fleet = total(rows)
    assert fleet.expected == sum(r.expected for r in want.values()) > 200_000
    assert fleet.missed == sum(t["missed"] for t in truth.values())
    judged = fleet.expected - fleet.dismissed
    assert fleet.compliance == pytest.approx(100 * (fleet.on_time + fleet.late) / judged)


def test_paused_checklist_has_nothing_pending() -> None:
    windows, assignments, performed, missed, _truth = generate(30, seed=7)
    active = checklist_report("forklift", in_period(windows), assignments, performed, missed, now=NOW,
                              watermark=WATERMARK)
    paused = checklist_report("forklift", in_period(windows), assignments, performed, missed, now=NOW,
                              watermark=WATERMARK, judging=False)
    assert sum(r.pending for r in active) > 0
    assert sum(r.pending for r in paused) == 0
    assert [r.expected for r in paused] == [r.expected for r in active]


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
    assert checklist_report("c", windows, [assignment], performed, [], now=day0 + timedelta(hours=8, minutes=59),
                            watermark=day0) == []
    [row] = checklist_report("c", windows, [assignment], performed, [], now=day0 + timedelta(hours=9),
                             watermark=day0)
    assert (row.on_time, row.expected, row.pending) == (1, 1, 0)


def test_compliance_leaves_dismissed_windows_out_and_is_none_when_nothing_is_left() -> None:
    assert ReportRow("c", "e", expected=10, on_time=6, late=1, missed=1, dismissed=2).compliance == pytest.approx(
        100 * 7 / 8)
    assert ReportRow("c", "e", expected=2, dismissed=2).compliance is None
    assert ReportRow("c", "e").to_dict()["compliance_pct"] is None


def test_total_sums_rows_and_recomputes_compliance() -> None:
    rows = [ReportRow("a", "1", expected=10, on_time=10), ReportRow("b", "2", expected=2, missed=2, pending=1)]
    fleet = total(rows)
    assert (fleet.checklist_id, fleet.equipment_id) == (TOTAL, TOTAL)
    assert (fleet.expected, fleet.on_time, fleet.missed, fleet.pending) == (12, 10, 2, 1)
    assert fleet.compliance == pytest.approx(100 * 10 / 12)  # not the mean of 100% and 0%
