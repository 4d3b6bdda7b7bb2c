"""Every malformed or unsupported recurrence is rejected with an error naming its field."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from missed_checks.checklists.recurrence import OccurrenceWindow, parse_recurrence
from missed_checks.errors import InvalidInput, InvalidRecurrence

START = "DTSTART;TZID=Europe/Berlin:20260105T060000"


@pytest.mark.parametrize(
    ("kwargs", "field", "fragment"),
    [
        ({"text": ""}, "recurrence", "empty"),
        ({"text": "hello world"}, "recurrence", "cannot read line"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY\nSUMMARY:x"}, "recurrence", "unsupported line 'SUMMARY'"),
        ({"text": "RRULE:FREQ=DAILY", "timezone": "UTC"}, "recurrence", "no DTSTART"),
        ({"text": START}, "recurrence", "no RRULE"),
        ({"text": f"{START}\n{START}\nRRULE:FREQ=DAILY"}, "recurrence", "2 DTSTART lines"),
        ({"text": f"{START}\nRRULE:FREQ=MINUTELY"}, "recurrence", "sub-hourly"),
        ({"text": f"{START}\nRRULE:FREQ=SECONDLY"}, "recurrence", "sub-hourly"),
        ({"text": f"{START}\nRRULE:FREQ=HOURLY;BYMINUTE=0,30"}, "recurrence", "sub-hourly"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY;BYSECOND=0,30"}, "recurrence", "sub-hourly"),
        ({"text": f"{START}\nRRULE:FREQ=FORTNIGHTLY"}, "recurrence", "is not one of"),
        ({"text": f"{START}\nRRULE:BYDAY=MO"}, "recurrence", "no FREQ"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY;COUNT=100001"}, "recurrence", "COUNT=100001 is out of range"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY;COUNT=0"}, "recurrence", "COUNT=0"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY;INTERVAL=0"}, "recurrence", "INTERVAL=0"),
        ({"text": f"{START}\nRRULE:FREQ=MONTHLY;BYMONTHDAY=32"}, "recurrence", "BYMONTHDAY=32"),
        ({"text": f"{START}\nRRULE:FREQ=MONTHLY;BYDAY=XX"}, "recurrence", "BYDAY value 'XX'"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY;BYFOO=1"}, "recurrence", "'BYFOO' is not supported"),
        ({"text": f"{START}\nRRULE:FREQ=WEEKLY;WKST=XX"}, "recurrence", "WKST=XX is not a weekday"),
        ({"text": f"{START}\nRRULE:FREQ=HOURLY;INTERVAL=2;BYHOUR=7"}, "recurrence", "RRULE is not valid"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY;COUNT=3;UNTIL=20270101T000000Z"}, "recurrence", "both COUNT and UNTIL"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY;UNTIL=22000101T000000Z"}, "recurrence", "UNTIL is after 2199"),
        ({"text": f"{START}\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"}, "recurrence", "never occurs"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=31"}, "recurrence", "never occurs"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY;UNTIL=20250101T000000Z"}, "recurrence", "never occurs"),
        (
            {"text": f"{START}\nRRULE:FREQ=DAILY;COUNT=1\nEXDATE;TZID=Europe/Berlin:20260105T060000"},
            "recurrence",
            "never occurs",
        ),
        ({"text": "DTSTART:20261305T060000\nRRULE:FREQ=DAILY", "timezone": "UTC"}, "recurrence", "not a real date"),
        ({"text": "DTSTART:2026-01-05\nRRULE:FREQ=DAILY", "timezone": "UTC"}, "recurrence", "YYYYMMDD"),
        ({"text": "DTSTART:20260105T060000\nRRULE:FREQ=DAILY"}, "timezone", "is required"),
        ({"text": "DTSTART:20260105T060000\nRRULE:FREQ=DAILY", "timezone": "Mars/Olympus"}, "timezone", "unknown"),
        ({"text": "DTSTART;TZID=Mars/Olympus:20260105T060000\nRRULE:FREQ=DAILY"}, "recurrence", "unknown time zone"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY", "timezone": "America/New_York"}, "timezone", "conflicts"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY", "window": "P1M"}, "window", "years and months"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY", "window": "PT0S"}, "window", "zero"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY", "window": "-PT1H"}, "window", "negative"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY", "grace": "soon"}, "grace", "ISO 8601 duration"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY", "window": "PT25H"}, "window", "longer than the shortest gap"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY", "window": "PT24H"}, "window", "23h apart"),
        ({"text": f"{START}\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU", "window": "P2D"}, "window", "shortest gap"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY", "window": "PT20H", "grace": "PT5H"}, "grace", "two windows"),
        ({"text": f"{START}\nRRULE:FREQ=HOURLY", "window": "PT1H", "grace": "PT1M"}, "grace", "two windows"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY\nRDATE;VALUE=PERIOD:20260105T060000Z/PT1H"}, "recurrence", "periods"),
    ],
)
def test_rejected_naming_the_field(kwargs: dict[str, str], field: str, fragment: str) -> None:
    with pytest.raises(InvalidRecurrence) as caught:
        parse_recurrence(**kwargs)
    assert isinstance(caught.value, InvalidInput)
    assert caught.value.field == field
    assert fragment in caught.value.message, caught.value.message


def test_datetime_dtstart_defaults_to_one_day_window_and_no_grace() -> None:
    recurrence = parse_recurrence(f"{START}\nRRULE:FREQ=WEEKLY")
    assert (str(recurrence.window), str(recurrence.grace)) == ("P1D", "PT0S")
    assert not recurrence.date_only


def test_equal_timezone_and_tzid_is_fine() -> None:
    assert parse_recurrence(f"{START}\nRRULE:FREQ=DAILY", timezone="Europe/Berlin", window="PT8H").timezone == (
        "Europe/Berlin"
    )


def test_gap_collisions_count_once_and_window_fits() -> None:
    # 02:30 and 03:30 both exist on normal days; on 29 March 02:30 becomes 03:30: one occurrence.
    recurrence = parse_recurrence(
        "DTSTART;TZID=Europe/Berlin:20260328T023000\nRRULE:FREQ=DAILY;BYHOUR=2,3;COUNT=6", window="PT1H"
    )
    starts = [w.to_dict()["start"] for w in recurrence.windows_after(recurrence.dtstart, 10)]
    assert starts == [
        "2026-03-28T02:30:00+01:00", "2026-03-28T03:30:00+01:00", "2026-03-29T03:30:00+02:00",
        "2026-03-30T02:30:00+02:00", "2026-03-30T03:30:00+02:00",
    ]  # fmt: skip


OUTSIDE = "outside the years 1970 to 2199"


@pytest.mark.parametrize(
    ("kwargs", "field", "fragment"),
    [
        # extreme years: each crashed with OverflowError before
        ({"text": "DTSTART:00010101T000000Z\nRRULE:FREQ=DAILY"}, "recurrence",
         f"DTSTART '00010101T000000Z' is {OUTSIDE}"),
        ({"text": "DTSTART:99991231T230000Z\nRRULE:FREQ=DAILY"}, "recurrence", OUTSIDE),
        ({"text": "DTSTART:00010101T000000\nRRULE:FREQ=DAILY", "timezone": "Europe/Berlin"}, "recurrence", OUTSIDE),
        ({"text": "DTSTART:99991231\nRRULE:FREQ=DAILY", "timezone": "Pacific/Kiritimati"}, "recurrence", OUTSIDE),
        ({"text": "DTSTART:19691231T230000Z\nRRULE:FREQ=DAILY"}, "recurrence", OUTSIDE),
        ({"text": "DTSTART:21991231T200000Z\nRRULE:FREQ=DAILY", "timezone": "Pacific/Kiritimati"}, "recurrence",
         OUTSIDE),  # 2200 on the local clock
        ({"text": f"{START}\nRRULE:FREQ=DAILY;UNTIL=00010101T000000Z"}, "recurrence",
         f"UNTIL '00010101T000000Z' is {OUTSIDE}"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY;UNTIL=99991231"}, "recurrence", "UNTIL is after 2199"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY\nRDATE:99991231T235959Z"}, "recurrence",
         f"RDATE '99991231T235959Z' is {OUTSIDE}"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY\nEXDATE:00010101T000000Z"}, "recurrence", OUTSIDE),
        # durations: bounded, typed
        ({"text": f"{START}\nRRULE:FREQ=YEARLY", "window": "PT99999999999999999999H"}, "window",
         "longer than 366 days"),
        ({"text": f"{START}\nRRULE:FREQ=YEARLY", "grace": "PT99999999999999999999S"}, "grace",
         "longer than 366 days"),
        ({"text": f"{START}\nRRULE:FREQ=YEARLY", "window": "P367D"}, "window", "longer than 366 days"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY", "window": 8}, "window", "is a number (8), not a duration string"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY", "grace": Decimal(30)}, "grace", "is a number (Decimal('30'))"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY", "window": ""}, "window", "is empty"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY", "grace": " "}, "grace", "is empty"),
        # zones: typed, non-empty
        ({"text": "DTSTART:20260105T060000\nRRULE:FREQ=DAILY", "timezone": 5}, "timezone",
         "is a number (5), not an IANA"),
        ({"text": "DTSTART:20260105T060000\nRRULE:FREQ=DAILY", "timezone": ["UTC"]}, "timezone", "is a list"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY", "timezone": ""}, "timezone", "is empty"),
        ({"text": "DTSTART:20260105T060000\nRRULE:FREQ=DAILY", "timezone": "Europe/" + "x" * 500}, "timezone",
         "unknown time zone"),
        # text and list sizes
        ({"text": 42}, "recurrence", "is a number (42), not RFC 5545 text"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY;BYHOUR=" + ",".join(["6"] * 50_000)}, "recurrence",
         "characters long; at most 4096"),
        ({"text": f"{START}\nRRULE:FREQ=DAILY;BYHOUR=" + ",".join(["6"] * 25), "window": "PT1M"}, "recurrence",
         "BYHOUR has 25 values; it has only 24"),
        ({"text": f"{START}\nRRULE:FREQ=MONTHLY;BYMONTHDAY=" + ",".join(["1"] * 63)}, "recurrence",
         "BYMONTHDAY has 63 values"),
        # an ordinal beyond a month's 5 weekdays made dateutil fail (IndexError) once iteration reached a late month
        ({"text": f"{START}\nRRULE:FREQ=MONTHLY;BYDAY=20MO"}, "recurrence", "a month has at most 5 of each weekday"),
        ({"text": f"{START}\nRRULE:FREQ=YEARLY;BYMONTH=12;BYDAY=-6FR"}, "recurrence", "at most 5 of each weekday"),
        # an RRULE that never occurs is refused even when RDATEs add occurrences
        ({"text": f"{START}\nRRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30\nRDATE;TZID=Europe/Berlin:20260106T060000"},
         "recurrence", "never occurs"),
    ],
)
def test_unusable_values_are_invalid_recurrence_never_another_error(kwargs: dict, field: str, fragment: str) -> None:
    with pytest.raises(InvalidRecurrence) as caught:
        parse_recurrence(**kwargs)
    assert caught.value.field == field
    assert fragment in caught.value.message, caught.value.message
    assert len(caught.value.message) < 400  # quoted values are shortened: the message fits an item and a DLQ body


@pytest.mark.parametrize("window", ["P366D", "P52W2D", "PT8784H"])
def test_the_longest_window_is_366_days(window: str) -> None:
    recurrence = parse_recurrence(f"{START}\nRRULE:FREQ=YEARLY;INTERVAL=3", window=window, grace="P366D")
    assert recurrence.first_window().evaluate_at.year == 2028


def test_a_rare_rule_is_accepted() -> None:
    """29 February on a Monday first occurs in 2044, beyond the former 8-year horizon."""
    rare = parse_recurrence("DTSTART;TZID=Europe/Berlin:20240229T060000\n"
                            "RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", window="PT8H")
    assert rare.first_window().start.isoformat() == "2044-02-29T06:00:00+01:00"
    daily = parse_recurrence(f"{START}\nRRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", window="PT8H")
    assert daily.first_window().start.isoformat() == "2044-02-29T06:00:00+01:00"


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30",
        "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;UNTIL=20431231",  # the first one is in 2044
        "FREQ=HOURLY;BYSETPOS=2",  # one occurrence an hour: walking the hours to 2199 took minutes
        "FREQ=DAILY;BYSETPOS=-2",
        "FREQ=WEEKLY;BYSETPOS=2;BYDAY=MO",
        "FREQ=MONTHLY;BYSETPOS=6;BYDAY=MO",
        "FREQ=DAILY;INTERVAL=7;BYDAY=TU",  # DTSTART is a Monday: every occurrence is a Monday
        "FREQ=HOURLY;INTERVAL=168;BYDAY=TU",
        "FREQ=HOURLY;INTERVAL=14;BYMONTH=5;BYYEARDAY=60;BYSETPOS=-1",  # day filters never match, BYSETPOS or not
        "FREQ=YEARLY;INTERVAL=200",  # the second occurrence is after 2199 and the first is EXDATEd
    ],
)
def test_a_rule_that_never_occurs_is_refused_quickly(rule: str) -> None:
    exdate = "\nEXDATE;TZID=Europe/Berlin:20260105T060000" if "INTERVAL=200" in rule else ""
    started = time.thread_time()  # this thread's CPU: a busy machine does not stretch it (wall time did)
    with pytest.raises(InvalidRecurrence, match="never occurs"):
        parse_recurrence(f"{START}\nRRULE:{rule}{exdate}", window="PT1M")
    assert time.thread_time() - started < 1.5


def test_occurrences_end_with_2199_and_extreme_instants_never_overflow() -> None:
    recurrence = parse_recurrence(f"{START}\nRRULE:FREQ=YEARLY;INTERVAL=100;COUNT=5", window="P366D", grace="P366D")
    assert [w.start.year for w in recurrence.windows_after(recurrence.dtstart, 10)] == [2026, 2126]
    assert recurrence.last_window().start.year == 2126  # COUNT reaches 2426: it ends with 2199
    daily = parse_recurrence(f"{START}\nRRULE:FREQ=DAILY", window="P1D")
    first, last = datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, tzinfo=UTC)
    assert daily.windows_after(first, 1)[0].start == daily.dtstart
    assert daily.windows_after(last, 1) == []
    assert daily.windows(datetime(2199, 12, 30, tzinfo=UTC), last)[-1].start.isoformat() == "2199-12-31T06:00:00+01:00"
    due = daily.due_windows(first, last, 2)
    assert (len(due.windows), due.more) == (2, True)
    assert daily.due_windows(last, last, 2).windows == []


def test_a_window_from_outside_the_range_is_invalid_not_an_overflow() -> None:
    with pytest.raises(InvalidRecurrence) as caught:
        OccurrenceWindow.from_dict({"start": "0001-01-01T00:00:00+01:00", "end": "0001-01-02T00:00:00+01:00",
                                    "evaluate_at": "0001-01-02T00:00:00+01:00"}, ZoneInfo("Europe/Berlin"))
    assert caught.value.field == "window" and "outside" in caught.value.message
    with pytest.raises(InvalidRecurrence):
        OccurrenceWindow.from_dict({"start": 5, "end": None, "evaluate_at": []})
