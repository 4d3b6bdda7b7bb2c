"""The HTML report's figures (weekly compliance, missed-check heatmap, repeat offenders, late and
dismissed lists) from window outcomes: examples in two DST zones, and properties over generated
fleets checked against independent tallies (a string of outcome letters for the runs, the
calendar's ISO week of the local date for the weeks)."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from missed_checks.reporting.insights import (
    dismissed_checks,
    late_checks,
    missed_checks,
    missed_heatmap,
    outcome_week,
    repeat_offenders,
    streaks,
    weekly_rows,
    weeks_of_period,
)
from missed_checks.reporting.report import OUTCOMES, TOTAL, Dismissal, WindowOutcome, compliance
from missed_checks.timefmt import to_utc_iso

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
ZONES = {"forklift": BERLIN, "pallet": NEW_YORK}


def window(checklist: str, equipment: str, local_start: datetime, outcome: str, *, hours: int = 8,
           late_minutes: int = 10, dismissal: Dismissal | None = None) -> WindowOutcome:
    start = local_start.astimezone(UTC)
    end = start + timedelta(hours=hours)
    performed = {"on_time": start + timedelta(minutes=5), "late": end + timedelta(minutes=late_minutes)}.get(outcome)
    return WindowOutcome(checklist, equipment, to_utc_iso(start), to_utc_iso(end), outcome,
                         None if performed is None else to_utc_iso(performed), dismissal)


def days(checklist: str, equipment: str, first: datetime, letters: str, **kwargs) -> list[WindowOutcome]:
    """One window a day from ``first`` (local), its outcome spelt by a letter: O on time, L late,
    M missed, D dismissed, P pending, - nothing counted."""
    names = {"O": "on_time", "L": "late", "M": "missed", "D": "dismissed", "P": "pending"}
    return [window(checklist, equipment, first + timedelta(days=n), names[letter], **kwargs)
            for n, letter in enumerate(letters) if letter != "-"]


MONDAY_BERLIN = datetime(2026, 3, 23, 6, 0, tzinfo=BERLIN)  # the week Berlin moves to summer time


def test_a_run_is_missed_windows_in_a_row_dismissed_ones_excused_and_a_done_one_ends_it() -> None:
    outcomes = (days("forklift", "fl-01", MONDAY_BERLIN, "MMDMOMM")
                + days("forklift", "fl-02", MONDAY_BERLIN, "MMLMMMP")
                + days("pallet", "fl-01", datetime(2026, 3, 23, 8, tzinfo=NEW_YORK), "MM-M"))
    found = [(s.checklist_id, s.equipment_id, s.length, s.ongoing, s.windows[0].window_start)
             for s in repeat_offenders(outcomes)]
    assert repeat_offenders(outcomes)[0].ended_by.window_start == "2026-03-27T05:00:00Z"  # the on-time Friday
    assert found == [
        ("forklift", "fl-01", 3, False, "2026-03-23T05:00:00Z"),  # M M (D) M, then on time
        ("forklift", "fl-02", 3, True, "2026-03-26T05:00:00Z"),  # after the late one; pending is not judged
        ("pallet", "fl-01", 3, True, "2026-03-23T12:00:00Z"),  # a day with nothing counted is not in the sequence
    ]
    assert [(s.equipment_id, s.length) for s in streaks(outcomes) if s.length < 3] == [
        ("fl-01", 2), ("fl-02", 2)]


def test_weeks_are_iso_weeks_of_the_local_start_across_dst() -> None:
    # Sunday 23:30 in New York is Monday 03:30/04:30 UTC: it stays in the New York week before.
    sunday_evening = window("pallet", "pj-1", datetime(2026, 3, 29, 23, 30, tzinfo=NEW_YORK), "missed", hours=1)
    assert sunday_evening.window_start.startswith("2026-03-30T03:30")
    assert outcome_week(sunday_evening, ZONES) == date(2026, 3, 23)
    # Monday 00:30 in Berlin is Sunday 23:30 UTC (winter) / 22:30 UTC (summer): Monday's week.
    for monday in (datetime(2026, 3, 23, 0, 30, tzinfo=BERLIN), datetime(2026, 3, 30, 0, 30, tzinfo=BERLIN)):
        early = window("forklift", "fl-1", monday, "missed", hours=1)
        assert early.window_start[:10] == str(monday.date() - timedelta(days=1))
        assert outcome_week(early, ZONES) == monday.date()
    # Monday 23 March to Sunday 5 April, whole weeks (the 6th is the end, exclusive).
    assert weeks_of_period(datetime(2026, 3, 23, tzinfo=UTC), datetime(2026, 4, 6, tzinfo=UTC), UTC) == [
        date(2026, 3, 23), date(2026, 3, 30)]
    # From a Sunday: its week, barely in the period and with nothing in it, is left out; an outcome keeps it.
    assert weeks_of_period(datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 9, tzinfo=UTC), UTC) == [
        date(2026, 3, 2)]
    assert weeks_of_period(datetime(2026, 3, 29, tzinfo=UTC), datetime(2026, 4, 6, tzinfo=UTC), UTC,
                           [sunday_evening], ZONES) == [date(2026, 3, 23), date(2026, 3, 30)]
    # Up to a Wednesday: the week it ends in has nothing closed yet, so it is left out too.
    assert weeks_of_period(datetime(2026, 3, 23, tzinfo=UTC), datetime(2026, 4, 1, tzinfo=UTC), UTC) == [
        date(2026, 3, 23)]
    # A period inside one week keeps it; in Berlin, midnight UTC on Sunday is already Sunday 01:00.
    assert weeks_of_period(datetime(2026, 3, 25, tzinfo=UTC), datetime(2026, 3, 26, tzinfo=UTC), UTC) == [
        date(2026, 3, 23)]
    assert weeks_of_period(datetime(2026, 3, 22, 23, tzinfo=UTC), datetime(2026, 4, 5, 22, tzinfo=UTC), BERLIN) == [
        date(2026, 3, 23), date(2026, 3, 30)]


def test_weekly_compliance_per_checklist_and_fleet() -> None:
    outcomes = (days("forklift", "fl-01", MONDAY_BERLIN, "OOLMD" + "--" + "OMMMP")
                + days("forklift", "fl-02", MONDAY_BERLIN, "OOOOO"))
    weeks = [date(2026, 3, 16), date(2026, 3, 23), date(2026, 3, 30)]
    series = weekly_rows(outcomes, ZONES, weeks)
    assert list(series) == ["forklift", TOTAL]
    empty, first, second = series["forklift"]
    assert (empty.expected, empty.compliance) == (0, None)
    assert (first.on_time, first.late, first.missed, first.dismissed, first.expected) == (7, 1, 1, 1, 10)
    assert first.compliance == compliance(8, 9)  # the dismissed window is excused
    assert (second.on_time, second.missed, second.pending, second.expected) == (1, 3, 1, 4)
    assert second.compliance == 25.0
    assert [r.expected for r in series[TOTAL]] == [0, 10, 4]


def test_heatmap_is_worst_first_and_lists_the_checklists() -> None:
    outcomes = (days("forklift", "fl-01", MONDAY_BERLIN, "MOMOMO-MO")  # 4 missed, never two in a row
                + days("forklift", "fl-02", MONDAY_BERLIN, "OOOOOO-MMM")  # 3, in a row, second week
                + days("pallet", "fl-02", datetime(2026, 3, 24, 8, tzinfo=NEW_YORK), "M")
                + days("forklift", "fl-03", MONDAY_BERLIN, "DDDDD"))  # dismissed: not missed
    weeks = [date(2026, 3, 23), date(2026, 3, 30)]
    rows = missed_heatmap(outcomes, ZONES, weeks)
    assert [(r.equipment_id, r.counts, r.longest_run, r.checklists) for r in rows] == [
        ("fl-02", (1, 3), 3, ("forklift", "pallet")),  # 4 missed, a run of 3 beats fl-01's 4 with runs of 1
        ("fl-01", (3, 1), 1, ("forklift",)),
    ]
    assert [o.equipment_id for o in missed_checks(outcomes, [r.equipment_id for r in rows])] == ["fl-02"] * 4 + [
        "fl-01"] * 4


def test_late_and_dismissed_lists() -> None:
    excuse = Dismissal("in the workshop", "j.doe", "2026-03-25T08:00:00Z")
    outcomes = (days("forklift", "fl-02", MONDAY_BERLIN, "L", late_minutes=25)
                + days("forklift", "fl-01", MONDAY_BERLIN, "LOD", dismissal=excuse))
    assert [(o.equipment_id, o.late_by) for o in late_checks(outcomes)] == [
        ("fl-01", timedelta(minutes=10)), ("fl-02", timedelta(minutes=25))]
    [dismissed] = dismissed_checks(outcomes)
    assert (dismissed.equipment_id, dismissed.dismissal) == ("fl-01", excuse)


# -- properties over generated fleets ----------------------------------------------------------------
LETTERS = {"O": "on_time", "L": "late", "M": "missed", "D": "dismissed", "P": "pending"}
ZONE_CHOICES = {"berlin": BERLIN, "new-york": NEW_YORK, "utc": ZoneInfo("UTC"),
                "lord-howe": ZoneInfo("Australia/Lord_Howe")}


@st.composite
def fleets(draw):
    """Per (checklist, equipment) a run of windows, a letter each, one every 1-3 days from a random
    local start; checklists in zones with DST (Lord Howe's is half an hour)."""
    outcomes = []
    letters_by_pair = {}
    for checklist in draw(st.lists(st.sampled_from(sorted(ZONE_CHOICES)), min_size=1, max_size=3, unique=True)):
        zone = ZONE_CHOICES[checklist]
        for equipment in draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True)):
            letters = draw(st.text(alphabet="OLMDP", min_size=0, max_size=40))
            first = draw(st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2026, 12, 1)))
            gaps = draw(st.lists(st.integers(1, 3), min_size=len(letters), max_size=len(letters)))
            at = first.replace(tzinfo=zone)
            for letter, gap in zip(letters, gaps, strict=True):
                outcomes.append(window(checklist, equipment, at, LETTERS[letter], hours=2))
                at = (at + timedelta(days=gap))
            letters_by_pair[(checklist, equipment)] = letters
    shuffled = draw(st.permutations(outcomes))
    return shuffled, letters_by_pair


@given(fleets())
def test_runs_match_the_outcome_letters(fleet) -> None:
    outcomes, letters_by_pair = fleet
    want = Counter()
    for (checklist, equipment), letters in letters_by_pair.items():
        judged = re.sub("[DP]", "", letters)  # excused and not judged yet: not in the sequence
        for match in re.finditer("M+", judged):
            want[(checklist, equipment, len(match.group()), match.end() == len(judged))] += 1
    got = Counter((s.checklist_id, s.equipment_id, s.length, s.ongoing) for s in streaks(outcomes))
    assert got == want
    offenders = repeat_offenders(outcomes)
    assert Counter((s.checklist_id, s.equipment_id, s.length, s.ongoing) for s in offenders) == Counter(
        {key: n for key, n in want.items() if key[2] >= 3})
    assert [s.length for s in offenders] == sorted((s.length for s in offenders), reverse=True)
    for streak in offenders:
        assert all(w.outcome == "missed" for w in streak.windows)
        assert list(streak.windows) == sorted(streak.windows, key=lambda w: w.window_start)


@given(fleets())
def test_weekly_rows_and_heatmap_count_every_outcome_once_in_its_local_week(fleet) -> None:
    outcomes, _ = fleet
    zones = ZONE_CHOICES
    start, end = datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 9, tzinfo=UTC)
    weeks = weeks_of_period(start, end, UTC, outcomes, zones)
    assert all(b - a == timedelta(weeks=1) for a, b in zip(weeks, weeks[1:], strict=False))
    assert weeks[0] <= date(2026, 3, 2) <= weeks[-1] and weeks[0].weekday() == 0  # the period's whole week
    for outcome in outcomes:  # the calendar's ISO week of the local start
        local_day = datetime.fromisoformat(outcome.window_start).astimezone(zones[outcome.checklist_id]).date()
        week = outcome_week(outcome, zones)
        assert week in weeks and week.isocalendar()[:2] == local_day.isocalendar()[:2] and week.weekday() == 0

    series = weekly_rows(outcomes, zones, weeks)
    for checklist in {o.checklist_id for o in outcomes}:
        tally = Counter(o.outcome for o in outcomes if o.checklist_id == checklist)
        rows = series[checklist]
        assert len(rows) == len(weeks)
        for name in OUTCOMES:
            assert sum(getattr(r, name) for r in rows) == tally[name]
        for row in rows:
            assert row.compliance == compliance(row.on_time + row.late, row.on_time + row.late + row.missed)
    for n, fleet_row in enumerate(series[TOTAL]):
        assert fleet_row.expected == sum(series[c][n].expected for c in series if c != TOTAL)

    heatmap = missed_heatmap(outcomes, zones, weeks)
    missed = Counter(o.equipment_id for o in outcomes if o.outcome == "missed")
    assert {r.equipment_id: r.total for r in heatmap} == dict(missed)
    keys = [(-r.total, -r.longest_run, r.equipment_id) for r in heatmap]
    assert keys == sorted(keys)
    listed = missed_checks(outcomes, [r.equipment_id for r in heatmap])
    assert len(listed) == sum(missed.values())
    assert [o.equipment_id for o in listed] == sorted((o.equipment_id for o in listed),
                                                     key=[r.equipment_id for r in heatmap].index)


# -- #23: what each heatmap cell was, and where an open run stands --------------------------------------
def test_a_week_without_outcomes_says_why_paused_not_assigned_or_not_due() -> None:
    from missed_checks.equipment.assignments import Assignment
    from missed_checks.reporting.insights import Coverage, heat_cells

    weeks = [date(2026, 3, 16), date(2026, 3, 23), date(2026, 3, 30), date(2026, 4, 6)]
    outcomes = [
        window("forklift", "a", MONDAY_BERLIN, "missed"),
        window("forklift", "a", MONDAY_BERLIN + timedelta(days=1), "recorded_late"),
        window("forklift", "a", MONDAY_BERLIN + timedelta(days=2), "on_time"),
        window("forklift", "a", MONDAY_BERLIN + timedelta(days=7), "excused"),
    ]
    # a: assigned from the week of 23 March; forklift paused from Wednesday 8 April (Berlin)
    coverage = Coverage({("forklift", "a"): Assignment("forklift", "a", datetime(2026, 3, 23, tzinfo=BERLIN))},
                        {"forklift": datetime(2026, 4, 8, tzinfo=BERLIN)})
    [cells] = heat_cells(outcomes, ZONES, weeks, ["a"], coverage).values()
    assert [c.state for c in cells] == ["not_assigned", "missed", "excused", "paused"]
    assert (cells[1].missed, cells[1].judged) == (1, 3)  # 1 missed of 3 (the recorded-late one counts in judged)
    unpaused = Coverage({("forklift", "a"): Assignment("forklift", "a", datetime(2026, 3, 23, tzinfo=BERLIN))}, {})
    assert heat_cells(outcomes, ZONES, weeks, ["a"], unpaused)["a"][3].state == "not_due"


def test_an_open_run_says_how_long_undone_or_why_not() -> None:
    from missed_checks.equipment.assignments import Assignment
    from missed_checks.reporting.insights import open_run
    from missed_checks.reporting.report import OutOfService

    run = days("forklift", "a", MONDAY_BERLIN, "OMMM")
    [streak] = streaks(run)
    first = streak.windows[0]  # Tuesday 24 March, 05:00-13:00Z
    as_of = datetime(2026, 3, 27, 13, tzinfo=UTC)
    undone = open_run(streak, Assignment("forklift", "a", MONDAY_BERLIN), [], as_of)
    assert undone is not None and (undone.state, undone.since) == ("undone", first.window_end)
    assert undone.undone_for == timedelta(days=3)
    gone = open_run(streak, Assignment("forklift", "a", MONDAY_BERLIN, datetime(2026, 3, 27, tzinfo=UTC)), [], as_of)
    assert gone is not None and (gone.state, gone.since) == ("unassigned", "2026-03-27T00:00:00Z")
    sold = OutOfService("a", "2026-03-27T06:00:00Z", None, "sold")
    away = open_run(streak, Assignment("forklift", "a", MONDAY_BERLIN), [sold], as_of)
    assert away is not None and (away.state, away.since, away.reason) == ("out_of_service", "2026-03-27T06:00:00Z",
                                                                         "sold")
    assert open_run(streaks(days("forklift", "a", MONDAY_BERLIN, "MMO"))[0], None, [], as_of) is None  # ended
