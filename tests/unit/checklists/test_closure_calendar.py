"""Closure calendars (#23 item 2): the calendar's validation, and windows with closed dates across
DST and in two zones, in the recurrence engine, the evaluation's plan and the schedule."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from missed_checks.aws.table.calendars import calendar_image, calendar_item, calendar_of, calendar_revision_item
from missed_checks.aws.table.checklists import checklist_item
from missed_checks.checklists.checklist import Checklist
from missed_checks.checklists.closure_calendar import (
    MAX_DATES,
    ClosureCalendar,
    parse_dates,
    validate_calendar_id,
    validate_closed_on,
)
from missed_checks.checklists.recurrence import parse_recurrence
from missed_checks.checklists.schedule import Target, desired_schedule
from missed_checks.checklists.schedule_sync import calendar_needs_sync, checklists_to_resync, sync_checklist
from missed_checks.errors import InvalidInput, InvalidRecurrence
from missed_checks.evaluation.planning import Outcome, plan_evaluation
from missed_checks_ops.inputs import checklist_specs
from tests.fakes import InMemorySchedules, InMemoryTable

BERLIN, CHICAGO = ZoneInfo("Europe/Berlin"), ZoneInfo("America/Chicago")


def calendar(*days: str, revision: int = 1) -> ClosureCalendar:
    return ClosureCalendar("site", parse_dates(list(days)), revision=revision)


def daily(zone: str, hour: str = "060000") -> str:
    return f"DTSTART;TZID={zone}:20260301T{hour}\nRRULE:FREQ=DAILY"


# -- the calendar ----------------------------------------------------------------------------------
def test_dates_are_validated_deduplicated_and_sorted() -> None:
    assert parse_dates(["2026-04-03", "2026-01-01", "2026-04-03"]) == (date(2026, 1, 1), date(2026, 4, 3))


@pytest.mark.parametrize(("dates", "field", "says"), [
    (["2026-04-03", "2026-02-30"], "dates[1]", "not a calendar date"),
    (["2026-04-03", "x", "2026-04-03T00:00"], "dates[1]", "not an ISO date"),
    (["2026-04-03", "2026-04-04", "2026-04-03T06:00:00Z"], "dates[2]", "no time"),
    ([20260403], "dates[0]", "a number"),
    (["1969-12-31"], "dates[0]", "outside the years"),
    ("2026-04-03", "dates", "not a list"),
])
def test_bad_dates_name_their_position(dates: object, field: str, says: str) -> None:
    with pytest.raises(InvalidInput) as error:
        parse_dates(dates)
    assert error.value.field == field
    assert says in error.value.message


def test_a_calendar_holds_a_bounded_number_of_dates() -> None:
    many = [(date(2026, 1, 1) + timedelta(days=n)).isoformat() for n in range(MAX_DATES + 1)]
    with pytest.raises(InvalidInput, match=f"at most {MAX_DATES}"):
        parse_dates(many)
    assert len(parse_dates(many[:MAX_DATES])) == MAX_DATES


@pytest.mark.parametrize("bad", ["", "-x", "a b", "x" * 65, "a#b", 7])
def test_calendar_ids_use_a_documented_alphabet(bad: object) -> None:
    with pytest.raises(InvalidInput, match="calendar id"):
        validate_calendar_id(bad)


def test_closed_on_refuses_a_repeated_calendar_naming_both_positions() -> None:
    assert validate_closed_on(["a", "b"]) == ("a", "b")
    with pytest.raises(InvalidInput) as error:
        validate_closed_on(["a", "b", "a"])
    assert (error.value.field, error.value.message) == ("closed_on[2]", "'a' repeats closed_on[0]")
    with pytest.raises(InvalidInput, match=r"closed_on\[1\]"):
        validate_closed_on(["a", "no way"])


def test_the_item_round_trips() -> None:
    original = ClosureCalendar("site", parse_dates(["2026-04-03"]), "holidays", 3,
                               datetime(2026, 3, 1, tzinfo=UTC), frozenset({"c1"}))
    item = {**calendar_item(original), "used_by": {"c1"}}
    assert calendar_of(item) == original
    assert calendar_revision_item(original)["sk"] == "REVISION#000000000003"


# -- windows -----------------------------------------------------------------------------------------
def test_a_closed_local_date_has_no_window_in_either_zone() -> None:
    closed = frozenset({date(2026, 3, 8), date(2026, 3, 29)})  # the US and the EU spring-forward days
    for zone in ("Europe/Berlin", "America/Chicago"):
        recurrence = parse_recurrence(daily(zone)).with_closures(closed)
        starts = [w.start.date() for w in recurrence.windows(datetime(2026, 3, 1, tzinfo=UTC),
                                                             datetime(2026, 4, 5, tzinfo=UTC))]
        assert date(2026, 3, 8) not in starts and date(2026, 3, 29) not in starts
        assert date(2026, 3, 7) in starts and date(2026, 3, 9) in starts and date(2026, 3, 30) in starts
        assert len(starts) == 35 - 2


def test_the_local_date_decides_not_the_utc_one() -> None:
    # 23:30 in Chicago on 3 April is 4 April in UTC: the local date (3 April) is the closed one.
    late = parse_recurrence(daily("America/Chicago", "233000"))
    closed = late.with_closures(frozenset({date(2026, 4, 3)}))
    april = closed.windows(datetime(2026, 4, 1, tzinfo=UTC), datetime(2026, 4, 8, tzinfo=UTC))
    # (the range is in UTC: 31 March 23:30 in Chicago is 1 April 04:30 UTC)
    assert [w.start.date() for w in april] == [date(2026, 3, 31), *(date(2026, 4, d) for d in (1, 2, 4, 5, 6))]
    assert all(w.start.astimezone(UTC).date() != date(2026, 4, 4) for w in april)


def test_a_window_across_the_spring_forward_gap_on_a_closed_date() -> None:
    # 02:30 on 29 March does not exist in Berlin (it becomes 03:30): still the closed local date.
    gap = parse_recurrence(daily("Europe/Berlin", "023000")).with_closures(frozenset({date(2026, 3, 29)}))
    starts = [w.start for w in gap.windows(datetime(2026, 3, 28, tzinfo=UTC), datetime(2026, 3, 31, tzinfo=UTC))]
    assert [s.date() for s in starts] == [date(2026, 3, 28), date(2026, 3, 30)]


@given(st.sets(st.dates(date(2026, 1, 1), date(2026, 12, 31)), max_size=60),
       st.sampled_from(["Europe/Berlin", "America/Chicago", "Asia/Kolkata", "Pacific/Auckland"]),
       st.sampled_from(["000000", "023000", "060000", "233000"]))
def test_closures_remove_exactly_the_closed_dates(closed: set[date], zone: str, hour: str) -> None:
    """A closed date never yields a window, and every other window is unaffected (same instants)."""
    plain = parse_recurrence(f"DTSTART;TZID={zone}:20260101T{hour}\nRRULE:FREQ=DAILY;BYDAY=MO,WE,FR,SA",
                             window="PT8H", grace="PT30M")
    closed_rule = plain.with_closures(frozenset(closed))
    span = (datetime(2026, 1, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))
    every = plain.windows(*span)
    left = closed_rule.windows(*span)
    assert left == [w for w in every if w.start.date() not in closed]
    assert all(w.start.date() not in closed for w in left)
    due = closed_rule.due_windows(datetime(2026, 1, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC), 1000)
    assert due.windows == [w for w in left if w.evaluate_at <= datetime(2027, 1, 1, tzinfo=UTC)]


# -- the checklist, the evaluation's plan, the schedule ------------------------------------------------
def checklist(closures: dict[str, ClosureCalendar | None] | None, **changes: object) -> Checklist:
    base = Checklist("c", daily("Europe/Berlin"), window="PT8H", closed_on=("site",), closures=closures,
                     created_at=datetime(2026, 3, 1, tzinfo=UTC))
    return base.with_changes(**changes)


def test_the_plan_skips_closed_windows_and_records_the_revision() -> None:
    now = datetime(2026, 3, 5, tzinfo=UTC)
    plan = plan_evaluation("c", checklist({"site": calendar("2026-03-02", "2026-03-03", revision=4)}), now, 10, now)
    assert [w.start.date() for w in plan.windows] == [date(2026, 3, 1), date(2026, 3, 4)]
    assert plan.judged_by.closed_on == {"site": 4}


def test_all_due_windows_closed_is_nothing_due() -> None:
    now = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)
    plan = plan_evaluation("c", checklist({"site": calendar("2026-03-01")}), now, 10, now)
    assert plan.outcome is Outcome.NOTHING_DUE
    assert plan.reason.endswith("; closed by the checklist's calendars: 2026-03-01")


def test_a_calendar_that_cannot_be_read_stops_the_evaluation_naming_it() -> None:
    now = datetime(2026, 3, 5, tzinfo=UTC)
    with pytest.raises(InvalidRecurrence) as error:
        plan_evaluation("c", checklist({"site": None}), now, 10, now)
    assert error.value.field == "closed_on[0]"


def test_the_schedule_is_not_exact_with_closures_and_ends_with_the_last_open_window() -> None:
    now = datetime(2026, 2, 1, tzinfo=UTC)
    bounded = "DTSTART;TZID=Europe/Berlin:20260301T060000\nRRULE:FREQ=DAILY;COUNT=3"
    plain = desired_schedule(checklist(None, recurrence=bounded, closed_on=()), "g", now)
    closed = desired_schedule(checklist({"site": calendar("2026-03-03")}, recurrence=bounded), "g", now)
    assert plain is not None and closed is not None
    assert plain.expression == closed.expression
    assert closed.exact is False
    assert closed.end_date is not None and plain.end_date is not None
    assert closed.end_date == plain.end_date - timedelta(days=1)
    every = calendar("2026-03-01", "2026-03-02", "2026-03-03")
    assert desired_schedule(checklist({"site": every}, recurrence=bounded), "g", now) is None


# -- schedule-sync's view of a calendar's stream record ------------------------------------------------
def test_only_a_change_of_dates_re_syncs_the_calendars_checklists() -> None:
    item = {"dates": ["2026-04-03"], "used_by": {"b", "a"}}
    old = calendar_image(item)  # the stream's images, read by the adapter
    assert calendar_needs_sync("MODIFY", old, calendar_image({**item, "dates": ["2026-04-03", "2026-04-06"]}))
    assert not calendar_needs_sync("MODIFY", old, calendar_image({**item, "used_by": {"a", "b", "c"}}))
    assert calendar_needs_sync("INSERT", None, old) and calendar_needs_sync("REMOVE", old, None)
    assert checklists_to_resync(old) == ["a", "b"]
    assert checklists_to_resync(calendar_image({"used_by": "not a set"})) == []
    assert checklists_to_resync(calendar_image(None)) == [] and checklists_to_resync(None) == []


def test_schedule_sync_reads_the_calendars_of_the_checklist() -> None:
    table = InMemoryTable(calendars={"site": calendar("2026-03-03")})
    item = checklist_item(checklist(None, recurrence="DTSTART;TZID=Europe/Berlin:20260301T060000\nRRULE:FREQ=DAILY;"
                                    "COUNT=3", revision=1))
    table.checklist_items["c"] = item
    schedules = InMemorySchedules()
    result = sync_checklist("c", table=table, schedules=schedules, target=Target("arn:sm", "arn:role", "arn:dlq", 3),
                            group_name="g", now=datetime(2026, 2, 1, tzinfo=UTC),
                            report_rejected=lambda *args: None)
    assert result.action.value == "created"
    assert table.notes[-1]["schedule"]["exact"] is False
    table.calendars.clear()  # a calendar deleted around the tools: no schedule may fire on unknown dates
    table.checklist_items["c"] = {**item, "revision": 2}
    result = sync_checklist("c", table=table, schedules=schedules, target=Target("arn:sm", "arn:role", "arn:dlq", 3),
                            group_name="g", now=datetime(2026, 2, 1, tzinfo=UTC),
                            report_rejected=lambda *args: None)
    assert result.action.value == "invalid" and result.error is not None
    assert result.error["field"] == "closed_on[0]"


# -- duplicate ids in one file (#23 item 5) --------------------------------------------------------------
def test_a_checklist_file_naming_an_id_twice_is_refused_naming_both_entries(tmp_path: Path) -> None:
    path = tmp_path / "checklists.yaml"
    path.write_text("- {id: a, recurrence: x}\n- {id: b, recurrence: x}\n- {id: c, recurrence: x}\n"
                    "- {id: a, recurrence: y, closed_on: [site]}\n")
    with pytest.raises(InvalidInput) as error:
        checklist_specs(str(path))
    assert (error.value.field, error.value.message) == ("entries[3].id", "'a' repeats entries[0]")
    path.write_text("- {id: a, recurrence: x}\n- {id: b, recurrence: y, closed_on: [site, shutdown]}\n")
    assert [spec.get("closed_on") for spec in checklist_specs(str(path))] == [None, ["site", "shutdown"]]
