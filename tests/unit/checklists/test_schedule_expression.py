"""Schedules for fleet routines: the expression, exactness, start and end dates; our validator."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from aws_cron_expression_validator.validator import AWSCronExpressionValidator

from missed_checks.checklists.recurrence import parse_recurrence
from missed_checks.checklists.schedule_expression import schedule_for, validate_aws_cron
from missed_checks.errors import InvalidInput

BERLIN = "DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:"


@pytest.mark.parametrize(
    ("text", "window", "grace", "expression", "exact"),
    [
        (BERLIN + "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "PT8H", "PT30M", "cron(30 14 ? * MON-FRI *)", True),
        (BERLIN + "FREQ=WEEKLY;BYDAY=MO", "PT8H", None, "cron(0 14 ? * MON *)", True),
        (BERLIN + "FREQ=DAILY;INTERVAL=7", "PT8H", None, "cron(0 14 ? * MON *)", True),
        (BERLIN + "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR", "PT8H", None, "cron(0 14 ? * MON,FRI *)", False),
        (BERLIN + "FREQ=DAILY;INTERVAL=2", "PT8H", None, "cron(0 14 * * ? *)", False),
        ("DTSTART;VALUE=DATE;TZID=Europe/Berlin:20260101\nRRULE:FREQ=MONTHLY;INTERVAL=2", None, None,
         "cron(0 0 2 1,3,5,7,9,11 ? *)", True),
        (BERLIN + "FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=1", "PT8H", None, "cron(0 14 1 1,3,5,7,9,11 ? *)", True),
        (BERLIN + "FREQ=MONTHLY;INTERVAL=5;BYMONTHDAY=1", "PT8H", None, "cron(0 14 1 * ? *)", False),
        (BERLIN + "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "PT8H", None, "cron(0 14 26-31 * ? *)", False),
        (BERLIN + "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1", "PT8H", None, "cron(0 14 1-3 * ? *)", False),
        (BERLIN + "FREQ=MONTHLY;BYDAY=MO;BYSETPOS=1", "PT8H", None, "cron(0 14 ? * 2#1 *)", True),
        (BERLIN + "FREQ=MONTHLY;INTERVAL=3;BYDAY=1MO", "PT8H", None, "cron(0 14 ? 1,4,7,10 2#1 *)", True),
        (BERLIN + "FREQ=MONTHLY;INTERVAL=3;BYDAY=1MO", "P1D", None, "cron(0 6 ? 1,4,7,10 TUE *)", False),
        (BERLIN + "FREQ=MONTHLY;BYDAY=1MO,3MO", "PT8H", None, "cron(0 14 ? * MON *)", False),
        (BERLIN + "FREQ=MONTHLY;BYDAY=-1FR", "PT8H", None, "cron(0 14 ? * 6L *)", True),
        (BERLIN + "FREQ=MONTHLY;BYMONTHDAY=-1", "PT8H", None, "cron(0 14 L * ? *)", True),
        (BERLIN + "FREQ=MONTHLY;BYMONTHDAY=-1", "P1D", None, "cron(0 6 1 * ? *)", True),
        (BERLIN + "FREQ=MONTHLY;BYMONTHDAY=13;BYDAY=FR", "PT8H", None, "cron(0 14 13 * ? *)", False),
        ("DTSTART;TZID=Europe/Berlin:20260315T080000\nRRULE:FREQ=YEARLY", "PT8H", None, "cron(0 16 15 3 ? *)", True),
        ("DTSTART;TZID=Europe/Berlin:20260315T080000\nRRULE:FREQ=YEARLY", "P1W", None, "cron(0 8 22 3 ? *)", True),
        ("DTSTART;TZID=Europe/Berlin:20260315T080000\nRRULE:FREQ=YEARLY;INTERVAL=2;COUNT=3", "PT8H", None,
         "cron(0 16 15 3 ? 2026,2028,2030)", True),
        ("DTSTART;TZID=Europe/Berlin:20260315T080000\nRRULE:FREQ=YEARLY;INTERVAL=2", "PT8H", None,
         "cron(0 16 15 3 ? *)", False),
        (BERLIN + "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO", "PT8H", None, "cron(0 14 ? 5 MON *)", False),
        (BERLIN + "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\nEXDATE;VALUE=DATE:20260406,20260501", "PT8H", None,
         "cron(0 14 ? * MON-FRI *)", False),
        (BERLIN + "FREQ=WEEKLY;BYDAY=MO\nRDATE;TZID=Europe/Berlin:20260108T120000", "PT8H", None,
         "cron(0 14,20 ? * MON,THU *)", False),
        (BERLIN + "FREQ=DAILY;BYHOUR=6,14", "PT4H", None, "cron(0 10,18 * * ? *)", True),
        (BERLIN + "FREQ=HOURLY;INTERVAL=6", "PT1H", None, "cron(0 1,7,13,19 * * ? *)", True),
        ("DTSTART;TZID=Europe/Berlin:20260105T060030\nRRULE:FREQ=DAILY", "PT8H", None, "cron(1 14 * * ? *)", True),
    ],
)  # fmt: skip
def test_fleet_routines(text: str, window: str | None, grace: str | None, expression: str, exact: bool) -> None:
    spec = schedule_for(parse_recurrence(text, window=window, grace=grace))
    assert (spec.expression, spec.exact) == (expression, exact)
    assert spec.timezone == "Europe/Berlin"
    validate_aws_cron(spec.expression)
    AWSCronExpressionValidator.validate(spec.expression[5:-1])


@pytest.mark.parametrize(
    ("zone", "start", "window", "expression", "exact"),
    [
        ("Europe/Berlin", "023000", "PT8H", "cron(30 9-11 * * ? *)", False),  # gap: 03:30 start; fall: 09:30 end
        ("Europe/Berlin", "023000", "P1D", "cron(30 2,3 * * ? *)", False),  # ends in the gap on 29 March
        ("Europe/Berlin", "060000", "P1D", "cron(0 6 * * ? *)", True),  # nominal day: always 06:00
        ("Europe/Berlin", "220000", "PT4H", "cron(0 2,3 * * ? *)", False),  # spring: 22:00 + 4 h = 03:00
        ("America/New_York", "060000", "PT8H", "cron(0 14 * * ? *)", True),
        ("America/New_York", "003000", "PT2H", "cron(30 2,3 * * ? *)", False),  # fall: 01:30 second pass
        ("Australia/Lord_Howe", "060000", "PT20H", "cron(0,30 2 * * ? *)", False),  # 30-minute shift
        ("Asia/Kolkata", "093000", "PT8H", "cron(30 17 * * ? *)", True),
        ("UTC", "233000", "PT1H", "cron(30 0 * * ? *)", True),
    ],
)
def test_daily_rules_across_dst(zone: str, start: str, window: str, expression: str, exact: bool) -> None:
    recurrence = parse_recurrence(f"DTSTART;TZID={zone}:20260101T{start}\nRRULE:FREQ=DAILY", window=window)
    spec = schedule_for(recurrence)
    assert (spec.expression, spec.exact) == (expression, exact)
    assert spec.timezone == zone


def test_start_and_end_dates() -> None:
    recurrence = parse_recurrence(
        BERLIN + "FREQ=WEEKLY;BYDAY=MO;UNTIL=20260302T000000Z", window="PT8H", grace="PT30M"
    )
    spec = schedule_for(recurrence)
    assert spec.start_date == datetime(2026, 1, 5, 13, 30, tzinfo=UTC)  # first evaluate_at
    assert spec.end_date == datetime(2026, 2, 23, 13, 32, tzinfo=UTC)  # last evaluate_at + 2 min
    assert spec.to_dict() == {
        "expression": "cron(30 14 ? * MON *)",
        "timezone": "Europe/Berlin",
        "start_date": "2026-01-05T13:30:00Z",
        "end_date": "2026-02-23T13:32:00Z",
        "exact": True,
    }


def test_start_date_never_after_first_evaluate_at_with_seconds() -> None:
    recurrence = parse_recurrence("DTSTART;TZID=Asia/Kolkata:20260105T060045\nRRULE:FREQ=DAILY", window="PT1H")
    spec = schedule_for(recurrence)
    assert spec.start_date is not None
    assert spec.start_date <= recurrence.first_window().evaluate_at
    assert spec.end_date is None


def test_single_occurrence_is_an_at_expression() -> None:
    spec = schedule_for(parse_recurrence(BERLIN + "FREQ=DAILY;COUNT=1", window="PT8H", grace="PT30S"))
    assert spec.to_dict() == {
        "expression": "at(2026-01-05T14:01:00)",
        "timezone": "Europe/Berlin",
        "start_date": None,
        "end_date": None,
        "exact": True,
    }


@pytest.mark.parametrize(
    "expression",
    [
        "cron(0 14 ? * MON-FRI *)", "cron(0/15 * * * ? *)", "cron(0 8 LW * ? 2026-2030)", "cron(0 8 15W * ? *)",
        "cron(0 10 ? * 6#3 *)", "cron(15 10 ? * 6L 2002-2005)", "cron(0 0 1 JAN,JUL ? *)", "cron(0 0 L * ? *)",
        "at(2026-01-05T14:00:00)", "rate(5 minutes)", "rate(1 hour)",
    ],
)  # fmt: skip
def test_validator_accepts(expression: str) -> None:
    validate_aws_cron(expression)


@pytest.mark.parametrize(
    ("expression", "fragment"),
    [
        ("cron(0 14 * * * *)", "exactly one"),
        ("cron(0 14 ? * ? *)", "exactly one"),
        ("cron(0 14 ? * 2#1,6#3 *)", "alone"),
        ("cron(0 14 ? * 2#6 *)", "n in 1-5"),
        ("cron(0 24 * * ? *)", "hour"),
        ("cron(60 1 * * ? *)", "minute"),
        ("cron(0 14 ? * 8 *)", "day-of-week"),
        ("cron(0 14 ? * MON/2 *)", "increments"),
        ("cron(0 14 32 * ? *)", "day-of-month"),
        ("cron(0 14 * 13 ? *)", "month"),
        ("cron(0 14 * * ? 1969)", "year"),
        ("cron(0 14 * * ? 2200)", "year"),
        ("cron(0 14 * * ?)", "6 space-separated"),
        ("cron(0 0/0 * * ? *)", "increment"),
        ("0 14 * * ? *", "expected cron"),
        ("at(2026-02-30T00:00:00)", "real date"),
        ("rate(1 minutes)", "rate()"),
        ("rate(0 minutes)", "expected cron"),
    ],
)
def test_validator_rejects(expression: str, fragment: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        validate_aws_cron(expression)
    assert caught.value.field == "schedule"
    assert fragment in caught.value.message
