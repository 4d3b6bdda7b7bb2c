"""Durations: parsing, canonical text, and RFC 5545 §3.3.6 arithmetic across DST."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from missed_checks.checklists.durations import Duration, parse_duration
from missed_checks.checklists.recurrence.windows import add_duration, resolve_local
from missed_checks.errors import InvalidRecurrence

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
LORD_HOWE = ZoneInfo("Australia/Lord_Howe")
KOLKATA = ZoneInfo("Asia/Kolkata")


def elapsed(start: datetime, end: datetime) -> timedelta:
    """Real elapsed time (same-zone subtraction in Python compares wall clocks)."""
    return end.astimezone(UTC) - start.astimezone(UTC)


@pytest.mark.parametrize(
    ("text", "days", "seconds", "canonical"),
    [
        ("PT8H", 0, 8 * 3600, "PT8H"),
        ("P1D", 1, 0, "P1D"),
        ("P1W", 7, 0, "P1W"),
        ("P2W", 14, 0, "P2W"),
        ("P14D", 14, 0, "P2W"),
        ("PT30M", 0, 1800, "PT30M"),
        ("P1DT2H", 1, 7200, "P1DT2H"),
        ("PT1H30M15S", 0, 5415, "PT1H30M15S"),
        ("pt90m", 0, 5400, "PT1H30M"),
        ("PT0S", 0, 0, "PT0S"),
        ("P0D", 0, 0, "PT0S"),
        (" P1W2D ", 9, 0, "P9D"),
    ],
)
def test_parse_and_canonical_text(text: str, days: int, seconds: int, canonical: str) -> None:
    duration = parse_duration(text, "window")
    assert (duration.days, duration.seconds) == (days, seconds)
    assert str(duration) == canonical
    assert parse_duration(str(duration), "window") == duration


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("P1Y", "years and months"),
        ("P1M", "years and months"),
        ("P1Y2M3D", "years and months"),
        ("-PT1H", "negative"),
        ("PT1.5H", "fractions"),
        ("P", "ISO 8601 duration"),
        ("PT", "ISO 8601 duration"),
        ("P1DT", "ISO 8601 duration"),
        ("8 hours", "ISO 8601 duration"),
        ("", "empty"),
        ("P99999D", "longer than 366 days"),
        ("P367D", "longer than 366 days"),
        ("P366DT1S", "longer than 366 days"),
        ("PT99999999999999999999H", "longer than 366 days"),
        ("PT8785H", "longer than 366 days"),
        ("P" + "9" * 40 + "D", "characters long"),
        ("   ", "empty"),
    ],
)
def test_rejects_with_field_and_what_is_accepted(text: str, fragment: str) -> None:
    with pytest.raises(InvalidRecurrence) as caught:
        parse_duration(text, "grace")
    assert caught.value.field == "grace"
    assert fragment in caught.value.message
    assert str(caught.value).startswith("grace: ")


@pytest.mark.parametrize("text", ["P366D", "P52W2D", "PT8784H", "P365DT24H"])
def test_the_longest_accepted_duration_is_366_days(text: str) -> None:
    duration = parse_duration(text, "window")
    assert duration.days * 86400 + duration.seconds == 366 * 86400


@pytest.mark.parametrize(
    ("value", "kind"),
    [(8, "a number (8)"), (Decimal("8"), "a number (Decimal('8'))"), (True, "a boolean"), (["PT8H"], "a list"),
     ({"PT8H"}, "a set"), ({"S": "PT8H"}, "a map"), (b"PT8H", "binary data"), (None, "missing")],
)
def test_a_value_that_is_not_a_string_is_named_as_such(value: object, kind: str) -> None:
    with pytest.raises(InvalidRecurrence) as caught:
        parse_duration(value, "window")
    assert caught.value.field == "window"
    assert caught.value.message.startswith(f"is {kind}")
    assert "not a duration string" in caught.value.message
    assert "empty" not in caught.value.message


def test_zero_rejected_when_not_allowed() -> None:
    with pytest.raises(InvalidRecurrence) as caught:
        parse_duration("PT0S", "window", allow_zero=False)
    assert caught.value.field == "window"
    assert "zero" in caught.value.message


def test_negative_parts_cannot_be_constructed() -> None:
    with pytest.raises(ValueError):
        Duration(days=-1)


def test_nominal_day_across_spring_forward_is_23_hours() -> None:
    start = datetime(2026, 3, 28, 6, tzinfo=BERLIN)
    end = add_duration(start, parse_duration("P1D", "window"))
    assert end == datetime(2026, 3, 29, 6, tzinfo=BERLIN)
    assert end.utcoffset() == timedelta(hours=2)
    assert elapsed(start, end) == timedelta(hours=23)


def test_exact_hours_across_spring_forward_are_elapsed() -> None:
    start = datetime(2026, 3, 28, 6, tzinfo=BERLIN)
    end = add_duration(start, parse_duration("PT24H", "window"))
    assert end.replace(tzinfo=None) == datetime(2026, 3, 29, 7)
    assert elapsed(start, end) == timedelta(hours=24)


def test_nominal_day_across_fall_back_is_25_hours() -> None:
    start = datetime(2026, 10, 31, 6, tzinfo=NEW_YORK)  # DST ends 2026-11-01 in New York
    end = add_duration(start, parse_duration("P1D", "window"))
    assert end.replace(tzinfo=None) == datetime(2026, 11, 1, 6)
    assert elapsed(start, end) == timedelta(hours=25)


def test_days_then_exact_part() -> None:
    start = datetime(2026, 3, 28, 6, tzinfo=BERLIN)
    end = add_duration(start, parse_duration("P1DT2H", "window"))
    assert end.replace(tzinfo=None) == datetime(2026, 3, 29, 8)
    assert elapsed(start, end) == timedelta(hours=25)


def test_nominal_day_landing_in_gap_reads_offset_before_gap() -> None:
    start = datetime(2026, 3, 28, 2, 30, tzinfo=BERLIN)
    end = add_duration(start, Duration(days=1))
    assert end.replace(tzinfo=None) == datetime(2026, 3, 29, 3, 30)
    assert end.utcoffset() == timedelta(hours=2)


def test_lord_howe_half_hour_shift() -> None:
    # Lord Howe leaves DST on 2026-04-05 at 02:00 (+11) -> 01:30 (+10:30).
    start = datetime(2026, 4, 4, 12, tzinfo=LORD_HOWE)
    assert elapsed(start, add_duration(start, Duration(days=1))) == timedelta(hours=24, minutes=30)
    assert add_duration(start, Duration(seconds=86400)).replace(tzinfo=None) == datetime(2026, 4, 5, 11, 30)


def test_result_expressed_in_requested_zone() -> None:
    start = datetime(2026, 3, 28, 5, tzinfo=UTC)  # 06:00 in Berlin
    end = add_duration(start, Duration(days=1), BERLIN)
    assert end.tzinfo is BERLIN
    assert end.replace(tzinfo=None) == datetime(2026, 3, 29, 6)
    assert add_duration(datetime(2026, 3, 1, tzinfo=KOLKATA), Duration(days=1)).utcoffset() == timedelta(
        hours=5, minutes=30
    )


def test_add_rejects_naive() -> None:
    with pytest.raises(ValueError):
        add_duration(datetime(2026, 1, 1), Duration(days=1))


@pytest.mark.parametrize(
    ("wall", "expected_wall", "offset_hours"),
    [
        (datetime(2026, 3, 29, 2, 30), datetime(2026, 3, 29, 3, 30), 2),  # gap: offset before the gap
        (datetime(2026, 10, 25, 2, 30), datetime(2026, 10, 25, 2, 30), 2),  # fold: the first one
        (datetime(2026, 7, 1, 12), datetime(2026, 7, 1, 12), 2),
    ],
)
def test_resolve_local_follows_rfc5545(wall: datetime, expected_wall: datetime, offset_hours: int) -> None:
    resolved = resolve_local(wall, BERLIN)
    assert resolved.replace(tzinfo=None) == expected_wall
    assert resolved.utcoffset() == timedelta(hours=offset_hours)
    assert resolved.fold == 0


def test_bounds_bracket_real_lengths() -> None:
    duration = parse_duration("P1DT1H", "window")
    start = datetime(2026, 10, 24, 6, tzinfo=BERLIN)
    span = elapsed(start, add_duration(start, duration))
    assert duration.shortest_elapsed() <= span <= duration.longest_elapsed()
