"""Every malformed or unsupported recurrence is rejected with an error naming its field."""

from __future__ import annotations

import pytest

from missed_checks.errors import InvalidInput, InvalidRecurrence
from missed_checks.recurrence import parse_recurrence

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
