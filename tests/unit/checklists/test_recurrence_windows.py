"""Occurrence windows of fleet routines, across DST changes, and due-window planning."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from missed_checks.checklists.durations import Duration
from missed_checks.checklists.recurrence import OccurrenceWindow, Recurrence, parse_recurrence

BERLIN = "Europe/Berlin"
FAR_PAST = datetime(2000, 1, 1, tzinfo=UTC)


def utc(year: int, month: int, day: int, hour: int = 0) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


def local_starts(text: str, n: int, **kwargs: str) -> list[str]:
    recurrence = parse_recurrence(text, **kwargs)
    return [w.start.strftime("%a %Y-%m-%d %H:%M") for w in recurrence.windows_after(FAR_PAST, n)]


def test_every_working_day_with_exdate_holidays() -> None:
    text = (
        "DTSTART;TZID=Europe/Berlin:20260330T060000\n"
        "RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\n"
        "EXDATE;TZID=Europe/Berlin:20260403T060000,20260406T060000\n"  # Good Friday, Easter Monday
        "EXDATE;VALUE=DATE:20260501"  # Labour Day, date-only: the whole day
    )
    found = local_starts(text, 8, window="PT8H", grace="PT30M")
    assert found == [
        "Mon 2026-03-30 06:00", "Tue 2026-03-31 06:00", "Wed 2026-04-01 06:00", "Thu 2026-04-02 06:00",
        "Tue 2026-04-07 06:00", "Wed 2026-04-08 06:00", "Thu 2026-04-09 06:00", "Fri 2026-04-10 06:00",
    ]  # fmt: skip
    may = parse_recurrence(text, window="PT8H").windows(utc(2026, 4, 30), utc(2026, 5, 5))
    assert [w.start.day for w in may] == [30, 4]


def test_every_monday_window_and_grace() -> None:
    recurrence = parse_recurrence(
        "DTSTART:20260105T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO", timezone=BERLIN, window="PT8H", grace="PT30M"
    )
    first = recurrence.windows(utc(2026, 3, 1), utc(2026, 3, 3))[0]
    assert first.to_dict() == {
        "start": "2026-03-02T06:00:00+01:00",
        "end": "2026-03-02T14:00:00+01:00",
        "evaluate_at": "2026-03-02T14:30:00+01:00",
    }
    assert OccurrenceWindow.from_dict(first.to_dict()) == first
    assert OccurrenceWindow.from_dict(first.to_dict(), recurrence.zone).start.tzinfo is recurrence.zone


def test_every_other_monday_and_friday() -> None:
    text = "DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR"
    assert local_starts(text, 5, window="PT8H") == [
        "Mon 2026-01-05 06:00", "Fri 2026-01-09 06:00", "Mon 2026-01-19 06:00", "Fri 2026-01-23 06:00",
        "Mon 2026-02-02 06:00",
    ]  # fmt: skip


def test_first_of_every_other_month_date_only_defaults_to_one_day() -> None:
    recurrence = parse_recurrence("DTSTART;VALUE=DATE:20260101\nRRULE:FREQ=MONTHLY;INTERVAL=2", timezone=BERLIN)
    assert recurrence.date_only and recurrence.window == Duration(days=1) and recurrence.grace == Duration()
    windows = recurrence.windows_after(FAR_PAST, 3)
    assert [w.to_dict()["start"] for w in windows] == [
        "2026-01-01T00:00:00+01:00", "2026-03-01T00:00:00+01:00", "2026-05-01T00:00:00+02:00",
    ]  # fmt: skip
    assert windows[0].end == windows[0].evaluate_at == datetime(2026, 1, 2, tzinfo=ZoneInfo(BERLIN))


def test_last_weekday_of_the_month() -> None:
    text = "DTSTART:20260101T160000\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1"
    assert local_starts(text, 4, timezone="America/New_York", window="PT2H") == [
        "Fri 2026-01-30 16:00", "Fri 2026-02-27 16:00", "Tue 2026-03-31 16:00", "Thu 2026-04-30 16:00",
    ]  # fmt: skip


def test_first_monday_of_the_quarter() -> None:
    text = "DTSTART;TZID=Asia/Kolkata:20260101T093000\nRRULE:FREQ=MONTHLY;INTERVAL=3;BYDAY=1MO"
    recurrence = parse_recurrence(text, window="P1D")
    windows = recurrence.windows_after(FAR_PAST, 3)
    assert [w.to_dict()["start"] for w in windows] == [
        "2026-01-05T09:30:00+05:30", "2026-04-06T09:30:00+05:30", "2026-07-06T09:30:00+05:30",
    ]  # fmt: skip


def test_yearly_on_15_march_in_utc() -> None:
    recurrence = parse_recurrence("DTSTART:20260315T080000Z\nRRULE:FREQ=YEARLY", window="P1W")
    assert recurrence.timezone == "UTC"
    assert [w.to_dict()["end"] for w in recurrence.windows_after(FAR_PAST, 2)] == [
        "2026-03-22T08:00:00+00:00", "2027-03-22T08:00:00+00:00",
    ]  # fmt: skip


def test_utc_dtstart_read_in_the_checklist_zone() -> None:
    recurrence = parse_recurrence("DTSTART:20260105T050000Z\nRRULE:FREQ=DAILY", timezone=BERLIN, window="PT8H")
    # 05:00Z is 06:00 in Berlin in winter: the rule keeps 06:00 local through summer
    summer = recurrence.windows(utc(2026, 7, 1), utc(2026, 7, 2))[0]
    assert summer.to_dict()["start"] == "2026-07-01T06:00:00+02:00"


def test_spring_forward_gap_reads_offset_before_gap() -> None:
    recurrence = parse_recurrence("DTSTART;TZID=Europe/Berlin:20260301T023000\nRRULE:FREQ=DAILY", window="PT8H")
    windows = recurrence.windows(utc(2026, 3, 28), utc(2026, 3, 31))
    assert [w.to_dict()["start"] for w in windows] == [
        "2026-03-28T02:30:00+01:00", "2026-03-29T03:30:00+02:00", "2026-03-30T02:30:00+02:00",
    ]  # fmt: skip
    assert windows[1].end.astimezone(UTC) - windows[1].start.astimezone(UTC) == timedelta(hours=8)


def test_fall_back_ambiguous_time_is_the_first() -> None:
    recurrence = parse_recurrence("DTSTART;TZID=Europe/Berlin:20261001T023000\nRRULE:FREQ=DAILY", window="PT1H")
    day = recurrence.windows(utc(2026, 10, 24, 12), utc(2026, 10, 25, 12))[0]
    assert day.to_dict() == {
        "start": "2026-10-25T02:30:00+02:00",
        "end": "2026-10-25T02:30:00+01:00",  # exact hour: into the repeated hour
        "evaluate_at": "2026-10-25T02:30:00+01:00",
    }


@pytest.mark.parametrize(
    ("zone", "day", "hours"),
    [
        ("Europe/Berlin", datetime(2026, 3, 28, 6), 23),
        ("Europe/Berlin", datetime(2026, 10, 24, 6), 25),
        ("America/New_York", datetime(2026, 3, 7, 6), 23),
        ("America/New_York", datetime(2026, 10, 31, 6), 25),
        ("Australia/Lord_Howe", datetime(2026, 4, 4, 6), 24.5),
        ("Australia/Lord_Howe", datetime(2026, 10, 3, 6), 23.5),
        ("Asia/Kolkata", datetime(2026, 3, 28, 6), 24),
        ("UTC", datetime(2026, 3, 28, 6), 24),
    ],
)
def test_p1d_window_spans_the_local_day(zone: str, day: datetime, hours: float) -> None:
    recurrence = parse_recurrence(
        f"DTSTART:{day:%Y%m%dT%H%M%S}\nRRULE:FREQ=WEEKLY;COUNT=3", timezone=zone, window="P1D", grace="PT1H"
    )
    first = recurrence.windows_after(FAR_PAST, 1)[0]
    assert first.end.replace(tzinfo=None) == day + timedelta(days=1)
    assert (first.end.astimezone(UTC) - first.start.astimezone(UTC)) == timedelta(hours=hours)
    assert first.evaluate_at.astimezone(UTC) - first.end.astimezone(UTC) == timedelta(hours=1)


def test_windows_range_is_half_open_and_zone_independent() -> None:
    recurrence = parse_recurrence("DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=DAILY", window="PT8H")
    start = datetime(2026, 1, 6, 6, tzinfo=ZoneInfo(BERLIN))
    windows = recurrence.windows(start.astimezone(UTC), start + timedelta(days=2))
    assert [w.start for w in windows] == [start, start + timedelta(days=1)]


def test_due_windows_respects_watermark_instant_and_limit() -> None:
    recurrence = parse_recurrence(
        "DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=DAILY", window="PT8H", grace="PT30M"
    )
    watermark = datetime(2026, 1, 6, 14, tzinfo=ZoneInfo(BERLIN))  # end of the 6 Jan window
    instant = datetime(2026, 1, 9, 14, 30, tzinfo=ZoneInfo(BERLIN))  # evaluate_at of 9 Jan
    due = recurrence.due_windows(watermark, instant, limit=10)
    assert [w.start.day for w in due.windows] == [7, 8, 9] and due.more is False
    capped = recurrence.due_windows(watermark, instant, limit=2)
    assert [w.start.day for w in capped.windows] == [7, 8] and capped.more is True
    just_before = recurrence.due_windows(watermark, instant - timedelta(seconds=1), limit=10)
    assert [w.start.day for w in just_before.windows] == [7, 8]
    exact_limit = recurrence.due_windows(watermark, instant, limit=3)
    assert len(exact_limit.windows) == 3 and exact_limit.more is False


def test_due_windows_includes_window_ending_after_watermark() -> None:
    recurrence = parse_recurrence("DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=WEEKLY", window="P3D")
    watermark = datetime(2026, 1, 13, tzinfo=ZoneInfo(BERLIN))  # inside the 12-15 Jan window
    due = recurrence.due_windows(watermark, datetime(2026, 1, 20, tzinfo=UTC), limit=5)
    assert [w.start.day for w in due.windows] == [12]


def test_due_windows_is_fast_for_a_year_old_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    recurrence = parse_recurrence(
        "DTSTART;TZID=Europe/Berlin:20250105T060000\nRRULE:FREQ=DAILY", window="PT8H", grace="PT30M"
    )
    # Fast means the work does not grow with the rule's age: count the windows it looks at (a year
    # of them if it started from DTSTART), not the seconds it takes (which depend on the machine).
    looked_at = []
    iter_windows = type(recurrence).iter_windows

    def counted(self: Recurrence, after: datetime) -> Iterator[OccurrenceWindow]:
        for window in iter_windows(self, after):
            looked_at.append(window)
            yield window

    monkeypatch.setattr(type(recurrence), "iter_windows", counted)
    due = recurrence.due_windows(utc(2026, 1, 4), utc(2026, 1, 7), limit=100)
    assert [w.start.day for w in due.windows] == [4, 5, 6]
    assert len(looked_at) <= 5


def test_last_evaluate_at() -> None:
    counted = parse_recurrence(
        "DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=WEEKLY;COUNT=3", window="PT8H", grace="PT1H"
    )
    assert counted.last_evaluate_at() == datetime(2026, 1, 19, 15, tzinfo=ZoneInfo(BERLIN))
    until = parse_recurrence("DTSTART:20260105\nRRULE:FREQ=DAILY;UNTIL=20260110", timezone=BERLIN)
    assert until.last_evaluate_at() == datetime(2026, 1, 11, tzinfo=ZoneInfo(BERLIN))
    forever = parse_recurrence("DTSTART:20260105\nRRULE:FREQ=DAILY", timezone=BERLIN)
    assert forever.last_evaluate_at() is None


def test_rdate_adds_an_occurrence() -> None:
    recurrence = parse_recurrence(
        "DTSTART;TZID=Europe/Berlin:20260105T060000\nRRULE:FREQ=WEEKLY;BYDAY=MO\n"
        "RDATE;TZID=Europe/Berlin:20260108T120000",
        window="PT8H",
    )
    assert [w.start.strftime("%d %H") for w in recurrence.windows_after(FAR_PAST, 3)] == ["05 06", "08 12", "12 06"]


def test_literal_folded_lines_and_lowercase_names() -> None:
    recurrence = parse_recurrence("dtstart;tzid=Europe/Berlin:20260105T060000\r\nrrule:FREQ=DAI\r\n LY", window="PT1H")
    assert recurrence.windows_after(FAR_PAST, 1)[0].start.hour == 6


def test_hourly_rule() -> None:
    recurrence = parse_recurrence(
        "DTSTART;TZID=Europe/Berlin:20260328T220000\nRRULE:FREQ=HOURLY;INTERVAL=2", window="PT30M"
    )
    starts = [w.to_dict()["start"][11:] for w in recurrence.windows(utc(2026, 3, 28, 21), utc(2026, 3, 29, 6))]
    assert starts == ["22:00:00+01:00", "00:00:00+01:00", "03:00:00+02:00", "04:00:00+02:00", "06:00:00+02:00"]
